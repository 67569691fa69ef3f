// Clip (f32, bounds known at Prepare), braid's own CPU kernel: y = min(max(x,
// lo), hi) in a loop the compiler vectorises, split across the threads, in
// either layout (elementwise). std::max(x, lo) is `x < lo ? lo : x` and
// std::min(v, hi) is `hi < v ? hi : v`, so a NaN x stays NaN without a branch
// (docs/ops.md "NaN and Inf"); lo > hi gives hi, as the reference. oneDNN's
// clip gives the lower bound for NaN, so oneDNN does not run Clip; the
// reference kernel did, one element at a time (RexNet's 13 and EdgeNeXt's 6
// standalone ReLU6). Computed bounds go to the reference (a routine decline).
#include <omp.h>

#include <algorithm>

#include "kernels/host/omp_team.h"
#include "kernels/cpu/onednn_kernels.h"
#include "kernels/params/elementwise.h"

namespace braid {
namespace {

class ClipCpu final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    if (args.inputs.empty() || args.outputs.empty())
      return InvalidArgument(args.Where() + ": Clip needs an input and an output");
    if (args.inputs[0].dtype != DataType::kF32)
      return Unimplemented(args.Where() + ": braid's CPU Clip handles f32 only");
    if (args.inputs[0].layout != args.outputs[0].layout)
      return Unimplemented(args.Where() + ": input and output layouts differ");
    ASSIGN_OR_RETURN(const ClipParams clip, ParseClip(args));
    if (clip.min_input >= 0 || clip.max_input >= 0)
      return Unimplemented(args.Where() + ": bounds computed at run time (the reference reads them)");
    lo_ = static_cast<float>(clip.min);
    hi_ = static_cast<float>(clip.max);
    elements_ = args.inputs[0].elements();
    num_threads_ = std::max(args.num_threads, 1);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    const float* x = static_cast<const float*>(args.src[0]);
    float* y = static_cast<float*>(args.dst[0]);
    const float lo = lo_, hi = hi_;
    const int64_t n = elements_;
    const int threads = ThreadsFor(n, num_threads_);
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int t = 0; t < threads; ++t) {
      const int64_t begin = n * t / threads, end = n * (t + 1) / threads;
#pragma omp simd
      for (int64_t i = begin; i < end; ++i) y[i] = std::min(std::max(x[i], lo), hi);
    }
    return Status::Ok();
  }

 private:
  float lo_ = 0, hi_ = 0;
  int64_t elements_ = 0;
  int num_threads_ = 1;
};

}  // namespace

std::unique_ptr<Kernel> CreateClipCpu() { return std::make_unique<ClipCpu>(); }

}  // namespace braid
