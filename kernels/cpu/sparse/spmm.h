// The sparse x dense product every sparse kernel runs:
//   C[r, 0:p] = act(sum_k W[r, k] * D[k, 0:p] + bias[r])   for r < W.rows
// with W a packed SparseMatrix, C dense row-major (leading dim ldc) and D's
// row k at d + the offset SetDenseOffsets gave column k (a plain [K, p]
// matrix: k * p; a padded image for a direct stride-1 convolution). Vectorised along p: a 1x1 convolution in NCHW is exactly this with
// D = the input image [IC, H*W]; a KxK one on the padded input
// (its phase images when strided, conv_sparse.cc); a
// fully connected layer on A^T. The instruction set is chosen once at
// Prepare (SelectSpmm); Run only calls the chosen function.
//
//   SimdIsa isa = BestSimdIsa();          // AVX-512, AVX2 or portable
//   SpmmFn fn = SelectSpmm(isa, matrix.row_block);
//   SpmmArgs a{&matrix, d, c, ldc, p, bias, &activation};
//   RunSpmm(fn, a, num_threads);              // OpenMP over rows x columns
#ifndef BRAID_KERNELS_CPU_SPARSE_SPMM_H_
#define BRAID_KERNELS_CPU_SPARSE_SPMM_H_

#include <cstdint>
#include <limits>

#include "kernels/cpu/simd_isa.h"
#include "kernels/cpu/sparse/sparse_matrix.h"
#include "kernels/params/activation.h"

namespace braid {


struct SpmmArgs {
  const SparseMatrix* w = nullptr;
  const float* d = nullptr;  // row k at d + w->offset[j] (column k = col[j])
  float* c = nullptr;        // [w->rows, p], leading dim ldc
  int64_t ldc = 0;
  int64_t p = 0;
  const float* bias = nullptr;  // [w->rows] or nullptr
  const Activation* activation = nullptr;
  // Optional compacted store (only where SpmmCompacts(isa)): C's columns
  // come in 16-column blocks b = g / 16 of which only the lanes set in
  // compact_mask[b] are kept, packed in order to c + row * ldc +
  // compact_pos[b]; compact_pos[blocks] is the packed row length. A strided
  // conv's Wq-wide output grid is stored straight into Y this way.
  const uint16_t* compact_mask = nullptr;
  const int32_t* compact_pos = nullptr;
  // Optional stand-ins for w's block_row_ptr / offset / values with the
  // same rows and row_block but fewer blocks: a copy filtered at run time
  // (conv_sparse.cc drops the blocks that read an all-zero input channel).
  const int32_t* row_ptr = nullptr;
  const int32_t* offsets = nullptr;
  const float* values = nullptr;

  const int32_t* RowPtr() const { return row_ptr ? row_ptr : w->block_row_ptr.data(); }
  const int32_t* Offsets() const { return offsets ? offsets : w->offset.data(); }
  const float* Values() const { return values ? values : w->values.data(); }
};

// Whether `isa`'s kernels implement SpmmArgs::compact_mask (AVX-512).
bool SpmmCompacts(SimdIsa isa);

// Computes block rows [block_row_begin, block_row_end) over columns
// [col_begin, col_end) of C.
using SpmmFn = void (*)(const SpmmArgs& a, int64_t block_row_begin,
                        int64_t block_row_end, int64_t col_begin,
                        int64_t col_end);

// The kernel for `isa` (which must be supported) and row_block 1 or 4.
SpmmFn SelectSpmm(SimdIsa isa, int row_block);

// Splits C into (row group x column chunk) tiles, chunk-major so threads
// share the D chunk in cache, and runs `fn` over them with `num_threads`
// OpenMP threads. Allocates nothing.
void RunSpmm(SpmmFn fn, const SpmmArgs& a, int num_threads);

namespace sparse_internal {

// Bias + activation the kernels apply while storing: clamp to [lo, hi]
// covers none / Relu / Clip in vector registers; any other activation is
// applied afterwards over the stored row (scalar).
struct Clamp {
  float lo = -std::numeric_limits<float>::infinity();
  float hi = std::numeric_limits<float>::infinity();
  bool needs_scalar_pass = false;
};
Clamp ClampOf(const Activation& activation);

// Per-ISA kernels (spmm_portable.cc, spmm_x86.cc).
void SpmmPortable1(const SpmmArgs&, int64_t, int64_t, int64_t, int64_t);
void SpmmPortable4(const SpmmArgs&, int64_t, int64_t, int64_t, int64_t);
#if defined(__x86_64__) || defined(__i386__)
void SpmmAvx2_1(const SpmmArgs&, int64_t, int64_t, int64_t, int64_t);
void SpmmAvx2_4(const SpmmArgs&, int64_t, int64_t, int64_t, int64_t);
void SpmmAvx512_1(const SpmmArgs&, int64_t, int64_t, int64_t, int64_t);
void SpmmAvx512_4(const SpmmArgs&, int64_t, int64_t, int64_t, int64_t);
#endif

}  // namespace sparse_internal
}  // namespace braid

#endif  // BRAID_KERNELS_CPU_SPARSE_SPMM_H_
