#include "kernels/reference/data_kernel_util.h"
#include "kernels/reference/registration.h"

namespace braid {

void RegisterReferenceElementwiseAndDataKernels(KernelRegistry& registry) {
  reference::RegisterBinaryKernels(registry);
  reference::RegisterUnaryKernels(registry);
  reference::RegisterClipKernel(registry);
  reference::RegisterCastKernel(registry);
  reference::RegisterWhereKernel(registry);
  reference::RegisterCopyKernels(registry);
  reference::RegisterShapeKernel(registry);
  reference::RegisterGatherKernel(registry);
  reference::RegisterSliceKernel(registry);
  reference::RegisterConcatKernel(registry);
  reference::RegisterSplitKernel(registry);
  reference::RegisterTransposeKernel(registry);
  reference::RegisterExpandKernel(registry);
  reference::RegisterPadKernel(registry);
  reference::RegisterResizeKernel(registry);
  reference::RegisterConstantOfShapeKernel(registry);
  reference::RegisterRangeKernel(registry);
  reference::RegisterScatterNDKernel(registry);
  reference::RegisterTileKernel(registry);
  reference::RegisterCumSumKernel(registry);
  reference::RegisterGatherScatterElementsKernels(registry);
  reference::RegisterGatherNDKernel(registry);
  reference::RegisterOneHotKernel(registry);
  reference::RegisterReverseSequenceKernel(registry);
  reference::RegisterDepthToSpaceKernels(registry);
  reference::RegisterArgReduceKernels(registry);
  reference::RegisterTopKKernel(registry);
  reference::RegisterNonMaxSuppressionKernel(registry);
  reference::RegisterTriluKernel(registry);
  reference::RegisterEyeLikeKernel(registry);
}

}  // namespace braid
