#include "kernels/cpu/sparse/sparse_matrix.h"

#include <algorithm>
#include <limits>
#include <string>

namespace braid {
namespace {

// Non-zero blocks of `row_block` x 1 (the row tail of a partial last block
// counts as zero).
int64_t CountBlocks(const WeightView& w, int row_block) {
  int64_t blocks = 0;
  for (int64_t r0 = 0; r0 < w.rows; r0 += row_block) {
    const int64_t r1 = std::min<int64_t>(r0 + row_block, w.rows);
    for (int64_t c = 0; c < w.cols; ++c) {
      for (int64_t r = r0; r < r1; ++r) {
        if (w.at(r, c) != 0.0f) {
          ++blocks;
          break;
        }
      }
    }
  }
  return blocks;
}

}  // namespace

double WeightSparsity(const WeightView& w) {
  const int64_t total = w.rows * w.cols;
  if (total == 0) return 0;
  int64_t zeros = 0;
  for (int64_t r = 0; r < w.rows; ++r)
    for (int64_t c = 0; c < w.cols; ++c) zeros += w.at(r, c) == 0.0f;
  return static_cast<double>(zeros) / static_cast<double>(total);
}

int ChooseRowBlock(const WeightView& w) {
  if (w.rows < 4) return 1;
  const int64_t nonzeros = CountBlocks(w, 1);
  const int64_t blocks4 = CountBlocks(w, 4);
  return 4 * blocks4 * 4 <= 5 * nonzeros ? 4 : 1;
}

StatusOr<SparseMatrix> PackSparse(const WeightView& w, float scale,
                                  int row_block) {
  if (row_block != 1 && row_block != 4)
    return InvalidArgument("sparse packing: row block must be 1 or 4, got " +
                           std::to_string(row_block));
  constexpr int64_t kMaxIndex = std::numeric_limits<int32_t>::max();
  if (w.cols > kMaxIndex)
    return InvalidArgument("sparse packing: " + std::to_string(w.cols) +
                           " columns exceed the int32 column index");
  const int64_t blocks = CountBlocks(w, row_block);
  if (blocks > kMaxIndex / row_block)
    return InvalidArgument("sparse packing: " + std::to_string(blocks) +
                           " non-zero blocks exceed the int32 indices");
  SparseMatrix m;
  m.rows = w.rows;
  m.cols = w.cols;
  m.row_block = row_block;
  m.block_row_ptr.reserve(static_cast<size_t>(m.block_rows() + 1));
  m.col.reserve(static_cast<size_t>(blocks));
  m.values.reserve(static_cast<size_t>(blocks * row_block));
  m.used_cols.assign(static_cast<size_t>(w.cols), 0);
  m.block_row_ptr.push_back(0);
  for (int64_t r0 = 0; r0 < w.rows; r0 += row_block) {
    const int64_t r1 = std::min<int64_t>(r0 + row_block, w.rows);
    for (int64_t c = 0; c < w.cols; ++c) {
      bool any = false;
      for (int64_t r = r0; r < r1 && !any; ++r) any = w.at(r, c) != 0.0f;
      if (!any) continue;
      m.col.push_back(static_cast<int32_t>(c));
      m.used_col_count += m.used_cols[static_cast<size_t>(c)] == 0;
      m.used_cols[static_cast<size_t>(c)] = 1;
      for (int64_t r = r0; r < r0 + row_block; ++r)
        m.values.push_back(r < r1 ? w.at(r, c) * scale : 0.0f);
    }
    m.block_row_ptr.push_back(static_cast<int32_t>(m.col.size()));
  }
  return m;
}

}  // namespace braid
