// x86 SpMM kernels: AVX2+FMA (8 lanes) and AVX-512F (16 lanes), compiled
// with __attribute__((target)) so the library itself builds for baseline
// x86-64 and BestSimdIsa() picks one at run time. Same loop structure as
// spmm_portable.cc: per block row, per column tile, one FMA per (row,
// vector) per block with the weight broadcast. CSR (R = 1) walks rows in
// pairs with their non-zeros interleaved, so 8 accumulator chains are in
// flight; R = 4 loads each D vector once for 4 rows. Bias seeds the
// accumulators; none / Relu / Clip are a clamp in registers before the store
// (operands ordered so NaN propagates); other activations run over the
// stored row afterwards. With R = 1 and one column (batch-1 fully
// connected) the loop runs over a row's non-zeros instead, with gathers.
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

// Column tiles: full tiles of kWide vectors, then one tile of 1..kWide
// vectors whose last vector is masked, so a short row (7x7 = 49 pixels)
// still keeps several accumulator chains in flight instead of one per
// 16-column tail piece.

// ---- AVX-512 ---------------------------------------------------------------

// Stores y (lanes `last` of the tile's last vector) at grid column c + 16 v
// of C row `row`: plainly, or packed to the kept lanes (SpmmArgs::compact_*).
__attribute__((target("avx512f"))) inline void StoreVector(const SpmmArgs& a, float* row,
                                                           int64_t g, __m512 y,
                                                           __mmask16 lanes) {
  if (a.compact_mask == nullptr) {
    _mm512_mask_storeu_ps(row + g, lanes, y);
    return;
  }
  const int64_t block = g / 16;
  const __mmask16 keep = static_cast<__mmask16>(a.compact_mask[block] & lanes);
  const int kept = __builtin_popcount(keep);
  _mm512_mask_storeu_ps(row + a.compact_pos[block],
                        static_cast<__mmask16>((1u << kept) - 1u),
                        _mm512_maskz_compress_ps(keep, y));
}

// R rows of one 4x1 block row (R = 4) over V vectors, the last one masked.
template <int R, int V>
__attribute__((target("avx512f"))) inline void TileAvx512(
    const SpmmArgs& a, int64_t rb, const float* bias, RowBlock rows,
    __m512 lo, __m512 hi, int64_t c, __mmask16 last) {
  const int32_t* offs = a.Offsets();
  const float* vals = a.Values();
  __m512 acc[R][V];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) acc[r][v] = _mm512_set1_ps(bias[r]);
  for (int32_t j = a.RowPtr()[rb]; j < a.RowPtr()[rb + 1]; ++j) {
    const float* d = a.d + offs[j] + c;
    __m512 dv[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v)
      dv[v] = v == V - 1 ? _mm512_maskz_loadu_ps(last, d + 16 * v)
                         : _mm512_loadu_ps(d + 16 * v);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const __m512 wv = _mm512_set1_ps(vals[j * R + r]);
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) acc[r][v] = _mm512_fmadd_ps(wv, dv[v], acc[r][v]);
    }
  }
  // A fixed trip count (rows past rows_here skipped) keeps acc in registers.
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    if (r >= rows.rows_here) break;
    float* row = a.c + (rows.r0 + r) * a.ldc;
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      // maskz forms: GCC 12's plain _mm512_max_ps trips -Wmaybe-uninitialized.
      const __m512 y = _mm512_maskz_min_ps(
          0xFFFF, hi, _mm512_maskz_max_ps(0xFFFF, lo, acc[r][v]));
      StoreVector(a, row, c + 16 * v, y, v == V - 1 ? last : __mmask16{0xFFFF});
    }
  }
}

// Two CSR rows r and r + 1 (the second only when `two`) over V vectors:
// their non-zeros are interleaved so 2 V accumulator chains hide the FMA
// latency (one row's V = 4 chains could only issue one FMA per cycle).
template <int V>
__attribute__((target("avx512f"))) inline void PairTileAvx512(
    const SpmmArgs& a, int64_t r, bool two, float bias0, float bias1,
    __m512 lo, __m512 hi, int64_t c, __mmask16 last) {
  const int32_t* offs = a.Offsets();
  const float* vals = a.Values();
  const float* d = a.d + c;
  int32_t j0 = a.RowPtr()[r];
  const int32_t e0 = a.RowPtr()[r + 1];
  int32_t j1 = e0;
  const int32_t e1 = two ? a.RowPtr()[r + 2] : e0;
  __m512 acc0[V], acc1[V];
#pragma GCC unroll 4
  for (int v = 0; v < V; ++v) {
    acc0[v] = _mm512_set1_ps(bias0);
    acc1[v] = _mm512_set1_ps(bias1);
  }
  const int32_t both = std::min(e0 - j0, e1 - j1);
  for (int32_t i = 0; i < both; ++i, ++j0, ++j1) {
    const float* d0 = d + offs[j0];
    const float* d1 = d + offs[j1];
    const __m512 w0 = _mm512_set1_ps(vals[j0]);
    const __m512 w1 = _mm512_set1_ps(vals[j1]);
    __m512 x0[V], x1[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      x0[v] = v == V - 1 ? _mm512_maskz_loadu_ps(last, d0 + 16 * v) : _mm512_loadu_ps(d0 + 16 * v);
      x1[v] = v == V - 1 ? _mm512_maskz_loadu_ps(last, d1 + 16 * v) : _mm512_loadu_ps(d1 + 16 * v);
    }
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      acc0[v] = _mm512_fmadd_ps(w0, x0[v], acc0[v]);
      acc1[v] = _mm512_fmadd_ps(w1, x1[v], acc1[v]);
    }
  }
  for (; j0 < e0; ++j0) {
    const __m512 w0 = _mm512_set1_ps(vals[j0]);
    const float* dk = d + offs[j0];
    __m512 x[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v)
      x[v] = v == V - 1 ? _mm512_maskz_loadu_ps(last, dk + 16 * v) : _mm512_loadu_ps(dk + 16 * v);
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) acc0[v] = _mm512_fmadd_ps(w0, x[v], acc0[v]);
  }
  for (; j1 < e1; ++j1) {
    const __m512 w1 = _mm512_set1_ps(vals[j1]);
    const float* dk = d + offs[j1];
    __m512 x[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v)
      x[v] = v == V - 1 ? _mm512_maskz_loadu_ps(last, dk + 16 * v) : _mm512_loadu_ps(dk + 16 * v);
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) acc1[v] = _mm512_fmadd_ps(w1, x[v], acc1[v]);
  }
  // Stores written out here, not through a helper taking the arrays: GCC
  // then keeps acc0 / acc1 in memory and spills them on every FMA.
  float* row0 = a.c + r * a.ldc;
  float* row1 = a.c + (r + 1) * a.ldc;
#pragma GCC unroll 4
  for (int v = 0; v < V; ++v) {
    // maskz forms: GCC 12's plain _mm512_max_ps trips -Wmaybe-uninitialized.
    const __m512 y0 = _mm512_maskz_min_ps(0xFFFF, hi, _mm512_maskz_max_ps(0xFFFF, lo, acc0[v]));
    const __m512 y1 = _mm512_maskz_min_ps(0xFFFF, hi, _mm512_maskz_max_ps(0xFFFF, lo, acc1[v]));
    const __mmask16 lanes = v == V - 1 ? last : __mmask16{0xFFFF};
    StoreVector(a, row0, c + 16 * v, y0, lanes);
    if (two) StoreVector(a, row1, c + 16 * v, y1, lanes);
  }
}

// One output column (a fully connected layer at batch 1): vectorise over a
// row's non-zeros with gathers instead of over columns.
__attribute__((target("avx512f"))) void SpmvAvx512(const SpmmArgs& a,
                                                   int64_t r0, int64_t r1,
                                                   int64_t c, const Clamp& clamp) {
  const int32_t* offs = a.Offsets();
  const float* vals = a.Values();
  const float* d = a.d + c;
  for (int64_t r = r0; r < r1; ++r) {
    const int32_t j1 = a.RowPtr()[r + 1];
    int32_t j = a.RowPtr()[r];
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

// Runs TILE(V, c, mask) over the columns [c0, c1): full tiles of KWIDE
// vectors of LANES, then one tile of the 1..KWIDE vectors left, the last
// masked. (A macro, not a lambda: a lambda would not inherit the target
// attribute of the function it sits in.)
#define BRAID_SPARSE_COLUMN_TILES(LANES, KWIDE, FULL, MASK_OF, TILE)          \
  do {                                                                        \
    int64_t c = c0;                                                           \
    for (; c + (LANES) * (KWIDE) <= c1; c += (LANES) * (KWIDE))               \
      TILE(KWIDE, c, FULL);                                                   \
    if (c < c1) {                                                             \
      const int64_t n = c1 - c;                                               \
      const int vectors = static_cast<int>((n + (LANES) - 1) / (LANES));      \
      const auto last = MASK_OF(static_cast<int>(n - (LANES) * (vectors - 1))); \
      switch (vectors) {                                                      \
        case 1: TILE(1, c, last); break;                                      \
        case 2: TILE(2, c, last); break;                                      \
        case 3: TILE(3, c, last); break;                                      \
        default: TILE(4, c, last); break;                                     \
      }                                                                       \
    }                                                                         \
  } while (false)

__attribute__((target("avx512f"))) inline __mmask16 Mask16(int n) {
  return static_cast<__mmask16>((1u << n) - 1u);
}

// The activation a clamp cannot express, over row r's columns [c0, c1)
// as stored (packed when compacting; c0 and c1 are multiples of 16 or p).
inline void ApplyScalar(const SpmmArgs& a, int64_t r, int64_t c0, int64_t c1) {
  float* row = a.c + r * a.ldc;
  if (a.compact_mask == nullptr) {
    a.activation->ApplyInPlace(row + c0, c1 - c0);
    return;
  }
  const int32_t begin = a.compact_pos[c0 / 16], end = a.compact_pos[(c1 + 15) / 16];
  a.activation->ApplyInPlace(row + begin, end - begin);
}

template <int R>
__attribute__((target("avx512f"))) void SpmmAvx512(const SpmmArgs& a,
                                                   int64_t rb0, int64_t rb1,
                                                   int64_t c0, int64_t c1) {
  constexpr int kWide = R == 1 ? 4 : 2;  // vectors per row in the main tile
  const Clamp clamp = ClampOf(*a.activation);
  if (R == 1 && c1 - c0 == 1 && a.compact_mask == nullptr) {
    SpmvAvx512(a, rb0, rb1, c0, clamp);
    if (clamp.needs_scalar_pass)
      for (int64_t r = rb0; r < rb1; ++r) a.activation->ApplyInPlace(a.c + r * a.ldc + c0, 1);
    return;
  }
  const __m512 lo = _mm512_set1_ps(clamp.lo);
  const __m512 hi = _mm512_set1_ps(clamp.hi);
  // R = 1 walks rows in pairs (PairTileAvx512); R = 4 one block row.
  constexpr int64_t kStep = R == 1 ? 2 : 1;
  for (int64_t rb = rb0; rb < rb1; rb += kStep) {
    const RowBlock rows = BlockRows<R>(*a.w, rb);
    if constexpr (R == 1) {
      const bool two = rb + 1 < rb1;
      const float b0 = a.bias != nullptr ? a.bias[rb] : 0.0f;
      const float b1 = a.bias != nullptr && two ? a.bias[rb + 1] : 0.0f;
#define BRAID_PAIR_TILE(V, c, m) PairTileAvx512<V>(a, rb, two, b0, b1, lo, hi, c, m)
      BRAID_SPARSE_COLUMN_TILES(16, kWide, __mmask16{0xFFFF}, Mask16, BRAID_PAIR_TILE);
#undef BRAID_PAIR_TILE
      if (clamp.needs_scalar_pass)
        for (int64_t r = rb; r < rb + (two ? 2 : 1); ++r) ApplyScalar(a, r, c0, c1);
    } else {
      float bias[R];
      for (int r = 0; r < R; ++r)
        bias[r] = a.bias != nullptr && r < rows.rows_here ? a.bias[rows.r0 + r] : 0.0f;
#define BRAID_BLOCK_TILE(V, c, m) TileAvx512<R, V>(a, rb, bias, rows, lo, hi, c, m)
      BRAID_SPARSE_COLUMN_TILES(16, kWide, __mmask16{0xFFFF}, Mask16, BRAID_BLOCK_TILE);
#undef BRAID_BLOCK_TILE
      if (clamp.needs_scalar_pass)
        for (int r = 0; r < rows.rows_here; ++r) ApplyScalar(a, rows.r0 + r, c0, c1);
    }
  }
}

// ---- AVX2 ------------------------------------------------------------------

// mask for n <= 8 lanes: load 8 ints starting at kMaskTable + 8 - n.
alignas(64) constexpr int32_t kMaskTable[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                                0,  0,  0,  0,  0,  0,  0,  0};

__attribute__((target("avx2,fma"))) inline __m256i Mask8(int n) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kMaskTable + 8 - n));
}

template <int R, int V>
__attribute__((target("avx2,fma"))) inline void TileAvx2(
    const SpmmArgs& a, int64_t rb, const float* bias, RowBlock rows,
    __m256 lo, __m256 hi, int64_t c, __m256i last) {
  const int32_t* offs = a.Offsets();
  const float* vals = a.Values();
  __m256 acc[R][V];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) acc[r][v] = _mm256_set1_ps(bias[r]);
  for (int32_t j = a.RowPtr()[rb]; j < a.RowPtr()[rb + 1]; ++j) {
    const float* d = a.d + offs[j] + c;
    __m256 dv[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v)
      dv[v] = v == V - 1 ? _mm256_maskload_ps(d + 8 * v, last) : _mm256_loadu_ps(d + 8 * v);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const __m256 wv = _mm256_set1_ps(vals[j * R + r]);
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) acc[r][v] = _mm256_fmadd_ps(wv, dv[v], acc[r][v]);
    }
  }
  // A fixed trip count (rows past rows_here skipped) keeps acc in registers.
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    if (r >= rows.rows_here) break;
    float* out = a.c + (rows.r0 + r) * a.ldc + c;
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      const __m256 y = _mm256_min_ps(hi, _mm256_max_ps(lo, acc[r][v]));
      if (v == V - 1)
        _mm256_maskstore_ps(out + 8 * v, last, y);
      else
        _mm256_storeu_ps(out + 8 * v, y);
    }
  }
}

template <int V>
__attribute__((target("avx2,fma"))) inline void PairTileAvx2(
    const SpmmArgs& a, int64_t r, bool two, float bias0, float bias1,
    __m256 lo, __m256 hi, int64_t c, __m256i last) {
  const int32_t* offs = a.Offsets();
  const float* vals = a.Values();
  const float* d = a.d + c;
  int32_t j0 = a.RowPtr()[r];
  const int32_t e0 = a.RowPtr()[r + 1];
  int32_t j1 = e0;
  const int32_t e1 = two ? a.RowPtr()[r + 2] : e0;
  __m256 acc0[V], acc1[V];
#pragma GCC unroll 4
  for (int v = 0; v < V; ++v) {
    acc0[v] = _mm256_set1_ps(bias0);
    acc1[v] = _mm256_set1_ps(bias1);
  }
  const int32_t both = std::min(e0 - j0, e1 - j1);
  for (int32_t i = 0; i < both; ++i, ++j0, ++j1) {
    const float* d0 = d + offs[j0];
    const float* d1 = d + offs[j1];
    const __m256 w0 = _mm256_set1_ps(vals[j0]);
    const __m256 w1 = _mm256_set1_ps(vals[j1]);
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      const __m256 x0 =
          v == V - 1 ? _mm256_maskload_ps(d0 + 8 * v, last) : _mm256_loadu_ps(d0 + 8 * v);
      const __m256 x1 =
          v == V - 1 ? _mm256_maskload_ps(d1 + 8 * v, last) : _mm256_loadu_ps(d1 + 8 * v);
      acc0[v] = _mm256_fmadd_ps(w0, x0, acc0[v]);
      acc1[v] = _mm256_fmadd_ps(w1, x1, acc1[v]);
    }
  }
  for (; j0 < e0; ++j0) {
    const float* dk = d + offs[j0];
    const __m256 w0 = _mm256_set1_ps(vals[j0]);
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      const __m256 x =
          v == V - 1 ? _mm256_maskload_ps(dk + 8 * v, last) : _mm256_loadu_ps(dk + 8 * v);
      acc0[v] = _mm256_fmadd_ps(w0, x, acc0[v]);
    }
  }
  for (; j1 < e1; ++j1) {
    const float* dk = d + offs[j1];
    const __m256 w1 = _mm256_set1_ps(vals[j1]);
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      const __m256 x =
          v == V - 1 ? _mm256_maskload_ps(dk + 8 * v, last) : _mm256_loadu_ps(dk + 8 * v);
      acc1[v] = _mm256_fmadd_ps(w1, x, acc1[v]);
    }
  }
  float* out0 = a.c + r * a.ldc + c;
  float* out1 = a.c + (r + 1) * a.ldc + c;
#pragma GCC unroll 4
  for (int v = 0; v < V; ++v) {
    const __m256 y0 = _mm256_min_ps(hi, _mm256_max_ps(lo, acc0[v]));
    const __m256 y1 = _mm256_min_ps(hi, _mm256_max_ps(lo, acc1[v]));
    if (v == V - 1) {
      _mm256_maskstore_ps(out0 + 8 * v, last, y0);
      if (two) _mm256_maskstore_ps(out1 + 8 * v, last, y1);
    } else {
      _mm256_storeu_ps(out0 + 8 * v, y0);
      if (two) _mm256_storeu_ps(out1 + 8 * v, y1);
    }
  }
}

__attribute__((target("avx2,fma"))) void SpmvAvx2(const SpmmArgs& a,
                                                  int64_t r0, int64_t r1,
                                                  int64_t c, const Clamp& clamp) {
  const int32_t* offs = a.Offsets();
  const float* vals = a.Values();
  const float* d = a.d + c;
  for (int64_t r = r0; r < r1; ++r) {
    const int32_t j1 = a.RowPtr()[r + 1];
    int32_t j = a.RowPtr()[r];
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
  constexpr int64_t kStep = R == 1 ? 2 : 1;
  for (int64_t rb = rb0; rb < rb1; rb += kStep) {
    const RowBlock rows = BlockRows<R>(*a.w, rb);
    if constexpr (R == 1) {
      const bool two = rb + 1 < rb1;
      const float b0 = a.bias != nullptr ? a.bias[rb] : 0.0f;
      const float b1 = a.bias != nullptr && two ? a.bias[rb + 1] : 0.0f;
#define BRAID_PAIR_TILE(V, c, m) PairTileAvx2<V>(a, rb, two, b0, b1, lo, hi, c, m)
      BRAID_SPARSE_COLUMN_TILES(8, kWide, all, Mask8, BRAID_PAIR_TILE);
#undef BRAID_PAIR_TILE
      if (clamp.needs_scalar_pass)
        for (int64_t r = rb; r < rb + (two ? 2 : 1); ++r)
          a.activation->ApplyInPlace(a.c + r * a.ldc + c0, c1 - c0);
    } else {
      float bias[R];
      for (int r = 0; r < R; ++r)
        bias[r] = a.bias != nullptr && r < rows.rows_here ? a.bias[rows.r0 + r] : 0.0f;
#define BRAID_BLOCK_TILE(V, c, m) TileAvx2<R, V>(a, rb, bias, rows, lo, hi, c, m)
      BRAID_SPARSE_COLUMN_TILES(8, kWide, all, Mask8, BRAID_BLOCK_TILE);
#undef BRAID_BLOCK_TILE
      if (clamp.needs_scalar_pass)
        for (int r = 0; r < rows.rows_here; ++r)
          a.activation->ApplyInPlace(a.c + (rows.r0 + r) * a.ldc + c0, c1 - c0);
    }
  }
}

#undef BRAID_SPARSE_COLUMN_TILES

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
