// Parameter parsing shared by every backend's elementwise kernels (binary
// arithmetic, unary activations, Clip, Cast, Where), plus the hand-written
// f16 <-> f32 conversion.
//
//   ASSIGN_OR_RETURN(BroadcastPlan plan, PrepareBroadcast(args));  // Add, Where, ...
//   ASSIGN_OR_RETURN(ClipParams clip, ParseClip(args));            // bounds or inputs
//   ASSIGN_OR_RETURN(DataType to, ParseCastTarget(args));
//   uint16_t h = FloatToHalf(1.0f);   // 0x3C00
//
// Every error is prefixed with PrepareArgs::Where(). Opset 0 (graphs built in
// code) means the newest semantics (params_internal::EffectiveOpset).
#ifndef BRAID_KERNELS_PARAMS_ELEMENTWISE_H_
#define BRAID_KERNELS_PARAMS_ELEMENTWISE_H_

#include <cstdint>
#include <cstring>
#include <limits>

#include "kernels/backend.h"
#include "kernels/params/broadcast.h"

namespace braid {

// IEEE binary16 <-> binary32. FloatToHalf rounds to nearest, ties to even;
// overflow gives +-inf, NaN stays NaN (quiet), subnormals are exact both ways.
uint16_t FloatToHalf(float value);
float HalfToFloat(uint16_t bits);
// bfloat16 <-> binary32: the upper half of the f32 bits. FloatToBFloat16
// rounds to nearest, ties to even (as ONNX's Cast); NaN stays NaN.
uint16_t FloatToBFloat16(float value);
float BFloat16ToFloat(uint16_t bits);
// `value` rounded to the nearest bfloat16, as a float (ComputePrecision::kBF16).
inline float RoundedToBFloat16(float value) { return BFloat16ToFloat(FloatToBFloat16(value)); }

// `value` in `dtype`'s encoding into out[0 .. DataTypeSize(dtype)) (Pad's
// constant, EyeLike's one). Integers truncate like a C cast.
inline void EncodeValue(double value, DataType dtype, unsigned char* out) {
  auto put = [out](auto v) { std::memcpy(out, &v, sizeof v); };
  switch (dtype) {
    case DataType::kF32: put(static_cast<float>(value)); break;
    case DataType::kF64: put(value); break;
    case DataType::kF16: put(FloatToHalf(static_cast<float>(value))); break;
    case DataType::kBF16: put(FloatToBFloat16(static_cast<float>(value))); break;
    case DataType::kI64: put(static_cast<int64_t>(value)); break;
    case DataType::kI32: put(static_cast<int32_t>(value)); break;
    case DataType::kI16: put(static_cast<int16_t>(value)); break;
    case DataType::kI8: put(static_cast<int8_t>(value)); break;
    case DataType::kU64: put(static_cast<uint64_t>(value)); break;
    case DataType::kU32: put(static_cast<uint32_t>(value)); break;
    case DataType::kU16: put(static_cast<uint16_t>(value)); break;
    case DataType::kU8: put(static_cast<uint8_t>(value)); break;
    case DataType::kBool: put(static_cast<uint8_t>(value != 0)); break;
    case DataType::kUndefined: break;
  }
}

// Plans broadcasting of inputs [first, first + count) (count -1: all the
// rest) and checks that the result equals outputs[0].dims. Omitted inputs are
// an error.
StatusOr<BroadcastPlan> PrepareBroadcast(const PrepareArgs& args,
                                         size_t first = 0, int count = -1);

// Where(cond, x, y): cond bool, x and y of one dtype (any), the three
// broadcast together to outputs[0], which has x's dtype.
struct WhereParams {
  BroadcastPlan plan;
  DataType dtype = DataType::kUndefined;  // x, y and the output
};
StatusOr<WhereParams> ParseWhere(const PrepareArgs& args);

// Checks that inputs [first, first + count) (count -1: all the rest) share
// one dtype and returns it.
StatusOr<DataType> CommonInputType(const PrepareArgs& args, size_t first = 0,
                                   int count = -1);

// Reads element 0 of a one-element tensor of any numeric dtype as double
// (u64 and i64 beyond 2^53 round).
double ReadScalarAsDouble(const void* data, DataType dtype);

// Clip bounds: attributes `min`/`max` before opset 11; optional scalar
// inputs 1 and 2 from 11. A constant input is read here; a computed one is
// named by its input index and read at Run (ReadScalarAsDouble).
// An absent bound is ONNX's default, numeric_limits<float>::lowest() / max(),
// so -Inf clips to -FLT_MAX (and +Inf to FLT_MAX) as in ONNX Runtime.
struct ClipParams {
  double min = -std::numeric_limits<float>::max();
  double max = std::numeric_limits<float>::max();
  int min_input = -1;  // input to read min from at Run, or -1
  int max_input = -1;
};
StatusOr<ClipParams> ParseClip(const PrepareArgs& args);

// HardSigmoid: alpha (0.2), beta (0.5); LeakyRelu: alpha (0.01).
struct AlphaBeta {
  float alpha = 0;
  float beta = 0;
};
AlphaBeta ParseHardSigmoid(const PrepareArgs& args);
float ParseLeakyReluAlpha(const PrepareArgs& args);
// IsInf's detect_positive / detect_negative (default 1 each).
struct IsInfParams {
  bool positive = true;
  bool negative = true;
};
IsInfParams ParseIsInf(const PrepareArgs& args);
// Gelu's `approximate`: "none" (the default, erf) or "tanh"; true for tanh.
StatusOr<bool> ParseGeluTanh(const PrepareArgs& args);

// The target of Cast (`to`, an ONNX TensorProto enum, as a braid DataType)
// or CastLike (input 1's dtype); checks the arity and that outputs[0] has the
// input's dims and the target dtype.
StatusOr<DataType> ParseCastTarget(const PrepareArgs& args);

}  // namespace braid

#endif  // BRAID_KERNELS_PARAMS_ELEMENTWISE_H_
