// InstanceNormalization (f32), braid's own CPU kernel. PyTorch exports
// GroupNorm(1, C) (PoolFormer, MobileViTv2) as Reshape [N, 1, C*H*W] ->
// InstanceNormalization -> Reshape, so there are often fewer planes than
// threads: then each plane's sums and its normalisation are split across the
// threads; otherwise the planes are. Sums in double (the variance is a
// second pass over the deviations, not E[x^2] - E[x]^2).
#include <omp.h>

#include <algorithm>
#include <cmath>

#include "kernels/cpu/omp_team.h"
#include "kernels/cpu/onednn_kernels.h"
#include "kernels/params/normalization.h"

namespace braid {
namespace {

class InstanceNormCpu final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(p_, ParseInstanceNorm(args));
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
    const int64_t planes = p_.batch * p_.channels;
    const int64_t n = p_.spatial;
    if (planes == 0 || n == 0) return Status::Ok();
    if (planes >= num_threads_ || n < kMinElementsPerThread) {
      const int threads = ThreadsFor(planes * n, std::min<int64_t>(num_threads_, planes));
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
      for (int64_t plane = 0; plane < planes; ++plane) {
        const float* in = x + plane * n;
        double sum = 0;
        for (int64_t i = 0; i < n; ++i) sum += in[i];
        const double mean = n > 0 ? sum / static_cast<double>(n) : 0.0;
        double squares = 0;
        for (int64_t i = 0; i < n; ++i) squares += (in[i] - mean) * (in[i] - mean);
        Normalize(in, y + plane * n, n, mean, squares, scale[plane % p_.channels],
                  bias[plane % p_.channels]);
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
      const float a = static_cast<float>(scale[plane % p_.channels] /
                                         std::sqrt(squares / static_cast<double>(n) + p_.epsilon));
      const float b = bias[plane % p_.channels];
      const float m = static_cast<float>(mean);
      float* out = y + plane * n;
#pragma omp parallel for num_threads(threads) schedule(static)
      for (int64_t i = 0; i < n; ++i) out[i] = (in[i] - m) * a + b;
    }
    return Status::Ok();
  }

 private:
  void Normalize(const float* in, float* out, int64_t n, double mean, double squares,
                 float scale, float bias) const {
    // (x - mean) * a + bias, not x * a + (bias - mean * a): the latter cancels
    // when |mean| is much larger than the deviation.
    const double var = n > 0 ? squares / static_cast<double>(n) : 0.0;
    const float a = static_cast<float>(scale / std::sqrt(var + p_.epsilon));
    const float m = static_cast<float>(mean);
    for (int64_t i = 0; i < n; ++i) out[i] = (in[i] - m) * a + bias;
  }

  InstanceNormParams p_;
  int num_threads_ = 1;
};

}  // namespace

std::unique_ptr<Kernel> CreateInstanceNormCpu() { return std::make_unique<InstanceNormCpu>(); }

}  // namespace braid
