// Reference Gather along any axis: out[o, j..., i] = data[o, idx[j...], i]
// with i32/i64 indices (negative counts from the end) and data of any dtype
// (rows of `inner` elements move as bytes). Indices are checked before
// anything is written: an out-of-range index is InvalidArgument naming the
// node, at Prepare when the indices are constant and at Run otherwise.
#include <cstring>
#include <string>

#include "kernels/params/data_ops.h"
#include "kernels/params/parse_util.h"
#include "kernels/reference/data_kernel_util.h"

namespace braid::reference {
namespace {

class GatherKernel final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    RETURN_IF_ERROR(params_internal::CheckArity(args, 2, 2));
    const TensorDesc& data = args.inputs[0];
    const TensorDesc& indices = args.inputs[1];
    if (data.rank() == 0) return params_internal::Invalid(args, "data must have rank >= 1");
    ASSIGN_OR_RETURN(const int axis, ParseAxis(args, 0, data.rank()));
    std::vector<int64_t> out_dims(data.dims.begin(), data.dims.begin() + axis);
    out_dims.insert(out_dims.end(), indices.dims.begin(), indices.dims.end());
    out_dims.insert(out_dims.end(), data.dims.begin() + axis + 1, data.dims.end());
    RETURN_IF_ERROR(params_internal::CheckOutput(args, out_dims, data.dtype));
    switch (indices.dtype) {
      case DataType::kI32: run_ = &RunTyped<int32_t>; break;
      case DataType::kI64: run_ = &RunTyped<int64_t>; break;
      default: return UnsupportedDtype(args, indices.dtype, "indices");
    }
    outer_ = params_internal::Product(data.dims, 0, static_cast<size_t>(axis));
    axis_dim_ = data.dims[static_cast<size_t>(axis)];
    row_bytes_ = static_cast<size_t>(params_internal::Product(
                     data.dims, static_cast<size_t>(axis) + 1)) *
                 DataTypeSize(data.dtype);
    num_indices_ = indices.elements();
    where_ = args.Where();
    if (IsConstantInput(args, 1) && args.constants[1]->size() == indices.bytes()) {
      RETURN_IF_ERROR(indices.dtype == DataType::kI32
                          ? Check(static_cast<const int32_t*>(
                                static_cast<const void*>(args.constants[1]->data())))
                          : Check(static_cast<const int64_t*>(
                                static_cast<const void*>(args.constants[1]->data()))));
    }
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override { return run_(*this, args); }

 private:
  template <typename I>
  Status Check(const I* idx) const {
    for (int64_t j = 0; j < num_indices_; ++j) {
      if (idx[j] < -axis_dim_ || idx[j] >= axis_dim_)
        return InvalidArgument(std::string(where_)
                                   .append(": index ")
                                   .append(std::to_string(idx[j]))
                                   .append(" is out of range for axis extent ")
                                   .append(std::to_string(axis_dim_)));
    }
    return Status::Ok();
  }

  template <typename I>
  static Status RunTyped(const GatherKernel& k, const RunArgs& args) {
    const I* idx = static_cast<const I*>(args.src[1]);
    RETURN_IF_ERROR(k.Check(idx));
    const auto* src = static_cast<const unsigned char*>(args.src[0]);
    auto* dst = static_cast<unsigned char*>(args.dst[0]);
    for (int64_t o = 0; o < k.outer_; ++o) {
      for (int64_t j = 0; j < k.num_indices_; ++j) {
        const int64_t i = idx[j] < 0 ? idx[j] + k.axis_dim_ : idx[j];
        std::memcpy(dst, src + static_cast<size_t>(o * k.axis_dim_ + i) * k.row_bytes_,
                    k.row_bytes_);
        dst += k.row_bytes_;
      }
    }
    return Status::Ok();
  }

  int64_t outer_ = 0, axis_dim_ = 0, num_indices_ = 0;
  size_t row_bytes_ = 0;
  std::string where_;
  Status (*run_)(const GatherKernel&, const RunArgs&) = nullptr;
};

}  // namespace

void RegisterGatherKernel(KernelRegistry& registry) {
  RegisterReference<GatherKernel>(registry, "Gather");
}

}  // namespace braid::reference
