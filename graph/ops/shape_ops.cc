// Shape functions of ops that move data without computing: Reshape, Flatten,
// Transpose, Squeeze, Unsqueeze, Concat, Expand, and the shape producers
// Shape, Size, ConstantOfShape, EyeLike, Constant. Symbolic values pass through Reshape,
// Squeeze, Unsqueeze, Concat and Expand; Shape creates them.
#include <algorithm>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "graph/ops/shape_functions.h"

namespace braid::ops {

namespace {

std::string DimsToString(const DimValues& v) { return ShapeToString(v); }

void PassValues(ShapeInferenceContext& ctx) {
  if (std::optional<DimValues> v = ctx.InputValues(0))
    ctx.SetOutputValues(0, std::move(*v));
}

// Axes from input `input_index` (opset 13+) or else the "axes" attribute.
StatusOr<std::optional<std::vector<int64_t>>> ReadAxes(
    const ShapeInferenceContext& ctx, size_t input_index) {
  if (ctx.has_input(input_index)) {
    ASSIGN_OR_RETURN(std::vector<int64_t> axes, ctx.InputInts(input_index));
    return std::optional<std::vector<int64_t>>(std::move(axes));
  }
  if (ctx.attrs().Has("axes"))
    return std::optional<std::vector<int64_t>>(ctx.attrs().GetInts("axes"));
  return std::optional<std::vector<int64_t>>();
}

// Static dims compare by value; a symbol and a number are taken as equal
// (checked at run time); two symbols must have the same name.
bool DimsCompatible(const Dim& a, const Dim& b) {
  if (a.is_static() != b.is_static()) return true;
  return a == b;
}

}  // namespace

Status InferReshape(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 2));
  const Shape& in = ctx.input_shape(0);
  std::optional<DimValues> target;
  if (ctx.has_input(1)) {
    target = ctx.InputValues(1);
    if (!target)
      return ctx.Error("target shape '" + ctx.input(1).name +
                       "' is neither constant nor computable at load time");
  } else if (ctx.attrs().Has("shape")) {  // opset < 5
    std::vector<int64_t> s = ctx.attrs().GetInts("shape");
    target = DimValues(s.begin(), s.end());
  } else {
    return ctx.Error("missing target shape");
  }
  const bool allow_zero = ctx.attrs().GetInt("allowzero", 0) != 0;
  Shape out;
  int infer_at = -1;
  for (size_t i = 0; i < target->size(); ++i) {
    const Dim& d = (*target)[i];
    if (d.is_static() && d.extent() == -1) {
      if (infer_at >= 0)
        return ctx.Error("target shape " + DimsToString(*target) +
                         " has more than one -1");
      infer_at = static_cast<int>(i);
      out.emplace_back(1);
    } else if (d.is_static() && d.extent() == 0 && !allow_zero) {
      if (i >= in.size())
        return ctx.Error("target shape " + DimsToString(*target) +
                         " copies dimension " + std::to_string(i) +
                         " that the input lacks");
      out.push_back(in[i]);
    } else if (d.is_static() && d.extent() < 0) {
      return ctx.Error("invalid target dimension " + d.ToString());
    } else {
      out.push_back(d);
    }
  }
  const DimProduct total = ToProduct(ShapeProduct(in, 0, in.size()));
  const DimProduct known = ToProduct(ShapeProduct(out, 0, out.size()));
  if (infer_at >= 0) {
    std::optional<DimProduct> rest = DivideProducts(total, known);
    if (!rest || rest->coefficient < 0)
      return ctx.Error("cannot infer the -1 of target shape " +
                       DimsToString(*target) + ": " +
                       ShapeToString(in) + " is not a multiple of " +
                       FromProduct(known).ToString());
    out[static_cast<size_t>(infer_at)] = FromProduct(*rest);
  } else if (IsStatic(in) && IsStatic(out) &&
             total.coefficient != known.coefficient) {
    return ctx.Error("target shape " + DimsToString(*target) + " has " +
                     std::to_string(known.coefficient) +
                     " elements, the input " +
                     std::to_string(total.coefficient));
  }
  ctx.SetOutput(0, ctx.input_dtype(0), std::move(out));
  PassValues(ctx);
  return Status::Ok();
}

Status InferFlatten(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  const Shape& in = ctx.input_shape(0);
  const auto rank = static_cast<int64_t>(in.size());
  int64_t axis = ctx.attrs().GetInt("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank)
    return ctx.Error("axis " + std::to_string(ctx.attrs().GetInt("axis", 1)) +
                     " is out of range for rank " + std::to_string(rank));
  const auto split = static_cast<size_t>(axis);
  ctx.SetOutput(0, ctx.input_dtype(0),
                Shape{ShapeProduct(in, 0, split),
                      ShapeProduct(in, split, in.size())});
  return Status::Ok();
}

Status InferTranspose(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  const Shape& in = ctx.input_shape(0);
  std::vector<int64_t> perm = ctx.attrs().GetInts("perm");
  if (perm.empty())
    for (size_t i = in.size(); i-- > 0;) perm.push_back(static_cast<int64_t>(i));
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i)
    if (sorted[i] != static_cast<int64_t>(i) || perm.size() != in.size())
      return ctx.Error("perm " + IntsToString(perm) + " is not a permutation of " +
                       std::to_string(in.size()) + " axes");
  Shape out;
  for (int64_t p : perm) out.push_back(in[static_cast<size_t>(p)]);
  ctx.SetOutput(0, ctx.input_dtype(0), out);
  // Values of a small static tensor move with their elements.
  std::optional<DimValues> values = ctx.InputValues(0);
  if (!values || !IsStatic(in) || ElementCount(in) != static_cast<int64_t>(values->size()))
    return Status::Ok();
  const std::vector<int64_t> in_strides = RowMajorStrides(in);
  DimValues moved;
  std::vector<int64_t> index(out.size(), 0);
  for (size_t k = 0; k < values->size(); ++k) {
    int64_t from = 0;
    for (size_t d = 0; d < out.size(); ++d)
      from += index[d] * in_strides[static_cast<size_t>(perm[d])];
    moved.push_back((*values)[static_cast<size_t>(from)]);
    for (size_t d = out.size(); d-- > 0;) {  // next output index, row-major
      if (++index[d] < out[d].extent()) break;
      index[d] = 0;
    }
  }
  ctx.SetOutputValues(0, std::move(moved));
  return Status::Ok();
}

Status InferShape(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  const Shape& in = ctx.input_shape(0);
  const auto rank = static_cast<int64_t>(in.size());
  // start/end (opset 15) slice the dims with clamping.
  auto clamp = [rank](int64_t v) {
    if (v < 0) v += rank;
    return std::clamp<int64_t>(v, 0, rank);
  };
  const int64_t start = clamp(ctx.attrs().GetInt("start", 0));
  const int64_t end = clamp(ctx.attrs().GetInt("end", rank));
  DimValues dims;
  for (int64_t i = start; i < end; ++i) dims.push_back(in[static_cast<size_t>(i)]);
  ctx.SetOutput(0, DataType::kI64,
                Shape{Dim(static_cast<int64_t>(dims.size()))});
  ctx.SetOutputValues(0, std::move(dims));
  return Status::Ok();
}

// Size: the element count as an i64 scalar. Its value is the product of the
// dims (a symbol such as N*12 when the batch is symbolic), so a static shape
// folds it to a constant.
Status InferSize(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  const Shape& in = ctx.input_shape(0);
  ctx.SetOutput(0, DataType::kI64, Shape{});
  ctx.SetOutputValues(0, DimValues{ShapeProduct(in, 0, in.size())});
  return Status::Ok();
}

// EyeLike: a 2-D tensor of the input's shape with ones on diagonal k, in the
// `dtype` attribute's type (an ONNX TensorProto enum), else the input's.
Status InferEyeLike(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  if (ctx.input_rank(0) != 2)
    return ctx.Error("input must be 2-D, is " + ShapeToString(ctx.input_shape(0)));
  DataType dtype = ctx.input_dtype(0);
  if (ctx.attrs().Has("dtype")) {
    const int64_t onnx_type = ctx.attrs().GetInt("dtype", -1);
    std::optional<DataType> mapped = DataTypeFromOnnx(onnx_type);
    if (!mapped)
      return ctx.Unsupported("dtype " + std::to_string(onnx_type) +
                             " (ONNX TensorProto enum) is not a braid dtype");
    dtype = *mapped;
  }
  ctx.SetOutput(0, dtype, ctx.input_shape(0));
  return Status::Ok();
}

Status InferSqueeze(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 2));
  const Shape& in = ctx.input_shape(0);
  const auto rank = static_cast<int64_t>(in.size());
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axes, ReadAxes(ctx, 1));
  std::vector<bool> drop(in.size(), false);
  if (!axes || axes->empty()) {
    for (size_t i = 0; i < in.size(); ++i)
      drop[i] = in[i].is_static() && in[i].extent() == 1;
  } else {
    for (int64_t a : *axes) {
      std::optional<int64_t> axis = NormalizeAxis(a, rank);
      if (!axis) return ctx.Error("axis " + std::to_string(a) + " is out of range");
      const Dim& d = in[static_cast<size_t>(*axis)];
      if (d.is_static() && d.extent() != 1)
        return ctx.Error("cannot squeeze axis " + std::to_string(a) +
                         " of extent " + d.ToString());
      drop[static_cast<size_t>(*axis)] = true;
    }
  }
  Shape out;
  for (size_t i = 0; i < in.size(); ++i)
    if (!drop[i]) out.push_back(in[i]);
  ctx.SetOutput(0, ctx.input_dtype(0), std::move(out));
  PassValues(ctx);
  return Status::Ok();
}

Status InferUnsqueeze(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 2));
  const Shape& in = ctx.input_shape(0);
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axes, ReadAxes(ctx, 1));
  if (!axes || axes->empty()) return ctx.Error("axes are missing");
  const auto out_rank = static_cast<int64_t>(in.size() + axes->size());
  std::vector<bool> inserted(static_cast<size_t>(out_rank), false);
  for (int64_t a : *axes) {
    std::optional<int64_t> axis = NormalizeAxis(a, out_rank);
    if (!axis) return ctx.Error("axis " + std::to_string(a) + " is out of range");
    if (inserted[static_cast<size_t>(*axis)])
      return ctx.Error("axis " + std::to_string(a) + " is repeated");
    inserted[static_cast<size_t>(*axis)] = true;
  }
  Shape out;
  size_t next = 0;
  for (size_t i = 0; i < inserted.size(); ++i)
    out.push_back(inserted[i] ? Dim(1) : in[next++]);
  ctx.SetOutput(0, ctx.input_dtype(0), std::move(out));
  PassValues(ctx);
  return Status::Ok();
}

Status InferConcat(ShapeInferenceContext& ctx) {
  if (ctx.num_inputs() < 1) return ctx.Error("expects at least one input");
  std::vector<size_t> all(ctx.num_inputs());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  return InferConcatOf(ctx, all);
}

Status InferConcatOf(ShapeInferenceContext& ctx, std::span<const size_t> data) {
  for (size_t i : data) {
    if (!ctx.has_input(i))
      return ctx.Error("input " + std::to_string(i) + " is absent");
    if (ctx.input_dtype(i) != ctx.input_dtype(data[0]))
      return ctx.Error("input dtypes differ");
  }
  const Shape& first = ctx.input_shape(data[0]);
  const auto rank = static_cast<int64_t>(first.size());
  if (!ctx.attrs().Has("axis")) return ctx.Error("missing axis attribute");
  std::optional<int64_t> axis = NormalizeAxis(ctx.attrs().GetInt("axis", 0), rank);
  if (!axis) return ctx.Error("axis is out of range for rank " + std::to_string(rank));
  const auto ax = static_cast<size_t>(*axis);
  Shape out = first;
  DimProduct sum = ToProduct(first[ax]);
  bool sum_known = true;
  for (size_t i : data.subspan(1)) {
    const Shape& s = ctx.input_shape(i);
    if (s.size() != first.size())
      return ctx.Error("input " + std::to_string(i) + " has rank " +
                       std::to_string(s.size()) + ", input " + std::to_string(data[0]) +
                       " has " + std::to_string(first.size()));
    for (size_t d = 0; d < s.size(); ++d) {
      if (d == ax) continue;
      if (!DimsCompatible(out[d], s[d]))
        return ctx.Error("dimension " + std::to_string(d) + " differs: " +
                         out[d].ToString() + " vs " + s[d].ToString());
      if (!out[d].is_static() && s[d].is_static()) out[d] = s[d];
    }
    // k1*S + k2*S = (k1+k2)*S; sums of different symbols are not tracked.
    DimProduct p = ToProduct(s[ax]);
    std::optional<int64_t> total = CheckedAdd(sum.coefficient, p.coefficient);
    if (!total)
      return ctx.Error("concatenated extent along axis " + std::to_string(ax) +
                       " overflows");
    if (p.symbols == sum.symbols)
      sum.coefficient = *total;
    else
      sum_known = false;
  }
  if (!sum_known)
    return ctx.Unsupported("cannot concatenate different symbolic extents "
                           "along the axis");
  out[ax] = FromProduct(sum);
  ctx.SetOutput(0, ctx.input_dtype(data[0]), std::move(out));
  // Row-major tensors joined along axis 0 are their values one after another.
  if (ax != 0) return Status::Ok();
  DimValues values;
  for (size_t i : data) {
    std::optional<DimValues> v = ctx.InputValues(i);
    if (!v) return Status::Ok();
    values.insert(values.end(), v->begin(), v->end());
  }
  ctx.SetOutputValues(0, std::move(values));
  return Status::Ok();
}

Status InferExpand(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  std::optional<DimValues> target = ctx.InputValues(1);
  if (!target)
    return ctx.Error("shape input '" + ctx.input(1).name +
                     "' is neither constant nor computable at load time");
  for (const Dim& d : *target)
    if (d.is_static() && d.extent() < 0)
      return ctx.Error("negative extent in shape " + DimsToString(*target));
  std::string why;
  std::optional<Shape> out =
      BroadcastShapes(ctx.input_shape(0), Shape(*target), &why);
  if (!out) return ctx.Error(why);
  ctx.SetOutput(0, ctx.input_dtype(0), *out);
  std::optional<DimValues> v = ctx.InputValues(0);
  if (v && v->size() == 1 && out->size() <= 1) {
    const int64_t n = out->empty() ? 1 : (*out)[0].extent();
    if (n >= 0 && n <= static_cast<int64_t>(kMaxSymbolicElements))
      ctx.SetOutputValues(0, DimValues(static_cast<size_t>(n), (*v)[0]));
  } else if (v && out->size() <= 1 && IsStatic(*out) &&
             ElementCount(*out) == static_cast<int64_t>(v->size())) {
    ctx.SetOutputValues(0, std::move(*v));
  }
  return Status::Ok();
}

namespace {

// The fill value of ConstantOfShape (f32 0 when absent) as a Dim when it is
// an integer.
std::optional<Dim> IntegerFill(const TensorAttr* value) {
  if (value == nullptr || value->data.size() < DataTypeSize(value->dtype))
    return std::nullopt;
  switch (value->dtype) {
    case DataType::kI64: return Dim(value->data.as<int64_t>()[0]);
    case DataType::kI32: return Dim(value->data.as<int32_t>()[0]);
    case DataType::kBool:
    case DataType::kU8: return Dim(static_cast<int64_t>(value->data.as<uint8_t>()[0]));
    case DataType::kI8: return Dim(static_cast<int64_t>(value->data.as<int8_t>()[0]));
    default: return std::nullopt;
  }
}

}  // namespace

Status InferTile(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  const Shape& in = ctx.input_shape(0);
  std::optional<DimValues> repeats = ctx.InputValues(1);
  if (!repeats)
    return ctx.Unsupported("repeats '" + ctx.input(1).name +
                           "' must be known at load time (it fixes the output shape)");
  if (repeats->size() != in.size())
    return ctx.Error("repeats " + DimsToString(*repeats) + " must have one entry per input axis");
  Shape out;
  for (size_t d = 0; d < in.size(); ++d) {
    const Dim& r = (*repeats)[d];
    if (r.is_static() && r.extent() < 0)
      return ctx.Error("repeats " + DimsToString(*repeats) + " must not be negative");
    if (!r.is_static()) {
      // A symbol (the batch from Shape): tiling an axis of 1 gives the symbol.
      out.push_back(MultiplyDims(in[d], r));
    } else if (r.extent() == 1) {
      out.push_back(in[d]);
    } else if (in[d].is_static()) {
      std::optional<int64_t> e = CheckedMultiply(in[d].extent(), r.extent());
      if (!e) return ctx.Error("repeats " + DimsToString(*repeats) + " overflow");
      out.emplace_back(*e);
    } else {
      out.push_back(MultiplyDims(in[d], r));
    }
  }
  ctx.SetOutput(0, ctx.input_dtype(0), std::move(out));
  return Status::Ok();
}

Status InferConstantOfShape(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  std::optional<DimValues> shape = ctx.InputValues(0);
  if (!shape)
    return ctx.Error("shape input '" + ctx.input(0).name +
                     "' is neither constant nor computable at load time");
  for (const Dim& d : *shape)
    if (d.is_static() && d.extent() < 0)
      return ctx.Error("negative extent in shape " + DimsToString(*shape));
  const TensorAttr* value = ctx.attrs().GetTensor("value");
  if (value && ElementCount(StaticShape(value->dims)) != 1)
    return ctx.Error("value attribute must hold one element");
  const DataType dtype = value ? value->dtype : DataType::kF32;
  Shape out(*shape);
  ctx.SetOutput(0, dtype, out);
  if (std::optional<Dim> fill = IntegerFill(value);
      fill && out.size() <= 1 && IsStatic(out) &&
      ElementCount(out) <= static_cast<int64_t>(kMaxSymbolicElements))
    ctx.SetOutputValues(
        0, DimValues(static_cast<size_t>(ElementCount(out)), *fill));
  return Status::Ok();
}

Status InferConstant(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(0, 0));
  const Attributes& a = ctx.attrs();
  if (const TensorAttr* t = a.GetTensor("value")) {
    ctx.SetOutput(0, t->dtype, StaticShape(t->dims));
    std::vector<int64_t> ints;
    if (t->dtype == DataType::kI64 && t->dims.size() <= 1)
      for (int64_t v : t->data.as<int64_t>()) ints.push_back(v);
    if (!ints.empty() || ElementCount(StaticShape(t->dims)) == 0)
      ctx.SetOutputValues(0, DimValues(ints.begin(), ints.end()));
  } else if (a.Has("value_float")) {
    ctx.SetOutput(0, DataType::kF32, {});
  } else if (a.Has("value_floats")) {
    ctx.SetOutput(0, DataType::kF32,
                  {Dim(static_cast<int64_t>(a.GetFloats("value_floats").size()))});
  } else if (a.Has("value_int")) {
    ctx.SetOutput(0, DataType::kI64, {});
    ctx.SetOutputValues(0, {Dim(a.GetInt("value_int", 0))});
  } else if (a.Has("value_ints")) {
    std::vector<int64_t> v = a.GetInts("value_ints");
    ctx.SetOutput(0, DataType::kI64, {Dim(static_cast<int64_t>(v.size()))});
    ctx.SetOutputValues(0, DimValues(v.begin(), v.end()));
  } else {
    return ctx.Unsupported("Constant needs a value, value_float(s) or "
                           "value_int(s) attribute");
  }
  return Status::Ok();
}

namespace {

// DepthToSpace (to_space) and SpaceToDepth on [N, C, H, W] with `blocksize`
// b: [N, C / b^2, H * b, W * b] and [N, C * b^2, H / b, W / b].
Status InferDepthSpace(ShapeInferenceContext& ctx, bool to_space) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  const Shape& in = ctx.input_shape(0);
  if (in.size() != 4) return ctx.Error("input " + ShapeToString(in) + " must have rank 4");
  const int64_t b = ctx.attrs().GetInt("blocksize", 0);
  if (b < 1 || b > 65536) return ctx.Error("blocksize " + std::to_string(b) + " must be positive");
  const Dim block(b), area(b * b);
  if (to_space) {
    const std::string mode = ctx.attrs().GetString("mode", "DCR");
    if (mode != "DCR" && mode != "CRD")
      return ctx.Error("mode '" + mode + "' must be DCR or CRD");
    if (!in[1].is_static()) return ctx.Unsupported("channels must be static");
    if (in[1].extent() % (b * b) != 0)
      return ctx.Error("channels " + in[1].ToString() + " are not a multiple of blocksize^2 " +
                       std::to_string(b * b));
    ctx.SetOutput(0, ctx.input_dtype(0),
                  Shape{in[0], Dim(in[1].extent() / (b * b)), MultiplyDims(in[2], block),
                        MultiplyDims(in[3], block)});
    return Status::Ok();
  }
  for (size_t d = 2; d < 4; ++d) {
    if (!in[d].is_static()) return ctx.Unsupported("height and width must be static");
    if (in[d].extent() % b != 0)
      return ctx.Error("extent " + in[d].ToString() + " of axis " + std::to_string(d) +
                       " is not a multiple of blocksize " + std::to_string(b));
  }
  ctx.SetOutput(0, ctx.input_dtype(0),
                Shape{in[0], MultiplyDims(in[1], area), Dim(in[2].extent() / b),
                      Dim(in[3].extent() / b)});
  return Status::Ok();
}

}  // namespace

Status InferDepthToSpace(ShapeInferenceContext& ctx) { return InferDepthSpace(ctx, true); }
Status InferSpaceToDepth(ShapeInferenceContext& ctx) { return InferDepthSpace(ctx, false); }

}  // namespace braid::ops
