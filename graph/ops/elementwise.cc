// Shape functions of elementwise ops: unary activations, broadcasting binary
// arithmetic, comparisons, logical ops, Where, Cast. Add/Sub/Mul/Div/Mod,
// the comparisons, And/Or/Xor/Not, Where and Cast also carry symbolic values
// (see graph/passes/shape_inference.h).
#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <string>

#include "graph/ops/shape_functions.h"

namespace braid::ops {

namespace {

using DimOp = std::function<std::optional<Dim>(const Dim&, const Dim&)>;

// Elementwise op over symbolic values with rank <= 1 broadcasting; nullopt
// when a value is unknown or an element has no expressible result.
std::optional<DimValues> CombineValues(const std::optional<DimValues>& a,
                                       const std::optional<DimValues>& b,
                                       const DimOp& op) {
  if (!a || !b) return std::nullopt;
  const size_t n = std::max(a->size(), b->size());
  if ((a->size() != n && a->size() != 1) || (b->size() != n && b->size() != 1))
    return std::nullopt;
  DimValues out;
  for (size_t k = 0; k < n; ++k) {
    std::optional<Dim> r =
        op((*a)[a->size() == 1 ? 0 : k], (*b)[b->size() == 1 ? 0 : k]);
    if (!r) return std::nullopt;
    out.push_back(*r);
  }
  return out;
}

bool IsZero(const Dim& d) { return d.is_static() && d.extent() == 0; }

std::optional<Dim> AddDims(const Dim& a, const Dim& b) {
  if (a.is_static() && b.is_static()) {
    std::optional<int64_t> sum = CheckedAdd(a.extent(), b.extent());
    if (!sum) return std::nullopt;
    return Dim(*sum);
  }
  if (IsZero(a)) return b;
  if (IsZero(b)) return a;
  return std::nullopt;
}

std::optional<Dim> SubDims(const Dim& a, const Dim& b) {
  if (a.is_static() && b.is_static()) {
    std::optional<int64_t> difference = CheckedSubtract(a.extent(), b.extent());
    if (!difference) return std::nullopt;
    return Dim(*difference);
  }
  if (IsZero(b)) return a;
  if (a == b) return Dim(0);
  return std::nullopt;
}

std::optional<Dim> MulDims(const Dim& a, const Dim& b) {
  if (a.is_static() && b.is_static()) {
    std::optional<int64_t> product = CheckedMultiply(a.extent(), b.extent());
    if (!product) return std::nullopt;
    return Dim(*product);
  }
  // A negative multiple of a symbol is no extent; leave it untracked.
  if ((a.is_static() && a.extent() < 0) || (b.is_static() && b.extent() < 0))
    return std::nullopt;
  return MultiplyDims(a, b);
}

std::optional<Dim> DivDims(const Dim& a, const Dim& b) {
  if (a.is_static() && b.is_static()) {
    // INT64_MIN / -1 overflows (and traps on x86).
    if (b.extent() == 0 ||
        (b.extent() == -1 && a.extent() == std::numeric_limits<int64_t>::min()))
      return std::nullopt;
    return Dim(a.extent() / b.extent());  // truncates, as ONNX Runtime does
  }
  if (b.is_static() && b.extent() <= 0) return std::nullopt;
  std::optional<DimProduct> q = DivideProducts(ToProduct(a), ToProduct(b));
  if (!q) return std::nullopt;
  return FromProduct(*q);
}

std::optional<Dim> EqualDims(const Dim& a, const Dim& b) {
  if (a == b) return Dim(1);
  if (a.is_static() && b.is_static()) return Dim(0);
  // A symbol is a non-negative extent: it never equals a negative number.
  if (a.is_static() && a.extent() < 0) return Dim(0);
  if (b.is_static() && b.extent() < 0) return Dim(0);
  return std::nullopt;
}

// Comparisons and logical connectives of two numbers, as 1 / 0.
DimOp StaticPredicate(bool (*predicate)(int64_t, int64_t)) {
  return [predicate](const Dim& a, const Dim& b) -> std::optional<Dim> {
    if (!a.is_static() || !b.is_static()) return std::nullopt;
    return Dim(predicate(a.extent(), b.extent()) ? 1 : 0);
  };
}

// `out_dtype` nullopt: the dtype of input 0.
Status InferBroadcastBinary(ShapeInferenceContext& ctx, bool same_dtypes,
                            std::optional<DataType> out_dtype,
                            const DimOp& value_op) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  if (same_dtypes && ctx.input_dtype(0) != ctx.input_dtype(1))
    return ctx.Error(std::string("input dtypes differ: ") +
                     DataTypeName(ctx.input_dtype(0)) + " vs " +
                     DataTypeName(ctx.input_dtype(1)));
  std::string why;
  std::optional<Shape> shape =
      BroadcastShapes(ctx.input_shape(0), ctx.input_shape(1), &why);
  if (!shape) return ctx.Error(why);
  ctx.SetOutput(0, out_dtype.value_or(ctx.input_dtype(0)), *shape);
  if (value_op) {
    std::optional<DimValues> v =
        CombineValues(ctx.InputValues(0), ctx.InputValues(1), value_op);
    if (v) ctx.SetOutputValues(0, std::move(*v));
  }
  return Status::Ok();
}

}  // namespace

Status InferUnary(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  ctx.SetOutput(0, ctx.input_dtype(0), ctx.input_shape(0));
  return Status::Ok();
}

// Neg carries integer values (ONNX's LayerNormalization function body counts
// the normalized axes as Neg(axis) for a negative axis, then ConstantOfShape).
Status InferNeg(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(InferUnary(ctx));
  std::optional<DimValues> v = ctx.InputValues(0);
  if (!v) return Status::Ok();
  DimValues negated;
  for (const Dim& d : *v) {
    if (!d.is_static() || d.extent() == std::numeric_limits<int64_t>::min()) return Status::Ok();
    negated.push_back(Dim(-d.extent()));
  }
  ctx.SetOutputValues(0, std::move(negated));
  return Status::Ok();
}

Status InferIdentity(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(InferUnary(ctx));
  if (std::optional<DimValues> v = ctx.InputValues(0))
    ctx.SetOutputValues(0, std::move(*v));
  return Status::Ok();
}

bool DropoutRatioIsZero(const Graph& graph, const Node& node) {
  if (node.inputs.size() < 2 || node.inputs[1] == kNoValue) return false;
  const Value& ratio = graph.value(node.inputs[1]);
  if (!ratio.constant || ratio.dtype != DataType::kF32 || ratio.constant->size() != sizeof(float))
    return false;
  float r;
  std::memcpy(&r, ratio.constant->data(), sizeof r);
  return r == 0.0f;
}

Status InferDropout(ShapeInferenceContext& ctx) {
  // Opset 12 adds optional ratio and training_mode inputs. braid is an
  // inference runtime: training_mode must be absent or a constant false
  // (Dropout is then the identity), or the ratio a constant 0; a computed
  // one could turn training on.
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 3));
  if (ctx.has_input(2)) {
    std::optional<DimValues> training = ctx.InputValues(2);
    if (!training)
      return ctx.Unsupported(
          "a computed training_mode is not supported (inference runtime: "
          "training_mode must be absent or a constant false)");
    for (const Dim& v : *training)
      if ((!v.is_static() || v.extent() != 0) && !DropoutRatioIsZero(ctx.graph(), ctx.node()))
        return ctx.Unsupported("training_mode=1 is not supported (inference runtime)");
  }
  ctx.SetOutput(0, ctx.input_dtype(0), ctx.input_shape(0));
  ctx.SetOutput(1, DataType::kBool, ctx.input_shape(0));
  return Status::Ok();
}

Status InferClip(ShapeInferenceContext& ctx) {
  // Opset 11 moves min/max from attributes to optional scalar inputs.
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 3));
  for (size_t i = 1; i < 3; ++i) {
    if (!ctx.has_input(i)) continue;
    if (ElementCount(ctx.input_shape(i)) != 1)
      return ctx.Error("min/max input " + std::to_string(i) +
                       " must be a scalar");
  }
  ctx.SetOutput(0, ctx.input_dtype(0), ctx.input_shape(0));
  return Status::Ok();
}

Status InferCast(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  const int64_t to = ctx.attrs().GetInt("to", -1);
  std::optional<DataType> dtype = DataTypeFromOnnx(to);
  if (!dtype)
    return ctx.Unsupported("cast to ONNX data type " + std::to_string(to) +
                           " is not supported");
  ctx.SetOutput(0, *dtype, ctx.input_shape(0));
  const DataType from = ctx.input_dtype(0);
  const bool int_to_int =
      (from == DataType::kI64 || from == DataType::kI32) &&
      (*dtype == DataType::kI64 || *dtype == DataType::kI32);
  if (int_to_int)
    if (std::optional<DimValues> v = ctx.InputValues(0))
      ctx.SetOutputValues(0, std::move(*v));
  return Status::Ok();
}

namespace {

// QuantizeLinear / DequantizeLinear: the scale (and zero point) is a scalar or
// one element (per tensor), or 1-D with one entry per slice of `axis` (per
// axis). Blocked quantization (block_size, opset 21) is not supported.
Status CheckQuantParams(ShapeInferenceContext& ctx) {
  if (ctx.attrs().GetInt("block_size", 0) != 0)
    return ctx.Unsupported("blocked quantization (block_size) is not supported");
  RETURN_IF_ERROR(CheckConstantScale(ctx, 1, "scale"));
  const Shape& x = ctx.input_shape(0);
  const Shape& scale = ctx.input_shape(1);
  if (ctx.has_input(2) && !(ctx.input_shape(2) == scale))
    return ctx.Error("zero point shape " + ShapeToString(ctx.input_shape(2)) +
                     " differs from the scale's " + ShapeToString(scale));
  if (scale.empty() || (scale.size() == 1 && scale[0].is_static() && scale[0].extent() == 1))
    return Status::Ok();
  if (scale.size() != 1) return ctx.Error("scale must be a scalar or 1-D, got " + ShapeToString(scale));
  const int64_t rank = static_cast<int64_t>(x.size());
  int64_t axis = ctx.attrs().GetInt("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank)
    return ctx.Error("axis " + std::to_string(ctx.attrs().GetInt("axis", 1)) +
                     " is out of range for rank " + std::to_string(rank));
  const Dim& d = x[static_cast<size_t>(axis)];
  if (d.is_static() && scale[0].is_static() && d.extent() != scale[0].extent())
    return ctx.Error("per-axis scale " + ShapeToString(scale) + " does not match axis " +
                     std::to_string(axis) + " of the input " + ShapeToString(x));
  return Status::Ok();
}

bool IsQuantizedType(DataType t) { return t == DataType::kI8 || t == DataType::kU8; }

}  // namespace

// QuantizeLinear (10+): y = saturate(round_half_even(x / scale) + zero_point),
// of the zero point's type (int8 or uint8; uint8 when absent, or output_dtype).
Status InferQuantizeLinear(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 3));
  RETURN_IF_ERROR(CheckQuantParams(ctx));
  DataType out = DataType::kU8;
  if (ctx.has_input(2)) {
    out = ctx.input_dtype(2);
  } else if (const int64_t to = ctx.attrs().GetInt("output_dtype", 0); to != 0) {
    std::optional<DataType> t = DataTypeFromOnnx(to);
    if (!t) return ctx.Unsupported("output_dtype " + std::to_string(to) + " is not supported");
    out = *t;
  }
  if (!IsQuantizedType(out))
    return ctx.Unsupported(std::string("quantizing to ") + DataTypeName(out) +
                           " (int8 and uint8 are supported)");
  if (ctx.input_dtype(0) != DataType::kF32 || ctx.input_dtype(1) != DataType::kF32)
    return ctx.Unsupported("QuantizeLinear of a non-f32 input or scale");
  ctx.SetOutput(0, out, ctx.input_shape(0));
  return Status::Ok();
}

// DequantizeLinear (10+): y = (x - zero_point) * scale, of the scale's type.
// int32 inputs (bias) have no zero point.
Status InferDequantizeLinear(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 3));
  RETURN_IF_ERROR(CheckQuantParams(ctx));
  const DataType in = ctx.input_dtype(0);
  if (!IsQuantizedType(in) && in != DataType::kI32)
    return ctx.Unsupported(std::string("dequantizing ") + DataTypeName(in) +
                           " (int8, uint8 and int32 are supported)");
  if (ctx.has_input(2) && ctx.input_dtype(2) != in)
    return ctx.Error("zero point type differs from the input's");
  if (ctx.input_dtype(1) != DataType::kF32)
    return ctx.Unsupported("DequantizeLinear with a non-f32 scale");
  ctx.SetOutput(0, DataType::kF32, ctx.input_shape(0));
  return Status::Ok();
}

// CastLike(input, target_type) (15+): Cast to target_type's dtype; only
// target_type's dtype is read. Integer values pass through as in Cast.
Status InferCastLike(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  const DataType from = ctx.input_dtype(0), to = ctx.input_dtype(1);
  ctx.SetOutput(0, to, ctx.input_shape(0));
  const bool int_to_int = (from == DataType::kI64 || from == DataType::kI32) &&
                          (to == DataType::kI64 || to == DataType::kI32);
  if (int_to_int)
    if (std::optional<DimValues> v = ctx.InputValues(0)) ctx.SetOutputValues(0, std::move(*v));
  return Status::Ok();
}

Status InferAdd(ShapeInferenceContext& ctx) {
  return InferBroadcastBinary(ctx, true, std::nullopt, AddDims);
}
Status InferSub(ShapeInferenceContext& ctx) {
  return InferBroadcastBinary(ctx, true, std::nullopt, SubDims);
}
Status InferMul(ShapeInferenceContext& ctx) {
  return InferBroadcastBinary(ctx, true, std::nullopt, MulDims);
}
Status InferDiv(ShapeInferenceContext& ctx) {
  return InferBroadcastBinary(ctx, true, std::nullopt, DivDims);
}
Status InferPow(ShapeInferenceContext& ctx) {
  // The exponent may have its own type (opset 12+).
  return InferBroadcastBinary(ctx, false, std::nullopt, nullptr);
}
Status InferEqual(ShapeInferenceContext& ctx) {
  return InferBroadcastBinary(ctx, true, DataType::kBool, EqualDims);
}

Status InferGreater(ShapeInferenceContext& ctx) {
  return InferBroadcastBinary(ctx, true, DataType::kBool,
                              StaticPredicate([](int64_t a, int64_t b) { return a > b; }));
}
Status InferLess(ShapeInferenceContext& ctx) {
  return InferBroadcastBinary(ctx, true, DataType::kBool,
                              StaticPredicate([](int64_t a, int64_t b) { return a < b; }));
}
Status InferGreaterOrEqual(ShapeInferenceContext& ctx) {
  return InferBroadcastBinary(ctx, true, DataType::kBool,
                              StaticPredicate([](int64_t a, int64_t b) { return a >= b; }));
}
Status InferLessOrEqual(ShapeInferenceContext& ctx) {
  return InferBroadcastBinary(ctx, true, DataType::kBool,
                              StaticPredicate([](int64_t a, int64_t b) { return a <= b; }));
}

// And, Or, Xor: bool inputs, bool out.
Status InferLogical(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  for (size_t i = 0; i < 2; ++i)
    if (ctx.input_dtype(i) != DataType::kBool)
      return ctx.Error("input " + std::to_string(i) + " must be bool, is " +
                       DataTypeName(ctx.input_dtype(i)));
  const std::string& op = ctx.node().op_type;
  bool (*connective)(int64_t, int64_t) = [](int64_t a, int64_t b) { return (a != 0) != (b != 0); };
  if (op == "And") connective = [](int64_t a, int64_t b) { return a != 0 && b != 0; };
  if (op == "Or") connective = [](int64_t a, int64_t b) { return a != 0 || b != 0; };
  return InferBroadcastBinary(ctx, true, DataType::kBool, StaticPredicate(connective));
}

// BitShift: unsigned integers (u8, u16, u32, u64), `direction` LEFT or RIGHT.
Status InferBitShift(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  const std::string direction = ctx.attrs().GetString("direction", "");
  if (direction != "LEFT" && direction != "RIGHT")
    return ctx.Error("direction '" + direction + "' must be \"LEFT\" or \"RIGHT\"");
  const DataType t = ctx.input_dtype(0);
  if (t != DataType::kU8 && t != DataType::kU16 && t != DataType::kU32 && t != DataType::kU64)
    return ctx.Error(std::string("BitShift is defined for unsigned integers, input is ") +
                     DataTypeName(ctx.input_dtype(0)));
  return InferBroadcastBinary(ctx, true, std::nullopt, nullptr);
}

// PRelu: slope broadcasts to X (unidirectionally); X's shape.
Status InferPRelu(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(InferBroadcastBinary(ctx, true, std::nullopt, nullptr));
  const Shape& x = ctx.input_shape(0);
  std::string why;
  std::optional<Shape> both = BroadcastShapes(x, ctx.input_shape(1), &why);
  if (!both || *both != x)
    return ctx.Error("slope " + ShapeToString(ctx.input_shape(1)) + " does not broadcast to X " +
                     ShapeToString(x));
  return Status::Ok();
}

// IsNaN, IsInf: f32 in (braid's one floating-point compute type), bool out.
Status InferFloatClass(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  if (ctx.input_dtype(0) != DataType::kF32)
    return ctx.Unsupported(std::string("input dtype ") + DataTypeName(ctx.input_dtype(0)) +
                           " (f32 only)");
  ctx.SetOutput(0, DataType::kBool, ctx.input_shape(0));
  return Status::Ok();
}

// Mod: fmod=0 takes the divisor's sign (integers only), fmod=1 the
// dividend's (C fmod; required for floating point). Values of integer
// shape arithmetic are tracked (swin's `(window - W % window) % window`).
Status InferMod(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  const bool fmod = ctx.attrs().GetInt("fmod", 0) != 0;
  const DataType t = ctx.input_dtype(0);
  if (!fmod && (t == DataType::kF32 || t == DataType::kF16 || t == DataType::kF64))
    return ctx.Error("fmod=0 is defined for integers only; floating-point Mod needs fmod=1");
  return InferBroadcastBinary(ctx, true, std::nullopt, [fmod](const Dim& a, const Dim& b)
                                                           -> std::optional<Dim> {
    if (!a.is_static() || !b.is_static() || b.extent() == 0) return std::nullopt;
    if (b.extent() == -1) return Dim(0);  // INT64_MIN % -1 traps
    int64_t r = a.extent() % b.extent();
    if (!fmod && r != 0 && ((r < 0) != (b.extent() < 0))) r += b.extent();
    return Dim(r);
  });
}

Status InferNot(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  if (ctx.input_dtype(0) != DataType::kBool)
    return ctx.Error(std::string("input must be bool, is ") + DataTypeName(ctx.input_dtype(0)));
  ctx.SetOutput(0, DataType::kBool, ctx.input_shape(0));
  if (std::optional<DimValues> v = ctx.InputValues(0)) {
    DimValues out;
    for (const Dim& d : *v) {
      if (!d.is_static()) return Status::Ok();
      out.push_back(Dim(d.extent() == 0 ? 1 : 0));
    }
    ctx.SetOutputValues(0, std::move(out));
  }
  return Status::Ok();
}

Status InferCumSum(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  if (ElementCount(ctx.input_shape(1)) != 1) return ctx.Error("axis must be a scalar");
  if (ctx.input_dtype(1) != DataType::kI64 && ctx.input_dtype(1) != DataType::kI32)
    return ctx.Error("axis must be int32 or int64");
  ctx.SetOutput(0, ctx.input_dtype(0), ctx.input_shape(0));
  return Status::Ok();
}

Status InferVariadicBroadcast(ShapeInferenceContext& ctx) {
  if (ctx.num_inputs() < 1) return ctx.Error("expects at least one input");
  Shape shape;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) return ctx.Error("input " + std::to_string(i) +
                                            " is absent");
    if (ctx.input_dtype(i) != ctx.input_dtype(0))
      return ctx.Error("input dtypes differ");
    std::string why;
    std::optional<Shape> s = BroadcastShapes(shape, ctx.input_shape(i), &why);
    if (!s) return ctx.Error(why);
    shape = std::move(*s);
  }
  ctx.SetOutput(0, ctx.input_dtype(0), shape);
  return Status::Ok();
}

Status InferWhere(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(3, 3));
  if (ctx.input_dtype(0) != DataType::kBool)
    return ctx.Error("condition must be bool, is " +
                     std::string(DataTypeName(ctx.input_dtype(0))));
  if (ctx.input_dtype(1) != ctx.input_dtype(2))
    return ctx.Error("X and Y dtypes differ");
  std::string why;
  std::optional<Shape> s =
      BroadcastShapes(ctx.input_shape(0), ctx.input_shape(1), &why);
  if (s) s = BroadcastShapes(*s, ctx.input_shape(2), &why);
  if (!s) return ctx.Error(why);
  ctx.SetOutput(0, ctx.input_dtype(1), *s);

  std::optional<DimValues> cond = ctx.InputValues(0);
  std::optional<DimValues> x = ctx.InputValues(1);
  std::optional<DimValues> y = ctx.InputValues(2);
  if (!cond || !x || !y) return Status::Ok();
  const size_t n = std::max({cond->size(), x->size(), y->size()});
  auto at = [n](const DimValues& v, size_t k) -> const Dim* {
    if (v.size() == 1) return &v[0];
    return v.size() == n ? &v[k] : nullptr;
  };
  DimValues out;
  for (size_t k = 0; k < n; ++k) {
    const Dim* c = at(*cond, k);
    const Dim* a = at(*x, k);
    const Dim* b = at(*y, k);
    if (!c || !a || !b || !c->is_static()) return Status::Ok();
    out.push_back(c->extent() != 0 ? *a : *b);
  }
  ctx.SetOutputValues(0, std::move(out));
  return Status::Ok();
}

}  // namespace braid::ops
