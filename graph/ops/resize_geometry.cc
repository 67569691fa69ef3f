#include "graph/ops/resize_geometry.h"

#include <algorithm>
#include <cmath>

namespace braid {
namespace {

// Extents past this are a hostile or broken model, not an image.
constexpr double kMaxExtent = 2147483647.0;

std::string Where(const Node& node) { return "node '" + node.name + "' (" + node.op_type + ")"; }

}  // namespace

StatusOr<ResizeAttributes> ParseResizeAttributes(const Node& node, int64_t opset) {
  ResizeAttributes a;
  const Attributes& attrs = node.attrs;
  const std::string where = Where(node);
  a.upsample = node.op_type == "Upsample";
  const std::string mode = attrs.GetString("mode", "nearest");
  if (mode == "nearest") {
    a.mode = ResizeMode::kNearest;
  } else if (mode == "linear" || (a.upsample && mode == "bilinear")) {
    a.mode = ResizeMode::kLinear;
  } else if (mode == "cubic" && !a.upsample && opset >= 11) {
    a.mode = ResizeMode::kCubic;
  } else {
    return InvalidArgument(where + ": unknown mode '" + mode + "'");
  }
  if (a.upsample || opset < 11) {
    // Upsample and Resize-10 index like numpy's repeat: x_in = x_out / scale.
    a.coordinates = ResizeCoordinates::kAsymmetric;
    a.nearest = ResizeNearest::kSimple;
    if (a.upsample && opset < 9) {
      a.scales_attribute = attrs.GetFloats("scales");
    } else {
      a.scales_input = 1;
    }
    return a;
  }
  a.roi_input = 1;
  a.scales_input = 2;
  a.sizes_input = 3;
  const std::string coordinates = attrs.GetString("coordinate_transformation_mode", "half_pixel");
  if (coordinates == "half_pixel") {
    a.coordinates = ResizeCoordinates::kHalfPixel;
  } else if (coordinates == "half_pixel_symmetric" && opset >= 19) {
    a.coordinates = ResizeCoordinates::kHalfPixelSymmetric;
  } else if (coordinates == "pytorch_half_pixel") {
    a.coordinates = ResizeCoordinates::kPytorchHalfPixel;
  } else if (coordinates == "align_corners") {
    a.coordinates = ResizeCoordinates::kAlignCorners;
  } else if (coordinates == "asymmetric") {
    a.coordinates = ResizeCoordinates::kAsymmetric;
  } else if (coordinates == "tf_half_pixel_for_nn" && opset < 13) {
    a.coordinates = ResizeCoordinates::kTfHalfPixelForNn;
  } else if (coordinates == "tf_crop_and_resize") {
    a.coordinates = ResizeCoordinates::kTfCropAndResize;
  } else {
    return InvalidArgument(where + ": unknown coordinate_transformation_mode '" + coordinates +
                           "' at opset " + std::to_string(opset));
  }
  const std::string nearest = attrs.GetString("nearest_mode", "round_prefer_floor");
  if (nearest == "round_prefer_floor") {
    a.nearest = ResizeNearest::kRoundPreferFloor;
  } else if (nearest == "round_prefer_ceil") {
    a.nearest = ResizeNearest::kRoundPreferCeil;
  } else if (nearest == "floor") {
    a.nearest = ResizeNearest::kFloor;
  } else if (nearest == "ceil") {
    a.nearest = ResizeNearest::kCeil;
  } else {
    return InvalidArgument(where + ": unknown nearest_mode '" + nearest + "'");
  }
  a.cubic_coeff_a = attrs.GetFloat("cubic_coeff_a", -0.75f);
  a.exclude_outside = attrs.GetInt("exclude_outside", 0) != 0;
  a.extrapolation_value = attrs.GetFloat("extrapolation_value", 0.0f);
  if (opset >= 18) {
    a.antialias = attrs.GetInt("antialias", 0) != 0;
    a.axes = attrs.GetInts("axes");
    const std::string aspect = attrs.GetString("keep_aspect_ratio_policy", "stretch");
    if (aspect == "stretch") {
      a.aspect = ResizeAspect::kStretch;
    } else if (aspect == "not_larger") {
      a.aspect = ResizeAspect::kNotLarger;
    } else if (aspect == "not_smaller") {
      a.aspect = ResizeAspect::kNotSmaller;
    } else {
      return InvalidArgument(where + ": unknown keep_aspect_ratio_policy '" + aspect + "'");
    }
  }
  if (a.antialias && a.mode == ResizeMode::kNearest) a.antialias = false;  // no effect there
  return a;
}

StatusOr<ResizeGeometry> ComputeResizeGeometry(std::span<const int64_t> in_dims,
                                               const ResizeAttributes& a,
                                               std::span<const float> scales,
                                               std::span<const int64_t> sizes,
                                               std::span<const float> roi) {
  const auto rank = static_cast<int64_t>(in_dims.size());
  std::vector<int64_t> axes;
  for (int64_t axis : a.axes) {
    if (axis < -rank || axis >= rank)
      return InvalidArgument("axis " + std::to_string(axis) + " is out of range for rank " +
                             std::to_string(rank));
    const int64_t normalized = axis < 0 ? axis + rank : axis;
    if (std::find(axes.begin(), axes.end(), normalized) != axes.end())
      return InvalidArgument("axis " + std::to_string(axis) + " is given twice");
    axes.push_back(normalized);
  }
  if (axes.empty())
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  const size_t n = axes.size();

  ResizeGeometry g;
  g.out_dims.assign(in_dims.begin(), in_dims.end());
  g.scales.assign(in_dims.size(), 1.0);
  g.roi_start.assign(in_dims.size(), 0.0);
  g.roi_end.assign(in_dims.size(), 1.0);
  if (!roi.empty() && a.coordinates == ResizeCoordinates::kTfCropAndResize) {
    if (roi.size() != 2 * n)
      return InvalidArgument("roi has " + std::to_string(roi.size()) + " values, expected " +
                             std::to_string(2 * n));
    for (float v : roi)
      if (!std::isfinite(v)) return InvalidArgument("roi holds a value that is not finite");
    for (size_t i = 0; i < n; ++i) {
      g.roi_start[static_cast<size_t>(axes[i])] = roi[i];
      g.roi_end[static_cast<size_t>(axes[i])] = roi[n + i];
    }
  }
  if (!scales.empty()) {
    if (scales.size() != n)
      return InvalidArgument("scales has " + std::to_string(scales.size()) + " values for " +
                             std::to_string(n) + " axes");
    for (size_t i = 0; i < n; ++i) {
      const auto axis = static_cast<size_t>(axes[i]);
      const double s = scales[i];
      if (!(s > 0) || !std::isfinite(s))
        return InvalidArgument("scale " + std::to_string(s) + " must be positive");
      const double extent = std::floor(static_cast<double>(in_dims[axis]) * s);
      if (extent > kMaxExtent)
        return InvalidArgument("scale " + std::to_string(s) + " gives an extent past 2^31");
      g.out_dims[axis] = static_cast<int64_t>(extent);
      g.scales[axis] = s;
    }
    return g;
  }
  if (sizes.empty()) return InvalidArgument("neither scales nor sizes is given");
  if (sizes.size() != n)
    return InvalidArgument("sizes has " + std::to_string(sizes.size()) + " values for " +
                           std::to_string(n) + " axes");
  for (size_t i = 0; i < n; ++i)
    if (sizes[i] <= 0 || static_cast<double>(sizes[i]) > kMaxExtent)
      return InvalidArgument("size " + std::to_string(sizes[i]) + " must be in [1, 2^31)");
  if (a.aspect == ResizeAspect::kStretch) {
    for (size_t i = 0; i < n; ++i) {
      const auto axis = static_cast<size_t>(axes[i]);
      g.out_dims[axis] = sizes[i];
      g.scales[axis] = in_dims[axis] > 0 ? static_cast<double>(sizes[i]) /
                                               static_cast<double>(in_dims[axis])
                                         : 1.0;
    }
    return g;
  }
  // One scale for every axis: the largest that fits (not_larger) or the
  // smallest that covers (not_smaller); extents rounded halves up (the
  // spec's round_int, ONNX Runtime's roundf for these positive values).
  double common = a.aspect == ResizeAspect::kNotLarger ? INFINITY : 0;
  for (size_t i = 0; i < n; ++i) {
    const auto axis = static_cast<size_t>(axes[i]);
    if (in_dims[axis] <= 0) return InvalidArgument("keep_aspect_ratio_policy on an empty axis");
    const double s = static_cast<double>(sizes[i]) / static_cast<double>(in_dims[axis]);
    common = a.aspect == ResizeAspect::kNotLarger ? std::min(common, s) : std::max(common, s);
  }
  for (size_t i = 0; i < n; ++i) {
    const auto axis = static_cast<size_t>(axes[i]);
    const double extent = std::floor(common * static_cast<double>(in_dims[axis]) + 0.5);
    if (extent > kMaxExtent) return InvalidArgument("sizes give an extent past 2^31");
    g.out_dims[axis] = static_cast<int64_t>(extent);
    g.scales[axis] = common;
  }
  return g;
}

}  // namespace braid
