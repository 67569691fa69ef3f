// Shape functions of Conv, MaxPool, AveragePool and the global pools.
// Fused activation attributes on Conv ("activation", ...) never change shapes.
#include <optional>
#include <string>
#include <vector>

#include "graph/ops/conv_transpose_geometry.h"
#include "graph/ops/shape_functions.h"

namespace braid::ops {

namespace {

struct Window {
  std::vector<int64_t> kernel, strides, dilations, pads;  // pads: begins, ends
  std::string auto_pad;
  bool ceil_mode = false;
};

StatusOr<Window> ReadWindow(const ShapeInferenceContext& ctx,
                            std::vector<int64_t> kernel) {
  const size_t k = kernel.size();
  Window w;
  w.kernel = std::move(kernel);
  w.strides = ctx.attrs().GetInts("strides", std::vector<int64_t>(k, 1));
  w.dilations = ctx.attrs().GetInts("dilations", std::vector<int64_t>(k, 1));
  w.pads = ctx.attrs().GetInts("pads", std::vector<int64_t>(2 * k, 0));
  w.auto_pad = ctx.attrs().GetString("auto_pad", "NOTSET");
  w.ceil_mode = ctx.attrs().GetInt("ceil_mode", 0) != 0;
  if (w.strides.size() != k || w.dilations.size() != k ||
      w.pads.size() != 2 * k)
    return ctx.Error("strides " + IntsToString(w.strides) + ", dilations " +
                     IntsToString(w.dilations) + " or pads " + IntsToString(w.pads) +
                     " do not match " + std::to_string(k) +
                     " spatial dimensions");
  for (size_t i = 0; i < k; ++i) {
    if (w.kernel[i] <= 0 || w.strides[i] <= 0 || w.dilations[i] <= 0)
      return ctx.Error("kernel " + IntsToString(w.kernel) + ", strides " +
                       IntsToString(w.strides) + " and dilations " +
                       IntsToString(w.dilations) + " must be positive");
    if (w.pads[i] < 0 || w.pads[i + k] < 0)
      return ctx.Error("negative pads " + IntsToString(w.pads));
  }
  if (w.auto_pad != "NOTSET" && w.auto_pad != "VALID" &&
      w.auto_pad != "SAME_UPPER" && w.auto_pad != "SAME_LOWER")
    return ctx.Error("unknown auto_pad '" + w.auto_pad + "'");
  return w;
}

// Output extents of the spatial dims [2, rank) of `input`.
StatusOr<Shape> SpatialOutput(const ShapeInferenceContext& ctx,
                              const Shape& input, const Window& w) {
  Shape out;
  const size_t k = w.kernel.size();
  for (size_t i = 0; i < k; ++i) {
    const Dim& d = input[2 + i];
    if (!d.is_static())
      return ctx.Unsupported("symbolic spatial dimension " + d.symbol());
    const int64_t in = d.extent();
    const int64_t s = w.strides[i];
    // Attributes are untrusted: every step is checked (all terms are >= 0).
    std::optional<int64_t> scaled =
        CheckedMultiply(w.kernel[i] - 1, w.dilations[i]);
    std::optional<int64_t> effective =
        scaled ? CheckedAdd(*scaled, 1) : std::nullopt;
    if (!effective)
      return ctx.Error("kernel " + IntsToString(w.kernel) + " with dilations " +
                       IntsToString(w.dilations) + " overflows");
    int64_t o;
    if (w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER") {
      o = in == 0 ? 0 : (in - 1) / s + 1;
    } else {
      const int64_t begin = w.auto_pad == "VALID" ? 0 : w.pads[i];
      const int64_t end = w.auto_pad == "VALID" ? 0 : w.pads[i + k];
      std::optional<int64_t> padded = CheckedAdd(in, begin);
      if (padded) padded = CheckedAdd(*padded, end);
      if (!padded)
        return ctx.Error("pads " + IntsToString(w.pads) + " overflow");
      const int64_t span = *padded - *effective;
      if (span < 0)
        return ctx.Error("kernel extent " + std::to_string(*effective) +
                         " exceeds padded input " + std::to_string(*padded) +
                         " in spatial dim " + std::to_string(i));
      if (w.ceil_mode) {
        o = span / s + (span % s != 0 ? 1 : 0) + 1;
        // The last window must start inside the input or its begin padding
        // (PyTorch and ONNX Runtime agree on this rule).
        if ((o - 1) * s >= in + begin) --o;
      } else {
        o = span / s + 1;
      }
    }
    out.emplace_back(o);
  }
  return out;
}

Status CheckSpatialInput(const ShapeInferenceContext& ctx, size_t min_rank) {
  if (ctx.input_rank(0) < min_rank)
    return ctx.Error("input must have rank >= " + std::to_string(min_rank) +
                     " (N, C, spatial...)");
  return Status::Ok();
}

}  // namespace

// Conv's shape rule on inputs x, w (and bias when bias >= 0) of the node,
// shared by Conv, ConvInteger and QLinearConv; the output is of type `out`.
Status InferConvShape(ShapeInferenceContext& ctx, size_t xi, size_t wi, int bias,
                      DataType out_dtype) {
  const Shape& x = ctx.input_shape(xi);
  const Shape& w = ctx.input_shape(wi);
  if (x.size() < 3) return ctx.Error("input must have rank >= 3 (N, C, spatial...)");
  if (w.size() != x.size())
    return ctx.Error("weight rank " + std::to_string(w.size()) +
                     " differs from input rank " + std::to_string(x.size()));
  const int64_t group = ctx.attrs().GetInt("group", 1);
  if (group <= 0) return ctx.Error("group must be positive");
  if (!w[0].is_static() || !w[1].is_static())
    return ctx.Error("weight dims must be static");
  const int64_t m = w[0].extent();
  if (m % group != 0)
    return ctx.Error("output channels " + std::to_string(m) +
                     " are not divisible by group " + std::to_string(group));
  if (x[1].is_static() && x[1].extent() != w[1].extent() * group)
    return ctx.Error("input channels " + x[1].ToString() +
                     " do not match weight channels " + w[1].ToString() +
                     " x group " + std::to_string(group));
  std::vector<int64_t> weight_kernel;
  for (size_t i = 2; i < w.size(); ++i) {
    if (!w[i].is_static()) return ctx.Error("weight dims must be static");
    weight_kernel.push_back(w[i].extent());
  }
  std::vector<int64_t> kernel =
      ctx.attrs().GetInts("kernel_shape", weight_kernel);
  if (kernel != weight_kernel)
    return ctx.Error("kernel_shape " + IntsToString(kernel) +
                     " does not match the weight " + ShapeToString(w));
  if (bias >= 0 && ctx.has_input(static_cast<size_t>(bias))) {
    const Shape& b = ctx.input_shape(static_cast<size_t>(bias));
    if (b.size() != 1 || !(b[0] == Dim(m)))
      return ctx.Error("bias shape " + ShapeToString(b) + " is not [" +
                       std::to_string(m) + "]");
  }
  ASSIGN_OR_RETURN(Window win, ReadWindow(ctx, kernel));
  ASSIGN_OR_RETURN(Shape spatial, SpatialOutput(ctx, x, win));
  Shape out{x[0], Dim(m)};
  out.insert(out.end(), spatial.begin(), spatial.end());
  ctx.SetOutput(0, out_dtype, std::move(out));
  return Status::Ok();
}

Status InferConv(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 3));
  return InferConvShape(ctx, 0, 1, 2, ctx.input_dtype(0));
}

Status InferConvTranspose(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 3));
  RETURN_IF_ERROR(CheckSpatialInput(ctx, 3));
  const Shape& x = ctx.input_shape(0);
  const Shape& w = ctx.input_shape(1);
  if (w.size() != x.size())
    return ctx.Error("weight rank " + std::to_string(w.size()) + " differs from input rank " +
                     std::to_string(x.size()));
  const int64_t group = ctx.attrs().GetInt("group", 1);
  if (group <= 0) return ctx.Error("group must be positive");
  std::vector<int64_t> weight_kernel;
  for (size_t i = 0; i < w.size(); ++i) {
    if (!w[i].is_static()) return ctx.Error("weight dims must be static");
    if (i >= 2) weight_kernel.push_back(w[i].extent());
  }
  // W is [C, M / group, k...]: input channels first.
  if (w[0].extent() % group != 0)
    return ctx.Error("weight's input channels " + std::to_string(w[0].extent()) +
                     " are not divisible by group " + std::to_string(group));
  if (x[1].is_static() && x[1].extent() != w[0].extent())
    return ctx.Error("input channels " + x[1].ToString() + " do not match the weight's " +
                     w[0].ToString());
  const int64_t m = w[1].extent() * group;
  if (ctx.has_input(2)) {
    const Shape& b = ctx.input_shape(2);
    if (b.size() != 1 || !(b[0] == Dim(m)))
      return ctx.Error("bias shape " + ShapeToString(b) + " is not [" + std::to_string(m) + "]");
  }
  std::vector<int64_t> in_spatial;
  for (size_t i = 2; i < x.size(); ++i) {
    if (!x[i].is_static()) return ctx.Unsupported("symbolic spatial dimension " + x[i].symbol());
    in_spatial.push_back(x[i].extent());
  }
  StatusOr<ConvTransposeGeometry> g =
      ComputeConvTransposeGeometry(ctx.attrs(), in_spatial, weight_kernel);
  if (!g.ok()) return ctx.Error(g.status().message());
  Shape out{x[0], Dim(m)};
  for (int64_t e : g->out_spatial) out.push_back(Dim(e));
  ctx.SetOutput(0, ctx.input_dtype(0), std::move(out));
  return Status::Ok();
}

Status InferPool(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  RETURN_IF_ERROR(CheckSpatialInput(ctx, 3));
  const Shape& x = ctx.input_shape(0);
  std::vector<int64_t> kernel = ctx.attrs().GetInts("kernel_shape");
  if (kernel.size() != x.size() - 2)
    return ctx.Error("kernel_shape " + IntsToString(kernel) + " does not match " +
                     std::to_string(x.size() - 2) + " spatial dimensions");
  ASSIGN_OR_RETURN(Window win, ReadWindow(ctx, kernel));
  ASSIGN_OR_RETURN(Shape spatial, SpatialOutput(ctx, x, win));
  Shape out{x[0], x[1]};
  out.insert(out.end(), spatial.begin(), spatial.end());
  ctx.SetOutput(0, ctx.input_dtype(0), out);
  ctx.SetOutput(1, DataType::kI64, out);  // MaxPool's optional Indices
  return Status::Ok();
}

Status InferGlobalPool(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  RETURN_IF_ERROR(CheckSpatialInput(ctx, 3));
  Shape out = ctx.input_shape(0);
  for (size_t i = 2; i < out.size(); ++i) out[i] = Dim(1);
  ctx.SetOutput(0, ctx.input_dtype(0), std::move(out));
  return Status::Ok();
}

// MaxUnpool (9+): X and I [N, C, D...]; Y [N, C, (D - 1) * stride + k -
// pad_begin - pad_end ...] (ConvTranspose's geometry without dilation), or
// the output_shape input (known at load time).
Status InferMaxUnpool(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 3));
  const Shape& x = ctx.input_shape(0);
  if (x.size() < 3) return ctx.Error("X " + ShapeToString(x) + " must be [N, C, D...]");
  if (ctx.input_dtype(1) != DataType::kI64 || ctx.input_shape(1) != x)
    return ctx.Error("I " + ShapeToString(ctx.input_shape(1)) + " must be i64 of X's shape");
  const std::vector<int64_t> kernel = ctx.attrs().GetInts("kernel_shape");
  if (kernel.size() != x.size() - 2)
    return ctx.Error("kernel_shape " + IntsToString(kernel) + " must have " +
                     std::to_string(x.size() - 2) + " entries");
  std::vector<int64_t> in_spatial;
  for (size_t i = 2; i < x.size(); ++i) {
    if (!x[i].is_static()) return ctx.Unsupported("spatial extents of X " + ShapeToString(x) + " must be static");
    in_spatial.push_back(x[i].extent());
  }
  StatusOr<ConvTransposeGeometry> g = ComputeConvTransposeGeometry(ctx.attrs(), in_spatial, kernel);
  if (!g.ok()) return ctx.Error(g.status().message());
  Shape out = {x[0], x[1]};
  if (ctx.has_input(2)) {
    StatusOr<std::vector<int64_t>> shape = ctx.InputInts(2);
    if (!shape.ok())
      return ctx.Unsupported("output_shape must be known at load time (" + shape.status().message() + ")");
    if (shape->size() != x.size())
      return ctx.Error("output_shape " + IntsToString(*shape) + " must have X's rank");
    for (size_t i = 2; i < shape->size(); ++i) {
      if ((*shape)[i] < g->out_spatial[i - 2])
        return ctx.Error("output_shape " + IntsToString(*shape) + " is smaller than the unpooled " +
                         IntsToString(g->out_spatial));
      out.push_back(Dim((*shape)[i]));
    }
  } else {
    for (int64_t e : g->out_spatial) {
      if (e <= 0) return ctx.Error("unpooled extents " + IntsToString(g->out_spatial) + " must be positive");
      out.push_back(Dim(e));
    }
  }
  ctx.SetOutput(0, ctx.input_dtype(0), std::move(out));
  return Status::Ok();
}

}  // namespace braid::ops
