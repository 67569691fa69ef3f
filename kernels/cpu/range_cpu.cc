// Range for i32 / i64 start, limit and delta computed at run time (constant
// ones are folded at load), braid's own CPU kernel: element i is
// start + i * delta in wrapping unsigned arithmetic, which equals the
// reference's running sum (value += delta, wrapping) exactly, so the
// elements split across the threads and vectorise. f32 goes to the reference
// (a routine decline): its running float sum rounds at every step, which no
// split fill reproduces bit for bit.
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include "kernels/cpu/onednn_kernels.h"
#include "kernels/host/omp_team.h"
#include "kernels/params/data_ops.h"

namespace braid {
namespace {

class RangeCpu final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(length_, ParseRange(args));
    switch (args.inputs[0].dtype) {
      case DataType::kI32: run_ = &RunTyped<int32_t>; break;
      case DataType::kI64: run_ = &RunTyped<int64_t>; break;
      default:
        return Unimplemented(args.Where() + ": a float Range accumulates step by step (reference)");
    }
    where_ = args.Where();
    num_threads_ = std::max(args.num_threads, 1);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override { return run_(*this, args); }

 private:
  template <typename T>
  static Status RunTyped(const RangeCpu& k, const RunArgs& args) {
    using U = std::make_unsigned_t<T>;
    ASSIGN_OR_RETURN(const RangeScalars<T> range, ReadRangeScalars<T>(args, k.where_, k.length_));
    T* y = static_cast<T*>(args.dst[0]);
    const U first = static_cast<U>(range.start), step = static_cast<U>(range.delta);
    const int64_t length = k.length_;
    const int threads = ThreadsFor(length, k.num_threads_);
#pragma omp parallel for simd num_threads(threads) schedule(static) if (parallel : threads > 1)
    for (int64_t i = 0; i < length; ++i) y[i] = static_cast<T>(first + static_cast<U>(i) * step);
    return Status::Ok();
  }

  int64_t length_ = 0;
  std::string where_;
  int num_threads_ = 1;
  Status (*run_)(const RangeCpu&, const RunArgs&) = nullptr;
};

}  // namespace

std::unique_ptr<Kernel> CreateRangeCpu() { return std::make_unique<RangeCpu>(); }

}  // namespace braid
