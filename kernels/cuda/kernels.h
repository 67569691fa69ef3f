// Factories of the CUDA kernels, one per op family file; register.cc maps
// op types to them (RegisterCudaKernels).
#ifndef BRAID_KERNELS_CUDA_KERNELS_H_
#define BRAID_KERNELS_CUDA_KERNELS_H_

#include <memory>

#include "kernels/backend.h"

namespace braid::cuda {

// elementwise_kernels.cc
std::unique_ptr<Kernel> CreateUnaryCuda();
std::unique_ptr<Kernel> CreateBinaryCuda();
std::unique_ptr<Kernel> CreateVariadicCuda();   // Sum, Mean, Max, Min
std::unique_ptr<Kernel> CreateLogicalCuda();    // And, Or, Xor
std::unique_ptr<Kernel> CreatePredicateCuda();  // Not, IsNaN, IsInf
std::unique_ptr<Kernel> CreateWhereCuda();
std::unique_ptr<Kernel> CreateBatchNormCuda();
// data_kernels.cc
std::unique_ptr<Kernel> CreateCopyCuda();
std::unique_ptr<Kernel> CreateTransposeCuda();
std::unique_ptr<Kernel> CreateSliceCuda();
std::unique_ptr<Kernel> CreateExpandCuda();
std::unique_ptr<Kernel> CreateGatherCuda();
std::unique_ptr<Kernel> CreatePadCuda();
std::unique_ptr<Kernel> CreateTileCuda();
std::unique_ptr<Kernel> CreateDepthSpaceCuda();  // DepthToSpace, SpaceToDepth
std::unique_ptr<Kernel> CreateResizeCuda();  // Resize, Upsample
std::unique_ptr<Kernel> CreateCastCuda();    // Cast, CastLike
std::unique_ptr<Kernel> CreateTriluCuda();
std::unique_ptr<Kernel> CreateGatherElementsCuda();
std::unique_ptr<Kernel> CreateScatterElementsCuda();  // and Scatter
std::unique_ptr<Kernel> CreateGatherNDCuda();
std::unique_ptr<Kernel> CreateScatterNDCuda();
std::unique_ptr<Kernel> CreateOneHotCuda();
std::unique_ptr<Kernel> CreateRangeCuda();
std::unique_ptr<Kernel> CreateEyeLikeCuda();
std::unique_ptr<Kernel> CreateGridSampleCuda();
std::unique_ptr<Kernel> CreateNonMaxSuppressionCuda();
std::unique_ptr<Kernel> CreateConcatCuda();
std::unique_ptr<Kernel> CreateSplitCuda();
// reduce_kernels.cc
std::unique_ptr<Kernel> CreateSoftmaxCuda();
std::unique_ptr<Kernel> CreateReduceCuda();
std::unique_ptr<Kernel> CreatePoolCuda();
std::unique_ptr<Kernel> CreateLayerNormCuda();
std::unique_ptr<Kernel> CreateArgReduceCuda();  // ArgMax, ArgMin
std::unique_ptr<Kernel> CreateCumSumCuda();
std::unique_ptr<Kernel> CreateTopKCuda();
std::unique_ptr<Kernel> CreateEinsumCuda();
std::unique_ptr<Kernel> CreateQuantizeLinearCuda();  // QuantizeLinear, DequantizeLinear
std::unique_ptr<Kernel> CreateGroupNormCuda();  // InstanceNormalization, GroupNormalization
// gemm_cublas.cc
std::unique_ptr<Kernel> CreateGemmCublas();
std::unique_ptr<Kernel> CreateMatMulCublas();
// conv_cudnn.cc
std::unique_ptr<Kernel> CreateConvCudnn();
// conv_transpose_cudnn.cc
std::unique_ptr<Kernel> CreateConvTransposeCudnn();

}  // namespace braid::cuda

#endif  // BRAID_KERNELS_CUDA_KERNELS_H_
