// exp over a SIMD register for braid's own CPU kernels, for inputs <= 0 (a
// softmax's x - max), with the instruction set chosen at run time:
//
//   braid::vector_math::ExpNonPositive(braid::BestSimdIsa(), x, y, n);  // arrays
//
//   // Register by register, inside a function of the same target (called
//   // only where SimdIsaSupported(SimdIsa::kAvx512)):
//   __attribute__((target("avx512f"))) void Row(const float* x, float* y) {
//     _mm512_storeu_ps(y, braid::vector_math::ExpNonPositiveAvx512(_mm512_loadu_ps(x)));
//   }
//
// Cephes' expf: x = n ln2 + r with |r| <= ln2 / 2 (ln2 split in two for an
// exact n ln2), a degree-6 polynomial in r, then a scale by 2^n. Relative
// error at most 1.2e-7 (one ulp) over [-87, 0] (tests/kernels/
// softmax_cpu_test.cc sweeps it); below -87 (where expf would leave the normal
// range) the result is 0, so no denormal ever reaches the caller's sums.
// NaN stays NaN and -inf gives 0 (a softmax's x - max is never +inf: a row
// holding +inf has NaN there, and comes out NaN, as the reference's does).
//
// Each register-level function carries its own target attribute (the build
// sets no -march: one binary runs on every x86-64), so its callers must carry
// the same target and run only where SimdIsaSupported says so. Other
// architectures get neither and the kernels decline.
#ifndef BRAID_KERNELS_CPU_VECTOR_EXP_H_
#define BRAID_KERNELS_CPU_VECTOR_EXP_H_

#if defined(__x86_64__) || defined(__i386__)
// GCC 12's AVX-512 headers seed some intrinsics (masked loads, reductions,
// rounding) with an "undefined" vector that -W(maybe-)uninitialized flags
// wherever they inline (GCC bug 105593); the vector functions of the files
// that use these say so too (see softmax_cpu.cc).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#endif

#include <cstdint>

#include "kernels/cpu/simd_isa.h"

namespace braid::vector_math {

// Cephes' constants for expf.
inline constexpr float kExpLowest = -87.0f;  // below: 0 (FLT_MIN is e^-87.34)
inline constexpr float kExpHighest = 88.3762626647949f;
inline constexpr float kLog2e = 1.44269504088896341f;
inline constexpr float kLn2High = 0.693359375f;      // exact in 9 bits
inline constexpr float kLn2Low = -2.12194440e-4f;    // ln2 - kLn2High
inline constexpr float kExpPoly[6] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                                      4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};

// y[i] = exp(x[i]) for x[i] <= 0 with `isa`'s registers (kAvx2 or kAvx512,
// supported on this CPU; kPortable: std::exp, also 0 below -87).
void ExpNonPositive(SimdIsa isa, const float* x, float* y, int64_t n);

// y[i] = exp(x[i]) for any x: the registers' polynomial (one ulp) where x lies
// in [kExpAnyLow, kExpAnyHigh], std::exp for the lanes outside (denormal
// results, overflow, infinities, NaN); kPortable: std::exp throughout.
inline constexpr float kExpAnyLow = -87.0f;
inline constexpr float kExpAnyHigh = 80.0f;
void Exp(SimdIsa isa, const float* x, float* y, int64_t n);

#if defined(__x86_64__) || defined(__i386__)

// GCC 12's "undefined" seed vectors (above) warn inside these two as well.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

__attribute__((target("avx512f"))) inline __m512 ExpNonPositiveAvx512(__m512 x) {
  // max(lowest, x) keeps a NaN (the second operand wins on NaN).
  x = _mm512_min_ps(_mm512_set1_ps(kExpHighest), x);
  const __mmask16 tiny = _mm512_cmp_ps_mask(x, _mm512_set1_ps(kExpLowest), _CMP_LT_OQ);
  x = _mm512_max_ps(_mm512_set1_ps(kExpLowest), x);
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(kLog2e)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2High), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Low), r);
  __m512 p = _mm512_set1_ps(kExpPoly[0]);
  for (int i = 1; i < 6; ++i) p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpPoly[i]));
  p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  return _mm512_maskz_mov_ps(static_cast<__mmask16>(~tiny), _mm512_scalef_ps(p, n));
}

__attribute__((target("avx2,fma"))) inline __m256 ExpNonPositiveAvx2(__m256 x) {
  x = _mm256_min_ps(_mm256_set1_ps(kExpHighest), x);
  const __m256 tiny = _mm256_cmp_ps(x, _mm256_set1_ps(kExpLowest), _CMP_LT_OQ);
  x = _mm256_max_ps(_mm256_set1_ps(kExpLowest), x);
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(kLog2e)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2High), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Low), r);
  __m256 p = _mm256_set1_ps(kExpPoly[0]);
  for (int i = 1; i < 6; ++i) p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpPoly[i]));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  // 2^n through the exponent bits: n is in [-126, 128] here, and 2^128
  // (x near kExpHighest) only arises for inputs above 0, outside the contract.
  // A NaN lane's p is NaN already (its n's bits are a finite scale).
  const __m256i bits = _mm256_slli_epi32(
      _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_andnot_ps(tiny, _mm256_mul_ps(p, _mm256_castsi256_ps(bits)));
}

#pragma GCC diagnostic pop

#endif

}  // namespace braid::vector_math

#endif  // BRAID_KERNELS_CPU_VECTOR_EXP_H_
