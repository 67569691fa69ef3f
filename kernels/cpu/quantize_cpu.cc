// QuantizeLinear / DequantizeLinear (plain layout), braid's CPU kernel: the
// loops of kernels/params/quantize.h over element ranges split across threads,
// QuantizeLinear's vectorised (quantize_cpu.h). QDQ models carry one of these
// on every activation, so they are on the hot path of every quantized model.
#include "kernels/cpu/quantize_cpu.h"

#include <omp.h>

#include <algorithm>
#include <limits>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "kernels/cpu/onednn_kernels.h"
#include "kernels/host/omp_team.h"

namespace braid {
namespace {

#if defined(__x86_64__) || defined(__i386__)

// The AVX-512 intrinsics' "undefined" seed vectors warn where they inline
// (GCC bug 105593; see vector_exp.h).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

// 16 lanes: q = x / s rounded half to even (roundscale with the nearest mode:
// what nearbyint does in the default rounding mode), + zp, NaN -> 0, clamped.
__attribute__((target("avx512f"))) inline __m512i QuantizeLanesAvx512(__m512 x, __m512 s,
                                                                      __m512 zp, __m512 lo,
                                                                      __m512 hi) {
  __m512 v = _mm512_add_ps(
      _mm512_roundscale_ps(_mm512_div_ps(x, s), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), zp);
  v = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, v, _CMP_ORD_Q), v);  // NaN -> 0
  return _mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(v, lo), hi));
}

// One run of elements sharing scale s and zero point zp, narrowed to Q.
template <typename Q>
__attribute__((target("avx512f"))) void QuantizeRunAvx512(const float* x, float s, float zp, Q* y,
                                                          int64_t n) {
  const __m512 vs = _mm512_set1_ps(s), vzp = _mm512_set1_ps(zp);
  const __m512 lo = _mm512_set1_ps(static_cast<float>(std::numeric_limits<Q>::min()));
  const __m512 hi = _mm512_set1_ps(static_cast<float>(std::numeric_limits<Q>::max()));
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i),
                     _mm512_cvtepi32_epi8(QuantizeLanesAvx512(_mm512_loadu_ps(x + i), vs, vzp, lo, hi)));
  if (i < n) {
    const __mmask16 tail = static_cast<__mmask16>((1u << (n - i)) - 1u);
    _mm512_mask_cvtepi32_storeu_epi8(
        y + i, tail, QuantizeLanesAvx512(_mm512_maskz_loadu_ps(tail, x + i), vs, vzp, lo, hi));
  }
}

template <typename Q>
__attribute__((target("avx2"))) void QuantizeRunAvx2(const float* x, float s, float zp, Q* y,
                                                     int64_t n) {
  const __m256 vs = _mm256_set1_ps(s), vzp = _mm256_set1_ps(zp);
  const __m256 lo = _mm256_set1_ps(static_cast<float>(std::numeric_limits<Q>::min()));
  const __m256 hi = _mm256_set1_ps(static_cast<float>(std::numeric_limits<Q>::max()));
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 v = _mm256_add_ps(
        _mm256_round_ps(_mm256_div_ps(_mm256_loadu_ps(x + i), vs),
                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC),
        vzp);
    v = _mm256_and_ps(v, _mm256_cmp_ps(v, v, _CMP_ORD_Q));  // NaN -> 0
    alignas(32) int32_t lanes[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes),
                       _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(v, lo), hi)));
    for (int k = 0; k < 8; ++k) y[i + k] = static_cast<Q>(lanes[k]);
  }
  // The tail: the scalar loop, this run's scale and zero point.
  QuantizeLinearParams run;
  run.has_zero_point = true;
  const Q z = static_cast<Q>(zp);
  quantize_internal::Quantize(run, x + i, &s, &z, y + i, 0, n - i);
}
#pragma GCC diagnostic pop

template <typename Q>
void QuantizeVector(SimdIsa isa, const QuantizeLinearParams& p, const float* x, const float* scale,
                    const Q* zero_point, Q* y, int64_t begin, int64_t end) {
  quantize_internal::ForEachRun(p, begin, end, [&](int64_t k, int64_t b, int64_t e) {
    const float zp = p.has_zero_point ? static_cast<float>(zero_point[k]) : 0.0f;
    if (isa == SimdIsa::kAvx512)
      QuantizeRunAvx512(x + b, scale[k], zp, y + b, e - b);
    else
      QuantizeRunAvx2(x + b, scale[k], zp, y + b, e - b);
  });
}

#endif

class QuantizeLinearCpu final : public Kernel {
 public:
  explicit QuantizeLinearCpu(bool quantize) : quantize_(quantize) {}

  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(p_, quantize_ ? ParseQuantizeLinear(args) : ParseDequantizeLinear(args));
    // Per tensor, every element is treated alike: any layout (the same on
    // input and output, which the runtime's channels-last pass ensures).
    if (p_.per_axis && (args.inputs[0].layout != TensorLayout::kPlain ||
                        args.outputs[0].layout != TensorLayout::kPlain))
      return Unimplemented(args.Where() + ": per-axis (de)quantization in plain layout only");
    if (args.inputs[0].layout != args.outputs[0].layout)
      return Unimplemented(args.Where() + ": input and output layouts differ");
    threads_ = ThreadsFor(p_.elements(), std::max(args.num_threads, 1));
    isa_ = BestSimdIsa();
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    const int64_t n = p_.elements();
#pragma omp parallel num_threads(threads_) if (threads_ > 1)
    {
      const int64_t team = omp_get_num_threads(), me = omp_get_thread_num();
      QuantizeLinearRange(isa_, p_, args, n * me / team, n * (me + 1) / team);
    }
    return Status::Ok();
  }

 private:
  bool quantize_;
  QuantizeLinearParams p_;
  int threads_ = 1;
  SimdIsa isa_ = SimdIsa::kPortable;
};

}  // namespace

void QuantizeLinearRange(SimdIsa isa, const QuantizeLinearParams& p, const RunArgs& args,
                         int64_t begin, int64_t end) {
#if defined(__x86_64__) || defined(__i386__)
  if (p.quantize && isa != SimdIsa::kPortable) {
    const auto* x = static_cast<const float*>(args.src[0]);
    const auto* scale = static_cast<const float*>(args.src[1]);
    const void* zp = args.src.size() > 2 ? args.src[2] : nullptr;
    if (p.quantized == DataType::kI8)
      QuantizeVector(isa, p, x, scale, static_cast<const int8_t*>(zp),
                     static_cast<int8_t*>(args.dst[0]), begin, end);
    else
      QuantizeVector(isa, p, x, scale, static_cast<const uint8_t*>(zp),
                     static_cast<uint8_t*>(args.dst[0]), begin, end);
    return;
  }
#endif
  (void)isa;
  RunQuantizeLinear(p, args, begin, end);
}

std::unique_ptr<Kernel> CreateQuantizeLinearCpu() { return std::make_unique<QuantizeLinearCpu>(true); }
std::unique_ptr<Kernel> CreateDequantizeLinearCpu() {
  return std::make_unique<QuantizeLinearCpu>(false);
}

}  // namespace braid
