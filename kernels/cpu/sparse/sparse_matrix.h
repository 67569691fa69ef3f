// A constant weight matrix W [rows, cols] (rows = outputs, cols = the
// reduction) packed once at Prepare into a block-CSR of `row_block` x 1
// blocks: row_block 1 is plain CSR; row_block 4 stores, per 4 consecutive
// output rows, the columns where any of the 4 is non-zero (4 values per
// block, zeros included). The 4x1 form lets the kernels reuse each loaded
// input row for 4 outputs; it is picked when the weight's zeros come in
// such blocks (pruned with --prune-structure block:4xC), see ChooseRowBlock.
//
//   WeightView view{w, /*rows=*/oc, /*cols=*/ic * 9, /*row_stride=*/ic * 9,
//                   /*col_stride=*/1};
//   double sparsity = WeightSparsity(view);
//   ASSIGN_OR_RETURN(SparseMatrix m,
//                    PackSparse(view, /*scale=*/1.0f, ChooseRowBlock(view)));
//   // block row b covers rows [b*row_block, (b+1)*row_block); its blocks are
//   // j in [block_row_ptr[b], block_row_ptr[b+1]) at column col[j] with
//   // values[j*row_block + r] for row b*row_block + r.
//   RETURN_IF_ERROR(SetDenseOffsets(m, [&](int64_t col) { return col * ldd; }));
//   // the kernels read column col[j]'s operand row at d + offset[j]
#ifndef BRAID_KERNELS_CPU_SPARSE_SPARSE_MATRIX_H_
#define BRAID_KERNELS_CPU_SPARSE_SPARSE_MATRIX_H_

#include <cstdint>
#include <string>
#include <vector>

#include "graph/status.h"

namespace braid {

// W[r][c] = data[r * row_stride + c * col_stride].
struct WeightView {
  const float* data = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t row_stride = 0;
  int64_t col_stride = 0;

  float at(int64_t r, int64_t c) const {
    return data[r * row_stride + c * col_stride];
  }
};

struct SparseMatrix {
  int64_t rows = 0;
  int64_t cols = 0;
  int row_block = 1;                   // 1 or 4
  std::vector<int32_t> block_row_ptr;  // block_rows() + 1 entries
  std::vector<int32_t> col;            // per block
  std::vector<float> values;           // row_block per block
  // Per block: where the dense operand's row for col[j] starts (elements
  // from D's base), set by SetDenseOffsets for the layout the kernel uses.
  std::vector<int32_t> offset;
  // Columns read by at least one block (inputs of others are never read).
  std::vector<uint8_t> used_cols;
  int64_t used_col_count = 0;

  int64_t block_rows() const { return (rows + row_block - 1) / row_block; }
  int64_t blocks() const { return static_cast<int64_t>(col.size()); }
};

// Fraction of exact zeros (+0 and -0) in W; 0 for an empty matrix.
double WeightSparsity(const WeightView& w);

// 4 when storing W as 4x1 blocks costs at most 25% more values than its
// non-zeros (the zeros are mostly block-structured), else 1.
int ChooseRowBlock(const WeightView& w);

// Packs W * scale. InvalidArgument when the block count or a column index
// does not fit the int32 indices.
StatusOr<SparseMatrix> PackSparse(const WeightView& w, float scale,
                                  int row_block);

// offset[j] = row_offset(col[j]); InvalidArgument when one does not fit
// int32 or is negative.
template <typename RowOffset>
Status SetDenseOffsets(SparseMatrix& m, RowOffset row_offset) {
  m.offset.resize(m.col.size());
  for (size_t j = 0; j < m.col.size(); ++j) {
    const int64_t o = row_offset(static_cast<int64_t>(m.col[j]));
    if (o < 0 || o > INT32_MAX)
      return InvalidArgument("sparse packing: operand offset " + std::to_string(o) +
                             " does not fit int32");
    m.offset[j] = static_cast<int32_t>(o);
  }
  return Status::Ok();
}

}  // namespace braid

#endif  // BRAID_KERNELS_CPU_SPARSE_SPARSE_MATRIX_H_
