// Reference ArgMax and ArgMin: the i64 index of the largest / smallest element
// along one axis (f32, i32, i64, i8, u8). Of equal values the first index
// wins, or the last with select_last_index=1; a NaN counts as larger than
// every number for ArgMax (and smaller for ArgMin), so the first NaN wins, as
// numpy's argmax/argmin.
#include <cstdint>

#include "kernels/params/reduce.h"
#include "kernels/reference/data_kernel_util.h"

namespace braid::reference {
namespace {

class ArgReduceKernel final : public Kernel {
 public:
  explicit ArgReduceKernel(bool max) : max_(max) {}

  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(const ArgReduceParams p, ParseArgReduce(args));
    outer_ = p.outer;
    extent_ = p.extent;
    inner_ = p.inner;
    take_last_ = p.select_last;
    run_ = SelectByNumericType<ArgReduceKernel>(p.dtype);
    if (run_ == nullptr) return UnsupportedDtype(args, p.dtype);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    run_(*this, args);
    return Status::Ok();
  }

  template <typename T>
  static void RunTyped(const ArgReduceKernel& k, const RunArgs& args) {
    const T* x = static_cast<const T*>(args.src[0]);
    int64_t* y = static_cast<int64_t*>(args.dst[0]);
    for (int64_t o = 0; o < k.outer_; ++o) {
      for (int64_t i = 0; i < k.inner_; ++i) {
        const T* row = x + o * k.extent_ * k.inner_ + i;
        int64_t best = 0;
        for (int64_t a = 1; a < k.extent_; ++a)
          if (k.Replaces(row[a * k.inner_], row[best * k.inner_])) best = a;
        y[o * k.inner_ + i] = best;
      }
    }
  }

 private:
  template <typename T>
  bool Replaces(T v, T best) const {
    return ArgReduceReplaces(v, best, max_, take_last_);
  }

  bool max_;
  bool take_last_ = false;
  int64_t outer_ = 1, extent_ = 1, inner_ = 1;
  void (*run_)(const ArgReduceKernel&, const RunArgs&) = nullptr;
};

}  // namespace

void RegisterArgReduceKernels(KernelRegistry& registry) {
  registry.Register(KernelEntry{"ArgMax", DeviceKind::kCpu, "reference", 0,
                                [] { return std::make_unique<ArgReduceKernel>(true); }});
  registry.Register(KernelEntry{"ArgMin", DeviceKind::kCpu, "reference", 0,
                                [] { return std::make_unique<ArgReduceKernel>(false); }});
}

}  // namespace braid::reference
