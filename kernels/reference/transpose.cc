// Reference Transpose (perm default: reversed axes), any dtype: a strided
// walk over the output reading the input with permuted strides.
#include <vector>

#include "kernels/params/broadcast.h"
#include "kernels/params/data_ops.h"
#include "kernels/params/parse_util.h"
#include "kernels/reference/data_kernel_util.h"

namespace braid::reference {
namespace {

class TransposeKernel final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    RETURN_IF_ERROR(params_internal::CheckArity(args, 1, 1));
    const TensorDesc& in = args.inputs[0];
    if (in.rank() > kMaxDataRank) return RankTooLarge(args, in.rank());
    ASSIGN_OR_RETURN(std::vector<int> perm, ParsePerm(args));
    const std::vector<int64_t> in_strides = ContiguousStrides(in.dims);
    out_dims_.clear();
    strides_.clear();
    for (int p : perm) {
      out_dims_.push_back(in.dims[static_cast<size_t>(p)]);
      strides_.push_back(in_strides[static_cast<size_t>(p)]);
    }
    RETURN_IF_ERROR(params_internal::CheckOutput(args, out_dims_, in.dtype));
    run_ = SelectBySize<TransposeKernel>(DataTypeSize(in.dtype));
    if (run_ == nullptr) return UnsupportedDtype(args, in.dtype);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override { return run_(*this, args); }

  template <typename E>
  static Status RunTyped(const TransposeKernel& k, const RunArgs& args) {
    StridedCopy(static_cast<const E*>(args.src[0]), 0, k.out_dims_.data(),
                k.strides_.data(), static_cast<int>(k.out_dims_.size()),
                static_cast<E*>(args.dst[0]));
    return Status::Ok();
  }

 private:
  std::vector<int64_t> out_dims_;
  std::vector<int64_t> strides_;  // input stride per output axis
  TypedRun<TransposeKernel> run_ = nullptr;
};

}  // namespace

void RegisterTransposeKernel(KernelRegistry& registry) {
  RegisterReference<TransposeKernel>(registry, "Transpose");
}

}  // namespace braid::reference
