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

#include <cstdint>
#include <vector>

#include "graph/ops/resize_geometry.h"
#include "kernels/backend.h"

namespace braid {

struct ResizeParams {
  ResizeAttributes attributes;
  ResizeGeometry geometry;
};
StatusOr<ResizeParams> ParseResize(const PrepareArgs& args);

// One axis of a resize: per output coordinate, a run of taps (input index,
// weight) as ONNX's reference chooses them (the n positions closest to the
// input coordinate, the window kept inside the axis padded by n/2 with its
// edge values; 2 for nearest and linear, 4 for cubic, more with antialias
// when shrinking), or `outside` (tf_crop_and_resize: extrapolation_value).
struct ResizeAxisMap {
  struct Tap {
    int64_t index = 0;
    double weight = 0;
  };
  std::vector<size_t> first;     // per output coordinate: its first tap
  std::vector<uint32_t> count;   // and how many (at least 1)
  std::vector<uint8_t> outside;
  std::vector<Tap> taps;
  bool identity = true;  // output coordinate o reads input o, weight 1
};
ResizeAxisMap BuildResizeAxis(const ResizeAttributes& attributes, int64_t in_len,
                              int64_t out_len, double scale, double roi_start, double roi_end);

}  // namespace braid

#endif  // BRAID_KERNELS_PARAMS_RESIZE_H_
