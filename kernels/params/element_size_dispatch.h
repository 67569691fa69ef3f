// Kernels that only move elements (the reference and CPU Expand, Where, ...)
// are written once as `template <typename E> static Status RunTyped(const
// Self&, const RunArgs&)` over an unsigned storage type of the element's
// size; SelectBySize picks the instance at Prepare, so Run makes no decision.
//
//   run_ = SelectBySize<MyKernel>(DataTypeSize(dtype));   // nullptr: no such size
//   return run_(*this, args);                              // in Run
#ifndef BRAID_KERNELS_PARAMS_ELEMENT_SIZE_DISPATCH_H_
#define BRAID_KERNELS_PARAMS_ELEMENT_SIZE_DISPATCH_H_

#include <cstddef>
#include <cstdint>

#include "kernels/backend.h"

namespace braid {

template <typename Self>
using TypedRun = Status (*)(const Self&, const RunArgs&);

template <typename Self>
TypedRun<Self> SelectBySize(size_t element_size) {
  switch (element_size) {
    case 1: return &Self::template RunTyped<uint8_t>;
    case 2: return &Self::template RunTyped<uint16_t>;
    case 4: return &Self::template RunTyped<uint32_t>;
    case 8: return &Self::template RunTyped<uint64_t>;
    default: return nullptr;
  }
}

}  // namespace braid

#endif  // BRAID_KERNELS_PARAMS_ELEMENT_SIZE_DISPATCH_H_
