// The fused activation that FuseActivations records on Conv / Gemm / MatMul / Add
// nodes (docs/ir.md: "activation", "activation_min"/"activation_max",
// "activation_alpha"/"activation_beta", "activation_approximate"), parsed once
// at Prepare.
//
//   ASSIGN_OR_RETURN(Activation act, ParseFusedActivation(args));
//   ...
//   y[i] = act.Apply(acc + bias);        // after the bias, per element
//   act.ApplyInPlace(y, count);          // or over a whole row
//
// Kind::kNone (no "activation" attribute) makes Apply the identity.
#ifndef BRAID_KERNELS_PARAMS_ACTIVATION_H_
#define BRAID_KERNELS_PARAMS_ACTIVATION_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/backend.h"

namespace braid {

struct Activation {
  enum class Kind {
    kNone,
    kRelu,
    kClip,
    kHardSwish,
    kSigmoid,
    kSiLU,
    kHardSigmoid,
    kLeakyRelu,
    kGelu,  // alpha 0: 0.5 v (1 + erf(v / sqrt 2)); alpha 1: the tanh form
  };
  Kind kind = Kind::kNone;
  float alpha = 0.0f;  // HardSigmoid slope, LeakyRelu negative slope, Gelu 1 = tanh
  float beta = 0.0f;   // HardSigmoid offset
  float min = -std::numeric_limits<float>::max();  // Clip bounds (ONNX defaults)
  float max = std::numeric_limits<float>::max();

  bool none() const { return kind == Kind::kNone; }
  // The attribute spelling: "Relu", "Clip", ...; "none" for kNone.
  const char* Name() const;

  float Apply(float x) const {
    switch (kind) {
      case Kind::kNone: return x;
      // NaN propagates through every kind, as in ONNX Runtime's unfused ops:
      // a comparison with NaN is false, so each kind tests for it.
      case Kind::kRelu: return x > 0.0f || x != x ? x : 0.0f;
      case Kind::kClip: return std::min(std::max(x, min), max);
      case Kind::kHardSwish:
        return x * std::max(0.0f, std::min(1.0f, x / 6.0f + 0.5f));
      case Kind::kSigmoid: return 1.0f / (1.0f + std::exp(-x));
      case Kind::kSiLU: return x / (1.0f + std::exp(-x));
      case Kind::kHardSigmoid: {
        const float v = alpha * x + beta;
        return v != v ? v : std::max(0.0f, std::min(1.0f, v));
      }
      case Kind::kLeakyRelu: return x >= 0.0f ? x : alpha * x;
      case Kind::kGelu:
        if (alpha == 0.0f) return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f));
        return 0.5f * x * (1.0f + std::tanh(0.79788456080286536f * (x + 0.044715f * x * x * x)));
    }
    return x;
  }
  void ApplyInPlace(float* data, int64_t count) const {
    if (kind == Kind::kNone) return;
    for (int64_t i = 0; i < count; ++i) data[i] = Apply(data[i]);
  }
};

// Reads the fused-activation attributes of args.node. Missing parameters take
// the ONNX defaults of the unfused op (Clip: -FLT_MAX/FLT_MAX, HardSigmoid: 0.2/0.5,
// LeakyRelu: 0.01). An unknown "activation" name or Clip min > max is
// InvalidArgument naming the node.
StatusOr<Activation> ParseFusedActivation(const PrepareArgs& args);

}  // namespace braid

#endif  // BRAID_KERNELS_PARAMS_ACTIVATION_H_
