// y[0:n) += sum_j x[j] * rows[j][0:n): the inner loop of the input-sparse
// fully connected kernel (gemm_input_sparse.cc), which calls it with only
// the rows of W^T whose input is non-zero. One function per instruction set,
// chosen once at Prepare like the SpMM (spmm.h).
//
//   AddScaledRowsFn add = SelectAddScaledRows(BestSimdIsa());
//   const float* rows[] = {wt + k0 * n, wt + k1 * n};
//   const float xs[] = {x[k0], x[k1]};
//   add(y, rows, xs, 2, n);
#ifndef BRAID_KERNELS_CPU_SPARSE_SCALED_ROWS_H_
#define BRAID_KERNELS_CPU_SPARSE_SCALED_ROWS_H_

#include <cstdint>

#include "kernels/cpu/sparse/spmm.h"

namespace braid {

// Adds `count` scaled rows (any count; taken four at a time) into y.
using AddScaledRowsFn = void (*)(float* y, const float* const* rows, const float* xs, int count,
                                 int64_t n);
AddScaledRowsFn SelectAddScaledRows(SimdIsa isa);

}  // namespace braid

#endif  // BRAID_KERNELS_CPU_SPARSE_SCALED_ROWS_H_
