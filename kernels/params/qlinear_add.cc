#include "kernels/params/qlinear_add.h"

#include <string>
#include <utility>
#include <vector>

#include "kernels/params/parse_util.h"
#include "kernels/params/quantized.h"

namespace braid {

using params_internal::HasInput;
using params_internal::Invalid;

StatusOr<QLinearAddParams> ParseQLinearAdd(const PrepareArgs& args) {
  if (args.node == nullptr) return InvalidArgument("kernel: PrepareArgs without node");
  if (args.inputs.size() < 7 || args.inputs.size() > 8)
    return Invalid(args, "expects 7..8 inputs, got " + std::to_string(args.inputs.size()));
  for (int i : {kQAddA, kQAddAScale, kQAddB, kQAddBScale, kQAddCScale})
    if (!HasInput(args, static_cast<size_t>(i)))
      return Invalid(args, "required input " + std::to_string(i) + " is missing");
  if (args.outputs.empty() || !args.outputs[0].present()) return Invalid(args, "output 0 is missing");
  QLinearAddParams p;
  p.type = args.inputs[kQAddA].dtype;
  if (p.type != DataType::kU8 && p.type != DataType::kI8)
    return params_internal::Unsupported(
        args, std::string("A of type ") + DataTypeName(p.type) + " (int8 and uint8 are supported)");
  if (args.inputs[kQAddB].dtype != p.type)
    return Invalid(args, std::string("B is ") + DataTypeName(args.inputs[kQAddB].dtype) + ", A " +
                             DataTypeName(p.type));
  for (auto [i, name] : {std::pair{kQAddAScale, "A_scale"}, std::pair{kQAddBScale, "B_scale"},
                         std::pair{kQAddCScale, "C_scale"}})
    RETURN_IF_ERROR(CheckQuantizationParam(args, i, name, -1).status());
  for (auto [i, name] : {std::pair{kQAddAZp, "A_zero_point"}, std::pair{kQAddBZp, "B_zero_point"},
                         std::pair{kQAddCZp, "C_zero_point"}})
    RETURN_IF_ERROR(CheckQuantizationParam(args, i, name, kQAddA).status());
  const std::vector<int64_t>& a = args.inputs[kQAddA].dims;
  const std::vector<int64_t>& b = args.inputs[kQAddB].dims;
  const std::vector<std::vector<int64_t>> operands = {a, b};
  StatusOr<BroadcastPlan> plan = BroadcastPlan::Make(operands);
  if (!plan.ok()) return Invalid(args, plan.status().message());
  p.plan = std::move(*plan);
  const TensorDesc& c = args.outputs[0];
  if (c.dtype != p.type || c.dims != p.plan.output_dims())
    return Invalid(args, "output " + c.ToString() + " does not match the broadcast " +
                             params_internal::IntsToString(p.plan.output_dims()));
  p.same_shape = a == c.dims && b == c.dims;
  p.elements = c.elements();
  return p;
}

QLinearAddScales QLinearAddParams::Scales(const RunArgs& args) const {
  auto scale = [&](int i) { return *static_cast<const float*>(args.src[static_cast<size_t>(i)]); };
  auto zero = [&](int i) -> float {
    if (static_cast<size_t>(i) >= args.src.size() || args.src[static_cast<size_t>(i)] == nullptr)
      return 0.0f;
    return static_cast<float>(LoadInt(type, args.src[static_cast<size_t>(i)], 0));
  };
  QLinearAddScales s;
  s.a_ratio = scale(kQAddAScale) / scale(kQAddCScale);
  s.b_ratio = scale(kQAddBScale) / scale(kQAddCScale);
  // A scale computed at run time (constants are checked at Prepare) that is
  // zero, negative or not finite: ratios of 0, so the output is C's zero
  // point rather than a NaN cast to an integer.
  if (!std::isfinite(s.a_ratio) || !std::isfinite(s.b_ratio) || !(scale(kQAddCScale) > 0.0f))
    s.a_ratio = s.b_ratio = 0.0f;
  s.a_zp = zero(kQAddAZp);
  s.b_zp = zero(kQAddBZp);
  s.c_zp = zero(kQAddCZp);
  return s;
}

}  // namespace braid
