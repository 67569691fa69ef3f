// Resize and Upsample, as shape inference and the kernels both need them:
// the attributes by opset, and the output extents and per-axis scales from
// the scales / sizes / roi inputs (ONNX Resize 10-19, Upsample 7-9).
//
//   ASSIGN_OR_RETURN(braid::ResizeAttributes a, braid::ParseResizeAttributes(node, opset));
//   ASSIGN_OR_RETURN(braid::ResizeGeometry g,
//                    braid::ComputeResizeGeometry(in_dims, a, scales, sizes, roi));
//   // g.out_dims, g.scales (what the coordinate transforms divide by), g.roi
#ifndef BRAID_GRAPH_OPS_RESIZE_GEOMETRY_H_
#define BRAID_GRAPH_OPS_RESIZE_GEOMETRY_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "graph/ir.h"

namespace braid {

enum class ResizeMode { kNearest, kLinear, kCubic };
enum class ResizeCoordinates {
  kHalfPixel,
  kHalfPixelSymmetric,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn,
  kTfCropAndResize,
};
enum class ResizeNearest {
  kRoundPreferFloor,
  kRoundPreferCeil,
  kFloor,
  kCeil,
  kSimple,  // Upsample and Resize-10: floor when enlarging, ceil when shrinking
};
enum class ResizeAspect { kStretch, kNotLarger, kNotSmaller };

struct ResizeAttributes {
  bool upsample = false;  // the Upsample op (7-9)
  ResizeMode mode = ResizeMode::kNearest;
  ResizeCoordinates coordinates = ResizeCoordinates::kHalfPixel;
  ResizeNearest nearest = ResizeNearest::kRoundPreferFloor;
  double cubic_coeff_a = -0.75;
  bool exclude_outside = false;
  double extrapolation_value = 0.0;
  bool antialias = false;
  std::vector<int64_t> axes;  // as given (opset 18); empty = every axis
  ResizeAspect aspect = ResizeAspect::kStretch;
  // Input positions of roi, scales and sizes (-1: the opset has none);
  // Upsample-7 takes its scales from an attribute.
  int roi_input = -1, scales_input = -1, sizes_input = -1;
  std::vector<float> scales_attribute;
};

// Reads and checks the attributes of a Resize (opset 10+) or Upsample node.
StatusOr<ResizeAttributes> ParseResizeAttributes(const Node& node, int64_t opset);

struct ResizeGeometry {
  std::vector<int64_t> out_dims;
  std::vector<double> scales;  // per axis (1 where not resized)
  std::vector<double> roi_start, roi_end;  // per axis (tf_crop_and_resize); 0 and 1 by default
};

// Output extents and per-axis scales for `in_dims`: from `scales` (output =
// floor(input * scale)) when it is not empty, else from `sizes` (with the
// keep_aspect_ratio_policy of opset 18). `roi` may be empty. Errors name the
// problem (counts that do not match the axes, non-positive scales, sizes,
// extents past 2^31).
StatusOr<ResizeGeometry> ComputeResizeGeometry(std::span<const int64_t> in_dims,
                                               const ResizeAttributes& attributes,
                                               std::span<const float> scales,
                                               std::span<const int64_t> sizes,
                                               std::span<const float> roi);

}  // namespace braid

#endif  // BRAID_GRAPH_OPS_RESIZE_GEOMETRY_H_
