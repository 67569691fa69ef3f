// com.microsoft.QLinearConcat (ONNX Runtime's contrib op, and what FoldQdq
// makes of Q(Concat(DQ(x_1), ..., DQ(x_n)))): inputs
//   Y_scale, Y_zero_point, then X_i, X_i_scale, X_i_zero_point for each i,
// u8 or i8 tensors of one type, every parameter per tensor, Concat's `axis`.
// Each input is requantized to Y's parameters as DequantizeLinear then
// QuantizeLinear compute it (kernels/params/quantize.h), so the fused op
// equals the QDQ graph it replaces bit for bit:
//   y = saturate(round_half_even(((x - x_zp) * x_scale) / y_scale) + y_zp)
// An input whose scale and zero point are Y's is copied.
//
//   ASSIGN_OR_RETURN(QLinearConcatParams p, ParseQLinearConcat(args));
//   const RequantizeScales s = p.Scales(args, k);   // at Run: input k's
//   y[i] = s.copy ? x[i] : RequantizeElement<uint8_t>(s, x[i]);
#ifndef BRAID_KERNELS_PARAMS_QLINEAR_CONCAT_H_
#define BRAID_KERNELS_PARAMS_QLINEAR_CONCAT_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/backend.h"
#include "kernels/params/data_ops.h"

namespace braid {

inline constexpr int kQConcatYScale = 0, kQConcatYZp = 1, kQConcatFirstInput = 2;

// One input's requantization to the output's parameters.
struct RequantizeScales {
  float x_scale = 1, x_zp = 0, y_scale = 1, y_zp = 0;
  bool copy = false;  // the same scale and zero point: the bytes as they are

  bool operator==(const RequantizeScales&) const = default;
};

struct QLinearConcatParams {
  DataType type = DataType::kU8;
  ConcatParams concat;  // concat.inputs: the X_i's node input indices

  // Input k's (0-based among the concatenated tensors) parameters, read from
  // the scale and zero-point tensors at Run.
  RequantizeScales Scales(const RunArgs& args, size_t k) const;
};

// Validates the arity (2 + 3n inputs, n >= 1), types (u8 / i8 tensors and
// zero points of one type, f32 scales), per-tensor parameters, finite
// positive constant scales and Concat's geometry; errors are InvalidArgument
// naming the node.
StatusOr<QLinearConcatParams> ParseQLinearConcat(const PrepareArgs& args);

template <typename Q>
inline Q RequantizeElement(const RequantizeScales& s, Q x) {
  constexpr float kLo = static_cast<float>(std::numeric_limits<Q>::min());
  constexpr float kHi = static_cast<float>(std::numeric_limits<Q>::max());
  const float dequantized = (static_cast<float>(x) - s.x_zp) * s.x_scale;
  const float v = std::nearbyint(dequantized / s.y_scale) + s.y_zp;
  // NaN (a zero or non-finite scale computed at run time) gives 0, as
  // QuantizeLinear does.
  return std::isnan(v) ? Q{0} : static_cast<Q>(std::clamp(v, kLo, kHi));
}

// The 256 results of RequantizeElement for `type` (u8 / i8), indexed by the
// input's byte (an i8 input's two's-complement bits): the whole map of a
// one-byte requantization, for table lookups.
inline void RequantizeTable(const RequantizeScales& s, DataType type, uint8_t table[256]) {
  for (int b = 0; b < 256; ++b)
    table[b] = type == DataType::kI8
                   ? static_cast<uint8_t>(RequantizeElement<int8_t>(s, static_cast<int8_t>(b)))
                   : RequantizeElement<uint8_t>(s, static_cast<uint8_t>(b));
}

}  // namespace braid

#endif  // BRAID_KERNELS_PARAMS_QLINEAR_CONCAT_H_
