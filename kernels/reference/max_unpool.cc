// Reference MaxUnpool (opsets 9, 11): Y is zero except Y[I[i]] = X[i], I
// holding flat indices as MaxPool's Indices output gives them, into the
// unpooled shape [N, C, (D - 1) * stride + k - pads] (ConvTranspose's
// geometry). A larger output_shape keeps each element's coordinates (the
// unpooled tensor sits at its origin), as ONNX's backend case expects. Any
// dtype: elements move as bytes.
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "graph/ops/conv_transpose_geometry.h"
#include "kernels/backend.h"
#include "kernels/params/parse_util.h"

namespace braid {
namespace {

class ReferenceMaxUnpool final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    RETURN_IF_ERROR(params_internal::CheckArity(args, 2, 3));
    const TensorDesc& x = args.inputs[0];
    const TensorDesc& indices = args.inputs[1];
    const TensorDesc& y = args.outputs[0];
    if (indices.dtype != DataType::kI64 || indices.dims != x.dims)
      return params_internal::Invalid(args, "I " + indices.ToString() + " must be i64 of X's shape " +
                                                x.ToString());
    if (x.rank() < 3 || y.rank() != x.rank() || y.dims[0] != x.dims[0] || y.dims[1] != x.dims[1] ||
        y.dtype != x.dtype)
      return params_internal::Invalid(args, "output " + y.ToString() + " does not fit X " + x.ToString());
    std::vector<int64_t> in_spatial(x.dims.begin() + 2, x.dims.end());
    StatusOr<ConvTransposeGeometry> g = ComputeConvTransposeGeometry(
        args.node->attrs, in_spatial, args.node->attrs.GetInts("kernel_shape"));
    if (!g.ok()) return params_internal::Invalid(args, g.status().message());
    unpooled_ = {x.dims[0], x.dims[1]};
    unpooled_.insert(unpooled_.end(), g->out_spatial.begin(), g->out_spatial.end());
    out_strides_.clear();
    unpooled_strides_.clear();
    for (size_t a = 0; a < y.dims.size(); ++a) {
      out_strides_.push_back(params_internal::Product(y.dims, a + 1));
      unpooled_strides_.push_back(params_internal::Product(unpooled_, a + 1));
    }
    for (size_t i = 2; i < y.dims.size(); ++i)
      if (y.dims[i] < unpooled_[i])
        return params_internal::Invalid(args, "output " + y.ToString() + " is smaller than the unpooled " +
                                                  params_internal::IntsToString(unpooled_));
    count_ = x.elements();
    out_count_ = y.elements();
    unpooled_count_ = params_internal::Product(unpooled_);
    element_ = DataTypeSize(x.dtype);
    where_ = args.Where();
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    const auto* x = static_cast<const std::byte*>(args.src[0]);
    const auto* indices = static_cast<const int64_t*>(args.src[1]);
    auto* y = static_cast<std::byte*>(args.dst[0]);
    std::memset(y, 0, static_cast<size_t>(out_count_) * element_);
    for (int64_t i = 0; i < count_; ++i) {
      const int64_t flat = indices[i];
      if (flat < 0 || flat >= unpooled_count_)
        return InvalidArgument(where_ + ": I[" + std::to_string(i) + "] = " + std::to_string(flat) +
                               " outside the unpooled " + params_internal::IntsToString(unpooled_));
      // Coordinates in the unpooled shape, re-flattened in the output's.
      int64_t at = 0, rest = flat;
      for (size_t a = 0; a < unpooled_.size(); ++a) {
        at += rest / unpooled_strides_[a] * out_strides_[a];
        rest %= unpooled_strides_[a];
      }
      std::memcpy(y + static_cast<size_t>(at) * element_, x + static_cast<size_t>(i) * element_, element_);
    }
    return Status::Ok();
  }

 private:
  int64_t count_ = 0, out_count_ = 0, unpooled_count_ = 0;
  std::vector<int64_t> unpooled_, out_strides_, unpooled_strides_;
  size_t element_ = 0;
  std::string where_;
};

}  // namespace

void RegisterReferenceMaxUnpool(KernelRegistry& registry) {
  registry.Register({"MaxUnpool", DeviceKind::kCpu, "reference", 0,
                     [] { return std::make_unique<ReferenceMaxUnpool>(); }});
}

}  // namespace braid
