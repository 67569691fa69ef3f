// Softmax over contiguous rows, braid's own CPU kernel's loop (the "cpu"
// Softmax entry; other kernels and the tests call it directly):
//
//   braid::SoftmaxRows(braid::BestSimdIsa(), x, y, /*rows=*/591, /*n=*/197,
//                      /*threads=*/2);
//
// y[r, :] = exp(x[r, :] - max) / sum for each of `rows` rows of `n` floats,
// `isa` kAvx2 or kAvx512 (supported on this CPU; kPortable runs a scalar
// loop), rows split over `threads` OpenMP threads. A row holding NaN or
// +inf comes out NaN, as does a row of -inf only; other -inf elements give
// 0, as do elements more than 87 below the row's maximum.
#ifndef BRAID_KERNELS_CPU_SOFTMAX_CPU_H_
#define BRAID_KERNELS_CPU_SOFTMAX_CPU_H_

#include <cstdint>

#include "kernels/cpu/simd_isa.h"

namespace braid {

void SoftmaxRows(SimdIsa isa, const float* x, float* y, int64_t rows, int64_t n, int threads);

}  // namespace braid

#endif  // BRAID_KERNELS_CPU_SOFTMAX_CPU_H_
