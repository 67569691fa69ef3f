// Shape functions of Resize (opsets 10-19), Upsample (7-9) and GridSample
// (16; 4-D). Resize and Upsample: the output
// extents from constant scales (floor(input * scale)) or sizes (computable
// at load time, e.g. PyTorch's Shape -> Gather -> Concat chains); geometry
// shared with the kernels (graph/ops/resize_geometry.h). A symbolic axis
// stays symbolic when its scale is 1.
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "graph/ops/resize_geometry.h"
#include "graph/ops/shape_functions.h"

namespace braid::ops {
namespace {

// The float values of constant input `i` (scales, roi); empty when absent.
StatusOr<std::vector<float>> ConstantFloats(ShapeInferenceContext& ctx, int i) {
  if (i < 0 || !ctx.has_input(static_cast<size_t>(i))) return std::vector<float>();
  const Value& v = ctx.input(static_cast<size_t>(i));
  if (v.has_shape && ElementCount(v.shape) == 0) return std::vector<float>();
  if (!v.constant)
    return ctx.Unsupported("input " + std::to_string(i) + " ('" + v.name +
                           "') must be a constant (scales and roi computed at run time are not "
                           "supported)");
  if (v.dtype != DataType::kF32)
    return ctx.Error("input " + std::to_string(i) + " ('" + v.name + "') must be float32");
  std::span<const float> values = v.constant->as<float>();
  return std::vector<float>(values.begin(), values.end());
}

}  // namespace

Status InferResize(ShapeInferenceContext& ctx) {
  const bool upsample = ctx.node().op_type == "Upsample";
  RETURN_IF_ERROR(ctx.ExpectInputs(1, upsample ? 2 : 4));
  ASSIGN_OR_RETURN(ResizeAttributes attrs, ParseResizeAttributes(ctx.node(), ctx.opset()));
  const Shape& in = ctx.input_shape(0);
  std::vector<float> scales = attrs.scales_attribute;
  if (attrs.scales_input >= 0) {
    ASSIGN_OR_RETURN(scales, ConstantFloats(ctx, attrs.scales_input));
  }
  ASSIGN_OR_RETURN(std::vector<float> roi, ConstantFloats(ctx, attrs.roi_input));
  // Symbolic extents count as 1 here; they must keep a scale of 1.
  std::vector<int64_t> dims;
  for (const Dim& d : in) dims.push_back(d.is_static() ? d.extent() : 1);
  const auto rank = static_cast<int64_t>(in.size());
  std::vector<bool> listed(in.size(), attrs.axes.empty());  // the axes scales / sizes name
  for (int64_t axis : attrs.axes)
    if (axis >= -rank && axis < rank) listed[static_cast<size_t>(axis < 0 ? axis + rank : axis)] = true;
  std::vector<int64_t> sizes;
  std::vector<bool> keep(in.size(), false);  // a sizes entry that is the input's own symbol
  const auto sizes_input = static_cast<size_t>(attrs.sizes_input);
  if (scales.empty() && attrs.sizes_input >= 0 && ctx.has_input(sizes_input)) {
    // PyTorch writes sizes as Concat(Shape(x)[:2], [h, w]): a symbolic entry
    // that is the input's own extent on that axis keeps it.
    std::optional<DimValues> values = ctx.InputValues(sizes_input);
    if (!values) {
      ASSIGN_OR_RETURN(sizes, ctx.InputInts(sizes_input));  // names the problem
    } else {
      const bool all_axes = attrs.axes.empty() && values->size() == in.size();
      for (size_t i = 0; i < values->size(); ++i) {
        const Dim& v = (*values)[i];
        if (v.is_static()) {
          sizes.push_back(v.extent());
        } else if (all_axes && !in[i].is_static() && in[i].symbol() == v.symbol()) {
          sizes.push_back(1);
          keep[i] = true;
        } else {
          return ctx.Unsupported("sizes entry " + std::to_string(i) + " is symbolic (" +
                                 v.symbol() + ") and not the input's extent on that axis");
        }
      }
    }
    if (attrs.aspect != ResizeAspect::kStretch)
      for (size_t i = 0; i < in.size(); ++i)
        if (listed[i] && !in[i].is_static())
          return ctx.Unsupported("keep_aspect_ratio_policy over symbolic dimension " +
                                 in[i].symbol());
  }
  StatusOr<ResizeGeometry> geometry = ComputeResizeGeometry(dims, attrs, scales, sizes, roi);
  if (!geometry.ok()) return ctx.Error(geometry.status().message());
  Shape out = in;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i].is_static() || (!sizes.empty() && listed[i] && !keep[i])) {
      out[i] = Dim(geometry->out_dims[i]);  // a number, or a static size on a symbolic axis
    } else if (!keep[i] && geometry->scales[i] != 1.0) {
      return ctx.Unsupported("resizing symbolic dimension " + in[i].symbol());
    }
  }
  ctx.SetOutput(0, ctx.input_dtype(0), std::move(out));
  return Status::Ok();
}

// GridSample(X [N, C, H, W], grid [N, H_out, W_out, 2]): [N, C, H_out,
// W_out]. Opset 16's mode names (bilinear, nearest, bicubic) and opset 20's
// (linear, cubic) are both read; only 4-D inputs are supported.
Status InferGridSample(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  const Shape& x = ctx.input_shape(0);
  const Shape& grid = ctx.input_shape(1);
  if (x.size() != 4)
    return ctx.Unsupported("X " + ShapeToString(x) + " (only 4-D [N, C, H, W] inputs)");
  if (grid.size() != 4 || !(grid[3] == Dim(2)))
    return ctx.Error("grid " + ShapeToString(grid) + " must be [N, H_out, W_out, 2]");
  if (x[0].is_static() && grid[0].is_static() && x[0] != grid[0])
    return ctx.Error("X " + ShapeToString(x) + " and grid " + ShapeToString(grid) +
                     " differ in the batch");
  if (ctx.input_dtype(1) != ctx.input_dtype(0)) return ctx.Error("X and grid dtypes differ");
  const std::string mode = ctx.attrs().GetString("mode", "bilinear");
  if (mode != "bilinear" && mode != "linear" && mode != "nearest" && mode != "bicubic" &&
      mode != "cubic")
    return ctx.Error("mode '" + mode + "' must be bilinear, nearest or bicubic");
  const std::string padding = ctx.attrs().GetString("padding_mode", "zeros");
  if (padding != "zeros" && padding != "border" && padding != "reflection")
    return ctx.Error("padding_mode '" + padding + "' must be zeros, border or reflection");
  ctx.SetOutput(0, ctx.input_dtype(0), Shape{x[0], x[1], grid[1], grid[2]});
  return Status::Ok();
}

// RoiAlign (10+): X [N, C, H, W], rois [R, 4], batch_indices i64 [R] ->
// [R, C, output_height, output_width].
Status InferRoiAlign(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(3, 3));
  const Shape& x = ctx.input_shape(0);
  const Shape& rois = ctx.input_shape(1);
  const Shape& batch = ctx.input_shape(2);
  if (x.size() != 4) return ctx.Error("X " + ShapeToString(x) + " must be [N, C, H, W]");
  if (rois.size() != 2 || !(rois[1] == Dim(4)))
    return ctx.Error("rois " + ShapeToString(rois) + " must be [num_rois, 4]");
  if (batch.size() != 1 || ctx.input_dtype(2) != DataType::kI64 ||
      (batch[0].is_static() && rois[0].is_static() && batch[0] != rois[0]))
    return ctx.Error("batch_indices " + ShapeToString(batch) + " must be i64 [num_rois]");
  if (ctx.input_dtype(0) != DataType::kF32 || ctx.input_dtype(1) != DataType::kF32)
    return ctx.Unsupported("RoiAlign supports f32 X and rois only");
  const std::string mode = ctx.attrs().GetString("mode", "avg");
  if (mode != "avg" && mode != "max") return ctx.Error("mode '" + mode + "' must be avg or max");
  const std::string ctm = ctx.attrs().GetString("coordinate_transformation_mode", "half_pixel");
  if (ctm != "half_pixel" && ctm != "output_half_pixel")
    return ctx.Error("coordinate_transformation_mode '" + ctm + "' must be half_pixel or output_half_pixel");
  const int64_t h = ctx.attrs().GetInt("output_height", 1);
  const int64_t w = ctx.attrs().GetInt("output_width", 1);
  if (h <= 0) return ctx.Error("output_height " + std::to_string(h) + " must be positive");
  if (w <= 0) return ctx.Error("output_width " + std::to_string(w) + " must be positive");
  const int64_t ratio = ctx.attrs().GetInt("sampling_ratio", 0);
  if (ratio < 0) return ctx.Error("sampling_ratio " + std::to_string(ratio) + " must be >= 0");
  ctx.SetOutput(0, DataType::kF32, Shape{rois[0], x[1], Dim(h), Dim(w)});
  return Status::Ok();
}

}  // namespace braid::ops
