// Reduction-shaped CUDA kernels around kernels/device_math/reduce.h: Softmax,
// every Reduce*, pooling, ArgMax / ArgMin, CumSum, TopK and Einsum one thread
// per output (column, slice, element); LayerNormalization one block per row with
// shared-memory reductions.
#include "kernels/cuda/launch.h"
#include "kernels/cuda/launch_config.h"

namespace braid::cuda {
namespace {

#define BRAID_GRID_STRIDE(i, n)                                                     \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

__global__ void SoftmaxKernel(dm::SoftmaxArgs args, const float* x, float* y) {
  BRAID_GRID_STRIDE(j, args.columns) dm::SoftmaxColumn(args, j, x, y);
}

__global__ void ReduceKernel(dm::ReduceArgs args, const float* x, float* y) {
  BRAID_GRID_STRIDE(j, args.outputs) dm::ReduceElement(args, j, x, y);
}

__global__ void PoolKernel(dm::PoolArgs args, const float* x, float* y) {
  BRAID_GRID_STRIDE(j, args.outputs) dm::PoolElement(args, j, x, y);
}

__global__ void ArgReduceKernel(dm::ArgReduceArgs args, const float* x, int64_t* y) {
  BRAID_GRID_STRIDE(j, args.outputs) dm::ArgReduceElement(args, j, x, y);
}

__global__ void CumSumKernel(dm::CumSumArgs args, const float* x, float* y) {
  BRAID_GRID_STRIDE(j, args.columns) dm::CumSumColumn(args, j, x, y);
}

__global__ void TopKKernel(dm::TopKArgs args, const float* x, float* values, int64_t* indices) {
  BRAID_GRID_STRIDE(j, args.slices) dm::TopKSlice(args, j, x, values, indices);
}

__global__ void EinsumKernel(dm::EinsumArgs args, dm::EinsumOperands x, float* y) {
  BRAID_GRID_STRIDE(i, args.elements) dm::EinsumElement(args, i, x, y);
}

// Sum of `value` over the block (blockDim.x a power of two <= 1024).
__device__ float BlockSum(float value, float* shared) {
  shared[threadIdx.x] = value;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) shared[threadIdx.x] += shared[threadIdx.x + half];
    __syncthreads();
  }
  const float total = shared[0];
  __syncthreads();
  return total;
}

__global__ void LayerNormKernel(dm::LayerNormArgs args, const float* x, const float* scale,
                                const float* bias, float* y, float* mean_out,
                                float* inv_std_out) {
  extern __shared__ float shared[];
  const int tid = static_cast<int>(threadIdx.x);
  const int threads = static_cast<int>(blockDim.x);
  for (int64_t row = blockIdx.x; row < args.rows; row += gridDim.x) {
    const float* xr = x + row * args.inner;
    const float n = static_cast<float>(args.inner);
    const float mean = BlockSum(dm::LayerNormPartial(args, xr, tid, threads, 0, 0.0f), shared) / n;
    const float var = BlockSum(dm::LayerNormPartial(args, xr, tid, threads, 1, mean), shared) / n;
    const float inv_std = rsqrtf(var + args.epsilon);
    for (int64_t i = tid; i < args.inner; i += threads)
      dm::LayerNormElement(args, row, i, x, scale, bias, mean, inv_std, y);
    if (tid == 0 && mean_out != nullptr) mean_out[row] = mean;
    if (tid == 0 && inv_std_out != nullptr) inv_std_out[row] = inv_std;
  }
}

}  // namespace

cudaError_t LaunchSoftmax(const dm::SoftmaxArgs& args, const float* x, float* y,
                          cudaStream_t s) {
  const LaunchConfig c = GridStrideLaunch(args.columns, 128);
  SoftmaxKernel<<<c.blocks, c.threads, 0, s>>>(args, x, y);
  return cudaGetLastError();
}

cudaError_t LaunchReduce(const dm::ReduceArgs& args, const float* x, float* y, cudaStream_t s) {
  const LaunchConfig c = GridStrideLaunch(args.outputs, 128);
  ReduceKernel<<<c.blocks, c.threads, 0, s>>>(args, x, y);
  return cudaGetLastError();
}

cudaError_t LaunchPool(const dm::PoolArgs& args, const float* x, float* y, cudaStream_t s) {
  const LaunchConfig c = GridStrideLaunch(args.outputs);
  PoolKernel<<<c.blocks, c.threads, 0, s>>>(args, x, y);
  return cudaGetLastError();
}

cudaError_t LaunchArgReduce(const dm::ArgReduceArgs& args, const float* x, int64_t* y,
                            cudaStream_t s) {
  const LaunchConfig c = GridStrideLaunch(args.outputs, 128);
  ArgReduceKernel<<<c.blocks, c.threads, 0, s>>>(args, x, y);
  return cudaGetLastError();
}

cudaError_t LaunchCumSum(const dm::CumSumArgs& args, const float* x, float* y, cudaStream_t s) {
  const LaunchConfig c = GridStrideLaunch(args.columns, 128);
  CumSumKernel<<<c.blocks, c.threads, 0, s>>>(args, x, y);
  return cudaGetLastError();
}

cudaError_t LaunchTopK(const dm::TopKArgs& args, const float* x, float* values,
                       int64_t* indices, cudaStream_t s) {
  const LaunchConfig c = GridStrideLaunch(args.slices, 128);
  TopKKernel<<<c.blocks, c.threads, 0, s>>>(args, x, values, indices);
  return cudaGetLastError();
}

cudaError_t LaunchEinsum(const dm::EinsumArgs& args, const dm::EinsumOperands& x, float* y,
                         cudaStream_t s) {
  const LaunchConfig c = GridStrideLaunch(args.elements, 128);
  EinsumKernel<<<c.blocks, c.threads, 0, s>>>(args, x, y);
  return cudaGetLastError();
}

cudaError_t LaunchLayerNorm(const dm::LayerNormArgs& args, const float* x, const float* scale,
                            const float* bias, float* y, float* mean, float* inv_std,
                            cudaStream_t s) {
  const LaunchConfig c = RowLaunch(args.rows, args.inner);
  LayerNormKernel<<<c.blocks, c.threads, c.threads * sizeof(float), s>>>(
      args, x, scale, bias, y, mean, inv_std);
  return cudaGetLastError();
}

}  // namespace braid::cuda
