// Cast and CastLike, braid's own CPU kernel for every pair of types the
// reference converts (kernels/params/cast.h, the same per-element rules, so
// the same bits): the elements split into one contiguous range per thread,
// each converted by the reference's loop for that pair, instantiated per
// pair so the compiler vectorises what the target ISA allows (f32 <-> i32,
// bool / u8 -> f32, same-size copies). f32 <-> f16 on x86 with F16C run
// eight lanes per instruction (vcvtps2ph rounds to nearest even exactly as
// FloatToHalf does, every one of the 2^32 inputs checked; vcvtph2ps equals
// HalfToFloat except that it quiets signalling NaNs, whose lanes are redone
// with integer ops). Input and output in one layout (the elements are
// converted in memory order); mixed layouts decline.
#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "kernels/cpu/onednn_kernels.h"
#include "kernels/cpu/simd_isa.h"
#include "kernels/host/omp_team.h"
#include "kernels/params/cast.h"
#include "kernels/params/elementwise.h"

namespace braid {
namespace {

#if defined(__x86_64__)
bool F16cSupported() {
  return SimdIsaSupported(SimdIsa::kAvx2) && __builtin_cpu_supports("f16c");
}

__attribute__((target("avx2,f16c"))) void FloatToHalfF16c(const void* src, void* dst,
                                                            int64_t n) {
  const auto* x = static_cast<const float*>(src);
  auto* y = static_cast<uint16_t*>(dst);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h =
        _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), h);
  }
  for (; i < n; ++i) y[i] = FloatToHalf(x[i]);
}

__attribute__((target("avx2,f16c"))) void HalfToFloatF16c(const void* src, void* dst,
                                                            int64_t n) {
  const auto* x = static_cast<const uint16_t*>(src);
  auto* y = static_cast<float*>(dst);
  const __m256i exponent_mask = _mm256_set1_epi32(0x7C00);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i));
    const __m256 converted = _mm256_cvtph_ps(h);
    // Inf / NaN lanes as HalfToFloat builds them (sign, all-ones exponent,
    // the mantissa shifted up), so a signalling NaN stays signalling.
    const __m256i w = _mm256_cvtepu16_epi32(h);
    const __m256i special = _mm256_cmpeq_epi32(_mm256_and_si256(w, exponent_mask), exponent_mask);
    const __m256i sign = _mm256_slli_epi32(_mm256_and_si256(w, _mm256_set1_epi32(0x8000)), 16);
    const __m256i mantissa = _mm256_slli_epi32(_mm256_and_si256(w, _mm256_set1_epi32(0x3FF)), 13);
    const __m256i bits =
        _mm256_or_si256(_mm256_or_si256(sign, mantissa), _mm256_set1_epi32(0x7F800000));
    _mm256_storeu_ps(y + i, _mm256_blendv_ps(converted, _mm256_castsi256_ps(bits),
                                             _mm256_castsi256_ps(special)));
  }
  for (; i < n; ++i) y[i] = HalfToFloat(x[i]);
}
#endif

class CastCpu final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    ASSIGN_OR_RETURN(const DataType to, ParseCastTarget(args));
    const TensorDesc& in = args.inputs[0];
    if (in.layout != args.outputs[0].layout)
      return Unimplemented(args.Where() + ": input and output in different layouts");
    cast_ = SelectCast(in.dtype, to);
    if (cast_ == nullptr)
      return Unimplemented(args.Where() + ": no conversion from " + DataTypeName(in.dtype));
#if defined(__x86_64__)
    if (F16cSupported() && in.dtype == DataType::kF32 && to == DataType::kF16)
      cast_ = &FloatToHalfF16c;
    if (F16cSupported() && in.dtype == DataType::kF16 && to == DataType::kF32)
      cast_ = &HalfToFloatF16c;
#endif
    src_bytes_ = static_cast<int64_t>(DataTypeSize(in.dtype));
    dst_bytes_ = static_cast<int64_t>(DataTypeSize(to));
    elements_ = in.elements();
    num_threads_ = std::max(args.num_threads, 1);
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    const auto* src = static_cast<const std::byte*>(args.src[0]);
    auto* dst = static_cast<std::byte*>(args.dst[0]);
    const int64_t n = elements_;
    const int threads = ThreadsFor(n, num_threads_);
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int t = 0; t < threads; ++t) {
      const int64_t first = n * t / threads, end = n * (t + 1) / threads;
      cast_(src + first * src_bytes_, dst + first * dst_bytes_, end - first);
    }
    return Status::Ok();
  }

 private:
  CastFn cast_ = nullptr;
  int64_t src_bytes_ = 0, dst_bytes_ = 0, elements_ = 0;
  int num_threads_ = 1;
};

}  // namespace

std::unique_ptr<Kernel> CreateCastCpu() { return std::make_unique<CastCpu>(); }

}  // namespace braid
