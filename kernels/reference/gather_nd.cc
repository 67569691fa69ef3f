// Reference GatherND(data [r], indices [q] i64, batch_dims b): the first b
// axes of data and indices are batch axes (equal extents); within a batch,
// each index tuple (the last axis of indices, k entries) names a slice of
// data's last r - b - k axes, copied whole. Output: data[:b] +
// indices[b:q-1] + data[b+k:]. Negative indices count from the end; one out
// of range is InvalidArgument naming the node.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/params/broadcast.h"
#include "kernels/params/parse_util.h"
#include "kernels/reference/data_kernel_util.h"

namespace braid::reference {
namespace {

class GatherNDKernel final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    RETURN_IF_ERROR(params_internal::CheckArity(args, 2, 2));
    const TensorDesc& data = args.inputs[0];
    const TensorDesc& indices = args.inputs[1];
    if (indices.dtype != DataType::kI64 || indices.rank() < 1)
      return params_internal::Invalid(args, "indices " + indices.ToString() +
                                                " must be int64 of rank >= 1");
    const int64_t batch_dims = args.node->attrs.GetInt("batch_dims", 0);
    if (batch_dims < 0 || batch_dims >= std::min<int64_t>(data.rank(), indices.rank()))
      return params_internal::Invalid(args, "batch_dims " + std::to_string(batch_dims) +
                                                " must be in [0, min(rank(data), rank(indices)))");
    const auto b = static_cast<size_t>(batch_dims);
    for (size_t d = 0; d < b; ++d)
      if (data.dims[d] != indices.dims[d])
        return params_internal::Invalid(args, "batch axis " + std::to_string(d) + " differs: data " +
                                                  data.ToString() + ", indices " +
                                                  indices.ToString());
    k_ = indices.dims.back();
    if (k_ < 1 || k_ > data.rank() - batch_dims)
      return params_internal::Invalid(args, "indices' last dimension " + std::to_string(k_) +
                                                " must be in [1, rank(data) - batch_dims]");
    std::vector<int64_t> out_dims(data.dims.begin(), data.dims.begin() + batch_dims);
    out_dims.insert(out_dims.end(), indices.dims.begin() + batch_dims, indices.dims.end() - 1);
    out_dims.insert(out_dims.end(), data.dims.begin() + batch_dims + k_, data.dims.end());
    RETURN_IF_ERROR(params_internal::CheckOutput(args, out_dims, data.dtype));
    batches_ = params_internal::Product(data.dims, 0, b);
    batch_stride_ = params_internal::Product(data.dims, b);
    tuples_ = params_internal::Product(indices.dims, b, indices.dims.size() - 1);
    const std::vector<int64_t> strides = ContiguousStrides(data.dims);
    tuple_extents_.assign(data.dims.begin() + batch_dims, data.dims.begin() + batch_dims + k_);
    tuple_strides_.assign(strides.begin() + batch_dims, strides.begin() + batch_dims + k_);
    slice_bytes_ = static_cast<size_t>(params_internal::Product(data.dims, b + static_cast<size_t>(k_))) *
                   DataTypeSize(data.dtype);
    element_bytes_ = DataTypeSize(data.dtype);
    where_ = args.Where();
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    const auto* data = static_cast<const unsigned char*>(args.src[0]);
    const int64_t* indices = static_cast<const int64_t*>(args.src[1]);
    auto* out = static_cast<unsigned char*>(args.dst[0]);
    for (int64_t n = 0; n < batches_; ++n) {
      for (int64_t t = 0; t < tuples_; ++t, indices += k_, out += slice_bytes_) {
        int64_t offset = n * batch_stride_;
        for (size_t d = 0; d < tuple_extents_.size(); ++d) {
          const int64_t extent = tuple_extents_[d];
          const int64_t i = indices[d] < 0 ? indices[d] + extent : indices[d];
          if (i < 0 || i >= extent)
            return InvalidArgument(where_ + ": index " + std::to_string(indices[d]) +
                                   " is out of range for extent " + std::to_string(extent));
          offset += i * tuple_strides_[d];
        }
        std::memcpy(out, data + static_cast<size_t>(offset) * element_bytes_, slice_bytes_);
      }
    }
    return Status::Ok();
  }

 private:
  int64_t k_ = 0, batches_ = 1, batch_stride_ = 0, tuples_ = 0;
  std::vector<int64_t> tuple_extents_, tuple_strides_;
  size_t slice_bytes_ = 0, element_bytes_ = 0;
  std::string where_;
};

}  // namespace

void RegisterGatherNDKernel(KernelRegistry& registry) {
  RegisterReference<GatherNDKernel>(registry, "GatherND");
}

}  // namespace braid::reference
