// The per-element functors of the broadcasting binary ops, shared by the
// reference kernels (kernels/reference/binary.cc) and braid's typed CPU
// kernel (kernels/cpu/binary_typed_cpu.cc) so both give the same bits: Add
// Sub Mul Div Mod PRelu Min Max Sum, the comparisons, And Or Xor, BitShift.
// Each functor is `template <typename T> static Out Apply(T a, T b)` plus
// OpTraits (input dtypes, arity, bool output, f16).
//
// Integer semantics: +, -, * wrap (two's complement, no UB); Div truncates
// toward zero like C and ONNX Runtime, x / 0 is 0 and INT_MIN / -1 wraps.
// Float Min/Max propagate NaN like numpy.minimum/maximum; f16 Min/Max compare
// in float and return the winning operand's bits unchanged.
#ifndef BRAID_KERNELS_PARAMS_BINARY_OPS_H_
#define BRAID_KERNELS_PARAMS_BINARY_OPS_H_

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <type_traits>

#include "kernels/backend.h"
#include "kernels/params/elementwise.h"
#include "kernels/params/parse_util.h"

namespace braid::binary_ops {

// At least unsigned int wide, so u16 * u16 does not promote to a signed int
// that overflows.
template <typename T>
using Unsigned = std::make_unsigned_t<std::common_type_t<T, unsigned>>;

// IEEE binary16 storage; only Min/Max/Mod accept it (Op::kHalf).
struct Half {
  uint16_t bits;
};

template <typename T>
T Wrap(Unsigned<T> v) {
  return static_cast<T>(v);
}

// The input dtypes an op takes (all inputs share one).
enum class Operands {
  kNumeric,        // all but bool and bf16 (f16 only where the op has kHalf)
  kNumericOrBool,  // Equal
  kBool,           // And, Or, Xor
  kUnsigned,       // BitShift: u8, u16, u32, u64
};

inline bool Accepts(Operands operands, DataType type) {
  switch (operands) {
    case Operands::kNumeric: return type != DataType::kBool && type != DataType::kBF16;
    case Operands::kNumericOrBool: return true;
    case Operands::kBool: return type == DataType::kBool;
    case Operands::kUnsigned:
      return type == DataType::kU8 || type == DataType::kU16 || type == DataType::kU32 ||
             type == DataType::kU64;
  }
  return false;
}

// What BinaryKernel<Op> needs to know of an op besides Op::Apply: its input
// dtypes, whether it takes any number of inputs (folded left to right) and
// f16 (Min / Max), and whether it outputs bool.
template <Operands kTakes = Operands::kNumeric, bool kManyInputs = false, bool kBoolOut = false,
          bool kTakesHalf = false>
struct OpTraits {
  static constexpr Operands kOperands = kTakes;
  static constexpr bool kVariadic = kManyInputs;
  static constexpr bool kCompare = kBoolOut;
  static constexpr bool kHalf = kTakesHalf;
};

// Add, Sub, Mul and Sum differ only in the operator and arity; integers go
// through the unsigned type so overflow wraps instead of being undefined.
template <typename Operator, bool kManyInputs = false>
struct WrappingArithmeticOp : OpTraits<Operands::kNumeric, kManyInputs> {
  template <typename T>
  static T Apply(T a, T b) {
    if constexpr (std::is_integral_v<T>)
      return Wrap<T>(static_cast<Unsigned<T>>(
          Operator()(static_cast<Unsigned<T>>(a), static_cast<Unsigned<T>>(b))));
    else
      return Operator()(a, b);
  }
};
using AddOp = WrappingArithmeticOp<std::plus<>>;
using SubOp = WrappingArithmeticOp<std::minus<>>;
using MulOp = WrappingArithmeticOp<std::multiplies<>>;
using SumOp = WrappingArithmeticOp<std::plus<>, true>;

// PRelu(x, slope): slope * x where x < 0 (slope broadcasts to x).
struct PReluOp : OpTraits<> {
  template <typename T>
  static T Apply(T x, T slope) {
    if constexpr (std::is_unsigned_v<T>) {
      return x;  // never negative
    } else {
      return x < 0 ? MulOp::Apply(slope, x) : x;
    }
  }
};

struct DivOp : OpTraits<> {
  template <typename T>
  static T Apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      if (b == 0) return 0;
      if constexpr (std::is_signed_v<T>) {
        if (b == -1) return Wrap<T>(0 - static_cast<Unsigned<T>>(a));
      }
      return static_cast<T>(a / b);  // C++ truncates toward zero
    } else {
      return a / b;
    }
  }
};

// Min and Max differ only in which operand wins; NaN propagates.
template <bool kTakeMax>
struct ExtremumOp : OpTraits<Operands::kNumeric, true, false, true> {
  template <typename T>
  static bool SecondWins(T a, T b) {
    return kTakeMax ? a < b : b < a;
  }
  static Half Apply(Half a, Half b) {
    const float fa = HalfToFloat(a.bits), fb = HalfToFloat(b.bits);
    if (std::isnan(fa)) return a;
    if (std::isnan(fb)) return b;
    return SecondWins(fa, fb) ? b : a;
  }
  template <typename T>
  static T Apply(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
    }
    return SecondWins(a, b) ? b : a;
  }
};
using MinOp = ExtremumOp<false>;
using MaxOp = ExtremumOp<true>;

// Equal, Greater, Less, GreaterOrEqual, LessOrEqual: bool out (NaN compares
// false, as in C++ and numpy).
template <typename Comparison, Operands kTakes = Operands::kNumeric>
struct CompareOp : OpTraits<kTakes, false, true> {
  template <typename T>
  static uint8_t Apply(T a, T b) {
    return Comparison()(a, b) ? 1 : 0;
  }
};
using EqualOp = CompareOp<std::equal_to<>, Operands::kNumericOrBool>;

// And, Or, Xor (Xor of bools is inequality).
template <typename Connective>
struct LogicalOp : OpTraits<Operands::kBool, false, true> {
  template <typename T>
  static uint8_t Apply(T a, T b) {
    return Connective()(a != 0, b != 0) ? 1 : 0;
  }
};

// BitShift of unsigned integers; a shift by the bit width or more gives 0
// (numpy's result; C++ leaves it undefined).
template <bool kLeft>
struct BitShiftOp : OpTraits<Operands::kUnsigned> {
  template <typename T>
  static T Apply(T a, T b) {
    if constexpr (std::is_unsigned_v<T>) {
      if (b >= std::numeric_limits<T>::digits) return 0;
      const Unsigned<T> wide = a;  // u16 would promote to int
      return static_cast<T>(kLeft ? wide << b : wide >> b);
    } else {
      return a;  // never runs: Prepare accepts unsigned operands only
    }
  }
};

// Mod: fmod=1 keeps the dividend's sign (C fmod, and C++ % on integers),
// fmod=0 the divisor's (Python's %; integers only, as ONNX defines it). An
// integer x % 0 is 0, as Div's x / 0 (ONNX leaves it undefined). f16 computes
// fmod in float (exact) and rounds once.
template <bool kDivisorSign>
struct ModOp : OpTraits<Operands::kNumeric, false, false, true> {
  static Half Apply(Half a, Half b) {
    return Half{FloatToHalf(std::fmod(HalfToFloat(a.bits), HalfToFloat(b.bits)))};
  }
  template <typename T>
  static T Apply(T a, T b) {
    T r;
    if constexpr (std::is_floating_point_v<T>) {
      r = std::fmod(a, b);
    } else {
      if (b == 0) return 0;
      if constexpr (std::is_signed_v<T>) {
        if (b == -1) return 0;  // INT_MIN % -1 would trap
      }
      r = static_cast<T>(a % b);
    }
    if constexpr (kDivisorSign && std::is_signed_v<T>) {
      if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
    }
    return r;
  }
};


// Not (bool in, bool out; the one unary logical op).
struct NotOp {
  static uint8_t Apply(uint8_t x) { return x == 0 ? 1 : 0; }
};

// Mod's fmod attribute (0 or 1); fmod=0 on a float dtype is InvalidArgument
// (ONNX defines it for integers only).
inline StatusOr<bool> ParseModFmod(const PrepareArgs& args) {
  const bool fmod = args.node->attrs.GetInt("fmod", 0) != 0;
  const DataType type = args.inputs.empty() ? DataType::kUndefined : args.inputs[0].dtype;
  if (!fmod && (type == DataType::kF32 || type == DataType::kF16 || type == DataType::kF64))
    return params_internal::Invalid(args, "fmod=0 is defined for integers only; "
                                          "floating-point Mod needs fmod=1");
  return fmod;
}

}  // namespace braid::binary_ops

#endif  // BRAID_KERNELS_PARAMS_BINARY_OPS_H_
