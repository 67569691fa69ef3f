// Shape functions of MatMul (numpy matmul: 1-D operands, broadcast batch
// dims) and Gemm (2-D, transA/transB, C broadcast to [M, N]). Fused
// activation attributes on Gemm never change shapes.
#include <optional>
#include <string>

#include "graph/ops/einsum_equation.h"
#include "graph/ops/shape_functions.h"

namespace braid::ops {

namespace {

// Two dims that must be equal: statics must match; a symbol matches anything
// (it is checked at run time).
bool DimsCompatible(const Dim& a, const Dim& b) {
  if (a.is_static() && b.is_static()) return a.extent() == b.extent();
  if (!a.is_static() && !b.is_static()) return a == b;
  return true;
}

}  // namespace

// MatMul's shape rule on inputs ai and bi of the node, shared by MatMul,
// MatMulInteger and QLinearMatMul; the output is of type `out`.
Status InferMatMulShape(ShapeInferenceContext& ctx, size_t ai, size_t bi, DataType out_dtype) {
  Shape a = ctx.input_shape(ai);
  Shape b = ctx.input_shape(bi);
  if (a.empty() || b.empty()) return ctx.Error("operands must have rank >= 1");
  const bool a_vector = a.size() == 1, b_vector = b.size() == 1;
  if (a_vector) a.insert(a.begin(), Dim(1));
  if (b_vector) b.push_back(Dim(1));
  const Dim& k_a = a[a.size() - 1];
  const Dim& k_b = b[b.size() - 2];
  if (!DimsCompatible(k_a, k_b))
    return ctx.Error("inner dimensions differ: " + k_a.ToString() + " vs " +
                     k_b.ToString());
  Shape batch_a(a.begin(), a.end() - 2), batch_b(b.begin(), b.end() - 2);
  std::string why;
  std::optional<Shape> batch = BroadcastShapes(batch_a, batch_b, &why);
  if (!batch) return ctx.Error("batch dimensions: " + why);
  Shape out = *batch;
  if (!a_vector) out.push_back(a[a.size() - 2]);
  if (!b_vector) out.push_back(b[b.size() - 1]);
  ctx.SetOutput(0, out_dtype, std::move(out));
  return Status::Ok();
}

Status InferMatMul(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  if (ctx.input_dtype(0) != ctx.input_dtype(1))
    return ctx.Error("input dtypes differ");
  return InferMatMulShape(ctx, 0, 1, ctx.input_dtype(0));
}

Status InferGemm(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 3));
  const Shape& a = ctx.input_shape(0);
  const Shape& b = ctx.input_shape(1);
  if (a.size() != 2 || b.size() != 2)
    return ctx.Error("A and B must be 2-D");
  const bool trans_a = ctx.attrs().GetInt("transA", 0) != 0;
  const bool trans_b = ctx.attrs().GetInt("transB", 0) != 0;
  const Dim m = trans_a ? a[1] : a[0];
  const Dim k_a = trans_a ? a[0] : a[1];
  const Dim k_b = trans_b ? b[1] : b[0];
  const Dim n = trans_b ? b[0] : b[1];
  if (!DimsCompatible(k_a, k_b))
    return ctx.Error("inner dimensions differ: " + k_a.ToString() + " vs " +
                     k_b.ToString() + " (transA=" + std::to_string(trans_a) +
                     ", transB=" + std::to_string(trans_b) + ")");
  const Shape out{m, n};
  if (ctx.has_input(2)) {
    std::string why;
    std::optional<Shape> with_c = BroadcastShapes(out, ctx.input_shape(2), &why);
    if (!with_c || !(*with_c == out))
      return ctx.Error("C " + ShapeToString(ctx.input_shape(2)) +
                       " does not broadcast to " + ShapeToString(out));
  }
  ctx.SetOutput(0, ctx.input_dtype(0), out);
  return Status::Ok();
}

Status InferEinsum(ShapeInferenceContext& ctx) {
  if (ctx.num_inputs() < 1) return ctx.Error("expects at least one input");
  std::vector<size_t> ranks;
  std::vector<Shape> shapes;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) return ctx.Error("input " + std::to_string(i) + " is absent");
    if (ctx.input_dtype(i) != ctx.input_dtype(0)) return ctx.Error("input dtypes differ");
    ranks.push_back(ctx.input_rank(i));
    shapes.push_back(ctx.input_shape(i));
  }
  if (!ctx.attrs().Has("equation")) return ctx.Error("missing equation attribute");
  StatusOr<EinsumEquation> e = ParseEinsumEquation(ctx.attrs().GetString("equation", ""), ranks);
  if (!e.ok()) return ctx.Error(e.status().message());
  StatusOr<std::vector<Dim>> extents = EinsumLabelExtents(*e, shapes);
  if (!extents.ok()) return ctx.Error(extents.status().message());
  Shape out;
  for (int l : e->output) out.push_back((*extents)[static_cast<size_t>(l)]);
  ctx.SetOutput(0, ctx.input_dtype(0), std::move(out));
  return Status::Ok();
}

// Det (11+): [*, M, M] -> [*].
Status InferDet(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  const Shape& x = ctx.input_shape(0);
  if (x.size() < 2) return ctx.Error("input " + ShapeToString(x) + " must be [*, M, M]");
  const Dim& rows = x[x.size() - 2];
  const Dim& cols = x[x.size() - 1];
  if (rows.is_static() && cols.is_static() && rows != cols)
    return ctx.Error("input " + ShapeToString(x) + " must be [*, M, M] (square matrices)");
  if (ctx.input_dtype(0) != DataType::kF32) return ctx.Unsupported("Det supports f32 only");
  ctx.SetOutput(0, DataType::kF32, Shape(x.begin(), x.end() - 2));
  return Status::Ok();
}

}  // namespace braid::ops
