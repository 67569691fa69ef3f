// Parameters of the quantized products ConvInteger, QLinearConv,
// MatMulInteger and QLinearMatMul (ONNX 10), validated once at Prepare and
// shared by the reference kernels and the oneDNN int8 kernels.
//
//   ASSIGN_OR_RETURN(QuantizedProductParams p, ParseQuantizedProduct(args));
//   // acc (int32) = sum (a - a_zp[row]) * (b - b_zp[col])  (+ bias[col])
//   // *Integer: y = acc; QLinear*: y = saturate(round_half_even(
//   //     acc * a_scale[row] * b_scale[col] / y_scale) + y_zp)
//
// "a" is X / A, "b" is W / B; "row" is the row of A (QLinearMatMul /
// MatMulInteger; per tensor for Conv) and "col" the output channel (Conv) or
// the column of B. The geometry is ParseConv's / ParseMatMul's.
#ifndef BRAID_KERNELS_PARAMS_QUANTIZED_H_
#define BRAID_KERNELS_PARAMS_QUANTIZED_H_

#include <cstdint>

#include "kernels/backend.h"
#include "kernels/params/conv.h"
#include "kernels/params/matmul.h"

namespace braid {

struct QuantizedProductParams {
  bool conv = false;        // ConvInteger / QLinearConv, else a matmul
  bool requantize = false;  // QLinear*: quantized output, else int32
  ConvParams conv_params;   // when conv
  MatMulParams matmul;      // when !conv
  DataType a_type = DataType::kU8, b_type = DataType::kU8;
  DataType y_type = DataType::kI32;
  // Input index of each operand and parameter; -1 when absent (zero point 0).
  int a = 0, b = 1, a_scale = -1, a_zp = -1, b_scale = -1, b_zp = -1, y_scale = -1, y_zp = -1,
      bias = -1;
  // Entries of each per-slice parameter: 1 (per tensor) or rows / columns.
  int64_t a_scale_count = 1, a_zp_count = 1, b_scale_count = 1, b_zp_count = 1;
};

// Validates types (u8 / i8 data, f32 scales, zero points of their data's
// type, int32 bias), parameter shapes (per tensor or per row / column / output
// channel), constant scales (finite and > 0) and the geometry. Errors are
// InvalidArgument naming the node.
StatusOr<QuantizedProductParams> ParseQuantizedProduct(const PrepareArgs& args);

// Input `i` (named `name`) is a scale when `data` < 0, else a zero point of
// input `data`'s type; one element, or `per_slice` (> 1) of them in 1-D; a
// constant scale must be finite and > 0. Returns its element count (0 when
// absent); errors are InvalidArgument naming the node.
StatusOr<int64_t> CheckQuantizationParam(const PrepareArgs& args, int i, const char* name,
                                         int data, int64_t per_slice = 0);

// Element k of a u8 / i8 / i32 tensor as int32.
inline int32_t LoadInt(DataType t, const void* p, int64_t k) {
  switch (t) {
    case DataType::kU8: return static_cast<const uint8_t*>(p)[k];
    case DataType::kI8: return static_cast<const int8_t*>(p)[k];
    default: return static_cast<const int32_t*>(p)[k];
  }
}

}  // namespace braid

#endif  // BRAID_KERNELS_PARAMS_QUANTIZED_H_
