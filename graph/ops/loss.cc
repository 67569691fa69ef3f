// Shape functions of the loss ops: NegativeLogLikelihoodLoss and
// SoftmaxCrossEntropyLoss (opset 13). Both take [N, C, d1, ..., dk] scores, a
// target/label tensor [N, d1, ..., dk] of class indices and an optional
// per-class weight [C]; the loss is [N, d1, ..., dk] for reduction "none" and
// a scalar for "sum" and "mean".
#include <string>

#include "graph/ops/shape_functions.h"

namespace braid::ops {

namespace {

// Checks the inputs shared by both losses and sets output 0 (the loss).
Status InferLossOutput(ShapeInferenceContext& ctx, const char* scores_name,
                       const char* target_name) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 3));
  const std::string reduction = ctx.attrs().GetString("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    return ctx.Error("reduction '" + reduction + "' is not one of none, sum, mean");
  const Shape& scores = ctx.input_shape(0);
  const Shape& target = ctx.input_shape(1);
  if (scores.size() < 2)
    return ctx.Error(std::string(scores_name) + " must have rank >= 2 (N, C, ...), has " +
                     ShapeToString(scores));
  if (ctx.input_dtype(0) != DataType::kF32)
    return ctx.Unsupported(std::string(scores_name) + " dtype " +
                           DataTypeName(ctx.input_dtype(0)) + " (f32 only)");
  if (ctx.input_dtype(1) != DataType::kI64 && ctx.input_dtype(1) != DataType::kI32)
    return ctx.Error(std::string(target_name) + " must be i32 or i64, is " +
                     DataTypeName(ctx.input_dtype(1)));
  // target is the scores' shape without C.
  Shape expected{scores[0]};
  expected.insert(expected.end(), scores.begin() + 2, scores.end());
  bool matches = target.size() == expected.size();
  for (size_t i = 0; matches && i < target.size(); ++i)
    matches = !(target[i].is_static() && expected[i].is_static()) || target[i] == expected[i];
  if (!matches)
    return ctx.Error(std::string(target_name) + " " + ShapeToString(target) +
                     " does not match " + scores_name + " " + ShapeToString(scores) +
                     " without its class axis (" + ShapeToString(expected) + ")");
  if (ctx.has_input(2)) {
    const Shape& weight = ctx.input_shape(2);
    if (weight.size() != 1 || (weight[0].is_static() && scores[1].is_static() &&
                               !(weight[0] == scores[1])))
      return ctx.Error("weight " + ShapeToString(weight) + " must be [C] with C = " +
                       scores[1].ToString());
    if (ctx.input_dtype(2) != ctx.input_dtype(0))
      return ctx.Error("weight and " + std::string(scores_name) + " dtypes differ");
  }
  ctx.SetOutput(0, ctx.input_dtype(0), reduction == "none" ? target : Shape{});
  return Status::Ok();
}

}  // namespace

Status InferNegativeLogLikelihoodLoss(ShapeInferenceContext& ctx) {
  return InferLossOutput(ctx, "input", "target");
}

// The optional second output is the log-probabilities, scores' shape.
Status InferSoftmaxCrossEntropyLoss(ShapeInferenceContext& ctx) {
  RETURN_IF_ERROR(InferLossOutput(ctx, "scores", "labels"));
  if (ctx.has_output(1)) ctx.SetOutput(1, ctx.input_dtype(0), ctx.input_shape(0));
  return Status::Ok();
}

}  // namespace braid::ops
