// Reference GatherND(data [r], indices [q] i64, batch_dims b): the first b
// axes of data and indices are batch axes (equal extents); within a batch,
// each index tuple (the last axis of indices, k entries) names a slice of
// data's last r - b - k axes, copied whole. Output: data[:b] +
// indices[b:q-1] + data[b+k:]. Negative indices count from the end; one out
// of range is InvalidArgument naming the node.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/params/data_ops.h"
#include "kernels/params/parse_util.h"
#include "kernels/reference/data_kernel_util.h"

namespace braid::reference {
namespace {

class GatherNDKernel final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(const IndexTupleParams p, ParseGatherND(args));
    const TensorDesc& data = args.inputs[0];
    k_ = p.k;
    batches_ = p.batches;
    batch_stride_ = p.batch_stride;
    tuples_ = p.tuples;
    tuple_extents_ = p.tuple_extents;
    tuple_strides_ = p.tuple_strides;
    slice_bytes_ = static_cast<size_t>(p.slice) * DataTypeSize(data.dtype);
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
            return TupleIndexOutOfRange(where_, indices[d], extent);
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
