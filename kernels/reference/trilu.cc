// Reference Trilu: keeps the upper (upper=1) or lower triangle of each matrix
// in the last two axes and zeroes the rest. Element (i, j) is kept when
// j - i >= k (upper) or j - i <= k (lower). k is read at Run from the optional
// i64 scalar input (0 without it), so it may be computed at run time.
#include <cstdint>
#include <cstring>

#include "kernels/params/parse_util.h"
#include "kernels/reference/data_kernel_util.h"

namespace braid::reference {
namespace {

class TriluKernel final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    RETURN_IF_ERROR(params_internal::CheckArity(args, 1, 2));
    const TensorDesc& in = args.inputs[0];
    if (in.rank() < 2)
      return params_internal::Invalid(args, "input " + in.ToString() + " must have rank >= 2");
    has_k_ = params_internal::HasInput(args, 1);
    if (has_k_ && (args.inputs[1].dtype != DataType::kI64 || args.inputs[1].elements() != 1))
      return params_internal::Invalid(args, "k " + args.inputs[1].ToString() +
                                                " must be an i64 scalar");
    RETURN_IF_ERROR(params_internal::CheckOutput(args, in.dims, in.dtype));
    rows_ = in.dims[in.dims.size() - 2];
    cols_ = in.dims.back();
    matrices_ = params_internal::Product(in.dims, 0, in.dims.size() - 2);
    upper_ = args.node->attrs.GetInt("upper", 1) != 0;
    run_ = SelectBySize<TriluKernel>(DataTypeSize(in.dtype));
    if (run_ == nullptr) return UnsupportedDtype(args, in.dtype);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override { return run_(*this, args); }

  template <typename E>
  static Status RunTyped(const TriluKernel& t, const RunArgs& args) {
    int64_t k = 0;
    if (t.has_k_) std::memcpy(&k, args.src[1], sizeof k);
    const E* x = static_cast<const E*>(args.src[0]);
    E* y = static_cast<E*>(args.dst[0]);
    for (int64_t m = 0; m < t.matrices_; ++m) {
      for (int64_t i = 0; i < t.rows_; ++i) {
        const int64_t row = (m * t.rows_ + i) * t.cols_;
        for (int64_t j = 0; j < t.cols_; ++j) {
          const bool keep = t.upper_ ? j - i >= k : j - i <= k;
          y[row + j] = keep ? x[row + j] : E{0};  // all-zero bits: 0 in every dtype
        }
      }
    }
    return Status::Ok();
  }

 private:
  bool has_k_ = false, upper_ = true;
  int64_t matrices_ = 1, rows_ = 0, cols_ = 0;
  TypedRun<TriluKernel> run_ = nullptr;
};

}  // namespace

void RegisterTriluKernel(KernelRegistry& registry) {
  RegisterReference<TriluKernel>(registry, "Trilu");
}

}  // namespace braid::reference
