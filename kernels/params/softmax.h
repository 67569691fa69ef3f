// Softmax parameters for both ONNX semantics:
//   opset < 13: the input is coerced to 2-D at `axis` (default 1): softmax
//               over the flattened trailing block dims[axis:];
//   opset >= 13: softmax along the single `axis` (default -1).
// Either way the input is viewed as [outer, axis_size, inner]:
//
//   ASSIGN_OR_RETURN(SoftmaxParams p, ParseSoftmax(args));
//   // element (o, a, i) is x[(o * p.axis_size + a) * p.inner + i];
//   // normalize over a for each (o, i). For opset < 13, inner == 1.
#ifndef BRAID_KERNELS_PARAMS_SOFTMAX_H_
#define BRAID_KERNELS_PARAMS_SOFTMAX_H_

#include <cstdint>

#include "kernels/backend.h"

namespace braid {

struct SoftmaxParams {
  DataType dtype = DataType::kUndefined;
  int64_t axis = 0;  // normalized, in [0, rank] (rank only for opset < 13)
  bool coerce_2d = false;  // opset < 13 semantics
  int64_t outer = 1;
  int64_t axis_size = 1;
  int64_t inner = 1;
};

StatusOr<SoftmaxParams> ParseSoftmax(const PrepareArgs& args);

}  // namespace braid

#endif  // BRAID_KERNELS_PARAMS_SOFTMAX_H_
