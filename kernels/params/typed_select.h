// Picking a kernel's typed instance at Prepare, so that Run makes no dtype
// decision: the reference kernels and braid's own CPU kernels alike.
//
// Data-movement kernels do not care about dtypes, only element sizes: they
// are written once as `template <typename E> static ... RunTyped(...)` over
// an unsigned storage type and SelectBySize picks the instance. Kernels that
// compare or compute on values (Clip, ArgMax / ArgMin, TopK) pick
// `Self::RunTyped<T>` with SelectByNumericType.
#ifndef BRAID_KERNELS_PARAMS_TYPED_SELECT_H_
#define BRAID_KERNELS_PARAMS_TYPED_SELECT_H_

#include <cstddef>
#include <cstdint>

#include "kernels/backend.h"

namespace braid {

// The usual shape of a RunTyped instance:
//   run_ = SelectBySize<MyKernel>(DataTypeSize(dtype));  // at Prepare; nullptr: no such size
//   return run_(*this, args);                            // in Run
template <typename Self>
using TypedRun = Status (*)(const Self&, const RunArgs&);

// `Self::RunTyped<E>` for 1-, 2-, 4- and 8-byte elements; nullptr otherwise.
template <typename Self>
auto SelectBySize(size_t element_size) -> decltype(&Self::template RunTyped<uint8_t>) {
  switch (element_size) {
    case 1: return &Self::template RunTyped<uint8_t>;
    case 2: return &Self::template RunTyped<uint16_t>;
    case 4: return &Self::template RunTyped<uint32_t>;
    case 8: return &Self::template RunTyped<uint64_t>;
    default: return nullptr;
  }
}

// `Self::RunTyped<T>` for the numeric dtypes f64, f32, i64, i32, i16, i8,
// u64, u32, u16 and u8; nullptr for any other dtype (f16, bf16, bool).
template <typename Self>
auto SelectByNumericType(DataType dtype) -> decltype(&Self::template RunTyped<float>) {
  switch (dtype) {
    case DataType::kF32: return &Self::template RunTyped<float>;
    case DataType::kI32: return &Self::template RunTyped<int32_t>;
    case DataType::kI64: return &Self::template RunTyped<int64_t>;
    case DataType::kI8: return &Self::template RunTyped<int8_t>;
    case DataType::kU8: return &Self::template RunTyped<uint8_t>;
    case DataType::kF64: return &Self::template RunTyped<double>;
    case DataType::kI16: return &Self::template RunTyped<int16_t>;
    case DataType::kU16: return &Self::template RunTyped<uint16_t>;
    case DataType::kU32: return &Self::template RunTyped<uint32_t>;
    case DataType::kU64: return &Self::template RunTyped<uint64_t>;
    default: return nullptr;
  }
}

}  // namespace braid

#endif  // BRAID_KERNELS_PARAMS_TYPED_SELECT_H_
