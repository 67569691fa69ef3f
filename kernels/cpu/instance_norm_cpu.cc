// InstanceNormalization and GroupNormalization (f32), braid's own CPU kernel. PyTorch exports
// GroupNorm(1, C) (PoolFormer, MobileViTv2) as Reshape [N, 1, C*H*W] ->
// InstanceNormalization -> Reshape, so there are often fewer planes than
// threads: then each plane's sums and its normalisation are split across the
// threads; otherwise the planes are. Sums in double (the variance is a
// second pass over the deviations, not E[x^2] - E[x]^2).
#include <omp.h>

#include <algorithm>
#include <cmath>

#include "kernels/host/omp_team.h"
#include "kernels/cpu/onednn_kernels.h"
#include "kernels/params/normalization.h"

namespace braid {
namespace {

// InstanceNormalization, and GroupNormalization as planes of C / groups
// channels (kernels/params/normalization.h).
class InstanceNormCpu final : public Kernel {
 public:
  explicit InstanceNormCpu(bool group_norm) : group_norm_(group_norm) {}

  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(p_, group_norm_ ? ParseGroupNorm(args) : ParseInstanceNorm(args));
    if (p_.dtype != DataType::kF32) return Unimplemented(args.Where() + ": f32 only");
    if (args.inputs[0].layout != TensorLayout::kPlain)
      return Unimplemented(args.Where() + ": plain layout only");
    num_threads_ = std::max(args.num_threads, 1);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    const float* x = static_cast<const float*>(args.src[0]);
    const float* scale = static_cast<const float*>(args.src[1]);
    const float* bias = static_cast<const float*>(args.src[2]);
    float* y = static_cast<float*>(args.dst[0]);
    const int64_t planes = p_.planes();
    const int64_t n = p_.plane_size();
    if (planes == 0 || n == 0) return Status::Ok();
    if (planes >= num_threads_ || n < kMinElementsPerThread) {
      const int threads = ThreadsFor(planes * n, std::min<int64_t>(num_threads_, planes));
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
      for (int64_t plane = 0; plane < planes; ++plane) {
        const float* in = x + plane * n;
        double sum = 0;
        for (int64_t i = 0; i < n; ++i) sum += in[i];
        const double mean = sum / static_cast<double>(n);
        double squares = 0;
        for (int64_t i = 0; i < n; ++i) squares += (in[i] - mean) * (in[i] - mean);
        const double inv_std = 1.0 / std::sqrt(squares / static_cast<double>(n) + p_.epsilon);
        const auto m = static_cast<float>(mean);
        // (x - mean) * a + bias, not x * a + (bias - mean * a): the latter
        // cancels when |mean| is much larger than the deviation.
        for (int64_t begin = 0; begin < n; begin += p_.spatial) {
          const int64_t k = p_.AffineIndex(plane, begin);
          const auto a = static_cast<float>(scale[k] * inv_std);
          const float b = bias[k];
          for (int64_t i = begin; i < begin + p_.spatial; ++i) y[plane * n + i] = (in[i] - m) * a + b;
        }
      }
      return Status::Ok();
    }
    // Few large planes: each one's passes split across the threads.
    const int threads = ThreadsFor(n, num_threads_);  // n >= kMinElementsPerThread here
    for (int64_t plane = 0; plane < planes; ++plane) {
      const float* in = x + plane * n;
      double sum = 0;
#pragma omp parallel for num_threads(threads) schedule(static) reduction(+ : sum)
      for (int64_t i = 0; i < n; ++i) sum += in[i];
      const double mean = sum / static_cast<double>(n);
      double squares = 0;
#pragma omp parallel for num_threads(threads) schedule(static) reduction(+ : squares)
      for (int64_t i = 0; i < n; ++i) squares += (in[i] - mean) * (in[i] - mean);
      const double inv_std = 1.0 / std::sqrt(squares / static_cast<double>(n) + p_.epsilon);
      const auto m = static_cast<float>(mean);
      float* out = y + plane * n;
#pragma omp parallel for num_threads(threads) schedule(static)
      for (int64_t i = 0; i < n; ++i) {
        const int64_t k = p_.AffineIndex(plane, i);
        out[i] = (in[i] - m) * static_cast<float>(scale[k] * inv_std) + bias[k];
      }
    }
    return Status::Ok();
  }

 private:
  bool group_norm_;
  InstanceNormParams p_;
  int num_threads_ = 1;
};

}  // namespace

std::unique_ptr<Kernel> CreateInstanceNormCpu() { return std::make_unique<InstanceNormCpu>(false); }
std::unique_ptr<Kernel> CreateGroupNormCpu() { return std::make_unique<InstanceNormCpu>(true); }

}  // namespace braid
