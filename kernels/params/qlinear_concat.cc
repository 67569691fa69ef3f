#include "kernels/params/qlinear_concat.h"

#include <string>
#include <utility>
#include <vector>

#include "kernels/params/parse_util.h"
#include "kernels/params/quantized.h"

namespace braid {

using params_internal::HasInput;
using params_internal::Invalid;

StatusOr<QLinearConcatParams> ParseQLinearConcat(const PrepareArgs& args) {
  if (args.node == nullptr) return InvalidArgument("kernel: PrepareArgs without node");
  const size_t n = args.inputs.size();
  if (n < 5 || (n - kQConcatFirstInput) % 3 != 0)
    return Invalid(args, "expects Y_scale, Y_zero_point and (X, X_scale, X_zero_point) per "
                         "input: 5, 8, 11, ... inputs, got " + std::to_string(n));
  for (size_t i = 0; i < n; ++i)
    if (!HasInput(args, i)) return Invalid(args, "input " + std::to_string(i) + " is missing");
  QLinearConcatParams p;
  p.type = args.inputs[kQConcatFirstInput].dtype;
  if (p.type != DataType::kU8 && p.type != DataType::kI8)
    return params_internal::Unsupported(
        args, std::string("X of type ") + DataTypeName(p.type) + " (int8 and uint8 are supported)");
  RETURN_IF_ERROR(CheckQuantizationParam(args, kQConcatYScale, "Y_scale", -1).status());
  RETURN_IF_ERROR(
      CheckQuantizationParam(args, kQConcatYZp, "Y_zero_point", kQConcatFirstInput).status());
  std::vector<size_t> data;
  for (size_t x = kQConcatFirstInput; x < n; x += 3) {
    const int xi = static_cast<int>(x);
    const std::string k = std::to_string(data.size() + 1);  // X_1, X_2, ...
    RETURN_IF_ERROR(CheckQuantizationParam(args, xi + 1, ("X_" + k + "_scale").c_str(), -1).status());
    RETURN_IF_ERROR(
        CheckQuantizationParam(args, xi + 2, ("X_" + k + "_zero_point").c_str(), xi).status());
    data.push_back(x);
  }
  // ParseConcatOf checks every X against the output's type and geometry.
  ASSIGN_OR_RETURN(p.concat, ParseConcatOf(args, std::move(data)));
  return p;
}

RequantizeScales QLinearConcatParams::Scales(const RunArgs& args, size_t k) const {
  const size_t x = concat.inputs[k];
  auto scale = [&](size_t i) { return *static_cast<const float*>(args.src[i]); };
  auto zero = [&](size_t i) { return static_cast<float>(LoadInt(type, args.src[i], 0)); };
  RequantizeScales s;
  s.x_scale = scale(x + 1);
  s.x_zp = zero(x + 2);
  s.y_scale = scale(kQConcatYScale);
  s.y_zp = zero(kQConcatYZp);
  s.copy = s.x_scale == s.y_scale && s.x_zp == s.y_zp;
  return s;
}

}  // namespace braid
