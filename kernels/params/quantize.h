// QuantizeLinear and DequantizeLinear (ONNX 10+, per tensor or per axis):
//   quantize:   y = saturate(round_half_even(x / scale[k]) + zero_point[k])
//   dequantize: y = (x - zero_point[k]) * scale[k]
// k = 0 per tensor, else the index along `axis`. x is viewed as
// [outer, axis_size, inner]. The loops are here, shared by the reference
// kernel (whole range) and braid's CPU kernel (element ranges across threads).
#ifndef BRAID_KERNELS_PARAMS_QUANTIZE_H_
#define BRAID_KERNELS_PARAMS_QUANTIZE_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/backend.h"

namespace braid {

struct QuantizeLinearParams {
  bool quantize = true;                       // QuantizeLinear, else DequantizeLinear
  DataType quantized = DataType::kU8;         // i8, u8 (or i32: dequantize only)
  bool has_zero_point = false;
  int64_t outer = 1, axis_size = 1, inner = 1;  // axis_size 1: per tensor
  bool per_axis = false;

  int64_t elements() const { return outer * axis_size * inner; }
};

StatusOr<QuantizeLinearParams> ParseQuantizeLinear(const PrepareArgs& args);
StatusOr<QuantizeLinearParams> ParseDequantizeLinear(const PrepareArgs& args);

namespace quantize_internal {

// Calls body(k, begin, end) for the pieces of elements [begin, end) that share
// parameter index k (rows of `inner` elements along the axis).
template <typename Body>
void ForEachRun(const QuantizeLinearParams& p, int64_t begin, int64_t end, Body body) {
  while (begin < end) {
    const int64_t row = begin / p.inner;
    const int64_t stop = std::min(end, (row + 1) * p.inner);
    body(p.per_axis ? row % p.axis_size : 0, begin, stop);
    begin = stop;
  }
}

template <typename Q>
void Quantize(const QuantizeLinearParams& p, const float* x, const float* scale,
              const Q* zero_point, Q* y, int64_t begin, int64_t end) {
  constexpr float kLo = static_cast<float>(std::numeric_limits<Q>::min());
  constexpr float kHi = static_cast<float>(std::numeric_limits<Q>::max());
  ForEachRun(p, begin, end, [&](int64_t k, int64_t b, int64_t e) {
    const float s = scale[k];
    const float zp = p.has_zero_point ? static_cast<float>(zero_point[k]) : 0.0f;
    for (int64_t i = b; i < e; ++i) {
      // nearbyint rounds half to even (the default rounding mode). NaN gives
      // 0, as ONNX Runtime's x86 conversion does (INT_MIN's low byte).
      const float v = std::nearbyint(x[i] / s) + zp;
      y[i] = std::isnan(v) ? Q{0} : static_cast<Q>(std::clamp(v, kLo, kHi));
    }
  });
}

template <typename Q>
void Dequantize(const QuantizeLinearParams& p, const Q* x, const float* scale,
                const Q* zero_point, float* y, int64_t begin, int64_t end) {
  ForEachRun(p, begin, end, [&](int64_t k, int64_t b, int64_t e) {
    const float s = scale[k];
    const int64_t zp = p.has_zero_point ? static_cast<int64_t>(zero_point[k]) : 0;
    for (int64_t i = b; i < e; ++i) y[i] = static_cast<float>(static_cast<int64_t>(x[i]) - zp) * s;
  });
}

}  // namespace quantize_internal

// Elements [begin, end) of the op for `args`' buffers.
inline void RunQuantizeLinear(const QuantizeLinearParams& p, const RunArgs& args, int64_t begin,
                              int64_t end) {
  using namespace quantize_internal;  // NOLINT: the two loops above
  const auto* scale = static_cast<const float*>(args.src[1]);
  const void* zp = args.src.size() > 2 ? args.src[2] : nullptr;
  if (p.quantize) {
    const auto* x = static_cast<const float*>(args.src[0]);
    if (p.quantized == DataType::kI8)
      Quantize(p, x, scale, static_cast<const int8_t*>(zp), static_cast<int8_t*>(args.dst[0]), begin, end);
    else
      Quantize(p, x, scale, static_cast<const uint8_t*>(zp), static_cast<uint8_t*>(args.dst[0]), begin, end);
    return;
  }
  auto* y = static_cast<float*>(args.dst[0]);
  switch (p.quantized) {
    case DataType::kI8:
      Dequantize(p, static_cast<const int8_t*>(args.src[0]), scale, static_cast<const int8_t*>(zp), y,
                 begin, end);
      break;
    case DataType::kU8:
      Dequantize(p, static_cast<const uint8_t*>(args.src[0]), scale, static_cast<const uint8_t*>(zp), y,
                 begin, end);
      break;
    default:
      Dequantize(p, static_cast<const int32_t*>(args.src[0]), scale, static_cast<const int32_t*>(zp), y,
                 begin, end);
      break;
  }
}

}  // namespace braid

#endif  // BRAID_KERNELS_PARAMS_QUANTIZE_H_
