// Shape functions of ops that select, scatter or pad: Gather, GatherElements,
// GatherND, Slice, Split, Pad, Range, Scatter(Elements|ND).
// Gather and Slice carry symbolic values (Gather(Shape(x), 0) is x's batch).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "graph/ops/shape_functions.h"

namespace braid::ops {

SliceRange ComputeSliceRange(int64_t dim, int64_t start, int64_t end,
                             int64_t step) {
  // An empty axis selects nothing (and has no valid index to clamp to).
  if (dim == 0) return {};
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
  }
  SliceRange r;
  r.start = start;
  const int64_t span = step > 0 ? end - start : start - end;
  // -INT64_MIN overflows; any step that large takes one element anyway.
  const int64_t abs_step =
      step > 0 ? step
               : (step == std::numeric_limits<int64_t>::min()
                      ? std::numeric_limits<int64_t>::max()
                      : -step);
  r.count = span <= 0 ? 0 : (span - 1) / abs_step + 1;
  return r;
}

std::vector<int64_t> RowMajorStrides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d].extent();
  return strides;
}

Status InferGather(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  const Shape& data = ctx.input_shape(0);
  const Shape& indices = ctx.input_shape(1);
  if (ctx.input_dtype(1) != DataType::kI64 &&
      ctx.input_dtype(1) != DataType::kI32)
    return ctx.Error("indices must be i32 or i64");
  const auto rank = static_cast<int64_t>(data.size());
  if (rank == 0) return ctx.Error("data must have rank >= 1");
  std::optional<int64_t> axis = NormalizeAxis(ctx.attrs().GetInt("axis", 0), rank);
  if (!axis) return ctx.Error("axis is out of range for rank " + std::to_string(rank));
  const auto ax = static_cast<size_t>(*axis);
  Shape out(data.begin(), data.begin() + static_cast<std::ptrdiff_t>(ax));
  out.insert(out.end(), indices.begin(), indices.end());
  out.insert(out.end(), data.begin() + static_cast<std::ptrdiff_t>(ax) + 1,
             data.end());

  // Constant indices are checked against a static extent.
  std::optional<DimValues> index_values = ctx.InputValues(1);
  const Dim& extent = data[ax];
  if (index_values && extent.is_static()) {
    for (const Dim& i : *index_values)
      if (i.is_static() &&
          (i.extent() < -extent.extent() || i.extent() >= extent.extent()))
        return ctx.Error("index " + i.ToString() +
                         " is out of range for extent " + extent.ToString());
  }
  ctx.SetOutput(0, ctx.input_dtype(0), out);

  std::optional<DimValues> values = ctx.InputValues(0);
  if (!values || !index_values || data.size() != 1) return Status::Ok();
  const auto n = static_cast<int64_t>(values->size());
  DimValues picked;
  for (const Dim& i : *index_values) {
    if (!i.is_static()) return Status::Ok();
    const int64_t k = i.extent() < 0 ? i.extent() + n : i.extent();
    if (k < 0 || k >= n) return Status::Ok();
    picked.push_back((*values)[static_cast<size_t>(k)]);
  }
  ctx.SetOutputValues(0, std::move(picked));
  return Status::Ok();
}

Status InferSlice(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 5));
  const Shape& in = ctx.input_shape(0);
  const auto rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> starts, ends, axes, steps;
  if (ctx.num_inputs() == 1) {  // opset < 10: attributes
    starts = ctx.attrs().GetInts("starts");
    ends = ctx.attrs().GetInts("ends");
    axes = ctx.attrs().GetInts("axes");
  } else {
    RETURN_IF_ERROR(ctx.ExpectInputs(3, 5));
    ASSIGN_OR_RETURN(starts, ctx.InputInts(1));
    ASSIGN_OR_RETURN(ends, ctx.InputInts(2));
    if (ctx.has_input(3)) {
      ASSIGN_OR_RETURN(axes, ctx.InputInts(3));
    }
    if (ctx.has_input(4)) {
      ASSIGN_OR_RETURN(steps, ctx.InputInts(4));
    }
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (starts.size() != ends.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    return ctx.Error("starts " + IntsToString(starts) + ", ends " + IntsToString(ends) +
                     ", axes " + IntsToString(axes) + " and steps " + IntsToString(steps) +
                     " differ in length");
  Shape out = in;
  std::vector<bool> seen(in.size(), false);
  std::vector<SliceRange> ranges(in.size());
  std::vector<int64_t> step_of(in.size(), 1);
  for (size_t i = 0; i < axes.size(); ++i) {
    std::optional<int64_t> axis = NormalizeAxis(axes[i], rank);
    if (!axis) return ctx.Error("axis " + std::to_string(axes[i]) + " is out of range");
    const auto ax = static_cast<size_t>(*axis);
    if (seen[ax]) return ctx.Error("axis " + std::to_string(axes[i]) + " is repeated");
    seen[ax] = true;
    if (steps[i] == 0) return ctx.Error("step must not be 0");
    step_of[ax] = steps[i];
    const Dim& d = in[ax];
    if (!d.is_static()) {
      // Only the full range keeps a symbolic extent.
      const bool full = starts[i] == 0 && steps[i] == 1 &&
                        ends[i] >= std::numeric_limits<int32_t>::max();
      if (!full)
        return ctx.Unsupported("slicing symbolic dimension " + d.symbol() +
                               " with start " + std::to_string(starts[i]) +
                               ", end " + std::to_string(ends[i]));
      ranges[ax] = {0, -1};
      continue;
    }
    ranges[ax] = ComputeSliceRange(d.extent(), starts[i], ends[i], steps[i]);
    out[ax] = Dim(ranges[ax].count);
  }
  ctx.SetOutput(0, ctx.input_dtype(0), out);

  // Values of a small static tensor: the picked elements, row-major.
  std::optional<DimValues> values = ctx.InputValues(0);
  if (!values || !IsStatic(in) || ElementCount(in) != static_cast<int64_t>(values->size()))
    return Status::Ok();
  const std::vector<int64_t> in_strides = RowMajorStrides(in);
  for (size_t d = 0; d < in.size(); ++d)
    if (!seen[d]) ranges[d] = SliceRange{0, in[d].extent()};
  DimValues picked;
  const int64_t count = ElementCount(out);
  std::vector<int64_t> index(in.size(), 0);
  for (int64_t k = 0; k < count; ++k) {
    int64_t from = 0;
    for (size_t d = 0; d < in.size(); ++d)
      from += (ranges[d].start + index[d] * step_of[d]) * in_strides[d];
    picked.push_back((*values)[static_cast<size_t>(from)]);
    for (size_t d = in.size(); d-- > 0;) {
      if (++index[d] < ranges[d].count) break;
      index[d] = 0;
    }
  }
  ctx.SetOutputValues(0, std::move(picked));
  return Status::Ok();
}

Status InferSplit(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 2));
  const Shape& in = ctx.input_shape(0);
  const auto rank = static_cast<int64_t>(in.size());
  std::optional<int64_t> axis = NormalizeAxis(ctx.attrs().GetInt("axis", 0), rank);
  if (!axis) return ctx.Error("axis is out of range for rank " + std::to_string(rank));
  const auto ax = static_cast<size_t>(*axis);
  std::vector<int64_t> split;
  if (ctx.has_input(1)) {  // opset 13+
    ASSIGN_OR_RETURN(split, ctx.InputInts(1));
  } else {
    split = ctx.attrs().GetInts("split");
  }
  const size_t outputs = ctx.num_outputs();
  if (outputs == 0) return ctx.Error("has no outputs");
  if (!split.empty()) {
    if (split.size() != outputs)
      return ctx.Error("split " + IntsToString(split) + " has " +
                       std::to_string(split.size()) + " parts for " +
                       std::to_string(outputs) + " outputs");
    std::optional<int64_t> total = 0;
    for (int64_t s : split) {
      if (s < 0) return ctx.Error("negative split " + IntsToString(split));
      total = CheckedAdd(*total, s);
      if (!total) return ctx.Error("split " + IntsToString(split) + " overflows");
    }
    if (in[ax].is_static() && *total != in[ax].extent())
      return ctx.Error("split " + IntsToString(split) + " sums to " +
                       std::to_string(*total) + ", the axis has " +
                       in[ax].ToString());
    if (!in[ax].is_static())
      return ctx.Unsupported("splitting symbolic dimension " + in[ax].symbol());
  } else {
    if (!in[ax].is_static())
      return ctx.Unsupported("splitting symbolic dimension " + in[ax].symbol());
    const int64_t n = static_cast<int64_t>(outputs);
    const int64_t extent = in[ax].extent();
    if (ctx.opset() < 18 && extent % n != 0)
      return ctx.Error("axis extent " + std::to_string(extent) +
                       " does not split evenly into " + std::to_string(n));
    // Opset 18 semantics: parts of ceil(extent/n), the last one smaller.
    const int64_t part = (extent + n - 1) / n;
    for (int64_t i = 0; i < n; ++i)
      split.push_back(std::clamp<int64_t>(extent - i * part, 0, part));
  }
  for (size_t i = 0; i < outputs; ++i) {
    Shape out = in;
    out[ax] = Dim(split[i]);
    ctx.SetOutput(i, ctx.input_dtype(0), std::move(out));
  }
  return Status::Ok();
}

Status InferPad(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 4));
  const Shape& in = ctx.input_shape(0);
  const size_t rank = in.size();
  std::vector<int64_t> pads;
  if (ctx.has_input(1)) {  // opset 11+
    ASSIGN_OR_RETURN(pads, ctx.InputInts(1));
  } else {
    pads = ctx.attrs().GetInts("pads");
  }
  const std::string mode = ctx.attrs().GetString("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge")
    return ctx.Error("unknown mode '" + mode + "'");
  std::vector<int64_t> axes;
  if (ctx.has_input(3)) {  // opset 18
    ASSIGN_OR_RETURN(axes, ctx.InputInts(3));
  } else {
    for (size_t i = 0; i < rank; ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (pads.size() != 2 * axes.size())
    return ctx.Error("pads " + IntsToString(pads) + " must have " +
                     std::to_string(2 * axes.size()) + " entries");
  Shape out = in;
  for (size_t i = 0; i < axes.size(); ++i) {
    std::optional<int64_t> axis =
        NormalizeAxis(axes[i], static_cast<int64_t>(rank));
    if (!axis) return ctx.Error("axis " + std::to_string(axes[i]) + " is out of range");
    const auto ax = static_cast<size_t>(*axis);
    std::optional<int64_t> add = CheckedAdd(pads[i], pads[i + axes.size()]);
    std::optional<int64_t> extent =
        add && in[ax].is_static() ? CheckedAdd(in[ax].extent(), *add)
                                  : std::nullopt;
    if (!add || (in[ax].is_static() && !extent))
      return ctx.Error("pads " + IntsToString(pads) + " overflow");
    if (*add == 0) continue;
    if (!in[ax].is_static())
      return ctx.Unsupported("padding symbolic dimension " + in[ax].symbol());
    if (*extent < 0)
      return ctx.Error("pads " + IntsToString(pads) + " crop dimension " +
                       std::to_string(ax) + " below zero");
    out[ax] = Dim(*extent);
  }
  ctx.SetOutput(0, ctx.input_dtype(0), std::move(out));
  return Status::Ok();
}

// Range: the output length max(ceil((limit - start) / delta), 0) must be
// known at load time, so start, limit and delta are constants (any of
// f32 / i32 / i64) or integer values shape inference tracked.
Status InferRange(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(3, 3));
  const DataType dtype = ctx.input_dtype(0);
  if (dtype != DataType::kF32 && dtype != DataType::kI32 && dtype != DataType::kI64)
    return ctx.Unsupported(std::string("dtype ") + DataTypeName(dtype) + " (f32, i32, i64 only)");
  double bounds[3];
  bool known = true;
  std::vector<int64_t> ints(3);
  for (size_t i = 0; i < 3; ++i) {
    if (ctx.input_dtype(i) != dtype) return ctx.Error("start, limit and delta dtypes differ");
    if (ElementCount(ctx.input_shape(i)) != 1)
      return ctx.Error("input " + std::to_string(i) + " must be a scalar");
    const Value& v = ctx.input(i);
    if (dtype == DataType::kF32 && v.constant && v.constant->size() == sizeof(float)) {
      float f;
      std::memcpy(&f, v.constant->data(), sizeof(float));
      bounds[i] = f;
    } else if (dtype != DataType::kF32) {
      std::optional<DimValues> values = ctx.InputValues(i);
      if (!values || values->size() != 1 || !(*values)[0].is_static()) {
        known = false;
        continue;
      }
      ints[i] = (*values)[0].extent();
      bounds[i] = static_cast<double>(ints[i]);
    } else {
      known = false;
    }
  }
  if (!known)
    return ctx.Unsupported(
        "start, limit and delta must be known at load time (the output length depends on them)");
  if (bounds[2] == 0) return ctx.Error("delta is 0");
  const double length = std::ceil((bounds[1] - bounds[0]) / bounds[2]);
  if (std::isnan(length)) return ctx.Error("start, limit and delta give no length (NaN)");
  if (!(length < 1e9)) return ctx.Error("the output would have " + std::to_string(length) + " elements");
  const int64_t n = length <= 0 ? 0 : static_cast<int64_t>(length);
  ctx.SetOutput(0, dtype, Shape{Dim(n)});
  if (dtype != DataType::kF32 && n <= static_cast<int64_t>(kMaxSymbolicElements)) {
    DimValues values;
    uint64_t value = static_cast<uint64_t>(ints[0]);  // wraps instead of overflowing
    for (int64_t k = 0; k < n; ++k, value += static_cast<uint64_t>(ints[2]))
      values.push_back(Dim(static_cast<int64_t>(value)));
    ctx.SetOutputValues(0, std::move(values));
  }
  return Status::Ok();
}

namespace {

// ScatterND's and ScatterElements' `reduction` (none, add, mul, max, min).
Status CheckScatterReduction(const ShapeInferenceContext& ctx) {
  const std::string reduction = ctx.attrs().GetString("reduction", "none");
  if (reduction != "none" && reduction != "add" && reduction != "mul" && reduction != "max" &&
      reduction != "min")
    return ctx.Error("unknown reduction '" + reduction + "'");
  return Status::Ok();
}

// GatherElements' and ScatterElements' data and indices: i32/i64 indices of
// data's rank, extents within data's off `axis` (where static). The axis.
StatusOr<size_t> CheckElementIndices(const ShapeInferenceContext& ctx) {
  const Shape& data = ctx.input_shape(0);
  const Shape& indices = ctx.input_shape(1);
  if (ctx.input_dtype(1) != DataType::kI64 && ctx.input_dtype(1) != DataType::kI32)
    return ctx.Error(std::string("indices must be i32 or i64, are ") +
                     DataTypeName(ctx.input_dtype(1)));
  const auto rank = static_cast<int64_t>(data.size());
  if (rank == 0 || indices.size() != data.size())
    return ctx.Error("data " + ShapeToString(data) + " and indices " + ShapeToString(indices) +
                     " must have the same rank >= 1");
  const int64_t raw_axis = ctx.attrs().GetInt("axis", 0);
  std::optional<int64_t> axis = NormalizeAxis(raw_axis, rank);
  if (!axis)
    return ctx.Error("axis " + std::to_string(raw_axis) + " is out of range for rank " +
                     std::to_string(rank));
  for (size_t d = 0; d < data.size(); ++d)
    if (static_cast<int64_t>(d) != *axis && data[d].is_static() && indices[d].is_static() &&
        indices[d].extent() > data[d].extent())
      return ctx.Error("indices " + ShapeToString(indices) + " exceed data " +
                       ShapeToString(data) + " on axis " + std::to_string(d));
  return static_cast<size_t>(*axis);
}

}  // namespace

// GatherElements(data, indices, axis): data's dtype, indices' shape.
Status InferGatherElements(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  RETURN_IF_ERROR(CheckElementIndices(ctx).status());
  ctx.SetOutput(0, ctx.input_dtype(0), ctx.input_shape(1));
  return Status::Ok();
}

// ScatterElements / Scatter(data, indices, updates shaped as indices):
// data's shape and dtype.
Status InferScatterElements(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(3, 3));
  RETURN_IF_ERROR(CheckScatterReduction(ctx));
  RETURN_IF_ERROR(CheckElementIndices(ctx).status());
  if (ctx.input_dtype(2) != ctx.input_dtype(0)) return ctx.Error("updates and data dtypes differ");
  const Shape& indices = ctx.input_shape(1);
  const Shape& updates = ctx.input_shape(2);
  bool same = updates.size() == indices.size();
  for (size_t d = 0; same && d < updates.size(); ++d)
    same = !updates[d].is_static() || !indices[d].is_static() || updates[d] == indices[d];
  if (!same)
    return ctx.Error("updates " + ShapeToString(updates) + " must have the shape of indices " +
                     ShapeToString(indices));
  ctx.SetOutput(0, ctx.input_dtype(0), ctx.input_shape(0));
  return Status::Ok();
}

// GatherND(data [r], indices [q] with last axis k, batch_dims b):
// data[:b] + indices[b:q-1] + data[b+k:].
Status InferGatherND(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  const Shape& data = ctx.input_shape(0);
  const Shape& indices = ctx.input_shape(1);
  if (ctx.input_dtype(1) != DataType::kI64)
    return ctx.Error(std::string("indices must be int64, are ") + DataTypeName(ctx.input_dtype(1)));
  const auto r = static_cast<int64_t>(data.size());
  const auto q = static_cast<int64_t>(indices.size());
  const int64_t b = ctx.attrs().GetInt("batch_dims", 0);
  if (b < 0 || b >= std::min(r, q))
    return ctx.Error("batch_dims " + std::to_string(b) + " must be in [0, min(rank(data) " +
                     std::to_string(r) + ", rank(indices) " + std::to_string(q) + "))");
  for (size_t d = 0; d < static_cast<size_t>(b); ++d)
    if (data[d].is_static() && indices[d].is_static() && data[d] != indices[d])
      return ctx.Error("batch axis " + std::to_string(d) + " differs: data " + ShapeToString(data) +
                       ", indices " + ShapeToString(indices));
  if (!indices.back().is_static()) return ctx.Error("indices need a static last dimension");
  const int64_t k = indices.back().extent();
  if (k < 1 || k > r - b)
    return ctx.Error("indices' last dimension " + std::to_string(k) + " must be in [1, " +
                     std::to_string(r - b) + "] (rank(data) - batch_dims)");
  Shape out(data.begin(), data.begin() + b);
  out.insert(out.end(), indices.begin() + b, indices.end() - 1);
  out.insert(out.end(), data.begin() + b + k, data.end());
  ctx.SetOutput(0, ctx.input_dtype(0), out);
  return Status::Ok();
}

// OneHot(indices, depth, values [off, on], axis): indices' shape with an axis
// of extent depth inserted at `axis`, values' dtype. depth fixes the output
// shape, so it must be known at load time: a constant (f32 depths are
// truncated, as ONNX Runtime does) or an integer value inference tracked.
Status InferOneHot(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(3, 3));
  if (ElementCount(ctx.input_shape(1)) != 1) return ctx.Error("depth must hold one element");
  if (ElementCount(ctx.input_shape(2)) != 2)
    return ctx.Error("values must hold two elements, [off, on]");
  std::optional<int64_t> depth;
  const Value& depth_value = ctx.input(1);
  if (ctx.input_dtype(1) == DataType::kF32) {
    if (depth_value.constant && depth_value.constant->size() == sizeof(float)) {
      float f;
      std::memcpy(&f, depth_value.constant->data(), sizeof f);
      if (!(std::fabs(f) <= 1e9f))
        return ctx.Error("depth " + std::to_string(f) + " must be in [1, 1e9]");
      depth = static_cast<int64_t>(f);
    }
  } else if (std::optional<DimValues> v = ctx.InputValues(1);
             v && v->size() == 1 && (*v)[0].is_static()) {
    depth = (*v)[0].extent();
  }
  if (!depth)
    return ctx.Unsupported("depth must be known at load time (the output shape depends on it)");
  if (*depth < 1 || *depth > 1000000000)
    return ctx.Error("depth " + std::to_string(*depth) + " must be in [1, 1e9]");
  const Shape& indices = ctx.input_shape(0);
  const auto rank = static_cast<int64_t>(indices.size()) + 1;
  const int64_t raw_axis = ctx.attrs().GetInt("axis", -1);
  std::optional<int64_t> axis = NormalizeAxis(raw_axis, rank);
  if (!axis)
    return ctx.Error("axis " + std::to_string(raw_axis) + " is out of range for output rank " +
                     std::to_string(rank));
  Shape out = indices;
  out.insert(out.begin() + *axis, Dim(*depth));
  ctx.SetOutput(0, ctx.input_dtype(2), out);
  return Status::Ok();
}

// ScatterND(data, indices [..., k], updates [...indices[:-1], data[k:]]):
// data's shape and dtype.
Status InferScatterND(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(3, 3));
  const Shape& data = ctx.input_shape(0);
  const Shape& indices = ctx.input_shape(1);
  const Shape& updates = ctx.input_shape(2);
  RETURN_IF_ERROR(CheckScatterReduction(ctx));
  if (ctx.input_dtype(1) != DataType::kI64)
    return ctx.Error(std::string("indices must be int64, are ") + DataTypeName(ctx.input_dtype(1)));
  if (ctx.input_dtype(2) != ctx.input_dtype(0)) return ctx.Error("updates and data dtypes differ");
  if (indices.empty() || !indices.back().is_static())
    return ctx.Error("indices need a static last dimension");
  const int64_t k = indices.back().extent();
  if (k < 1 || k > static_cast<int64_t>(data.size()))
    return ctx.Error("indices' last dimension " + std::to_string(k) + " must be in [1, " +
                     std::to_string(data.size()) + "]");
  Shape expected(indices.begin(), indices.end() - 1);
  expected.insert(expected.end(), data.begin() + k, data.end());
  if (updates.size() != expected.size())
    return ctx.Error("updates must have rank " + std::to_string(expected.size()));
  for (size_t i = 0; i < expected.size(); ++i)
    if (updates[i].is_static() && expected[i].is_static() && updates[i] != expected[i])
      return ctx.Error("updates must have shape " + ShapeToString(expected));
  ctx.SetOutput(0, ctx.input_dtype(0), data);
  return Status::Ok();
}

// Trilu(x, k?): keeps the upper (upper=1, the default) or lower triangle of
// the last two axes, diagonal offset k. k may be computed at run time (the
// shape does not depend on it); it must be an i64 scalar.
Status InferTrilu(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 2));
  if (ctx.input_rank(0) < 2)
    return ctx.Error("input must have rank >= 2, is " + ShapeToString(ctx.input_shape(0)));
  const int64_t upper = ctx.attrs().GetInt("upper", 1);
  if (upper != 0 && upper != 1) return ctx.Error("upper must be 0 or 1, is " + std::to_string(upper));
  if (ctx.has_input(1)) {
    if (ctx.input_dtype(1) != DataType::kI64)
      return ctx.Error(std::string("k must be i64, is ") + DataTypeName(ctx.input_dtype(1)));
    if (!(ElementCount(ctx.input_shape(1)) == 1) || ctx.input_rank(1) > 1)
      return ctx.Error("k must be a scalar, is " + ShapeToString(ctx.input_shape(1)));
  }
  ctx.SetOutput(0, ctx.input_dtype(0), ctx.input_shape(0));
  return Status::Ok();
}

// TopK(X, K) (10+): the K largest (largest=1) or smallest elements along
// `axis` (default -1) and their i64 indices. K fixes the output shape, so it
// must be known at load time.
Status InferTopK(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  const Shape& in = ctx.input_shape(0);
  const auto rank = static_cast<int64_t>(in.size());
  const int64_t axis_attr = ctx.attrs().GetInt("axis", -1);
  std::optional<int64_t> axis = NormalizeAxis(axis_attr, rank);
  if (!axis)
    return ctx.Error("axis " + std::to_string(axis_attr) + " is out of range for rank " +
                     std::to_string(rank));
  for (const char* flag : {"largest", "sorted"}) {
    const int64_t v = ctx.attrs().GetInt(flag, 1);
    if (v != 0 && v != 1) return ctx.Error(std::string(flag) + " must be 0 or 1, is " + std::to_string(v));
  }
  if (ctx.input_dtype(1) != DataType::kI64)
    return ctx.Error(std::string("K must be i64, is ") + DataTypeName(ctx.input_dtype(1)));
  std::optional<DimValues> k_values = ctx.InputValues(1);
  if (!k_values || k_values->size() != 1 || !(*k_values)[0].is_static())
    return ctx.Unsupported("K must be known at load time (it fixes the output shape)");
  if (ElementCount(ctx.input_shape(1)) != 1 || ctx.input_rank(1) > 1)
    return ctx.Error("K must hold one element, is " + ShapeToString(ctx.input_shape(1)));
  const int64_t k = (*k_values)[0].extent();
  const Dim& extent = in[static_cast<size_t>(*axis)];
  if (k < 0 || (extent.is_static() && k > extent.extent()))
    return ctx.Error("K " + std::to_string(k) + " is outside [0, " + extent.ToString() +
                     "] (axis " + std::to_string(axis_attr) + ")");
  Shape out = in;
  out[static_cast<size_t>(*axis)] = Dim(k);
  ctx.SetOutput(0, ctx.input_dtype(0), out);
  ctx.SetOutput(1, DataType::kI64, std::move(out));
  return Status::Ok();
}

// NonMaxSuppression (10+): boxes f32 [B, N, 4], scores f32 [B, C, N], then
// optional scalars max_output_boxes_per_class (i64), iou_threshold and
// score_threshold (f32). The output, i64 [selected, 3], has as many rows as
// boxes survive, which only the data tells: shape inference gives the upper
// bound B * C * min(max_output_boxes_per_class, N) (N when the maximum is not
// a load-time constant or N is symbolic), the kernel reports the rows it wrote
// (RunArgs::output_rows) and the op has kOpDataDependentRows, so it may only
// be a graph output.
Status InferNonMaxSuppression(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 5));
  const Shape& boxes = ctx.input_shape(0);
  const Shape& scores = ctx.input_shape(1);
  if (ctx.input_dtype(0) != DataType::kF32 || ctx.input_dtype(1) != DataType::kF32)
    return ctx.Unsupported(std::string("boxes and scores must be f32, are ") +
                           DataTypeName(ctx.input_dtype(0)) + " and " +
                           DataTypeName(ctx.input_dtype(1)));
  if (boxes.size() != 3 || !(boxes[2] == Dim(4)))
    return ctx.Error("boxes must be [batches, boxes, 4], is " + ShapeToString(boxes));
  if (scores.size() != 3)
    return ctx.Error("scores must be [batches, classes, boxes], is " + ShapeToString(scores));
  if (!(boxes[0] == scores[0]) || !(boxes[1] == scores[2]))
    return ctx.Error("boxes " + ShapeToString(boxes) + " and scores " + ShapeToString(scores) +
                     " disagree on the batches or the boxes");
  const int64_t center_point_box = ctx.attrs().GetInt("center_point_box", 0);
  if (center_point_box != 0 && center_point_box != 1)
    return ctx.Error("center_point_box must be 0 or 1, is " + std::to_string(center_point_box));
  const DataType scalar_types[] = {DataType::kI64, DataType::kF32, DataType::kF32};
  const char* scalar_names[] = {"max_output_boxes_per_class", "iou_threshold", "score_threshold"};
  for (size_t i = 2; i < 5; ++i) {
    if (!ctx.has_input(i)) continue;
    if (ctx.input_dtype(i) != scalar_types[i - 2])
      return ctx.Error(std::string(scalar_names[i - 2]) + " must be " +
                       DataTypeName(scalar_types[i - 2]) + ", is " + DataTypeName(ctx.input_dtype(i)));
    if (ctx.input_rank(i) > 1 || !(ElementCount(ctx.input_shape(i)) == 1))
      return ctx.Error(std::string(scalar_names[i - 2]) + " must hold one element, is " +
                       ShapeToString(ctx.input_shape(i)));
  }
  // Rows per (batch, class): min(maximum, N) when both are known, else N
  // (a symbolic N stays the bound: a Dim cannot hold a minimum).
  Dim per_class = boxes[1];
  if (!ctx.has_input(2)) {
    per_class = Dim(0);  // the maximum defaults to 0: nothing is selected
  } else if (std::optional<DimValues> max = ctx.InputValues(2);
             max && max->size() == 1 && (*max)[0].is_static() && boxes[1].is_static()) {
    per_class = Dim(std::clamp<int64_t>((*max)[0].extent(), 0, boxes[1].extent()));
  }
  const Dim rows = MultiplyDims(MultiplyDims(scores[0], scores[1]), per_class);
  ctx.SetOutput(0, DataType::kI64, {rows, Dim(3)});
  return Status::Ok();
}

// ReverseSequence (10+): the input's shape; time_axis and batch_axis are 0
// and 1 (one each), sequence_lens i64 [batch].
Status InferReverseSequence(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  const Shape& x = ctx.input_shape(0);
  const int64_t time_axis = ctx.attrs().GetInt("time_axis", 0);
  const int64_t batch_axis = ctx.attrs().GetInt("batch_axis", 1);
  if ((time_axis != 0 && time_axis != 1) || (batch_axis != 0 && batch_axis != 1) || time_axis == batch_axis)
    return ctx.Error("time_axis " + std::to_string(time_axis) + " and batch_axis " +
                     std::to_string(batch_axis) + " must be 0 and 1, one each");
  if (x.size() < 2) return ctx.Error("input " + ShapeToString(x) + " must be at least 2-D");
  const Shape& lens = ctx.input_shape(1);
  const Dim& batch = x[static_cast<size_t>(batch_axis)];
  if (ctx.input_dtype(1) != DataType::kI64 || lens.size() != 1 ||
      (lens[0].is_static() && batch.is_static() && lens[0] != batch))
    return ctx.Error("sequence_lens " + ShapeToString(lens) + " must be i64 [" +
                     ShapeToString(Shape{batch}).substr(1));
  ctx.SetOutput(0, ctx.input_dtype(0), x);
  return Status::Ok();
}

}  // namespace braid::ops
