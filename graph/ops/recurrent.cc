// Shape inference of RNN, GRU and LSTM (opsets 7-22). Every output extent
// comes from an input (seq_length and batch from X, hidden from R or
// hidden_size), so the shapes are as static as X's.
#include <string>

#include "graph/ops/recurrent_attrs.h"
#include "graph/ops/shape_functions.h"

namespace braid::ops {
namespace {

// An input whose extents must be `want` (a static entry must agree; -1 skips).
Status ExpectDims(ShapeInferenceContext& ctx, size_t i, const char* name,
                  const std::vector<Dim>& want) {
  const Shape& s = ctx.input_shape(i);
  bool ok = s.size() == want.size();
  for (size_t k = 0; ok && k < s.size(); ++k)
    if (s[k].is_static() && want[k].is_static() && want[k].extent() >= 0 && s[k] != want[k])
      ok = false;
  if (ok) return Status::Ok();
  Shape w(want.begin(), want.end());
  return ctx.Error(std::string(name) + " " + ShapeToString(s) + " must be " + ShapeToString(w));
}

}  // namespace

Status InferRecurrent(ShapeInferenceContext& ctx) {
  StatusOr<RecurrentAttrs> parsed = ParseRecurrentAttrs(ctx.node());
  if (!parsed.ok()) return ctx.Error(parsed.status().message());
  const RecurrentAttrs& a = *parsed;
  const bool lstm = a.cell == RecurrentCell::kLstm;
  RETURN_IF_ERROR(ctx.ExpectInputs(3, lstm ? 8 : 6));
  if (!ctx.has_input(0) || !ctx.has_input(1) || !ctx.has_input(2))
    return ctx.Error("X, W and R are required");
  const DataType dtype = ctx.input_dtype(0);
  if (dtype != DataType::kF32) return ctx.Unsupported("X must be f32");
  const Shape& x = ctx.input_shape(0);
  if (x.size() != 3) return ctx.Error("X " + ShapeToString(x) + " must be 3-D");
  const Dim seq = a.layout == 0 ? x[0] : x[1];
  const Dim batch = a.layout == 0 ? x[1] : x[0];
  const Shape& r = ctx.input_shape(2);
  if (r.size() != 3) return ctx.Error("R " + ShapeToString(r) + " must be 3-D");
  Dim hidden = a.hidden_size > 0 ? Dim(a.hidden_size) : r[2];
  if (!hidden.is_static())
    return ctx.Unsupported("hidden_size absent and R " + ShapeToString(r) + " not static");
  const int64_t h = hidden.extent();
  const Dim dirs(a.num_directions);
  for (size_t i = 1; i < ctx.num_inputs(); ++i)
    if (ctx.has_input(i) && i != 4 && ctx.input_dtype(i) != dtype)
      return ctx.Error("input " + std::to_string(i) + " must have X's dtype");
  RETURN_IF_ERROR(ExpectDims(ctx, 1, "W", {dirs, Dim(a.gates * h), x[2]}));
  RETURN_IF_ERROR(ExpectDims(ctx, 2, "R", {dirs, Dim(a.gates * h), hidden}));
  if (ctx.has_input(3)) RETURN_IF_ERROR(ExpectDims(ctx, 3, "B", {dirs, Dim(2 * a.gates * h)}));
  if (ctx.has_input(4)) {
    if (ctx.input_dtype(4) != DataType::kI32) return ctx.Error("sequence_lens must be i32");
    RETURN_IF_ERROR(ExpectDims(ctx, 4, "sequence_lens", {batch}));
  }
  const std::vector<Dim> state = a.layout == 0 ? std::vector<Dim>{dirs, batch, hidden}
                                               : std::vector<Dim>{batch, dirs, hidden};
  if (ctx.has_input(5)) RETURN_IF_ERROR(ExpectDims(ctx, 5, "initial_h", state));
  if (lstm && ctx.has_input(6)) RETURN_IF_ERROR(ExpectDims(ctx, 6, "initial_c", state));
  if (lstm && ctx.has_input(7)) RETURN_IF_ERROR(ExpectDims(ctx, 7, "P", {dirs, Dim(3 * h)}));
  if (ctx.num_outputs() > (lstm ? 3u : 2u))
    return ctx.Error("has " + std::to_string(ctx.num_outputs()) + " outputs, at most " +
                     std::to_string(lstm ? 3 : 2));
  if (ctx.has_output(0))
    ctx.SetOutput(0, dtype, a.layout == 0 ? Shape{seq, dirs, batch, hidden}
                                          : Shape{batch, seq, dirs, hidden});
  const Shape state_shape(state.begin(), state.end());
  if (ctx.has_output(1)) ctx.SetOutput(1, dtype, state_shape);
  if (ctx.has_output(2)) ctx.SetOutput(2, dtype, state_shape);
  return Status::Ok();
}

}  // namespace braid::ops
