// The unary elementwise ops' per-element math and attributes, one table row
// per op: its f32 function and, for Abs/Neg/Relu/Sign (Ceil/Floor/Round keep
// integers), i32/i64 versions (two's complement wrap for Neg/Abs of INT_MIN).
// Shared by the reference kernels (kernels/reference/unary.cc, one thread)
// and braid's CPU kernel (kernels/cpu/unary_cpu.cc, the same functions over
// the OpenMP team), so the two agree bit for bit.
//
//   const UnaryOpRow* row = FindUnaryOp(args.node->op_type);
//   ASSIGN_OR_RETURN(const AlphaBeta p, ParseUnary(args, *row));
//   for (int64_t i = 0; i < n; ++i) y[i] = row->f32(x[i], p);
#ifndef BRAID_KERNELS_PARAMS_UNARY_H_
#define BRAID_KERNELS_PARAMS_UNARY_H_

#include <cmath>
#include <cstdint>
#include <span>
#include <string_view>

#include "kernels/backend.h"
#include "kernels/params/elementwise.h"

namespace braid {

using UnaryFloatFn = float (*)(float x, const AlphaBeta& p);

// The ops whose f32 math braid's CPU kernel also runs as plain loops the
// compiler vectorises (kernels/cpu/unary_cpu.cc): one definition for the
// table's rows and those loops. Branch-free, so the loops vectorise.
inline float CeilOf(float x) { return std::ceil(x); }
inline float FloorOf(float x) { return std::floor(x); }
// Halves to even (ONNX, numpy.round): nearbyint in the default rounding mode.
inline float RoundHalfToEven(float x) { return std::nearbyint(x); }
// -1, 0 or 1 (+0 for either zero); NaN stays NaN.
inline float SignOf(float x) {
  const float sign = (x > 0.0f ? 1.0f : 0.0f) - (x < 0.0f ? 1.0f : 0.0f);
  return x != x ? x : sign;
}

struct UnaryOpRow {
  const char* op_type;
  UnaryFloatFn f32;
  int32_t (*i32)(int32_t) = nullptr;  // null: f32 only
  int64_t (*i64)(int64_t) = nullptr;
  // Attributes read into AlphaBeta by ParseUnary (null: none), with defaults.
  const char* alpha_attr = nullptr;
  float alpha_default = 0;
  const char* beta_attr = nullptr;
  float beta_default = 0;
};

std::span<const UnaryOpRow> UnaryOps();
const UnaryOpRow* FindUnaryOp(std::string_view op_type);  // null: not a table op

// One input, output of its dims and dtype, and the row's attributes (HardSigmoid,
// LeakyRelu and Gelu through their own parsers; Celu's alpha 0 refused).
// The dtype is the caller's to check.
StatusOr<AlphaBeta> ParseUnary(const PrepareArgs& args, const UnaryOpRow& row);

}  // namespace braid

#endif  // BRAID_KERNELS_PARAMS_UNARY_H_
