// Shape functions of the quantized operators: ConvInteger, MatMulInteger,
// QLinearConv, QLinearMatMul (Conv / MatMul shape rules, integer outputs),
// com.microsoft.QLinearAdd (Add's broadcast), com.microsoft.QLinearConcat
// (Concat's rule) and DynamicQuantizeLinear. Scales are f32; a zero point has its data's type
// (uint8 or int8). Per-tensor parameters are scalars (or one element), per
// channel / row / column ones 1-D with one entry per slice.
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "graph/ops/shape_functions.h"

namespace braid::ops {

namespace {

bool IsQuantized(DataType t) { return t == DataType::kI8 || t == DataType::kU8; }

// Elements of a static shape; -1 when some dim is symbolic.
int64_t StaticElements(const Shape& s) {
  int64_t n = 1;
  for (const Dim& d : s) {
    if (!d.is_static()) return -1;
    n *= d.extent();
  }
  return n;
}

// Checks input `i` (a scale when `scale`, else a zero point of `data`'s type)
// is per tensor, or (per_slice > 0) 1-D with per_slice entries.
Status CheckParam(ShapeInferenceContext& ctx, size_t i, const char* name, bool scale,
                  size_t data, int64_t per_slice) {
  if (!ctx.has_input(i)) return Status::Ok();
  const DataType want = scale ? DataType::kF32 : ctx.input_dtype(data);
  if (ctx.input_dtype(i) != want)
    return ctx.Error(std::string(name) + " is " + DataTypeName(ctx.input_dtype(i)) + ", not " +
                     DataTypeName(want));
  if (scale) RETURN_IF_ERROR(CheckConstantScale(ctx, i, name));
  const Shape& s = ctx.input_shape(i);
  const int64_t n = StaticElements(s);
  if (n == 1 && s.size() <= 1) return Status::Ok();
  if (per_slice > 0 && s.size() == 1 && (n == per_slice || n < 0)) return Status::Ok();
  return ctx.Error(std::string(name) + " " + ShapeToString(s) + " is neither a scalar" +
                   (per_slice > 0 ? " nor 1-D of " + std::to_string(per_slice) : std::string()));
}

Status CheckQuantizedData(ShapeInferenceContext& ctx, size_t i, const char* name) {
  if (!IsQuantized(ctx.input_dtype(i)))
    return ctx.Unsupported(std::string(name) + " of type " + DataTypeName(ctx.input_dtype(i)) +
                           " (int8 and uint8 are supported)");
  return Status::Ok();
}

// Output channels M of a conv weight (static by InferConvShape's rule).
int64_t OutChannels(const ShapeInferenceContext& ctx, size_t w) {
  const Shape& s = ctx.input_shape(w);
  return !s.empty() && s[0].is_static() ? s[0].extent() : -1;
}

// Rows of A (M) and columns of B (N) of a matmul; -1 when symbolic or absent.
int64_t MatRows(const ShapeInferenceContext& ctx, size_t a) {
  const Shape& s = ctx.input_shape(a);
  return s.size() >= 2 && s[s.size() - 2].is_static() ? s[s.size() - 2].extent() : -1;
}
int64_t MatCols(const ShapeInferenceContext& ctx, size_t b) {
  const Shape& s = ctx.input_shape(b);
  return s.size() >= 2 && s.back().is_static() ? s.back().extent() : -1;
}

}  // namespace

Status CheckConstantScale(ShapeInferenceContext& ctx, size_t i, const char* name) {
  if (!ctx.has_input(i) || ctx.input_dtype(i) != DataType::kF32 || !ctx.input(i).constant)
    return Status::Ok();
  for (float s : ctx.input(i).constant->as<float>())
    if (!(s > 0.0f) || !std::isfinite(s))
      return ctx.Error(std::string(name) + " " + std::to_string(s) + " is not a finite positive scale");
  return Status::Ok();
}

// ConvInteger(x, w, x_zero_point?, w_zero_point?) -> int32: x's zero point per
// tensor, w's per tensor or per output channel.
Status InferConvInteger(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 4));
  RETURN_IF_ERROR(CheckQuantizedData(ctx, 0, "x"));
  RETURN_IF_ERROR(CheckQuantizedData(ctx, 1, "w"));
  RETURN_IF_ERROR(CheckParam(ctx, 2, "x_zero_point", false, 0, 0));
  RETURN_IF_ERROR(CheckParam(ctx, 3, "w_zero_point", false, 1, OutChannels(ctx, 1)));
  return InferConvShape(ctx, 0, 1, -1, DataType::kI32);
}

// QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B?) -> y of
// y_zp's type; w's scale and zero point per tensor or per output channel, B
// int32 [M].
Status InferQLinearConv(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(8, 9));
  RETURN_IF_ERROR(CheckQuantizedData(ctx, 0, "x"));
  RETURN_IF_ERROR(CheckQuantizedData(ctx, 3, "w"));
  const int64_t m = OutChannels(ctx, 3);
  RETURN_IF_ERROR(CheckParam(ctx, 1, "x_scale", true, 0, 0));
  RETURN_IF_ERROR(CheckParam(ctx, 2, "x_zero_point", false, 0, 0));
  RETURN_IF_ERROR(CheckParam(ctx, 4, "w_scale", true, 3, m));
  RETURN_IF_ERROR(CheckParam(ctx, 5, "w_zero_point", false, 3, m));
  RETURN_IF_ERROR(CheckParam(ctx, 6, "y_scale", true, 0, 0));
  const DataType out = ctx.has_input(7) ? ctx.input_dtype(7) : DataType::kU8;
  if (!IsQuantized(out)) return ctx.Unsupported(std::string("output type ") + DataTypeName(out));
  if (ctx.has_input(7) && ctx.input_shape(7).size() > 1)
    return ctx.Error("y_zero_point " + ShapeToString(ctx.input_shape(7)) + " is not a scalar");
  if (ctx.has_input(8) && ctx.input_dtype(8) != DataType::kI32)
    return ctx.Error(std::string("bias is ") + DataTypeName(ctx.input_dtype(8)) + ", not int32");
  return InferConvShape(ctx, 0, 3, 8, out);
}

// MatMulInteger(A, B, a_zero_point?, b_zero_point?) -> int32: A's zero point
// per tensor or per row, B's per tensor or per column.
Status InferMatMulInteger(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 4));
  RETURN_IF_ERROR(CheckQuantizedData(ctx, 0, "A"));
  RETURN_IF_ERROR(CheckQuantizedData(ctx, 1, "B"));
  RETURN_IF_ERROR(CheckParam(ctx, 2, "a_zero_point", false, 0, MatRows(ctx, 0)));
  RETURN_IF_ERROR(CheckParam(ctx, 3, "b_zero_point", false, 1, MatCols(ctx, 1)));
  return InferMatMulShape(ctx, 0, 1, DataType::kI32);
}

// QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp) -> y of
// y_zp's type; a's parameters per tensor or per row, b's per tensor or per
// column, y's per tensor.
Status InferQLinearMatMul(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(8, 8));
  RETURN_IF_ERROR(CheckQuantizedData(ctx, 0, "a"));
  RETURN_IF_ERROR(CheckQuantizedData(ctx, 3, "b"));
  RETURN_IF_ERROR(CheckParam(ctx, 1, "a_scale", true, 0, MatRows(ctx, 0)));
  RETURN_IF_ERROR(CheckParam(ctx, 2, "a_zero_point", false, 0, MatRows(ctx, 0)));
  RETURN_IF_ERROR(CheckParam(ctx, 4, "b_scale", true, 3, MatCols(ctx, 3)));
  RETURN_IF_ERROR(CheckParam(ctx, 5, "b_zero_point", false, 3, MatCols(ctx, 3)));
  RETURN_IF_ERROR(CheckParam(ctx, 6, "y_scale", true, 0, 0));
  if (!ctx.has_input(7)) return ctx.Error("y_zero_point is required");
  const DataType out = ctx.input_dtype(7);
  if (!IsQuantized(out)) return ctx.Unsupported(std::string("output type ") + DataTypeName(out));
  if (ctx.input_shape(7).size() > 1)
    return ctx.Error("y_zero_point " + ShapeToString(ctx.input_shape(7)) + " is not a scalar");
  return InferMatMulShape(ctx, 0, 3, out);
}

// com.microsoft.QLinearAdd(A, A_scale, A_zp?, B, B_scale, B_zp?, C_scale,
// C_zp?) -> C of A's type (ONNX Runtime's contrib op; also what FoldQdq makes
// of Q(Add(DQ(a), DQ(b)))): A and B broadcast as Add's, every parameter per
// tensor, B and the zero points of A's type.
Status InferQLinearAdd(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 8));
  if (ctx.num_inputs() < 7) return ctx.Error("expects 7 to 8 inputs, has " + std::to_string(ctx.num_inputs()));
  for (size_t i : {0, 1, 3, 4, 6})  // the zero points (2, 5, 7) are optional
    if (!ctx.has_input(i)) return ctx.Error("required input " + std::to_string(i) + " is absent");
  RETURN_IF_ERROR(CheckQuantizedData(ctx, 0, "A"));
  if (ctx.input_dtype(3) != ctx.input_dtype(0))
    return ctx.Error(std::string("B is ") + DataTypeName(ctx.input_dtype(3)) + ", A " +
                     DataTypeName(ctx.input_dtype(0)));
  RETURN_IF_ERROR(CheckParam(ctx, 1, "A_scale", true, 0, 0));
  RETURN_IF_ERROR(CheckParam(ctx, 2, "A_zero_point", false, 0, 0));
  RETURN_IF_ERROR(CheckParam(ctx, 4, "B_scale", true, 0, 0));
  RETURN_IF_ERROR(CheckParam(ctx, 5, "B_zero_point", false, 0, 0));
  RETURN_IF_ERROR(CheckParam(ctx, 6, "C_scale", true, 0, 0));
  RETURN_IF_ERROR(CheckParam(ctx, 7, "C_zero_point", false, 0, 0));
  std::string why;
  const std::optional<Shape> shape = BroadcastShapes(ctx.input_shape(0), ctx.input_shape(3), &why);
  if (!shape) return ctx.Error(why);
  ctx.SetOutput(0, ctx.input_dtype(0), *shape);
  return Status::Ok();
}

// com.microsoft.QLinearConcat(Y_scale, Y_zp, X_1, X_1_scale, X_1_zp, ...)
// -> Y of the X's type (ONNX Runtime's contrib op; also what FoldQdq makes of
// Q(Concat(DQ(x_1), ..., DQ(x_n)))): Concat's shape rule over the X's, every
// parameter per tensor, every zero point present.
Status InferQLinearConcat(ShapeInferenceContext& ctx) {
  const size_t n = ctx.num_inputs();
  if (n < 5 || (n - 2) % 3 != 0)
    return ctx.Error("expects Y_scale, Y_zero_point and (X, X_scale, X_zero_point) per input: "
                     "5, 8, 11, ... inputs, has " + std::to_string(n));
  for (size_t i = 0; i < n; ++i)
    if (!ctx.has_input(i)) return ctx.Error("input " + std::to_string(i) + " is absent");
  std::vector<size_t> data;
  for (size_t x = 2; x < n; x += 3) {
    RETURN_IF_ERROR(CheckQuantizedData(ctx, x, "X"));
    const std::string k = std::to_string(data.size() + 1);  // X_1, X_2, ...
    RETURN_IF_ERROR(CheckParam(ctx, x + 1, ("X_" + k + "_scale").c_str(), true, 0, 0));
    RETURN_IF_ERROR(CheckParam(ctx, x + 2, ("X_" + k + "_zero_point").c_str(), false, x, 0));
    data.push_back(x);
  }
  RETURN_IF_ERROR(CheckParam(ctx, 0, "Y_scale", true, 0, 0));
  RETURN_IF_ERROR(CheckParam(ctx, 1, "Y_zero_point", false, 2, 0));
  return InferConcatOf(ctx, data);
}

// braid.TableLookup(X, Table) -> Y of Table's type, X's shape (braid's own
// op; what FoldQdqLookups makes of Q(f(DQ(x))) for a pointwise f):
// Y[i] = Table[the byte of X[i]] (an int8 X's two's-complement bits), X and
// Table int8 or uint8, Table 256 elements.
Status InferTableLookup(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  RETURN_IF_ERROR(CheckQuantizedData(ctx, 0, "X"));
  RETURN_IF_ERROR(CheckQuantizedData(ctx, 1, "Table"));
  const Shape& table = ctx.input_shape(1);
  if (table.size() != 1 || !table[0].is_static() || table[0].extent() != 256)
    return ctx.Error("Table has shape " + ShapeToString(table) + ", expects [256]");
  ctx.SetOutput(0, ctx.input_dtype(1), ctx.input_shape(0));
  return Status::Ok();
}

// DynamicQuantizeLinear(x) -> y (uint8, x's shape), y_scale (f32 scalar),
// y_zero_point (uint8 scalar).
Status InferDynamicQuantizeLinear(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  if (ctx.input_dtype(0) != DataType::kF32)
    return ctx.Unsupported(std::string("DynamicQuantizeLinear of ") +
                           DataTypeName(ctx.input_dtype(0)) + " (f32 is supported)");
  ctx.SetOutput(0, DataType::kU8, ctx.input_shape(0));
  if (ctx.has_output(1)) ctx.SetOutput(1, DataType::kF32, {});
  if (ctx.has_output(2)) ctx.SetOutput(2, DataType::kU8, {});
  return Status::Ok();
}

}  // namespace braid::ops
