// Registers the reference compute kernels (one file per op family in this
// directory) under impl "reference", priority 0, on the CPU.
#include "kernels/reference/registration.h"

namespace braid {

void RegisterReferenceConv(KernelRegistry& registry);          // conv.cc
void RegisterReferenceConvTranspose(KernelRegistry& registry);  // conv_transpose.cc
void RegisterReferenceMaxPool(KernelRegistry& registry);       // max_pool.cc
void RegisterReferenceAveragePool(KernelRegistry& registry);   // average_pool.cc
void RegisterReferenceGlobalPools(KernelRegistry& registry);   // global_pool.cc
void RegisterReferenceGemm(KernelRegistry& registry);          // gemm.cc
void RegisterReferenceMatMul(KernelRegistry& registry);        // matmul.cc
void RegisterReferenceEinsum(KernelRegistry& registry);        // einsum.cc
void RegisterReferenceBatchNorm(KernelRegistry& registry);     // batch_norm.cc
void RegisterReferenceLayerNorm(KernelRegistry& registry);     // layer_norm.cc
void RegisterReferenceInstanceNorm(KernelRegistry& registry);  // instance_norm.cc
void RegisterReferenceSoftmax(KernelRegistry& registry);       // softmax.cc (+ LogSoftmax, Hardmax)
void RegisterReferenceLosses(KernelRegistry& registry);        // loss.cc
void RegisterReferenceReduce(KernelRegistry& registry);        // reduce.cc
void RegisterReferenceLRN(KernelRegistry& registry);           // lrn_mvn.cc
void RegisterReferenceMeanVarianceNorm(KernelRegistry& registry);  // lrn_mvn.cc
void RegisterReferenceGridSample(KernelRegistry& registry);    // grid_sample.cc
void RegisterReferenceRecurrent(KernelRegistry& registry);     // recurrent.cc
void RegisterReferenceDet(KernelRegistry& registry);           // det.cc
void RegisterReferenceMaxUnpool(KernelRegistry& registry);     // max_unpool.cc
void RegisterReferenceRoiAlign(KernelRegistry& registry);      // roi_align.cc
void RegisterReferenceQuantizeLinear(KernelRegistry& registry);  // quantize.cc
void RegisterReferenceQuantizedProducts(KernelRegistry& registry);  // quantized.cc

void RegisterReferenceComputeKernels(KernelRegistry& registry) {
  RegisterReferenceConv(registry);
  RegisterReferenceConvTranspose(registry);
  RegisterReferenceMaxPool(registry);
  RegisterReferenceAveragePool(registry);
  RegisterReferenceGlobalPools(registry);
  RegisterReferenceGemm(registry);
  RegisterReferenceMatMul(registry);
  RegisterReferenceEinsum(registry);
  RegisterReferenceBatchNorm(registry);
  RegisterReferenceLayerNorm(registry);
  RegisterReferenceInstanceNorm(registry);
  RegisterReferenceSoftmax(registry);
  RegisterReferenceLosses(registry);
  RegisterReferenceReduce(registry);
  RegisterReferenceLRN(registry);
  RegisterReferenceMeanVarianceNorm(registry);
  RegisterReferenceGridSample(registry);
  RegisterReferenceRecurrent(registry);
  RegisterReferenceDet(registry);
  RegisterReferenceMaxUnpool(registry);
  RegisterReferenceRoiAlign(registry);
  RegisterReferenceQuantizeLinear(registry);
  RegisterReferenceQuantizedProducts(registry);
}

}  // namespace braid
