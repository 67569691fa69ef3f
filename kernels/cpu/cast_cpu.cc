// Cast and CastLike, braid's own CPU kernel for every pair of types the
// reference converts (kernels/params/cast.h, the same per-element rules, so
// the same bits): the elements split into one contiguous range per thread,
// each converted by the reference's loop for that pair, instantiated per
// pair so the compiler vectorises what the target ISA allows (same-size
// copies, f32 -> bool, ...). On x86 with AVX2, f32 -> i32 / i64 and i32 /
// u8 / bool -> f32 run eight lanes per instruction (lanes outside int32 redo
// the reference's rule); with F16C, f32 <-> f16 too (vcvtps2ph rounds to
// nearest even exactly as FloatToHalf does, all 2^32 inputs checked;
// vcvtph2ps equals HalfToFloat except that it quiets signalling NaNs, whose
// lanes are rebuilt with integer ops). Input and output in one layout (the
// elements are converted in memory order); mixed layouts decline.
#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>

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

// f32 -> i32 / i64: vcvttps2dq truncates toward zero as TruncateToInt64 does
// for |v| < 2^31 and gives INT32_MIN for NaN and everything beyond; lanes
// holding INT32_MIN (those, and a true -2^31) redo the reference's rule.
template <DataType kTo>
__attribute__((target("avx2"))) void FloatToIntAvx2(const void* src, void* dst, int64_t n) {
  using Out = typename cast_internal::Storage<kTo>::type;
  const auto* x = static_cast<const float*>(src);
  auto* y = static_cast<Out*>(dst);
  const __m256i sentinel = _mm256_set1_epi32(std::numeric_limits<int32_t>::min());
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i t = _mm256_cvttps_epi32(_mm256_loadu_ps(x + i));
    if constexpr (kTo == DataType::kI32) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), t);
    } else {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i),
                          _mm256_cvtepi32_epi64(_mm256_castsi256_si128(t)));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i + 4),
                          _mm256_cvtepi32_epi64(_mm256_extracti128_si256(t, 1)));
    }
    const int redo = _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(t, sentinel)));
    for (int k = 0; redo != 0 && k < 8; ++k)
      if ((redo >> k) & 1) cast_internal::CastLoop<DataType::kF32, kTo>(x + i + k, y + i + k, 1);
  }
  cast_internal::CastLoop<DataType::kF32, kTo>(x + i, y + i, n - i);
}

// i32, u8 and bool -> f32: widen to i32 lanes (bool as 0 / 1) and convert;
// exact where the reference rounds the same integer through int64.
template <DataType kFrom>
__attribute__((target("avx2"))) void SmallIntToFloatAvx2(const void* src, void* dst, int64_t n) {
  using In = typename cast_internal::Storage<kFrom>::type;
  const auto* x = static_cast<const In*>(src);
  auto* y = static_cast<float*>(dst);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256i w;
    if constexpr (kFrom == DataType::kI32) {
      w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i));
    } else {
      w = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(x + i)));
      if constexpr (kFrom == DataType::kBool)
        w = _mm256_andnot_si256(_mm256_cmpeq_epi32(w, _mm256_setzero_si256()),
                                _mm256_set1_epi32(1));
    }
    _mm256_storeu_ps(y + i, _mm256_cvtepi32_ps(w));
  }
  cast_internal::CastLoop<kFrom, DataType::kF32>(x + i, y + i, n - i);
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
    if (SimdIsaSupported(SimdIsa::kAvx2)) {
      if (in.dtype == DataType::kF32 && to == DataType::kI32)
        cast_ = &FloatToIntAvx2<DataType::kI32>;
      if (in.dtype == DataType::kF32 && to == DataType::kI64)
        cast_ = &FloatToIntAvx2<DataType::kI64>;
      if (to == DataType::kF32 && in.dtype == DataType::kI32)
        cast_ = &SmallIntToFloatAvx2<DataType::kI32>;
      if (to == DataType::kF32 && in.dtype == DataType::kU8)
        cast_ = &SmallIntToFloatAvx2<DataType::kU8>;
      if (to == DataType::kF32 && in.dtype == DataType::kBool)
        cast_ = &SmallIntToFloatAvx2<DataType::kBool>;
    }
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
