// Reference unary elementwise ops. One table row per op: its f32 function
// and, for Abs/Neg/Relu/Sign, integer versions (i32/i64, two's complement wrap
// for Neg/Abs of INT_MIN). HardSigmoid and LeakyRelu read alpha/beta at
// Prepare with their shared parsers; the other parameterised activations name
// their attributes and ONNX defaults in the row. Not (bool) and IsNaN / IsInf
// (f32 in, bool out) are their own small kernels.
#include <cmath>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "kernels/params/elementwise.h"
#include "kernels/params/parse_util.h"
#include "kernels/reference/data_kernel_util.h"

namespace braid::reference {
namespace {

using FloatFn = float (*)(float x, const AlphaBeta& p);

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

struct UnaryOpRow {
  const char* op_type;
  FloatFn f32;
  int32_t (*i32)(int32_t) = nullptr;  // null: f32 only
  int64_t (*i64)(int64_t) = nullptr;
  // Attributes read into AlphaBeta at Prepare (null: none), with defaults.
  const char* alpha_attr = nullptr;
  float alpha_default = 0;
  const char* beta_attr = nullptr;
  float beta_default = 0;
};

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
    {"Ceil", [](float x, const AlphaBeta&) { return std::ceil(x); }},
    {"Floor", [](float x, const AlphaBeta&) { return std::floor(x); }},
    // Halves to even (ONNX, numpy.round): nearbyint in the default rounding mode.
    {"Round", [](float x, const AlphaBeta&) { return std::nearbyint(x); }},
    {"Sign",
     [](float x, const AlphaBeta&) {
       return std::isnan(x) ? x : static_cast<float>((x > 0.0f) - (x < 0.0f));
     },
     &IntSign<int32_t>, &IntSign<int64_t>},
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

class UnaryKernel final : public Kernel {
 public:
  explicit UnaryKernel(const UnaryOpRow& row) : row_(row) {}

  Status Prepare(const PrepareArgs& args) override {
    RETURN_IF_ERROR(params_internal::CheckArity(args, 1, 1));
    const TensorDesc& in = args.inputs[0];
    RETURN_IF_ERROR(params_internal::CheckOutput(args, in.dims, in.dtype));
    const std::string_view op = row_.op_type;
    if (op == "HardSigmoid") params_ = ParseHardSigmoid(args);
    if (op == "LeakyRelu") params_.alpha = ParseLeakyReluAlpha(args);
    if (row_.alpha_attr != nullptr)
      params_.alpha = args.node->attrs.GetFloat(row_.alpha_attr, row_.alpha_default);
    if (row_.beta_attr != nullptr)
      params_.beta = args.node->attrs.GetFloat(row_.beta_attr, row_.beta_default);
    if (op == "Celu" && params_.alpha == 0.0f)
      return params_internal::Invalid(args, "alpha 0 (Celu divides by alpha)");
    if (op == "Gelu") {
      ASSIGN_OR_RETURN(const bool tanh, ParseGeluTanh(args));
      params_.alpha = tanh ? 1.0f : 0.0f;
    }
    elements_ = in.elements();
    switch (in.dtype) {
      case DataType::kF32: run_ = &RunF32; break;
      case DataType::kI32:
        if (row_.i32 == nullptr) return UnsupportedDtype(args, in.dtype);
        run_ = &RunInt<int32_t>;
        break;
      case DataType::kI64:
        if (row_.i64 == nullptr) return UnsupportedDtype(args, in.dtype);
        run_ = &RunInt<int64_t>;
        break;
      default: return UnsupportedDtype(args, in.dtype);
    }
    return Status::Ok();
  }

  Status Run(const RunArgs& args) override {
    run_(*this, args);
    return Status::Ok();
  }

 private:
  static void RunF32(const UnaryKernel& k, const RunArgs& args) {
    const float* x = static_cast<const float*>(args.src[0]);
    float* y = static_cast<float*>(args.dst[0]);
    for (int64_t i = 0; i < k.elements_; ++i) y[i] = k.row_.f32(x[i], k.params_);
  }
  template <typename T>
  static void RunInt(const UnaryKernel& k, const RunArgs& args) {
    const T* x = static_cast<const T*>(args.src[0]);
    T* y = static_cast<T*>(args.dst[0]);
    T (*fn)(T);
    if constexpr (std::is_same_v<T, int32_t>) fn = k.row_.i32;
    else fn = k.row_.i64;
    for (int64_t i = 0; i < k.elements_; ++i) y[i] = fn(x[i]);
  }

  const UnaryOpRow& row_;
  AlphaBeta params_;
  int64_t elements_ = 0;
  void (*run_)(const UnaryKernel&, const RunArgs&) = nullptr;
};

// Not: bool in, bool out.
class NotKernel final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override {
    RETURN_IF_ERROR(params_internal::CheckArity(args, 1, 1));
    if (args.inputs[0].dtype != DataType::kBool)
      return params_internal::Invalid(
          args, std::string("input must be bool, is ").append(args.inputs[0].ToString()));
    RETURN_IF_ERROR(params_internal::CheckOutput(args, args.inputs[0].dims, DataType::kBool));
    elements_ = args.inputs[0].elements();
    return Status::Ok();
  }
  Status Run(const RunArgs& args) override {
    const uint8_t* x = static_cast<const uint8_t*>(args.src[0]);
    uint8_t* y = static_cast<uint8_t*>(args.dst[0]);
    for (int64_t i = 0; i < elements_; ++i) y[i] = x[i] == 0 ? 1 : 0;
    return Status::Ok();
  }

 private:
  int64_t elements_ = 0;
};

// IsNaN, and IsInf with detect_positive / detect_negative (default 1 each):
// f32 in, bool out.
class FloatClassKernel final : public Kernel {
 public:
  explicit FloatClassKernel(bool nan) : nan_(nan) {}

  Status Prepare(const PrepareArgs& args) override {
    RETURN_IF_ERROR(params_internal::CheckArity(args, 1, 1));
    if (args.inputs[0].dtype != DataType::kF32) return UnsupportedDtype(args, args.inputs[0].dtype);
    RETURN_IF_ERROR(params_internal::CheckOutput(args, args.inputs[0].dims, DataType::kBool));
    const IsInfParams p = ParseIsInf(args);
    positive_ = p.positive;
    negative_ = p.negative;
    elements_ = args.inputs[0].elements();
    return Status::Ok();
  }
  Status Run(const RunArgs& args) override {
    const float* x = static_cast<const float*>(args.src[0]);
    uint8_t* y = static_cast<uint8_t*>(args.dst[0]);
    for (int64_t i = 0; i < elements_; ++i) {
      const bool hit = nan_ ? std::isnan(x[i])
                            : std::isinf(x[i]) && (x[i] > 0 ? positive_ : negative_);
      y[i] = hit ? 1 : 0;
    }
    return Status::Ok();
  }

 private:
  bool nan_;
  bool positive_ = true, negative_ = true;
  int64_t elements_ = 0;
};

}  // namespace

void RegisterUnaryKernels(KernelRegistry& registry) {
  registry.Register(KernelEntry{"Not", DeviceKind::kCpu, "reference", 0,
                                [] { return std::make_unique<NotKernel>(); }});
  registry.Register(KernelEntry{"IsNaN", DeviceKind::kCpu, "reference", 0,
                                [] { return std::make_unique<FloatClassKernel>(true); }});
  registry.Register(KernelEntry{"IsInf", DeviceKind::kCpu, "reference", 0,
                                [] { return std::make_unique<FloatClassKernel>(false); }});
  for (const UnaryOpRow& row : kUnaryOps) {
    const UnaryOpRow* r = &row;
    registry.Register(KernelEntry{row.op_type, DeviceKind::kCpu, "reference", 0,
                                  [r] { return std::make_unique<UnaryKernel>(*r); }});
  }
}

}  // namespace braid::reference
