// Reference Gather along any axis: out[o, j..., i] = data[o, idx[j...], i]
// with i32/i64 indices (negative counts from the end) and data of any dtype
// (rows of `inner` elements move as bytes). Indices are checked before
// anything is written: an out-of-range index is InvalidArgument naming the
// node, at Prepare when the indices are constant and at Run otherwise.
#include <cstring>
#include <string>

#include "kernels/params/data_ops.h"
#include "kernels/reference/data_kernel_util.h"

namespace braid::reference {
namespace {

class GatherKernel final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(const GatherParams p, ParseGather(args));
    run_ = p.index_dtype == DataType::kI32 ? &RunTyped<int32_t> : &RunTyped<int64_t>;
    outer_ = p.outer;
    axis_dim_ = p.extent;
    row_bytes_ = static_cast<size_t>(p.inner) * DataTypeSize(args.inputs[0].dtype);
    num_indices_ = p.indices;
    where_ = args.Where();
    if (IsConstantInput(args, 1) && args.constants[1]->size() == args.inputs[1].bytes()) {
      const void* idx = args.constants[1]->data();
      RETURN_IF_ERROR(p.index_dtype == DataType::kI32
                          ? CheckGatherIndices(where_, static_cast<const int32_t*>(idx),
                                               num_indices_, axis_dim_)
                          : CheckGatherIndices(where_, static_cast<const int64_t*>(idx),
                                               num_indices_, axis_dim_));
    }
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override { return run_(*this, args); }

 private:
  template <typename I>
  static Status RunTyped(const GatherKernel& k, const RunArgs& args) {
    const I* idx = static_cast<const I*>(args.src[1]);
    RETURN_IF_ERROR(CheckGatherIndices(k.where_, idx, k.num_indices_, k.axis_dim_));
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
