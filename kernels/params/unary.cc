#include "kernels/params/unary.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "kernels/params/parse_util.h"

namespace braid {
namespace {

template <typename T>
T NegWrap(T x) {
  return static_cast<T>(0 - static_cast<std::make_unsigned_t<T>>(x));
}
template <typename T>
T IntNeg(T x) { return NegWrap(x); }
template <typename T>
T IntAbs(T x) { return x < 0 ? NegWrap(x) : x; }
template <typename T>
T IntRelu(T x) { return x > 0 ? x : 0; }
template <typename T>
T IntSign(T x) { return static_cast<T>((x > 0) - (x < 0)); }
template <typename T>
T IntSame(T x) { return x; }  // Ceil / Floor / Round of an integer


// log(1 + e^x) without overflow for large x.
float Softplus(float x) {
  return std::fmax(x, 0.0f) + std::log1p(std::exp(-std::fabs(x)));
}

const UnaryOpRow kUnaryOps[] = {
    // NaN stays NaN (ONNX Runtime's Relu); `x > 0 ? x : 0` would make it 0.
    {"Relu", [](float x, const AlphaBeta&) { return std::isnan(x) || x > 0.0f ? x : 0.0f; },
     &IntRelu<int32_t>, &IntRelu<int64_t>},
    {"Sigmoid", [](float x, const AlphaBeta&) { return 1.0f / (1.0f + std::exp(-x)); }},
    {"Tanh", [](float x, const AlphaBeta&) { return std::tanh(x); }},
    {"Exp", [](float x, const AlphaBeta&) { return std::exp(x); }},
    {"Log", [](float x, const AlphaBeta&) { return std::log(x); }},
    {"Abs", [](float x, const AlphaBeta&) { return std::fabs(x); },
     &IntAbs<int32_t>, &IntAbs<int64_t>},
    {"Neg", [](float x, const AlphaBeta&) { return -x; }, &IntNeg<int32_t>,
     &IntNeg<int64_t>},
    {"Sqrt", [](float x, const AlphaBeta&) { return std::sqrt(x); }},
    {"Reciprocal", [](float x, const AlphaBeta&) { return 1.0f / x; }},
    {"Erf", [](float x, const AlphaBeta&) { return std::erf(x); }},
    // alpha 0: 0.5 x (1 + erf(x / sqrt 2)); alpha 1: the tanh approximation.
    {"Gelu",
     [](float x, const AlphaBeta& p) {
       const double v = x;
       if (p.alpha == 0) return static_cast<float>(0.5 * v * (1.0 + std::erf(v * M_SQRT1_2)));
       const double inner = std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v);
       return static_cast<float>(0.5 * v * (1.0 + std::tanh(inner)));
     }},
    {"HardSigmoid",
     [](float x, const AlphaBeta& p) {
       // fmin/fmax drop a NaN operand; ONNX Runtime's HardSigmoid keeps it.
       const float v = p.alpha * x + p.beta;
       return std::isnan(v) ? v : std::fmax(0.0f, std::fmin(1.0f, v));
     }},
    {"HardSwish",
     [](float x, const AlphaBeta&) {
       return x * std::fmax(0.0f, std::fmin(1.0f, x / 6.0f + 0.5f));
     }},
    {"LeakyRelu",
     [](float x, const AlphaBeta& p) { return x >= 0.0f ? x : p.alpha * x; }},
    {"Sin", [](float x, const AlphaBeta&) { return std::sin(x); }},
    {"Cos", [](float x, const AlphaBeta&) { return std::cos(x); }},
    {"Ceil", [](float x, const AlphaBeta&) { return CeilOf(x); }},
    {"Floor", [](float x, const AlphaBeta&) { return FloorOf(x); }},
    {"Round", [](float x, const AlphaBeta&) { return RoundHalfToEven(x); }},
    {"Sign", [](float x, const AlphaBeta&) { return SignOf(x); }, &IntSign<int32_t>,
     &IntSign<int64_t>},
    {"Tan", [](float x, const AlphaBeta&) { return std::tan(x); }},
    {"Asin", [](float x, const AlphaBeta&) { return std::asin(x); }},
    {"Acos", [](float x, const AlphaBeta&) { return std::acos(x); }},
    {"Atan", [](float x, const AlphaBeta&) { return std::atan(x); }},
    {"Sinh", [](float x, const AlphaBeta&) { return std::sinh(x); }},
    {"Cosh", [](float x, const AlphaBeta&) { return std::cosh(x); }},
    {"Asinh", [](float x, const AlphaBeta&) { return std::asinh(x); }},
    {"Acosh", [](float x, const AlphaBeta&) { return std::acosh(x); }},
    {"Atanh", [](float x, const AlphaBeta&) { return std::atanh(x); }},
    {"Softplus", [](float x, const AlphaBeta&) { return Softplus(x); }},
    {"Softsign", [](float x, const AlphaBeta&) { return x / (1.0f + std::fabs(x)); }},
    {"Mish", [](float x, const AlphaBeta&) { return x * std::tanh(Softplus(x)); }},
    {.op_type = "Elu",
     .f32 = [](float x, const AlphaBeta& p) { return x < 0.0f ? p.alpha * std::expm1(x) : x; },
     .alpha_attr = "alpha",
     .alpha_default = 1.0f},
    // Celu: max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).
    {.op_type = "Celu",
     .f32 =
         [](float x, const AlphaBeta& p) {
           // fmax/fmin would turn NaN into 0; ONNX Runtime's Celu keeps it.
           if (std::isnan(x)) return x;
           return std::fmax(0.0f, x) + std::fmin(0.0f, p.alpha * std::expm1(x / p.alpha));
         },
     .alpha_attr = "alpha",
     .alpha_default = 1.0f},
    // Selu: gamma * (x > 0 ? x : alpha * (e^x - 1)); gamma is read into beta.
    {.op_type = "Selu",
     .f32 =
         [](float x, const AlphaBeta& p) {
           return p.beta * (x > 0.0f ? x : p.alpha * std::expm1(x));
         },
     .alpha_attr = "alpha",
     .alpha_default = 1.67326319217681884765625f,
     .beta_attr = "gamma",
     .beta_default = 1.05070102214813232421875f},
    {.op_type = "ThresholdedRelu",
     .f32 = [](float x, const AlphaBeta& p) { return x > p.alpha ? x : 0.0f; },
     .alpha_attr = "alpha",
     .alpha_default = 1.0f},
    // Shrink: x + bias below -lambd, x - bias above lambd, else 0; lambd is
    // read into alpha, bias into beta.
    {.op_type = "Shrink",
     .f32 =
         [](float x, const AlphaBeta& p) {
           return x < -p.alpha ? x + p.beta : x > p.alpha ? x - p.beta : 0.0f;
         },
     .alpha_attr = "lambd",
     .alpha_default = 0.5f,
     .beta_attr = "bias",
     .beta_default = 0.0f},
};

}  // namespace

std::span<const UnaryOpRow> UnaryOps() { return kUnaryOps; }

const UnaryOpRow* FindUnaryOp(std::string_view op_type) {
  for (const UnaryOpRow& row : kUnaryOps)
    if (op_type == row.op_type) return &row;
  return nullptr;
}

StatusOr<AlphaBeta> ParseUnary(const PrepareArgs& args, const UnaryOpRow& row) {
  RETURN_IF_ERROR(params_internal::CheckArity(args, 1, 1));
  const TensorDesc& in = args.inputs[0];
  RETURN_IF_ERROR(params_internal::CheckOutput(args, in.dims, in.dtype));
  AlphaBeta p;
  const std::string_view op = row.op_type;
  if (op == "HardSigmoid") p = ParseHardSigmoid(args);
  if (op == "LeakyRelu") p.alpha = ParseLeakyReluAlpha(args);
  if (row.alpha_attr != nullptr) p.alpha = args.node->attrs.GetFloat(row.alpha_attr, row.alpha_default);
  if (row.beta_attr != nullptr) p.beta = args.node->attrs.GetFloat(row.beta_attr, row.beta_default);
  if (op == "Celu" && p.alpha == 0.0f)
    return params_internal::Invalid(args, "alpha 0 (Celu divides by alpha)");
  if (op == "Gelu") {
    ASSIGN_OR_RETURN(const bool tanh, ParseGeluTanh(args));
    p.alpha = tanh ? 1.0f : 0.0f;
  }
  return p;
}

}  // namespace braid
