// Reference Trilu: keeps the upper (upper=1) or lower triangle of each matrix
// in the last two axes and zeroes the rest. Element (i, j) is kept when
// j - i >= k (upper) or j - i <= k (lower). k comes from the optional i64 scalar
// input (0 without it): read at Prepare when constant, else at Run.
#include <cstdint>
#include <cstring>

#include "kernels/params/data_ops.h"
#include "kernels/reference/data_kernel_util.h"

namespace braid::reference {
namespace {

class TriluKernel final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(p_, ParseTrilu(args));
    run_ = SelectBySize<TriluKernel>(DataTypeSize(args.inputs[0].dtype));
    if (run_ == nullptr) return UnsupportedDtype(args, args.inputs[0].dtype);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override { return run_(*this, args); }

  template <typename E>
  static Status RunTyped(const TriluKernel& t, const RunArgs& args) {
    const TriluParams& p = t.p_;
    int64_t k = p.k;
    if (p.k_input >= 0) std::memcpy(&k, args.src[static_cast<size_t>(p.k_input)], sizeof k);
    const E* x = static_cast<const E*>(args.src[0]);
    E* y = static_cast<E*>(args.dst[0]);
    for (int64_t m = 0; m < p.matrices; ++m) {
      for (int64_t i = 0; i < p.rows; ++i) {
        const int64_t row = (m * p.rows + i) * p.cols;
        for (int64_t j = 0; j < p.cols; ++j) {
          const bool keep = p.upper ? j - i >= k : j - i <= k;
          y[row + j] = keep ? x[row + j] : E{0};  // all-zero bits: 0 in every dtype
        }
      }
    }
    return Status::Ok();
  }

 private:
  TriluParams p_;
  TypedRun<TriluKernel> run_ = nullptr;
};

}  // namespace

void RegisterTriluKernel(KernelRegistry& registry) {
  RegisterReference<TriluKernel>(registry, "Trilu");
}

}  // namespace braid::reference
