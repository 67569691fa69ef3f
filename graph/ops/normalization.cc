// Shape functions of BatchNormalization, InstanceNormalization,
// LayerNormalization (opset 17), LRN, MeanVarianceNormalization and Softmax
// (whose axis default and meaning change at opset 13; the shape does not).
#include <optional>
#include <string>

#include "graph/ops/shape_functions.h"

namespace braid::ops {

Status InferBatchNormalization(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(5, 5));
  // braid is an inference runtime: batch statistics and running-statistic
  // updates (training_mode=1 from opset 14; the extra outputs before) are
  // rejected here, at load, rather than by every kernel.
  // A training-mode BN of a constant (NF-Nets standardise their conv weights
  // with F.batch_norm(w, training=True)) folds into a constant at load.
  if (ctx.attrs().GetInt("training_mode", 0) != 0 && !ctx.input(0).constant)
    return ctx.Unsupported("training_mode=1 is not supported (inference runtime)");
  const bool folds = ctx.attrs().GetInt("training_mode", 0) != 0 && ctx.input(0).constant;
  for (size_t i = 1; i < ctx.num_outputs(); ++i)
    if (ctx.has_output(i) && !(folds && i < 3))
      return ctx.Unsupported(
          "the training outputs (running/saved mean and variance) are not supported "
          "(inference runtime)");
  const Shape& x = ctx.input_shape(0);
  if (x.size() < 2) return ctx.Error("input must have rank >= 2 (N, C, ...)");
  const Dim& c = x[1];
  static const char* const kNames[] = {"", "scale", "B", "mean", "var"};
  for (size_t i = 1; i < 5; ++i) {
    const Shape& p = ctx.input_shape(i);
    if (p.size() != 1 || (c.is_static() && p[0].is_static() && !(p[0] == c)))
      return ctx.Error(std::string(kNames[i]) + " shape " + ShapeToString(p) +
                       " does not match channels " + c.ToString());
  }
  ctx.SetOutput(0, ctx.input_dtype(0), x);
  for (size_t i = 1; i < ctx.num_outputs() && folds; ++i)
    if (ctx.has_output(i)) ctx.SetOutput(i, ctx.input_dtype(0), Shape{c});
  return Status::Ok();
}

Status InferInstanceNormalization(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(3, 3));
  const Shape& x = ctx.input_shape(0);
  if (x.size() < 3) return ctx.Error("input must have rank >= 3 (N, C, D1, ...)");
  for (size_t i = 1; i < 3; ++i) {
    const Shape& p = ctx.input_shape(i);
    if (p.size() != 1 || (x[1].is_static() && p[0].is_static() && !(p[0] == x[1])))
      return ctx.Error(std::string(i == 1 ? "scale" : "B") + " shape " + ShapeToString(p) +
                       " does not match channels " + x[1].ToString());
  }
  ctx.SetOutput(0, ctx.input_dtype(0), x);
  return Status::Ok();
}

// GroupNormalization: scale and bias are [C] (opset 21) or [num_groups]
// (opset 18's per-group form); C must divide into num_groups groups.
Status InferGroupNormalization(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(3, 3));
  const Shape& x = ctx.input_shape(0);
  if (x.size() < 3) return ctx.Error("input must have rank >= 3 (N, C, D1, ...)");
  const int64_t groups = ctx.attrs().GetInt("num_groups", 0);
  if (groups <= 0) return ctx.Error("num_groups must be given and positive");
  if (x[1].is_static() && x[1].extent() % groups != 0)
    return ctx.Error("channels " + x[1].ToString() + " do not divide into num_groups " +
                     std::to_string(groups));
  for (size_t i = 1; i < 3; ++i) {
    const Shape& p = ctx.input_shape(i);
    const bool fits = p.size() == 1 && (!p[0].is_static() || p[0].extent() == groups ||
                                        !x[1].is_static() || p[0] == x[1]);
    if (!fits)
      return ctx.Error(std::string(i == 1 ? "scale" : "bias") + " shape " + ShapeToString(p) +
                       " is neither [channels] " + x[1].ToString() + " nor [num_groups] " +
                       std::to_string(groups));
  }
  ctx.SetOutput(0, ctx.input_dtype(0), x);
  return Status::Ok();
}

Status InferLayerNormalization(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 3));
  const Shape& x = ctx.input_shape(0);
  const auto rank = static_cast<int64_t>(x.size());
  std::optional<int64_t> axis = NormalizeAxis(ctx.attrs().GetInt("axis", -1), rank);
  if (!axis) return ctx.Error("axis is out of range for rank " + std::to_string(rank));
  const auto ax = static_cast<size_t>(*axis);
  const Shape normalized(x.begin() + static_cast<std::ptrdiff_t>(ax), x.end());
  for (size_t i = 1; i < 3; ++i) {
    if (!ctx.has_input(i)) continue;
    std::string why;
    std::optional<Shape> b = BroadcastShapes(normalized, ctx.input_shape(i), &why);
    if (!b || !(*b == normalized))
      return ctx.Error((i == 1 ? "scale " : "bias ") +
                       ShapeToString(ctx.input_shape(i)) +
                       " does not broadcast to the normalized dims " +
                       ShapeToString(normalized));
  }
  ctx.SetOutput(0, ctx.input_dtype(0), x);
  // Mean and InvStdDev keep the leading dims and 1 for each normalized one;
  // they are computed in stash_type (float).
  Shape stats(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(ax));
  stats.resize(x.size(), Dim(1));
  ctx.SetOutput(1, DataType::kF32, stats);
  ctx.SetOutput(2, DataType::kF32, stats);
  return Status::Ok();
}

Status InferSoftmax(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  const auto rank = static_cast<int64_t>(ctx.input_rank(0));
  // Before opset 13 the input is coerced to 2-D at `axis` (default 1); from
  // 13 the softmax runs along `axis` (default -1).
  const int64_t fallback = ctx.opset() < 13 ? 1 : -1;
  const int64_t axis = ctx.attrs().GetInt("axis", fallback);
  const bool ok = ctx.opset() < 13 ? (axis >= -rank && axis <= rank)
                                   : NormalizeAxis(axis, rank).has_value();
  if (!ok)
    return ctx.Error("axis " + std::to_string(axis) +
                     " is out of range for rank " + std::to_string(rank) +
                     " at opset " + std::to_string(ctx.opset()));
  ctx.SetOutput(0, ctx.input_dtype(0), ctx.input_shape(0));
  return Status::Ok();
}

// LRN: [N, C, ...] f32, `size` (required) channels summed; X's shape.
Status InferLRN(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  if (ctx.input_shape(0).size() < 3)
    return ctx.Error("input " + ShapeToString(ctx.input_shape(0)) +
                     " must have rank >= 3 (N, C, D1, ...)");
  const int64_t size = ctx.attrs().GetInt("size", 0);
  if (size < 1) return ctx.Error("size " + std::to_string(size) + " must be positive");
  ctx.SetOutput(0, ctx.input_dtype(0), ctx.input_shape(0));
  return Status::Ok();
}

// MeanVarianceNormalization: `axes` (default [0, 2, 3]) within the rank; X's
// shape.
Status InferMeanVarianceNormalization(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  const auto rank = static_cast<int64_t>(ctx.input_shape(0).size());
  for (int64_t axis : ctx.attrs().GetInts("axes", {0, 2, 3}))
    if (!NormalizeAxis(axis, rank))
      return ctx.Error("axes entry " + std::to_string(axis) + " is out of range for rank " +
                       std::to_string(rank));
  ctx.SetOutput(0, ctx.input_dtype(0), ctx.input_shape(0));
  return Status::Ok();
}

}  // namespace braid::ops
