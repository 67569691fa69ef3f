// A tensor seen in memory as [outer, axis, inner] around one of its axes, for
// CPU kernels that copy or repeat whole blocks along that axis:
//
//   const AxisBlocks b = BlocksAround(desc, /*axis=*/1);  // nchw: {N, H*W}; nhwc: {N*H*W, 1}
//   for (int64_t o = 0; o < b.outer; ++o) copy(dims[1] * b.inner elements) ...
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/backend.h"

namespace braid {

struct AxisBlocks {
  int64_t outer = 1;  // elements of the axes outside `axis` in memory order
  int64_t inner = 1;  // elements per unit of `axis`
};

inline AxisBlocks BlocksAround(const TensorDesc& desc, int axis) {
  AxisBlocks blocks;
  bool inside = false;
  for (int a : desc.MemoryOrder()) {
    const int64_t extent = desc.dims[static_cast<size_t>(a)];
    if (a == axis) inside = true;
    else if (inside) blocks.inner *= extent;
    else blocks.outer *= extent;
  }
  return blocks;
}

}  // namespace braid
