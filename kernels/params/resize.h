// Resize (opsets 10-19) and Upsample (7-9) at Prepare: the attributes and
// the geometry (graph/ops/resize_geometry.h, shared with shape inference)
// from the constant scales / sizes / roi inputs, checked against the
// prepared output's extents. Scales or sizes computed at run time: the
// scales are the output's extents over the input's (keep_aspect_ratio_policy
// stretch only; otherwise Unimplemented).
//
//   ASSIGN_OR_RETURN(braid::ResizeParams p, braid::ParseResize(args));
//   // p.attributes.mode, p.geometry.scales[axis], p.geometry.out_dims
#ifndef BRAID_KERNELS_PARAMS_RESIZE_H_
#define BRAID_KERNELS_PARAMS_RESIZE_H_

#include "graph/ops/resize_geometry.h"
#include "kernels/backend.h"

namespace braid {

struct ResizeParams {
  ResizeAttributes attributes;
  ResizeGeometry geometry;
};
StatusOr<ResizeParams> ParseResize(const PrepareArgs& args);

}  // namespace braid

#endif  // BRAID_KERNELS_PARAMS_RESIZE_H_
