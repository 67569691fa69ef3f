// Whether a float buffer holds a NaN or an infinity: one vectorized read
// (AVX-512 / AVX2 by BestSimdIsa, else scalar), about 0.03 ns per float from
// L2 on one AVX-512 core. Kernels whose fast path would drop a NaN (oneDNN's
// fused relu / clip post-ops, its max pooling) look at their input with it
// and take a NaN-propagating path only when it says yes (docs/ops.md "NaN
// and Inf").
//
//   if (AnyNonFinite(isa, x, n)) RunNanPropagatingPath(); else RunFastPath();
#ifndef BRAID_KERNELS_CPU_NONFINITE_H_
#define BRAID_KERNELS_CPU_NONFINITE_H_

#include <cstdint>

#include "kernels/cpu/simd_isa.h"

namespace braid {

// True when any of x[0..count) is NaN or +-Inf; `num_threads` OpenMP threads
// split large buffers.
bool AnyNonFinite(SimdIsa isa, const float* x, int64_t count, int num_threads = 1);

}  // namespace braid

#endif  // BRAID_KERNELS_CPU_NONFINITE_H_
