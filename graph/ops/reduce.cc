// Shape functions of every Reduce* op (axes from the attribute, or from the
// second input: ReduceSum at opset 13, the others at 18; keepdims;
// noop_with_empty_axes) and of ArgMax / ArgMin (one axis, i64 indices).
#include <optional>
#include <string>
#include <vector>

#include "graph/ops/shape_functions.h"

namespace braid::ops {

Status InferReduce(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 2));
  const Shape& in = ctx.input_shape(0);
  const auto rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> axes;
  if (ctx.has_input(1)) {
    ASSIGN_OR_RETURN(axes, ctx.InputInts(1));
  } else {
    axes = ctx.attrs().GetInts("axes");
  }
  const bool keep_dims = ctx.attrs().GetInt("keepdims", 1) != 0;
  const bool noop = ctx.attrs().GetInt("noop_with_empty_axes", 0) != 0;
  if (axes.empty() && noop) {
    ctx.SetOutput(0, ctx.input_dtype(0), in);
    return Status::Ok();
  }
  std::vector<bool> reduced(in.size(), axes.empty());
  for (int64_t a : axes) {
    std::optional<int64_t> axis = NormalizeAxis(a, rank);
    if (!axis)
      return ctx.Error("axis " + std::to_string(a) + " is out of range for rank " +
                       std::to_string(rank));
    reduced[static_cast<size_t>(*axis)] = true;
  }
  Shape out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (!reduced[i])
      out.push_back(in[i]);
    else if (keep_dims)
      out.emplace_back(1);
  }
  ctx.SetOutput(0, ctx.input_dtype(0), std::move(out));
  return Status::Ok();
}

// ArgMax / ArgMin: one `axis` (default 0), keepdims (default 1); the output
// is the input's shape with that axis removed or kept as 1, of i64 indices.
// select_last_index (12+) changes only which of equal values is picked.
Status InferArgReduce(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  const Shape& in = ctx.input_shape(0);
  const auto rank = static_cast<int64_t>(in.size());
  const int64_t axis_attr = ctx.attrs().GetInt("axis", 0);
  std::optional<int64_t> axis = NormalizeAxis(axis_attr, rank);
  if (!axis)
    return ctx.Error("axis " + std::to_string(axis_attr) + " is out of range for rank " +
                     std::to_string(rank));
  const int64_t select_last = ctx.attrs().GetInt("select_last_index", 0);
  if (select_last != 0 && select_last != 1)
    return ctx.Error("select_last_index must be 0 or 1, is " + std::to_string(select_last));
  const auto ax = static_cast<size_t>(*axis);
  if (in[ax].is_static() && in[ax].extent() == 0)
    return ctx.Error("axis " + std::to_string(axis_attr) + " is empty (no index to return)");
  Shape out = in;
  if (ctx.attrs().GetInt("keepdims", 1) != 0)
    out[ax] = Dim(1);
  else
    out.erase(out.begin() + static_cast<std::ptrdiff_t>(ax));
  ctx.SetOutput(0, DataType::kI64, std::move(out));
  return Status::Ok();
}

}  // namespace braid::ops
