// Data-movement CUDA kernels: grid-stride loops around kernels/device_math/data.h,
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

template <typename E>
__global__ void GatherElementsKernel(dm::ElementsArgs args, const E* x, const void* indices,
                                     E* y) {
  BRAID_GRID_STRIDE(e, args.elements) dm::GatherElementsElement(args, e, x, indices, y);
}

template <typename E>
__global__ void ScatterElementsKernel(dm::ElementsArgs args, const void* indices,
                                      const E* updates, E* y) {
  BRAID_GRID_STRIDE(line, args.elements)
  dm::ScatterElementsLine(args, line, indices, updates, y);
}

template <typename E>
__global__ void GatherNDKernel(dm::TupleArgs args, const E* x, const int64_t* indices, E* y) {
  BRAID_GRID_STRIDE(i, args.elements) dm::GatherNDElement(args, i, x, indices, y);
}

template <typename E>
__global__ void ScatterNDKernel(dm::TupleArgs args, const int64_t* indices, const E* updates,
                                E* y) {
  BRAID_GRID_STRIDE(r, args.elements) dm::ScatterNDColumn(args, r, indices, updates, y);
}

template <typename E>
__global__ void OneHotKernel(dm::OneHotArgs args, const void* indices, const E* values, E* y) {
  BRAID_GRID_STRIDE(i, args.elements) dm::OneHotElement(args, i, indices, values, y);
}

template <typename T, typename U>
__global__ void RangeIntKernel(dm::RangeArgs args, const T* start, const T* delta, T* y) {
  BRAID_GRID_STRIDE(i, args.length) dm::RangeIntElement<T, U>(i, start, delta, y);
}

__global__ void RangeF32Kernel(dm::RangeArgs args, const float* start, const float* delta,
                               float* y) {
  dm::RangeF32Serial(args, start, delta, y);
}

template <typename E>
__global__ void EyeLikeKernel(dm::EyeLikeArgs args, E* y) {
  BRAID_GRID_STRIDE(i, args.elements) dm::EyeLikeElement(args, i, y);
}

__global__ void GridSampleKernel(dm::GridSampleArgs args, const float* x, const float* grid,
                                 float* y) {
  BRAID_GRID_STRIDE(i, args.elements) dm::GridSampleElement(args, i, x, grid, y);
}

__global__ void NmsRankKernel(dm::NmsArgs args, const float* scores, dm::NmsScalars s,
                              int64_t* workspace, int64_t threads) {
  BRAID_GRID_STRIDE(i, threads) dm::NmsRankElement(args, i, scores, s, workspace);
}

__global__ void NmsSelectKernel(dm::NmsArgs args, const float* boxes, const float* scores,
                                dm::NmsScalars s, int64_t* workspace, int64_t threads) {
  BRAID_GRID_STRIDE(bc, threads) dm::NmsSelectClass(args, bc, boxes, scores, s, workspace);
}

__global__ void NmsCompactKernel(dm::NmsArgs args, const int64_t* workspace, int64_t* out,
                                 int64_t* total, int64_t threads) {
  BRAID_GRID_STRIDE(bc, threads) dm::NmsCompactClass(args, bc, workspace, out, total);
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

cudaError_t LaunchGatherElements(const dm::ElementsArgs& args, const void* x,
                                 const void* indices, void* y, cudaStream_t s) {
  const LaunchConfig c = GridStrideLaunch(args.elements);
  return BySize(args.element_size, [&](auto e) {
    using E = decltype(e);
    GatherElementsKernel<E><<<c.blocks, c.threads, 0, s>>>(args, static_cast<const E*>(x),
                                                           indices, static_cast<E*>(y));
  });
}

cudaError_t LaunchScatterElements(const dm::ElementsArgs& args, const void* indices,
                                  const void* updates, void* y, cudaStream_t s) {
  // One thread per index line walks it serially: small blocks spread them.
  const LaunchConfig c = GridStrideLaunch(args.elements, 128);
  if (args.reduction != 0) {  // f32 only (planned so)
    ScatterElementsKernel<float><<<c.blocks, c.threads, 0, s>>>(
        args, indices, static_cast<const float*>(updates), static_cast<float*>(y));
    return cudaGetLastError();
  }
  return BySize(args.element_size, [&](auto e) {
    using E = decltype(e);
    ScatterElementsKernel<E><<<c.blocks, c.threads, 0, s>>>(
        args, indices, static_cast<const E*>(updates), static_cast<E*>(y));
  });
}

cudaError_t LaunchGatherND(const dm::TupleArgs& args, const void* x, const int64_t* indices,
                           void* y, cudaStream_t s) {
  const LaunchConfig c = GridStrideLaunch(args.elements);
  return BySize(args.element_size, [&](auto e) {
    using E = decltype(e);
    GatherNDKernel<E><<<c.blocks, c.threads, 0, s>>>(args, static_cast<const E*>(x), indices,
                                                     static_cast<E*>(y));
  });
}

cudaError_t LaunchScatterND(const dm::TupleArgs& args, const int64_t* indices,
                            const void* updates, void* y, cudaStream_t s) {
  const LaunchConfig c = GridStrideLaunch(args.elements, 128);
  if (args.reduction != 0) {  // f32 only (planned so)
    ScatterNDKernel<float><<<c.blocks, c.threads, 0, s>>>(
        args, indices, static_cast<const float*>(updates), static_cast<float*>(y));
    return cudaGetLastError();
  }
  return BySize(args.element_size, [&](auto e) {
    using E = decltype(e);
    ScatterNDKernel<E><<<c.blocks, c.threads, 0, s>>>(args, indices,
                                                      static_cast<const E*>(updates),
                                                      static_cast<E*>(y));
  });
}

cudaError_t LaunchOneHot(const dm::OneHotArgs& args, const void* indices, const void* values,
                         void* y, cudaStream_t s) {
  const LaunchConfig c = GridStrideLaunch(args.elements);
  return BySize(args.element_size, [&](auto e) {
    using E = decltype(e);
    OneHotKernel<E><<<c.blocks, c.threads, 0, s>>>(args, indices, static_cast<const E*>(values),
                                                   static_cast<E*>(y));
  });
}

cudaError_t LaunchRange(const dm::RangeArgs& args, int type, const void* start,
                        const void* delta, void* y, cudaStream_t s) {
  const LaunchConfig c = GridStrideLaunch(args.length);
  switch (type) {
    case 0:  // f32: one thread accumulates (the reference's rounding)
      RangeF32Kernel<<<1, 1, 0, s>>>(args, static_cast<const float*>(start),
                                     static_cast<const float*>(delta), static_cast<float*>(y));
      break;
    case 1:
      RangeIntKernel<int32_t, uint32_t><<<c.blocks, c.threads, 0, s>>>(
          args, static_cast<const int32_t*>(start), static_cast<const int32_t*>(delta),
          static_cast<int32_t*>(y));
      break;
    default:
      RangeIntKernel<int64_t, uint64_t><<<c.blocks, c.threads, 0, s>>>(
          args, static_cast<const int64_t*>(start), static_cast<const int64_t*>(delta),
          static_cast<int64_t*>(y));
      break;
  }
  return cudaGetLastError();
}

cudaError_t LaunchEyeLike(const dm::EyeLikeArgs& args, void* y, cudaStream_t s) {
  const LaunchConfig c = GridStrideLaunch(args.elements);
  return BySize(args.element_size, [&](auto e) {
    using E = decltype(e);
    EyeLikeKernel<E><<<c.blocks, c.threads, 0, s>>>(args, static_cast<E*>(y));
  });
}

cudaError_t LaunchGridSample(const dm::GridSampleArgs& args, const float* x, const float* grid,
                             float* y, cudaStream_t s) {
  const LaunchConfig c = GridStrideLaunch(args.elements);
  GridSampleKernel<<<c.blocks, c.threads, 0, s>>>(args, x, grid, y);
  return cudaGetLastError();
}

cudaError_t LaunchNonMaxSuppression(const dm::NmsArgs& args, const float* boxes,
                                    const float* scores, const dm::NmsScalars& scalars,
                                    int64_t* workspace, int64_t* out, int64_t* total,
                                    cudaStream_t s) {
  const int64_t classes = args.batches * args.classes;
  const int64_t ranked = classes * args.boxes;
  const LaunchConfig rank = GridStrideLaunch(ranked, 128);
  NmsRankKernel<<<rank.blocks, rank.threads, 0, s>>>(args, scores, scalars, workspace, ranked);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  const LaunchConfig per_class = GridStrideLaunch(classes, 128);
  NmsSelectKernel<<<per_class.blocks, per_class.threads, 0, s>>>(args, boxes, scores, scalars,
                                                                 workspace, classes);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  NmsCompactKernel<<<per_class.blocks, per_class.threads, 0, s>>>(args, workspace, out, total,
                                                                  classes);
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
