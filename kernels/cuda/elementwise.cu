// Elementwise CUDA kernels: grid-stride loops around kernels/device_math/elementwise.h.
#include <limits>

#include "kernels/cuda/launch.h"
#include "kernels/cuda/launch_config.h"

namespace braid::cuda {
namespace {

#define BRAID_GRID_STRIDE(i, n)                                                     \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

__global__ void UnaryKernel(dm::UnaryArgs args, const float* x, float* y) {
  BRAID_GRID_STRIDE(i, args.elements) y[i] = dm::UnaryElement(args, x[i]);
}

__global__ void BinaryKernel(dm::BinaryArgs args, const float* a, const float* b, void* y) {
  BRAID_GRID_STRIDE(i, args.elements) dm::BinaryElement(args, i, a, b, y);
}

__global__ void VariadicKernel(dm::VariadicArgs args, dm::VariadicInputs inputs, float* y) {
  BRAID_GRID_STRIDE(i, args.elements) dm::VariadicElement(args, i, inputs, y);
}

__global__ void LogicalKernel(dm::LogicalArgs args, const uint8_t* a, const uint8_t* b,
                              uint8_t* y) {
  BRAID_GRID_STRIDE(i, args.elements) dm::LogicalElement(args, i, a, b, y);
}

__global__ void PredicateKernel(dm::PredicateArgs args, const void* x, uint8_t* y) {
  BRAID_GRID_STRIDE(i, args.elements) dm::PredicateElement(args, i, x, y);
}

__global__ void WhereKernel(dm::WhereArgs args, const uint8_t* cond, const float* x,
                            const float* y, float* out) {
  BRAID_GRID_STRIDE(i, args.elements) dm::WhereElement(args, i, cond, x, y, out);
}

__global__ void EpilogueKernel(dm::EpilogueArgs args, const float* bias, float* y) {
  BRAID_GRID_STRIDE(i, args.elements) dm::EpilogueElement(args, i, bias, y);
}

__global__ void BatchNormKernel(dm::BatchNormArgs args, const float* x, const float* scale,
                                const float* bias, const float* mean, const float* var,
                                float* y) {
  BRAID_GRID_STRIDE(i, args.elements)
  dm::BatchNormElement(args, i, x, scale, bias, mean, var, y);
}

template <typename Q>
__global__ void QuantizeKernel(dm::QuantizeArgs args, const float* x, const float* scale,
                               const Q* zero_point, Q* y, float lo, float hi) {
  BRAID_GRID_STRIDE(i, args.elements)
  dm::QuantizeElement(args, i, x, scale, zero_point, y, lo, hi);
}

template <typename Q>
__global__ void DequantizeKernel(dm::QuantizeArgs args, const Q* x, const float* scale,
                                 const Q* zero_point, float* y) {
  BRAID_GRID_STRIDE(i, args.elements) dm::DequantizeElement(args, i, x, scale, zero_point, y);
}

template <typename Q>
cudaError_t LaunchQuantizeTyped(const dm::QuantizeArgs& args, bool quantize, const void* x,
                                const float* scale, const void* zero_point, void* y,
                                cudaStream_t s) {
  const LaunchConfig c = GridStrideLaunch(args.elements);
  if (quantize) {
    QuantizeKernel<Q><<<c.blocks, c.threads, 0, s>>>(
        args, static_cast<const float*>(x), scale, static_cast<const Q*>(zero_point),
        static_cast<Q*>(y), static_cast<float>(std::numeric_limits<Q>::min()),
        static_cast<float>(std::numeric_limits<Q>::max()));
  } else {
    DequantizeKernel<Q><<<c.blocks, c.threads, 0, s>>>(args, static_cast<const Q*>(x), scale,
                                                       static_cast<const Q*>(zero_point),
                                                       static_cast<float*>(y));
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchQuantizeLinear(const dm::QuantizeArgs& args, bool quantize,
                                 dm::QuantizedType quantized, const void* x, const float* scale,
                                 const void* zero_point, void* y, cudaStream_t s) {
  switch (quantized) {
    case dm::QuantizedType::kI8:
      return LaunchQuantizeTyped<int8_t>(args, quantize, x, scale, zero_point, y, s);
    case dm::QuantizedType::kU8:
      return LaunchQuantizeTyped<uint8_t>(args, quantize, x, scale, zero_point, y, s);
    case dm::QuantizedType::kI32:
      return LaunchQuantizeTyped<int32_t>(args, false, x, scale, zero_point, y, s);
  }
  return cudaErrorInvalidValue;
}

cudaError_t LaunchUnary(const dm::UnaryArgs& args, const float* x, float* y, cudaStream_t s) {
  const LaunchConfig c = GridStrideLaunch(args.elements);
  UnaryKernel<<<c.blocks, c.threads, 0, s>>>(args, x, y);
  return cudaGetLastError();
}

cudaError_t LaunchBinary(const dm::BinaryArgs& args, const float* a, const float* b, void* y,
                         cudaStream_t s) {
  const LaunchConfig c = GridStrideLaunch(args.elements);
  BinaryKernel<<<c.blocks, c.threads, 0, s>>>(args, a, b, y);
  return cudaGetLastError();
}

cudaError_t LaunchVariadic(const dm::VariadicArgs& args, const dm::VariadicInputs& inputs,
                           float* y, cudaStream_t s) {
  const LaunchConfig c = GridStrideLaunch(args.elements);
  VariadicKernel<<<c.blocks, c.threads, 0, s>>>(args, inputs, y);
  return cudaGetLastError();
}

cudaError_t LaunchLogical(const dm::LogicalArgs& args, const uint8_t* a, const uint8_t* b,
                          uint8_t* y, cudaStream_t s) {
  const LaunchConfig c = GridStrideLaunch(args.elements);
  LogicalKernel<<<c.blocks, c.threads, 0, s>>>(args, a, b, y);
  return cudaGetLastError();
}

cudaError_t LaunchPredicate(const dm::PredicateArgs& args, const void* x, uint8_t* y,
                            cudaStream_t s) {
  const LaunchConfig c = GridStrideLaunch(args.elements);
  PredicateKernel<<<c.blocks, c.threads, 0, s>>>(args, x, y);
  return cudaGetLastError();
}

cudaError_t LaunchWhere(const dm::WhereArgs& args, const uint8_t* cond, const float* x,
                        const float* y, float* out, cudaStream_t s) {
  const LaunchConfig c = GridStrideLaunch(args.elements);
  WhereKernel<<<c.blocks, c.threads, 0, s>>>(args, cond, x, y, out);
  return cudaGetLastError();
}

cudaError_t LaunchEpilogue(const dm::EpilogueArgs& args, const float* bias, float* y,
                           cudaStream_t s) {
  const LaunchConfig c = GridStrideLaunch(args.elements);
  EpilogueKernel<<<c.blocks, c.threads, 0, s>>>(args, bias, y);
  return cudaGetLastError();
}

cudaError_t LaunchBatchNorm(const dm::BatchNormArgs& args, const float* x, const float* scale,
                            const float* bias, const float* mean, const float* var, float* y,
                            cudaStream_t s) {
  const LaunchConfig c = GridStrideLaunch(args.elements);
  BatchNormKernel<<<c.blocks, c.threads, 0, s>>>(args, x, scale, bias, mean, var, y);
  return cudaGetLastError();
}

}  // namespace braid::cuda
