// AddScaledRows for the portable path, AVX2+FMA and AVX-512F (the x86 ones
// under __attribute__((target)), chosen at run time as the SpMM is). Rows go
// four at a time so y is loaded and stored once per four rows: batch-1
// fully connected layers are bound by reading W, and y (N floats) stays in L1.
#include "kernels/cpu/sparse/scaled_rows.h"

#if defined(__x86_64__) || defined(__i386__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#endif

namespace braid {
namespace {

void AddScaledRowsPortable(float* y, const float* const* rows, const float* xs, int count,
                           int64_t n) {
  int j = 0;
  for (; j + 4 <= count; j += 4) {
    const float *r0 = rows[j], *r1 = rows[j + 1], *r2 = rows[j + 2], *r3 = rows[j + 3];
    const float x0 = xs[j], x1 = xs[j + 1], x2 = xs[j + 2], x3 = xs[j + 3];
    for (int64_t i = 0; i < n; ++i) y[i] += x0 * r0[i] + x1 * r1[i] + x2 * r2[i] + x3 * r3[i];
  }
  for (; j < count; ++j)
    for (int64_t i = 0; i < n; ++i) y[i] += xs[j] * rows[j][i];
}

#if defined(__x86_64__) || defined(__i386__)

__attribute__((target("avx512f"))) void AddScaledRowsAvx512(float* y, const float* const* rows,
                                                             const float* xs, int count,
                                                             int64_t n) {
  const int64_t full = n / 16 * 16;
  const __mmask16 tail = static_cast<__mmask16>((1u << (n - full)) - 1u);
  int j = 0;
  for (; j + 4 <= count; j += 4) {
    const float *r0 = rows[j], *r1 = rows[j + 1], *r2 = rows[j + 2], *r3 = rows[j + 3];
    const __m512 x0 = _mm512_set1_ps(xs[j]), x1 = _mm512_set1_ps(xs[j + 1]);
    const __m512 x2 = _mm512_set1_ps(xs[j + 2]), x3 = _mm512_set1_ps(xs[j + 3]);
    for (int64_t i = 0; i < full; i += 16) {
      __m512 acc = _mm512_loadu_ps(y + i);
      acc = _mm512_fmadd_ps(x0, _mm512_loadu_ps(r0 + i), acc);
      acc = _mm512_fmadd_ps(x1, _mm512_loadu_ps(r1 + i), acc);
      acc = _mm512_fmadd_ps(x2, _mm512_loadu_ps(r2 + i), acc);
      acc = _mm512_fmadd_ps(x3, _mm512_loadu_ps(r3 + i), acc);
      _mm512_storeu_ps(y + i, acc);
    }
    if (tail) {
      __m512 acc = _mm512_maskz_loadu_ps(tail, y + full);
      acc = _mm512_fmadd_ps(x0, _mm512_maskz_loadu_ps(tail, r0 + full), acc);
      acc = _mm512_fmadd_ps(x1, _mm512_maskz_loadu_ps(tail, r1 + full), acc);
      acc = _mm512_fmadd_ps(x2, _mm512_maskz_loadu_ps(tail, r2 + full), acc);
      acc = _mm512_fmadd_ps(x3, _mm512_maskz_loadu_ps(tail, r3 + full), acc);
      _mm512_mask_storeu_ps(y + full, tail, acc);
    }
  }
  for (; j < count; ++j) {
    const float* r = rows[j];
    const __m512 x = _mm512_set1_ps(xs[j]);
    for (int64_t i = 0; i < full; i += 16)
      _mm512_storeu_ps(y + i, _mm512_fmadd_ps(x, _mm512_loadu_ps(r + i), _mm512_loadu_ps(y + i)));
    if (tail)
      _mm512_mask_storeu_ps(y + full, tail,
                            _mm512_fmadd_ps(x, _mm512_maskz_loadu_ps(tail, r + full),
                                            _mm512_maskz_loadu_ps(tail, y + full)));
  }
}

__attribute__((target("avx2,fma"))) void AddScaledRowsAvx2(float* y, const float* const* rows,
                                                            const float* xs, int count,
                                                            int64_t n) {
  const int64_t full = n / 8 * 8;
  int j = 0;
  for (; j + 4 <= count; j += 4) {
    const float *r0 = rows[j], *r1 = rows[j + 1], *r2 = rows[j + 2], *r3 = rows[j + 3];
    const __m256 x0 = _mm256_set1_ps(xs[j]), x1 = _mm256_set1_ps(xs[j + 1]);
    const __m256 x2 = _mm256_set1_ps(xs[j + 2]), x3 = _mm256_set1_ps(xs[j + 3]);
    for (int64_t i = 0; i < full; i += 8) {
      __m256 acc = _mm256_loadu_ps(y + i);
      acc = _mm256_fmadd_ps(x0, _mm256_loadu_ps(r0 + i), acc);
      acc = _mm256_fmadd_ps(x1, _mm256_loadu_ps(r1 + i), acc);
      acc = _mm256_fmadd_ps(x2, _mm256_loadu_ps(r2 + i), acc);
      acc = _mm256_fmadd_ps(x3, _mm256_loadu_ps(r3 + i), acc);
      _mm256_storeu_ps(y + i, acc);
    }
    for (int64_t i = full; i < n; ++i)
      y[i] += xs[j] * r0[i] + xs[j + 1] * r1[i] + xs[j + 2] * r2[i] + xs[j + 3] * r3[i];
  }
  for (; j < count; ++j) {
    const float* r = rows[j];
    const __m256 x = _mm256_set1_ps(xs[j]);
    for (int64_t i = 0; i < full; i += 8)
      _mm256_storeu_ps(y + i, _mm256_fmadd_ps(x, _mm256_loadu_ps(r + i), _mm256_loadu_ps(y + i)));
    for (int64_t i = full; i < n; ++i) y[i] += xs[j] * r[i];
  }
}

#endif

}  // namespace

AddScaledRowsFn SelectAddScaledRows(SimdIsa isa) {
  switch (isa) {
#if defined(__x86_64__) || defined(__i386__)
    case SimdIsa::kAvx512: return AddScaledRowsAvx512;
    case SimdIsa::kAvx2: return AddScaledRowsAvx2;
#else
    case SimdIsa::kAvx512:
    case SimdIsa::kAvx2:
#endif
    case SimdIsa::kPortable: break;
  }
  return AddScaledRowsPortable;
}

}  // namespace braid
