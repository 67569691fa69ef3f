// Per-element work of the CUDA elementwise kernels (elementwise.cu): unary
// ops, broadcasting binary ops, Where, the bias + activation epilogue of
// Conv / Gemm / MatMul, BatchNormalization (inference), and QuantizeLinear /
// DequantizeLinear.
//
//   y[i] = dm::UnaryElement(args, x[i]);
//   dm::BinaryElement(args, i, a, b, y);   // broadcast through args.index
#ifndef BRAID_KERNELS_DEVICE_MATH_ELEMENTWISE_H_
#define BRAID_KERNELS_DEVICE_MATH_ELEMENTWISE_H_

#include "kernels/device_math/common.h"

namespace braid::dm {

enum class UnaryOp : int {
  kRelu, kSigmoid, kTanh, kExp, kLog, kAbs, kNeg, kSqrt, kReciprocal, kErf,
  kHardSigmoid, kHardSwish, kLeakyRelu, kClip, kGelu,
  kSoftplus, kSoftsign, kMish, kElu, kCelu, kSelu, kThresholdedRelu, kShrink,
  kSin, kCos, kTan, kAsin, kAcos, kAtan, kSinh, kCosh, kAsinh, kAcosh, kAtanh,
  kCeil, kFloor, kRound, kSign,
};

struct UnaryArgs {
  UnaryOp op = UnaryOp::kRelu;
  // HardSigmoid, LeakyRelu, Elu, Celu, ThresholdedRelu; Selu: alpha, gamma in
  // beta; Shrink: lambd, bias in beta; Gelu: alpha 1 = tanh form.
  float alpha = 0, beta = 0;
  float min = -INFINITY, max = INFINITY;  // Clip
  int64_t elements = 0;
};

// log(1 + e^x) without overflow for large x (as kernels/reference).
BRAID_HD float SoftplusValue(float x) { return fmaxf(x, 0.0f) + log1pf(expf(-fabsf(x))); }

BRAID_HD float UnaryElement(const UnaryArgs& a, float x) {
  switch (a.op) {
    // NaN propagates (ONNX Runtime): fmaxf / fminf would drop it.
    case UnaryOp::kRelu: return x > 0.0f || x != x ? x : 0.0f;
    case UnaryOp::kSigmoid: return 1.0f / (1.0f + expf(-x));
    case UnaryOp::kTanh: return tanhf(x);
    case UnaryOp::kExp: return expf(x);
    case UnaryOp::kLog: return logf(x);
    case UnaryOp::kAbs: return fabsf(x);
    case UnaryOp::kNeg: return -x;
    case UnaryOp::kSqrt: return sqrtf(x);
    case UnaryOp::kReciprocal: return 1.0f / x;
    case UnaryOp::kErf: return erff(x);
    case UnaryOp::kHardSigmoid:
      return x != x ? x : fmaxf(0.0f, fminf(1.0f, a.alpha * x + a.beta));
    case UnaryOp::kHardSwish: return x * fmaxf(0.0f, fminf(1.0f, x / 6.0f + 0.5f));
    case UnaryOp::kLeakyRelu: return x >= 0.0f ? x : a.alpha * x;
    case UnaryOp::kClip: {
      // min(max(x, lo), hi): crossed bounds (lo > hi) give hi; NaN passes.
      const float low = x < a.min ? a.min : x;
      return low > a.max ? a.max : low;
    }
    case UnaryOp::kGelu:
      if (a.alpha == 0.0f) return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
      return 0.5f * x * (1.0f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));
    // The rest as kernels/reference/unary.cc writes them (NaN kept where it does).
    case UnaryOp::kSoftplus: return SoftplusValue(x);
    case UnaryOp::kSoftsign: return x / (1.0f + fabsf(x));
    case UnaryOp::kMish: return x * tanhf(SoftplusValue(x));
    case UnaryOp::kElu: return x < 0.0f ? a.alpha * expm1f(x) : x;
    case UnaryOp::kCelu:
      return x != x ? x : fmaxf(0.0f, x) + fminf(0.0f, a.alpha * expm1f(x / a.alpha));
    case UnaryOp::kSelu: return a.beta * (x > 0.0f ? x : a.alpha * expm1f(x));
    case UnaryOp::kThresholdedRelu: return x > a.alpha ? x : 0.0f;
    case UnaryOp::kShrink: return x < -a.alpha ? x + a.beta : (x > a.alpha ? x - a.beta : 0.0f);
    case UnaryOp::kSin: return sinf(x);
    case UnaryOp::kCos: return cosf(x);
    case UnaryOp::kTan: return tanf(x);
    case UnaryOp::kAsin: return asinf(x);
    case UnaryOp::kAcos: return acosf(x);
    case UnaryOp::kAtan: return atanf(x);
    case UnaryOp::kSinh: return sinhf(x);
    case UnaryOp::kCosh: return coshf(x);
    case UnaryOp::kAsinh: return asinhf(x);
    case UnaryOp::kAcosh: return acoshf(x);
    case UnaryOp::kAtanh: return atanhf(x);
    case UnaryOp::kCeil: return ceilf(x);
    case UnaryOp::kFloor: return floorf(x);
    case UnaryOp::kRound: return rintf(x);  // halves to even
    case UnaryOp::kSign: return x != x ? x : static_cast<float>((x > 0.0f) - (x < 0.0f));
  }
  return x;
}

enum class BinaryOp : int {
  kAdd, kSub, kMul, kDiv, kPow, kMin, kMax, kEqual,
  kGreater, kLess, kGreaterOrEqual, kLessOrEqual,  // bool outputs, as kEqual
  kPRelu,  // a: x, b: slope
  kFmod,   // Mod with fmod=1 (the sign of the dividend)
};

// The comparisons write bool (uint8) outputs; every other op float.
BRAID_HD bool BinaryWritesBool(BinaryOp op) {
  return op == BinaryOp::kEqual || op == BinaryOp::kGreater || op == BinaryOp::kLess ||
         op == BinaryOp::kGreaterOrEqual || op == BinaryOp::kLessOrEqual;
}

struct BinaryArgs {
  BinaryOp op = BinaryOp::kAdd;
  int64_t elements = 0;
  StridedIndex<2> index;  // operand 0: a, operand 1: b
  ActivationArgs activation;  // fused (docs/ir.md); never set for a comparison
};

BRAID_HD float BinaryValue(BinaryOp op, float a, float b) {
  switch (op) {
    case BinaryOp::kAdd: return a + b;
    case BinaryOp::kSub: return a - b;
    case BinaryOp::kMul: return a * b;
    case BinaryOp::kDiv: return a / b;
    case BinaryOp::kPow: return powf(a, b);
    // NaN propagates (numpy.minimum / maximum), as in the reference.
    case BinaryOp::kMin: return (a != a || b != b) ? a + b : (b < a ? b : a);
    case BinaryOp::kMax: return (a != a || b != b) ? a + b : (a < b ? b : a);
    case BinaryOp::kEqual: return a == b ? 1.0f : 0.0f;
    case BinaryOp::kGreater: return a > b ? 1.0f : 0.0f;
    case BinaryOp::kLess: return a < b ? 1.0f : 0.0f;
    case BinaryOp::kGreaterOrEqual: return a >= b ? 1.0f : 0.0f;
    case BinaryOp::kLessOrEqual: return a <= b ? 1.0f : 0.0f;
    case BinaryOp::kPRelu: return a < 0.0f ? a * b : a;
    case BinaryOp::kFmod: return fmodf(a, b);
  }
  return 0.0f;
}

// Comparisons write bool (uint8) outputs; every other op float, through the
// fused activation (kind 0, none, unless the node carries one).
BRAID_HD void BinaryElement(const BinaryArgs& args, int64_t i, const float* a,
                            const float* b, void* y) {
  int64_t at[2];
  args.index.Offsets(i, at);
  const float v = BinaryValue(args.op, a[at[0]], b[at[1]]);
  if (BinaryWritesBool(args.op))
    static_cast<uint8_t*>(y)[i] = v != 0.0f ? 1 : 0;
  else
    static_cast<float*>(y)[i] = ApplyActivation(args.activation, v);
}

// Sum / Mean / Max / Min of 1..kMaxVariadicInputs broadcast inputs
// (operand k: input k), folded left to right as kernels/reference/binary.cc
// folds them: op is kAdd (Sum, Mean), kMin or kMax; Mean divides the sum by
// the count. The input pointers travel beside the args (VariadicInputs).
constexpr int kMaxVariadicInputs = 8;

struct VariadicArgs {
  BinaryOp op = BinaryOp::kAdd;
  int inputs = 1;
  bool mean = false;
  int64_t elements = 0;
  StridedIndex<kMaxVariadicInputs> index;
  ActivationArgs activation;  // fused (Sum / Max / Min, as the reference)
};
struct VariadicInputs {
  const float* x[kMaxVariadicInputs] = {};
};

BRAID_HD void VariadicElement(const VariadicArgs& args, int64_t i, const VariadicInputs& in,
                              float* y) {
  int64_t at[kMaxVariadicInputs];
  args.index.Offsets(i, at);
  float acc = in.x[0][at[0]];
  for (int k = 1; k < args.inputs; ++k) acc = BinaryValue(args.op, acc, in.x[k][at[k]]);
  if (args.mean) acc /= static_cast<float>(args.inputs);
  y[i] = ApplyActivation(args.activation, acc);
}

// And / Or / Xor of bools (any non-zero byte is true), numpy broadcasting
// through index (operand 0 a, 1 b); bool out.
enum class LogicalOp : int { kAnd, kOr, kXor };

struct LogicalArgs {
  LogicalOp op = LogicalOp::kAnd;
  int64_t elements = 0;
  StridedIndex<2> index;
};

BRAID_HD void LogicalElement(const LogicalArgs& args, int64_t i, const uint8_t* a,
                             const uint8_t* b, uint8_t* y) {
  int64_t at[2];
  args.index.Offsets(i, at);
  const bool p = a[at[0]] != 0, q = b[at[1]] != 0;
  bool v = p != q;  // kXor
  if (args.op == LogicalOp::kAnd) v = p && q;
  if (args.op == LogicalOp::kOr) v = p || q;
  y[i] = v ? 1 : 0;
}

// Not (bool in), IsNaN and IsInf (f32 in): one element in, one bool out.
// IsInf reports +Inf with detect_positive and -Inf with detect_negative.
enum class PredicateOp : int { kNot, kIsNaN, kIsInf };

struct PredicateArgs {
  PredicateOp op = PredicateOp::kNot;
  int64_t elements = 0;
  bool detect_positive = true, detect_negative = true;
};

BRAID_HD void PredicateElement(const PredicateArgs& args, int64_t i, const void* x,
                               uint8_t* y) {
  if (args.op == PredicateOp::kNot) {
    y[i] = static_cast<const uint8_t*>(x)[i] == 0 ? 1 : 0;
    return;
  }
  const float v = static_cast<const float*>(x)[i];
  const bool hit = args.op == PredicateOp::kIsNaN
                       ? v != v
                       : (v == INFINITY && args.detect_positive) ||
                             (v == -INFINITY && args.detect_negative);
  y[i] = hit ? 1 : 0;
}

// Where(cond, x, y): operands 0 cond (bool), 1 x, 2 y.
struct WhereArgs {
  int64_t elements = 0;
  StridedIndex<3> index;
};

BRAID_HD void WhereElement(const WhereArgs& args, int64_t i, const uint8_t* cond,
                           const float* x, const float* y, float* out) {
  int64_t at[3];
  args.index.Offsets(i, at);
  out[i] = cond[at[0]] ? x[at[1]] : y[at[2]];
}

// y = act(y * alpha_y + bias[...]): the epilogue after cuDNN / cuBLAS. Bias
// broadcasts through index operand 0 (stride 0 where repeated); `y_scale`
// lets Gemm apply beta * C (bias_scale) after alpha * A * B.
struct EpilogueArgs {
  int64_t elements = 0;
  bool has_bias = false;
  float bias_scale = 1.0f;
  StridedIndex<1> bias_index;
  ActivationArgs activation;
};

BRAID_HD void EpilogueElement(const EpilogueArgs& args, int64_t i, const float* bias,
                              float* y) {
  float v = y[i];
  if (args.has_bias) v += args.bias_scale * bias[args.bias_index.Offset(i)];
  y[i] = ApplyActivation(args.activation, v);
}

// BatchNormalization (inference): x viewed as [batch, channels, spatial].
struct BatchNormArgs {
  int64_t elements = 0;
  int64_t channels = 1;
  int64_t spatial = 1;
  float epsilon = 1e-5f;
};

BRAID_HD void BatchNormElement(const BatchNormArgs& args, int64_t i, const float* x,
                               const float* scale, const float* bias, const float* mean,
                               const float* var, float* y) {
  const int64_t c = (i / args.spatial) % args.channels;
  y[i] = scale[c] * (x[i] - mean[c]) / sqrtf(var[c] + args.epsilon) + bias[c];
}

// QuantizeLinear / DequantizeLinear, per tensor or per axis (the loops of
// kernels/params/quantize.h): parameter index k = (i / inner) % axis_size.
enum class QuantizedType : int { kU8, kI8, kI32 };  // i32: DequantizeLinear only

struct QuantizeArgs {
  int64_t elements = 0;
  int64_t inner = 1;
  int64_t axis_size = 1;
  bool per_axis = false;
  bool has_zero_point = false;
};

BRAID_HD int64_t QuantizeParamIndex(const QuantizeArgs& a, int64_t i) {
  return a.per_axis ? (i / a.inner) % a.axis_size : 0;
}

// y = saturate(round_half_even(x / scale) + zero_point); NaN gives 0 (as the
// CPU kernels and ONNX Runtime on x86). rintf rounds half to even.
template <typename Q>
BRAID_HD void QuantizeElement(const QuantizeArgs& a, int64_t i, const float* x,
                              const float* scale, const Q* zero_point, Q* y, float lo,
                              float hi) {
  const int64_t k = QuantizeParamIndex(a, i);
  const float v =
      rintf(x[i] / scale[k]) + (a.has_zero_point ? static_cast<float>(zero_point[k]) : 0.0f);
  y[i] = v != v ? Q(0) : static_cast<Q>(v < lo ? lo : (v > hi ? hi : v));
}

// y = (x - zero_point) * scale.
template <typename Q>
BRAID_HD void DequantizeElement(const QuantizeArgs& a, int64_t i, const Q* x, const float* scale,
                                const Q* zero_point, float* y) {
  const int64_t k = QuantizeParamIndex(a, i);
  const int64_t zp = a.has_zero_point ? static_cast<int64_t>(zero_point[k]) : 0;
  y[i] = static_cast<float>(static_cast<int64_t>(x[i]) - zp) * scale[k];
}

}  // namespace braid::dm

#endif  // BRAID_KERNELS_DEVICE_MATH_ELEMENTWISE_H_
