// MaxPool / AveragePool / GlobalMaxPool / GlobalAveragePool parameters,
// validated once at Prepare.
//
//   ASSIGN_OR_RETURN(PoolParams p, ParsePool(args));
//   // X [batch, channels, in_spatial...] -> Y [batch, channels, out_spatial...]
//   // window o covers in[o * strides - pads_begin + k * dilations], k < kernel
//
// Global pools are expressed as a window covering the whole input (kernel =
// in_spatial, strides 1, no pads, out_spatial all 1) with global = true, so a
// generic pool kernel handles them too. auto_pad is resolved into pads.
//
// ceil_mode follows PyTorch / ONNX Runtime: the last window must start inside
// the input or its begin padding. AveragePool divisor for a window starting at
// s (may be negative) per dim: count_include_pad ? min(s + kernel, in +
// pads_end) - s (padding counts, the ceil_mode overhang does not)
// : the number of window elements inside the input.
#ifndef BRAID_KERNELS_PARAMS_POOL_H_
#define BRAID_KERNELS_PARAMS_POOL_H_

#include <cstdint>
#include <vector>

#include "kernels/backend.h"

namespace braid {

struct PoolParams {
  enum class Kind { kMax, kAverage };
  Kind kind = Kind::kMax;
  bool global = false;
  DataType dtype = DataType::kUndefined;
  int spatial_rank = 0;
  int64_t batch = 0;
  int64_t channels = 0;
  std::vector<int64_t> in_spatial;
  std::vector<int64_t> out_spatial;
  std::vector<int64_t> kernel;
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;  // all 1 for AveragePool at opsets < 19
  std::vector<int64_t> pads_begin;
  std::vector<int64_t> pads_end;
  bool ceil_mode = false;
  bool count_include_pad = false;  // AveragePool only
  // MaxPool's optional Indices output (i64) was requested.
  bool has_indices = false;
  int64_t storage_order = 0;  // MaxPool: 0 row major, 1 column major indices

  int64_t in_spatial_size() const;
  int64_t out_spatial_size() const;
  int64_t kernel_size() const;
};

// Validates the op type (MaxPool, AveragePool, GlobalMaxPool,
// GlobalAveragePool), the input rank (>= 3), attributes and the output
// shape. Errors are InvalidArgument naming the node.
StatusOr<PoolParams> ParsePool(const PrepareArgs& args);

}  // namespace braid

#endif  // BRAID_KERNELS_PARAMS_POOL_H_
