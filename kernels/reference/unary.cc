// Reference unary elementwise ops. One table row per op: its f32 function
// and, for Abs/Neg/Relu/Sign, integer versions (i32/i64, two's complement wrap
// for Neg/Abs of INT_MIN). HardSigmoid and LeakyRelu read alpha/beta at Prepare.
// Not (bool) is its own small kernel.
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
};

const UnaryOpRow kUnaryOps[] = {
    {"Relu", [](float x, const AlphaBeta&) { return x > 0.0f ? x : 0.0f; },
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
       return std::fmax(0.0f, std::fmin(1.0f, p.alpha * x + p.beta));
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

}  // namespace

void RegisterUnaryKernels(KernelRegistry& registry) {
  registry.Register(KernelEntry{"Not", DeviceKind::kCpu, "reference", 0,
                                [] { return std::make_unique<NotKernel>(); }});
  for (const UnaryOpRow& row : kUnaryOps) {
    const UnaryOpRow* r = &row;
    registry.Register(KernelEntry{row.op_type, DeviceKind::kCpu, "reference", 0,
                                  [r] { return std::make_unique<UnaryKernel>(*r); }});
  }
}

}  // namespace braid::reference
