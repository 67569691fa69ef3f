// Per-element work of the CUDA data-movement kernels (data.cu): the strided
// walk behind Transpose, Slice and Expand, Gather, and Pad. Element types are
// storage types (uint8/16/32/64): these ops move bytes, not values.
//
//   y[i] = x[args.index.Offset(i)];                 // StridedCopyElement
//   dm::PadElement(args, i, x, y);
#ifndef BRAID_KERNELS_CUDA_DEVICE_MATH_DATA_H_
#define BRAID_KERNELS_CUDA_DEVICE_MATH_DATA_H_

#include "kernels/cuda/device_math/common.h"

namespace braid::cuda::dm {

struct StridedCopyArgs {
  int64_t elements = 0;
  int element_size = 4;  // 1, 2, 4 or 8
  StridedIndex<1> index;
};

template <typename E>
BRAID_HD void StridedCopyElement(const StridedCopyArgs& args, int64_t i, const E* x, E* y) {
  y[i] = x[args.index.Offset(i)];
}

// Gather along an axis with indices known at Prepare (checked there): the
// output is [outer, num_indices, row]; `indices` are normalized (>= 0).
struct GatherArgs {
  int64_t elements = 0;
  int element_size = 4;
  int64_t axis_dim = 0;
  int64_t num_indices = 0;
  int64_t row = 1;  // elements after the axis
};

template <typename E>
BRAID_HD void GatherElement(const GatherArgs& args, int64_t i, const E* x,
                            const int64_t* indices, E* y) {
  const int64_t r = i % args.row;
  const int64_t j = (i / args.row) % args.num_indices;
  const int64_t o = i / (args.row * args.num_indices);
  y[i] = x[(o * args.axis_dim + indices[j]) * args.row + r];
}

// Pad: out index -> input index per axis (begin may be negative: crops).
struct PadArgs {
  int64_t elements = 0;
  int element_size = 4;
  int rank = 0;
  int mode = 0;  // 0 constant, 1 reflect, 2 edge (braid::PadMode order)
  int64_t out_dims[kMaxRank] = {};
  int64_t in_dims[kMaxRank] = {};
  int64_t begin[kMaxRank] = {};
  uint64_t value_bits = 0;  // the constant, as the element's bytes
};

BRAID_HD int64_t PadSourceIndex(int mode, int64_t i, int64_t n) {
  if (mode == 2) return i < 0 ? 0 : (i >= n ? n - 1 : i);
  // reflect (n >= 2 checked at Prepare): mirror without repeating the edge
  const int64_t period = 2 * (n - 1);
  int64_t m = i % period;
  if (m < 0) m += period;
  return m < n ? m : period - m;
}

template <typename E>
BRAID_HD void PadElement(const PadArgs& args, int64_t i, const E* x, E* y) {
  int64_t src = 0;
  int64_t rest = i;
  int64_t coords[kMaxRank];
  for (int a = args.rank - 1; a >= 0; --a) {
    coords[a] = rest % args.out_dims[a] - args.begin[a];
    rest /= args.out_dims[a];
  }
  for (int a = 0; a < args.rank; ++a) {
    int64_t c = coords[a];
    if (c < 0 || c >= args.in_dims[a]) {
      if (args.mode == 0) {
        y[i] = static_cast<E>(args.value_bits);
        return;
      }
      c = PadSourceIndex(args.mode, c, args.in_dims[a]);
    }
    src = src * args.in_dims[a] + c;
  }
  y[i] = x[src];
}

}  // namespace braid::cuda::dm

#endif  // BRAID_KERNELS_CUDA_DEVICE_MATH_DATA_H_
