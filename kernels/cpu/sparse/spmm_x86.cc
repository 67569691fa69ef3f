// x86 SpMM kernels: AVX2+FMA (8 lanes) and AVX-512F (16 lanes), compiled
// with __attribute__((target)) so the library itself builds for baseline
// x86-64 and BestSparseIsa() picks one at run time. Same loop structure as
// spmm_portable.cc: per block row (R = 1 or 4 output rows), per column tile,
// one FMA per (row, vector) per block with the weight broadcast; R = 4 loads
// each D vector once for 4 rows. Bias seeds the accumulators; none / Relu /
// Clip are a clamp in registers before the store (operands ordered so NaN
// propagates); other activations run over the stored row afterwards. With
// R = 1 and one column (batch-1 fully connected) the loop runs over a row's
// non-zeros instead, with gathers.
#if defined(__x86_64__) || defined(__i386__)

// GCC 12's AVX-512 headers seed some intrinsics (gathers, reductions,
// max/min) with an "undefined" vector that -Wmaybe-uninitialized flags at
// every use (GCC bug 105593); the warning is about the header, not this code.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <algorithm>

#include "kernels/cpu/sparse/spmm.h"

namespace braid::sparse_internal {
namespace {

struct RowBlock {
  int rows_here;
  int64_t r0;
};

template <int R>
RowBlock BlockRows(const SparseMatrix& w, int64_t rb) {
  const int64_t r0 = rb * R;
  return {static_cast<int>(std::min<int64_t>(R, w.rows - r0)), r0};
}

// ---- AVX-512 ---------------------------------------------------------------

template <int R, int V>
__attribute__((target("avx512f"))) inline void TileAvx512(
    const SpmmArgs& a, int64_t rb, const float* bias, RowBlock rows,
    __m512 lo, __m512 hi, int64_t c, __mmask16 tail) {
  const SparseMatrix& w = *a.w;
  const int32_t* offs = w.offset.data();
  const float* vals = w.values.data();
  __m512 acc[R][V];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) acc[r][v] = _mm512_set1_ps(bias[r]);
  for (int32_t j = w.block_row_ptr[rb]; j < w.block_row_ptr[rb + 1]; ++j) {
    const float* d = a.d + offs[j] + c;
    __m512 dv[V];
    for (int v = 0; v < V; ++v)
      dv[v] = V == 1 ? _mm512_maskz_loadu_ps(tail, d)
                     : _mm512_loadu_ps(d + 16 * v);
    for (int r = 0; r < R; ++r) {
      const __m512 wv = _mm512_set1_ps(vals[j * R + r]);
      for (int v = 0; v < V; ++v) acc[r][v] = _mm512_fmadd_ps(wv, dv[v], acc[r][v]);
    }
  }
  for (int r = 0; r < rows.rows_here; ++r) {
    float* out = a.c + (rows.r0 + r) * a.ldc + c;
    for (int v = 0; v < V; ++v) {
      // maskz forms: GCC 12's plain _mm512_max_ps trips -Wmaybe-uninitialized.
      const __m512 y = _mm512_maskz_min_ps(
          0xFFFF, hi, _mm512_maskz_max_ps(0xFFFF, lo, acc[r][v]));
      if (V == 1)
        _mm512_mask_storeu_ps(out, tail, y);
      else
        _mm512_storeu_ps(out + 16 * v, y);
    }
  }
}

// One output column (a fully connected layer at batch 1): vectorise over a
// row's non-zeros with gathers instead of over columns.
__attribute__((target("avx512f"))) void SpmvAvx512(const SpmmArgs& a,
                                                   int64_t r0, int64_t r1,
                                                   int64_t c, const Clamp& clamp) {
  const SparseMatrix& w = *a.w;
  const int32_t* offs = w.offset.data();
  const float* vals = w.values.data();
  const float* d = a.d + c;
  for (int64_t r = r0; r < r1; ++r) {
    const int32_t j1 = w.block_row_ptr[r + 1];
    int32_t j = w.block_row_ptr[r];
    __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
    for (; j + 32 <= j1; j += 32) {
      const __m512i i0 = _mm512_loadu_si512(offs + j);
      const __m512i i1 = _mm512_loadu_si512(offs + j + 16);
      acc0 = _mm512_fmadd_ps(_mm512_loadu_ps(vals + j), _mm512_i32gather_ps(i0, d, 4), acc0);
      acc1 = _mm512_fmadd_ps(_mm512_loadu_ps(vals + j + 16), _mm512_i32gather_ps(i1, d, 4), acc1);
    }
    float sum = _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
    for (; j < j1; ++j) sum += vals[j] * d[offs[j]];
    if (a.bias != nullptr) sum += a.bias[r];
    a.c[r * a.ldc + c] = std::min(std::max(sum, clamp.lo), clamp.hi);
  }
}

template <int R>
__attribute__((target("avx512f"))) void SpmmAvx512(const SpmmArgs& a,
                                                   int64_t rb0, int64_t rb1,
                                                   int64_t c0, int64_t c1) {
  constexpr int kWide = R == 1 ? 4 : 2;  // vectors per row in the main tile
  const Clamp clamp = ClampOf(*a.activation);
  if (R == 1 && c1 - c0 == 1) {
    SpmvAvx512(a, rb0, rb1, c0, clamp);
    if (clamp.needs_scalar_pass)
      for (int64_t r = rb0; r < rb1; ++r) a.activation->ApplyInPlace(a.c + r * a.ldc + c0, 1);
    return;
  }
  const __m512 lo = _mm512_set1_ps(clamp.lo);
  const __m512 hi = _mm512_set1_ps(clamp.hi);
  for (int64_t rb = rb0; rb < rb1; ++rb) {
    const RowBlock rows = BlockRows<R>(*a.w, rb);
    float bias[R];
    for (int r = 0; r < R; ++r)
      bias[r] = a.bias != nullptr && r < rows.rows_here ? a.bias[rows.r0 + r] : 0.0f;
    int64_t c = c0;
    for (; c + 16 * kWide <= c1; c += 16 * kWide)
      TileAvx512<R, kWide>(a, rb, bias, rows, lo, hi, c, 0xFFFF);
    for (; c < c1; c += 16) {
      const int64_t n = std::min<int64_t>(16, c1 - c);
      const __mmask16 tail = static_cast<__mmask16>((1u << n) - 1u);
      TileAvx512<R, 1>(a, rb, bias, rows, lo, hi, c, tail);
    }
    if (clamp.needs_scalar_pass)
      for (int r = 0; r < rows.rows_here; ++r)
        a.activation->ApplyInPlace(a.c + (rows.r0 + r) * a.ldc + c0, c1 - c0);
  }
}

// ---- AVX2 ------------------------------------------------------------------

// mask for n < 8 lanes: load 8 ints starting at kMaskTable + 8 - n.
alignas(64) constexpr int32_t kMaskTable[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                                0,  0,  0,  0,  0,  0,  0,  0};

template <int R, int V>
__attribute__((target("avx2,fma"))) inline void TileAvx2(
    const SpmmArgs& a, int64_t rb, const float* bias, RowBlock rows,
    __m256 lo, __m256 hi, int64_t c, __m256i tail) {
  const SparseMatrix& w = *a.w;
  const int32_t* offs = w.offset.data();
  const float* vals = w.values.data();
  __m256 acc[R][V];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) acc[r][v] = _mm256_set1_ps(bias[r]);
  for (int32_t j = w.block_row_ptr[rb]; j < w.block_row_ptr[rb + 1]; ++j) {
    const float* d = a.d + offs[j] + c;
    __m256 dv[V];
    for (int v = 0; v < V; ++v)
      dv[v] = V == 1 ? _mm256_maskload_ps(d, tail) : _mm256_loadu_ps(d + 8 * v);
    for (int r = 0; r < R; ++r) {
      const __m256 wv = _mm256_set1_ps(vals[j * R + r]);
      for (int v = 0; v < V; ++v) acc[r][v] = _mm256_fmadd_ps(wv, dv[v], acc[r][v]);
    }
  }
  for (int r = 0; r < rows.rows_here; ++r) {
    float* out = a.c + (rows.r0 + r) * a.ldc + c;
    for (int v = 0; v < V; ++v) {
      const __m256 y = _mm256_min_ps(hi, _mm256_max_ps(lo, acc[r][v]));
      if (V == 1)
        _mm256_maskstore_ps(out, tail, y);
      else
        _mm256_storeu_ps(out + 8 * v, y);
    }
  }
}

__attribute__((target("avx2,fma"))) void SpmvAvx2(const SpmmArgs& a,
                                                  int64_t r0, int64_t r1,
                                                  int64_t c, const Clamp& clamp) {
  const SparseMatrix& w = *a.w;
  const int32_t* offs = w.offset.data();
  const float* vals = w.values.data();
  const float* d = a.d + c;
  for (int64_t r = r0; r < r1; ++r) {
    const int32_t j1 = w.block_row_ptr[r + 1];
    int32_t j = w.block_row_ptr[r];
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    for (; j + 16 <= j1; j += 16) {
      const __m256i i0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(offs + j));
      const __m256i i1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(offs + j + 8));
      acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(vals + j), _mm256_i32gather_ps(d, i0, 4), acc0);
      acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(vals + j + 8), _mm256_i32gather_ps(d, i1, 4), acc1);
    }
    const __m256 acc = _mm256_add_ps(acc0, acc1);
    const __m128 half = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
    const __m128 quarter = _mm_add_ps(half, _mm_movehl_ps(half, half));
    float sum = _mm_cvtss_f32(_mm_add_ss(quarter, _mm_shuffle_ps(quarter, quarter, 1)));
    for (; j < j1; ++j) sum += vals[j] * d[offs[j]];
    if (a.bias != nullptr) sum += a.bias[r];
    a.c[r * a.ldc + c] = std::min(std::max(sum, clamp.lo), clamp.hi);
  }
}

template <int R>
__attribute__((target("avx2,fma"))) void SpmmAvx2(const SpmmArgs& a,
                                                  int64_t rb0, int64_t rb1,
                                                  int64_t c0, int64_t c1) {
  constexpr int kWide = R == 1 ? 4 : 2;
  const Clamp clamp = ClampOf(*a.activation);
  if (R == 1 && c1 - c0 == 1) {
    SpmvAvx2(a, rb0, rb1, c0, clamp);
    if (clamp.needs_scalar_pass)
      for (int64_t r = rb0; r < rb1; ++r) a.activation->ApplyInPlace(a.c + r * a.ldc + c0, 1);
    return;
  }
  const __m256 lo = _mm256_set1_ps(clamp.lo);
  const __m256 hi = _mm256_set1_ps(clamp.hi);
  const __m256i all = _mm256_set1_epi32(-1);
  for (int64_t rb = rb0; rb < rb1; ++rb) {
    const RowBlock rows = BlockRows<R>(*a.w, rb);
    float bias[R];
    for (int r = 0; r < R; ++r)
      bias[r] = a.bias != nullptr && r < rows.rows_here ? a.bias[rows.r0 + r] : 0.0f;
    int64_t c = c0;
    for (; c + 8 * kWide <= c1; c += 8 * kWide)
      TileAvx2<R, kWide>(a, rb, bias, rows, lo, hi, c, all);
    for (; c < c1; c += 8) {
      const int64_t n = std::min<int64_t>(8, c1 - c);
      const __m256i tail = _mm256_loadu_si256(
          reinterpret_cast<const __m256i*>(kMaskTable + 8 - n));
      TileAvx2<R, 1>(a, rb, bias, rows, lo, hi, c, tail);
    }
    if (clamp.needs_scalar_pass)
      for (int r = 0; r < rows.rows_here; ++r)
        a.activation->ApplyInPlace(a.c + (rows.r0 + r) * a.ldc + c0, c1 - c0);
  }
}

}  // namespace

void SpmmAvx512_1(const SpmmArgs& a, int64_t rb0, int64_t rb1, int64_t c0,
                  int64_t c1) {
  SpmmAvx512<1>(a, rb0, rb1, c0, c1);
}
void SpmmAvx512_4(const SpmmArgs& a, int64_t rb0, int64_t rb1, int64_t c0,
                  int64_t c1) {
  SpmmAvx512<4>(a, rb0, rb1, c0, c1);
}
void SpmmAvx2_1(const SpmmArgs& a, int64_t rb0, int64_t rb1, int64_t c0,
                int64_t c1) {
  SpmmAvx2<1>(a, rb0, rb1, c0, c1);
}
void SpmmAvx2_4(const SpmmArgs& a, int64_t rb0, int64_t rb1, int64_t c0,
                int64_t c1) {
  SpmmAvx2<4>(a, rb0, rb1, c0, c1);
}

}  // namespace braid::sparse_internal

#endif  // x86
