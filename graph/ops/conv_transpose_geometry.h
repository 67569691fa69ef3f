// ConvTranspose's window and output extents, as shape inference and the
// kernels both need them (ONNX ConvTranspose 1-11+): per spatial axis
//   out = stride * (in - 1) + output_padding + (kernel - 1) * dilation + 1
//         - pad_begin - pad_end,
// or output_shape given (the pads then follow from it: SAME_UPPER puts the
// odd one at the end, otherwise at the beginning), or auto_pad SAME_* (out =
// in * stride) / VALID (no pads).
//
//   ASSIGN_OR_RETURN(braid::ConvTransposeGeometry g,
//                    braid::ComputeConvTransposeGeometry(node.attrs, in_spatial, kernel));
#ifndef BRAID_GRAPH_OPS_CONV_TRANSPOSE_GEOMETRY_H_
#define BRAID_GRAPH_OPS_CONV_TRANSPOSE_GEOMETRY_H_

#include <cstdint>
#include <span>
#include <vector>

#include "graph/ir.h"

namespace braid {

struct ConvTransposeGeometry {
  std::vector<int64_t> kernel, strides, dilations, pads_begin, pads_end, output_padding;
  std::vector<int64_t> out_spatial;
};

// `in_spatial` and `weight_kernel` are the input's and the weight's spatial
// extents (static). Errors name the attribute that does not fit.
StatusOr<ConvTransposeGeometry> ComputeConvTransposeGeometry(const Attributes& attrs,
                                                             std::span<const int64_t> in_spatial,
                                                             std::span<const int64_t> weight_kernel);

}  // namespace braid

#endif  // BRAID_GRAPH_OPS_CONV_TRANSPOSE_GEOMETRY_H_
