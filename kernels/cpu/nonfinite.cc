#include "kernels/cpu/nonfinite.h"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace braid {
namespace {

constexpr uint32_t kExponent = 0x7f800000u;  // all ones: NaN or Inf

bool Portable(const float* x, int64_t n) {
  uint32_t any = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, x + i, sizeof bits);
    any |= static_cast<uint32_t>((bits & kExponent) == kExponent);
  }
  return any != 0;
}

#if defined(__x86_64__) || defined(__i386__)
// The AVX-512 intrinsics' "undefined" seed vectors (GCC bug 105593, as in
// softmax_cpu.cc) warn where they inline.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

// The unsigned max of the exponent fields reaches kExponent iff one is all
// ones; four independent loads per step keep the loop at load speed.
__attribute__((target("avx512f"))) bool Avx512(const float* x, int64_t n) {
  const __m512i e = _mm512_set1_epi32(static_cast<int>(kExponent));
  __m512i acc = _mm512_setzero_si512();
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m512i a = _mm512_and_si512(_mm512_loadu_si512(x + i), e);
    const __m512i b = _mm512_and_si512(_mm512_loadu_si512(x + i + 16), e);
    const __m512i c = _mm512_and_si512(_mm512_loadu_si512(x + i + 32), e);
    const __m512i d = _mm512_and_si512(_mm512_loadu_si512(x + i + 48), e);
    acc = _mm512_max_epu32(acc, _mm512_max_epu32(_mm512_max_epu32(a, b), _mm512_max_epu32(c, d)));
  }
  return _mm512_cmpeq_epi32_mask(acc, e) != 0 || Portable(x + i, n - i);
}

#pragma GCC diagnostic pop

__attribute__((target("avx2"))) inline __m256i Exponents8(const float* x, __m256i e) {
  return _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x)), e);
}

__attribute__((target("avx2"))) bool Avx2(const float* x, int64_t n) {
  const __m256i e = _mm256_set1_epi32(static_cast<int>(kExponent));
  __m256i acc = _mm256_setzero_si256();
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256i ab = _mm256_max_epu32(Exponents8(x + i, e), Exponents8(x + i + 8, e));
    const __m256i cd = _mm256_max_epu32(Exponents8(x + i + 16, e), Exponents8(x + i + 24, e));
    acc = _mm256_max_epu32(acc, _mm256_max_epu32(ab, cd));
  }
  return _mm256_movemask_epi8(_mm256_cmpeq_epi32(acc, e)) != 0 || Portable(x + i, n - i);
}
#endif

bool Scan(SimdIsa isa, const float* x, int64_t n) {
#if defined(__x86_64__) || defined(__i386__)
  if (isa == SimdIsa::kAvx512) return Avx512(x, n);
  if (isa == SimdIsa::kAvx2) return Avx2(x, n);
#endif
  (void)isa;
  return Portable(x, n);
}

}  // namespace

bool AnyNonFinite(SimdIsa isa, const float* x, int64_t count, int num_threads) {
  constexpr int64_t kPerThread = int64_t{1} << 16;
  const int threads =
      static_cast<int>(std::clamp<int64_t>(count / kPerThread, 1, std::max(num_threads, 1)));
  if (threads == 1) return Scan(isa, x, count);
  int any = 0;
#pragma omp parallel for num_threads(threads) reduction(| : any)
  for (int t = 0; t < threads; ++t) {
    const int64_t begin = count * t / threads, end = count * (t + 1) / threads;
    any |= Scan(isa, x + begin, end - begin) ? 1 : 0;
  }
  return any != 0;
}

}  // namespace braid
