// Data-movement CUDA kernels: grid-stride loops around device_math/data.h,
// instantiated per element size where they move bytes.
#include "kernels/cuda/launch.h"
#include "kernels/cuda/launch_config.h"

namespace braid::cuda {
namespace {

#define BRAID_GRID_STRIDE(i, n)                                                     \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

template <typename E>
__global__ void StridedCopyKernel(dm::StridedCopyArgs args, const E* x, E* y) {
  BRAID_GRID_STRIDE(i, args.elements) dm::StridedCopyElement(args, i, x, y);
}

template <typename E>
__global__ void GatherKernel(dm::GatherArgs args, const E* x, const int64_t* indices, E* y) {
  BRAID_GRID_STRIDE(i, args.elements) dm::GatherElement(args, i, x, indices, y);
}

template <typename E>
__global__ void GatherRuntimeKernel(dm::GatherArgs args, const E* x, const void* indices,
                                    int index_size, E* y) {
  BRAID_GRID_STRIDE(i, args.elements)
  dm::GatherRuntimeElement(args, i, x, indices, index_size, y);
}

template <typename E>
__global__ void PadKernel(dm::PadArgs args, const E* x, E* y) {
  BRAID_GRID_STRIDE(i, args.elements) dm::PadElement(args, i, x, y);
}

__global__ void ResizeKernel(dm::ResizeArgs args, const dm::ResizeCoord* coords,
                             const dm::ResizeTap* taps, const float* x, float* y) {
  BRAID_GRID_STRIDE(i, args.elements) dm::ResizeElement(args, i, coords, taps, x, y);
}

template <typename E>
__global__ void TriluKernel(dm::TriluArgs args, const E* x, const int64_t* k_at, E* y) {
  BRAID_GRID_STRIDE(i, args.elements) dm::TriluElement(args, i, x, k_at, y);
}

__global__ void CastKernel(dm::CastArgs args, const void* x, void* y) {
  BRAID_GRID_STRIDE(i, args.elements) dm::CastElement(args, i, x, y);
}

// Calls launch(E{}) with the storage type of `element_size`.
template <typename Launch>
cudaError_t BySize(int element_size, Launch&& launch) {
  switch (element_size) {
    case 1: launch(uint8_t{}); break;
    case 2: launch(uint16_t{}); break;
    case 4: launch(uint32_t{}); break;
    case 8: launch(uint64_t{}); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchStridedCopy(const dm::StridedCopyArgs& args, const void* x, void* y,
                              cudaStream_t s) {
  const LaunchConfig c = GridStrideLaunch(args.elements);
  return BySize(args.element_size, [&](auto e) {
    using E = decltype(e);
    StridedCopyKernel<E><<<c.blocks, c.threads, 0, s>>>(args, static_cast<const E*>(x),
                                                        static_cast<E*>(y));
  });
}

cudaError_t LaunchGather(const dm::GatherArgs& args, const void* x, const int64_t* indices,
                         void* y, cudaStream_t s) {
  const LaunchConfig c = GridStrideLaunch(args.elements);
  return BySize(args.element_size, [&](auto e) {
    using E = decltype(e);
    GatherKernel<E><<<c.blocks, c.threads, 0, s>>>(args, static_cast<const E*>(x), indices,
                                                   static_cast<E*>(y));
  });
}

cudaError_t LaunchGatherRuntime(const dm::GatherArgs& args, const void* x, const void* indices,
                                int index_size, void* y, cudaStream_t s) {
  const LaunchConfig c = GridStrideLaunch(args.elements);
  return BySize(args.element_size, [&](auto e) {
    using E = decltype(e);
    GatherRuntimeKernel<E><<<c.blocks, c.threads, 0, s>>>(args, static_cast<const E*>(x), indices,
                                                          index_size, static_cast<E*>(y));
  });
}

cudaError_t LaunchPad(const dm::PadArgs& args, const void* x, void* y, cudaStream_t s) {
  const LaunchConfig c = GridStrideLaunch(args.elements);
  return BySize(args.element_size, [&](auto e) {
    using E = decltype(e);
    PadKernel<E><<<c.blocks, c.threads, 0, s>>>(args, static_cast<const E*>(x),
                                                static_cast<E*>(y));
  });
}

cudaError_t LaunchResize(const dm::ResizeArgs& args, const dm::ResizeCoord* coords,
                         const dm::ResizeTap* taps, const float* x, float* y, cudaStream_t s) {
  const LaunchConfig c = GridStrideLaunch(args.elements);
  ResizeKernel<<<c.blocks, c.threads, 0, s>>>(args, coords, taps, x, y);
  return cudaGetLastError();
}

cudaError_t LaunchTrilu(const dm::TriluArgs& args, const void* x, const int64_t* k_at, void* y,
                        cudaStream_t s) {
  const LaunchConfig c = GridStrideLaunch(args.elements);
  return BySize(args.element_size, [&](auto e) {
    using E = decltype(e);
    TriluKernel<E><<<c.blocks, c.threads, 0, s>>>(args, static_cast<const E*>(x), k_at,
                                                  static_cast<E*>(y));
  });
}

cudaError_t LaunchCast(const dm::CastArgs& args, const void* x, void* y, cudaStream_t s) {
  const LaunchConfig c = GridStrideLaunch(args.elements);
  CastKernel<<<c.blocks, c.threads, 0, s>>>(args, x, y);
  return cudaGetLastError();
}

}  // namespace braid::cuda
