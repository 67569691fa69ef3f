// RegisterCudaKernels: every CUDA kernel under DeviceKind::kCuda. cuDNN and
// cuBLAS kernels get priority 20, hand-written .cu kernels 10 (the order
// PrepareFirstAccepting tries them, as on the CPU).
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/kernels.h"
#include "kernels/cuda/plans.h"

namespace braid {

void RegisterCudaKernels(KernelRegistry& registry) {
  using Factory = std::unique_ptr<Kernel> (*)();
  auto add = [&](const char* op, const char* impl, int priority, Factory create) {
    registry.Register(KernelEntry{op, DeviceKind::kCuda, impl, priority,
                                  [create] { return create(); }});
  };
  auto cu = [&](const char* op, Factory create) { add(op, "cuda", 10, create); };

  add("Conv", "cudnn", 20, &cuda::CreateConvCudnn);
  add("ConvTranspose", "cudnn", 20, &cuda::CreateConvTransposeCudnn);
  add("Gemm", "cublas", 20, &cuda::CreateGemmCublas);
  add("MatMul", "cublas", 20, &cuda::CreateMatMulCublas);

  for (const char* op : cuda::UnaryOpTypes()) cu(op, &cuda::CreateUnaryCuda);
  for (const char* op : cuda::BinaryOpTypes()) cu(op, &cuda::CreateBinaryCuda);
  for (const char* op : cuda::VariadicOpTypes()) cu(op, &cuda::CreateVariadicCuda);
  for (const char* op : {"And", "Or", "Xor"}) cu(op, &cuda::CreateLogicalCuda);
  for (const char* op : {"Not", "IsNaN", "IsInf"}) cu(op, &cuda::CreatePredicateCuda);
  cu("Where", &cuda::CreateWhereCuda);
  cu("BatchNormalization", &cuda::CreateBatchNormCuda);
  for (const char* op : {"QuantizeLinear", "DequantizeLinear"}) cu(op, &cuda::CreateQuantizeLinearCuda);

  for (const char* op : {"Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Dropout"})
    cu(op, &cuda::CreateCopyCuda);
  cu("Transpose", &cuda::CreateTransposeCuda);
  cu("Slice", &cuda::CreateSliceCuda);
  cu("Expand", &cuda::CreateExpandCuda);
  cu("Gather", &cuda::CreateGatherCuda);
  cu("Pad", &cuda::CreatePadCuda);
  cu("Tile", &cuda::CreateTileCuda);
  for (const char* op : {"DepthToSpace", "SpaceToDepth"}) cu(op, &cuda::CreateDepthSpaceCuda);
  for (const char* op : {"Resize", "Upsample"}) cu(op, &cuda::CreateResizeCuda);
  for (const char* op : {"Cast", "CastLike"}) cu(op, &cuda::CreateCastCuda);
  cu("Trilu", &cuda::CreateTriluCuda);
  cu("GatherElements", &cuda::CreateGatherElementsCuda);
  // Scatter (opsets 9-10) is ScatterElements without `reduction`.
  for (const char* op : {"ScatterElements", "Scatter"}) cu(op, &cuda::CreateScatterElementsCuda);
  cu("GatherND", &cuda::CreateGatherNDCuda);
  cu("ScatterND", &cuda::CreateScatterNDCuda);
  cu("OneHot", &cuda::CreateOneHotCuda);
  cu("Range", &cuda::CreateRangeCuda);
  cu("EyeLike", &cuda::CreateEyeLikeCuda);
  cu("GridSample", &cuda::CreateGridSampleCuda);
  cu("NonMaxSuppression", &cuda::CreateNonMaxSuppressionCuda);
  cu("Concat", &cuda::CreateConcatCuda);
  cu("Split", &cuda::CreateSplitCuda);

  cu("Softmax", &cuda::CreateSoftmaxCuda);
  for (const char* op : cuda::ReduceOpTypes()) cu(op, &cuda::CreateReduceCuda);
  for (const char* op : {"MaxPool", "AveragePool", "GlobalMaxPool", "GlobalAveragePool"})
    cu(op, &cuda::CreatePoolCuda);
  cu("LayerNormalization", &cuda::CreateLayerNormCuda);
  for (const char* op : {"ArgMax", "ArgMin"}) cu(op, &cuda::CreateArgReduceCuda);
  cu("CumSum", &cuda::CreateCumSumCuda);
  cu("TopK", &cuda::CreateTopKCuda);
  cu("Einsum", &cuda::CreateEinsumCuda);
  for (const char* op : {"InstanceNormalization", "GroupNormalization"})
    cu(op, &cuda::CreateGroupNormCuda);
}

}  // namespace braid
