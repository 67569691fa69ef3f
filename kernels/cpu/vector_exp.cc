#include "kernels/cpu/vector_exp.h"

#include <cmath>

namespace braid::vector_math {
namespace {

#if defined(__x86_64__) || defined(__i386__)

// The AVX-512 intrinsics' "undefined" seed vectors (GCC bug 105593; see
// vector_exp.h) warn where they inline, in the vector functions below.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
__attribute__((target("avx512f"))) void ExpAvx512(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, ExpNonPositiveAvx512(_mm512_loadu_ps(x + i)));
  if (i < n) {
    const __mmask16 tail = static_cast<__mmask16>((1u << (n - i)) - 1u);
    _mm512_mask_storeu_ps(y + i, tail, ExpNonPositiveAvx512(_mm512_maskz_loadu_ps(tail, x + i)));
  }
}

__attribute__((target("avx2,fma"))) void ExpAvx2(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, ExpNonPositiveAvx2(_mm256_loadu_ps(x + i)));
  for (; i < n; ++i) {
    // One lane at a time: the same arithmetic as the full registers.
    alignas(32) float lane[8] = {x[i]};
    _mm256_store_ps(lane, ExpNonPositiveAvx2(_mm256_load_ps(lane)));
    y[i] = lane[0];
  }
}
// Exp over any input: the polynomial where it holds, std::exp for the rest.
__attribute__((target("avx512f"))) void ExpAnyAvx512(const float* x, float* y, int64_t n) {
  const __m512 low = _mm512_set1_ps(kExpAnyLow), high = _mm512_set1_ps(kExpAnyHigh);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    const __mmask16 in_range =
        _mm512_cmp_ps_mask(v, low, _CMP_GE_OQ) & _mm512_cmp_ps_mask(v, high, _CMP_LE_OQ);
    _mm512_storeu_ps(y + i, ExpNonPositiveAvx512(v));
    if (in_range != 0xffff)
      for (int k = 0; k < 16; ++k)
        if (!((in_range >> k) & 1)) y[i + k] = std::exp(x[i + k]);
  }
  for (; i < n; ++i) y[i] = std::exp(x[i]);
}

__attribute__((target("avx2,fma"))) void ExpAnyAvx2(const float* x, float* y, int64_t n) {
  const __m256 low = _mm256_set1_ps(kExpAnyLow), high = _mm256_set1_ps(kExpAnyHigh);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    const int in_range = _mm256_movemask_ps(
        _mm256_and_ps(_mm256_cmp_ps(v, low, _CMP_GE_OQ), _mm256_cmp_ps(v, high, _CMP_LE_OQ)));
    _mm256_storeu_ps(y + i, ExpNonPositiveAvx2(v));
    if (in_range != 0xff)
      for (int k = 0; k < 8; ++k)
        if (!((in_range >> k) & 1)) y[i + k] = std::exp(x[i + k]);
  }
  for (; i < n; ++i) y[i] = std::exp(x[i]);
}
#pragma GCC diagnostic pop
#endif

}  // namespace

void ExpNonPositive(SimdIsa isa, const float* x, float* y, int64_t n) {
#if defined(__x86_64__) || defined(__i386__)
  if (isa == SimdIsa::kAvx512) return ExpAvx512(x, y, n);
  if (isa == SimdIsa::kAvx2) return ExpAvx2(x, y, n);
#endif
  (void)isa;  // only x86 has vector variants
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] < kExpLowest ? 0.0f : std::exp(x[i]);
}

void Exp(SimdIsa isa, const float* x, float* y, int64_t n) {
#if defined(__x86_64__) || defined(__i386__)
  if (isa == SimdIsa::kAvx512) return ExpAnyAvx512(x, y, n);
  if (isa == SimdIsa::kAvx2) return ExpAnyAvx2(x, y, n);
#endif
  (void)isa;
  for (int64_t i = 0; i < n; ++i) y[i] = std::exp(x[i]);
}

}  // namespace braid::vector_math
