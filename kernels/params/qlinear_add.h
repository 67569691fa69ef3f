// com.microsoft.QLinearAdd (ONNX Runtime's contrib op, and what FoldQdq makes
// of Q(Add(DQ(a), DQ(b)))): u8 or i8 A and B, broadcast as Add, every scale
// and zero point per tensor (absent zero points are 0):
//   c = saturate(round_half_even((a - a_zp) * (a_scale / c_scale)
//                                + (b - b_zp) * (b_scale / c_scale)) + c_zp)
// in float, the form of ONNX Runtime's scalar path (its x86 MLAS kernels use
// fixed-point multipliers, so results may differ from ONNX Runtime's by one
// step near a rounding tie). The element function is here, shared by the
// reference kernel and braid's CPU kernel (which agree bit for bit).
//
//   ASSIGN_OR_RETURN(QLinearAddParams p, ParseQLinearAdd(args));
//   const QLinearAddScales s = p.Scales(args);   // at Run: the parameter tensors
//   y[i] = QLinearAddElement<uint8_t>(s, a[i], b[i]);
#ifndef BRAID_KERNELS_PARAMS_QLINEAR_ADD_H_
#define BRAID_KERNELS_PARAMS_QLINEAR_ADD_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/backend.h"
#include "kernels/params/broadcast.h"

namespace braid {

// Input indices of the operands and parameters.
inline constexpr int kQAddA = 0, kQAddAScale = 1, kQAddAZp = 2, kQAddB = 3, kQAddBScale = 4,
                     kQAddBZp = 5, kQAddCScale = 6, kQAddCZp = 7;

struct QLinearAddScales {
  float a_ratio = 1, b_ratio = 1;  // a_scale / c_scale, b_scale / c_scale
  float a_zp = 0, b_zp = 0, c_zp = 0;
};

struct QLinearAddParams {
  DataType type = DataType::kU8;  // A, B, C and the zero points
  bool same_shape = false;        // A and B have C's dims (no broadcast)
  BroadcastPlan plan;             // A and B against C
  int64_t elements = 0;           // of C

  QLinearAddScales Scales(const RunArgs& args) const;
};

// Validates arity, types (u8 / i8 data and zero points of A's type, f32
// scales), per-tensor parameters, finite positive constant scales and the
// broadcast; errors are InvalidArgument naming the node.
StatusOr<QLinearAddParams> ParseQLinearAdd(const PrepareArgs& args);

template <typename Q>
inline Q QLinearAddElement(const QLinearAddScales& s, Q a, Q b) {
  constexpr float kLo = static_cast<float>(std::numeric_limits<Q>::min());
  constexpr float kHi = static_cast<float>(std::numeric_limits<Q>::max());
  const float v = (static_cast<float>(a) - s.a_zp) * s.a_ratio +
                  (static_cast<float>(b) - s.b_zp) * s.b_ratio + s.c_zp;
  return static_cast<Q>(std::clamp(std::nearbyint(v), kLo, kHi));
}

// Calls fn(scales, a, b, c) with the operands typed as `p.type` (int8_t or
// uint8_t pointers): the one type dispatch of the kernels.
template <typename Fn>
void WithTypedQLinearAdd(const QLinearAddParams& p, const RunArgs& args, Fn&& fn) {
  const QLinearAddScales s = p.Scales(args);
  if (p.type == DataType::kI8)
    fn(s, static_cast<const int8_t*>(args.src[kQAddA]), static_cast<const int8_t*>(args.src[kQAddB]),
       static_cast<int8_t*>(args.dst[0]));
  else
    fn(s, static_cast<const uint8_t*>(args.src[kQAddA]),
       static_cast<const uint8_t*>(args.src[kQAddB]), static_cast<uint8_t*>(args.dst[0]));
}

}  // namespace braid

#endif  // BRAID_KERNELS_PARAMS_QLINEAR_ADD_H_
