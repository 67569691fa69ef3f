// Cast's element conversions, shared by the reference and CPU Cast kernels
// so both give the same bits: between f64, f32, f16, bf16, i64, i32, i16,
// i8, u64, u32, u16, u8 and bool.
//   float -> integer: truncation toward zero; NaN gives 0 and values outside
//     int64 saturate, then the int64 wraps to narrower types (defined
//     behaviour where ONNX leaves it undefined).
//   integer -> narrower integer: two's complement wrap (numpy astype).
//   anything -> bool: != 0 (NaN is true); bool -> anything: 0 or 1.
//   f16, bf16: hand-written conversion, round to nearest even
//     (kernels/params/elementwise.h); from f64 they go through f32.
//
//   CastFn cast = SelectCast(from, to);   // nullptr: not a supported pair
//   cast(src, dst, n);                    // n elements
#ifndef BRAID_KERNELS_PARAMS_CAST_H_
#define BRAID_KERNELS_PARAMS_CAST_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/params/elementwise.h"

namespace braid::cast_internal {

// Storage type per DataType.
template <DataType D> struct Storage;
template <> struct Storage<DataType::kF32> { using type = float; };
template <> struct Storage<DataType::kF16> { using type = uint16_t; };
template <> struct Storage<DataType::kI64> { using type = int64_t; };
template <> struct Storage<DataType::kI32> { using type = int32_t; };
template <> struct Storage<DataType::kI8> { using type = int8_t; };
template <> struct Storage<DataType::kU8> { using type = uint8_t; };
template <> struct Storage<DataType::kBool> { using type = uint8_t; };
template <> struct Storage<DataType::kF64> { using type = double; };
template <> struct Storage<DataType::kBF16> { using type = uint16_t; };
template <> struct Storage<DataType::kI16> { using type = int16_t; };
template <> struct Storage<DataType::kU16> { using type = uint16_t; };
template <> struct Storage<DataType::kU32> { using type = uint32_t; };
template <> struct Storage<DataType::kU64> { using type = uint64_t; };

// A loaded value: float or double for float types, uint64 for u64 (so values
// past int64 keep their magnitude), int64 otherwise.
template <DataType S>
auto Load(typename Storage<S>::type v) {
  if constexpr (S == DataType::kF16) return HalfToFloat(v);
  else if constexpr (S == DataType::kBF16) return BFloat16ToFloat(v);
  else if constexpr (S == DataType::kF32 || S == DataType::kF64 ||
                     S == DataType::kU64) return v;
  else if constexpr (S == DataType::kBool) return static_cast<int64_t>(v != 0);
  else return static_cast<int64_t>(v);
}

template <typename F>
int64_t TruncateToInt64(F v) {
  if (std::isnan(v)) return 0;
  if (v <= F(-9.2233720368547758e18)) return std::numeric_limits<int64_t>::min();
  if (v >= F(9.2233720368547758e18)) return std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(v);  // truncates toward zero
}

template <DataType D, typename V>
typename Storage<D>::type StoreAs(V v) {
  using Out = typename Storage<D>::type;
  if constexpr (D == DataType::kBool) {
    return v != 0 ? 1 : 0;  // NaN != 0 holds, so NaN is true
  } else if constexpr (D == DataType::kF32) {
    return static_cast<float>(v);
  } else if constexpr (D == DataType::kF64) {
    return static_cast<double>(v);
  } else if constexpr (D == DataType::kF16) {
    return FloatToHalf(static_cast<float>(v));
  } else if constexpr (D == DataType::kBF16) {
    return FloatToBFloat16(static_cast<float>(v));
  } else if constexpr (std::is_floating_point_v<V>) {
    return static_cast<Out>(TruncateToInt64(v));  // integral narrowing wraps
  } else {
    return static_cast<Out>(v);
  }
}

using CastFn = void (*)(const void* src, void* dst, int64_t n);

template <DataType S, DataType D>
void CastLoop(const void* src, void* dst, int64_t n) {
  const auto* x = static_cast<const typename Storage<S>::type*>(src);
  auto* y = static_cast<typename Storage<D>::type*>(dst);
  if constexpr (S == D) {
    if (n > 0 && src != dst) std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(*x));
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = StoreAs<D>(Load<S>(x[i]));
  }
}

template <DataType S>
CastFn SelectTarget(DataType to) {
  switch (to) {
    case DataType::kF32: return &CastLoop<S, DataType::kF32>;
    case DataType::kF16: return &CastLoop<S, DataType::kF16>;
    case DataType::kI64: return &CastLoop<S, DataType::kI64>;
    case DataType::kI32: return &CastLoop<S, DataType::kI32>;
    case DataType::kI8: return &CastLoop<S, DataType::kI8>;
    case DataType::kU8: return &CastLoop<S, DataType::kU8>;
    case DataType::kBool: return &CastLoop<S, DataType::kBool>;
    case DataType::kF64: return &CastLoop<S, DataType::kF64>;
    case DataType::kBF16: return &CastLoop<S, DataType::kBF16>;
    case DataType::kI16: return &CastLoop<S, DataType::kI16>;
    case DataType::kU16: return &CastLoop<S, DataType::kU16>;
    case DataType::kU32: return &CastLoop<S, DataType::kU32>;
    case DataType::kU64: return &CastLoop<S, DataType::kU64>;
    case DataType::kUndefined: break;
  }
  return nullptr;
}

inline CastFn SelectCast(DataType from, DataType to) {
  switch (from) {
    case DataType::kF32: return SelectTarget<DataType::kF32>(to);
    case DataType::kF16: return SelectTarget<DataType::kF16>(to);
    case DataType::kI64: return SelectTarget<DataType::kI64>(to);
    case DataType::kI32: return SelectTarget<DataType::kI32>(to);
    case DataType::kI8: return SelectTarget<DataType::kI8>(to);
    case DataType::kU8: return SelectTarget<DataType::kU8>(to);
    case DataType::kBool: return SelectTarget<DataType::kBool>(to);
    case DataType::kF64: return SelectTarget<DataType::kF64>(to);
    case DataType::kBF16: return SelectTarget<DataType::kBF16>(to);
    case DataType::kI16: return SelectTarget<DataType::kI16>(to);
    case DataType::kU16: return SelectTarget<DataType::kU16>(to);
    case DataType::kU32: return SelectTarget<DataType::kU32>(to);
    case DataType::kU64: return SelectTarget<DataType::kU64>(to);
    case DataType::kUndefined: break;
  }
  return nullptr;
}

}  // namespace braid::cast_internal

namespace braid {
using cast_internal::CastFn;
using cast_internal::SelectCast;
}  // namespace braid

#endif  // BRAID_KERNELS_PARAMS_CAST_H_
