// Registration entry points of the reference kernels, split by op family so
// that each family's files stay together. RegisterReferenceKernels
// (kernels/cpu/cpu_device.h) calls both.
#ifndef BRAID_KERNELS_REFERENCE_REGISTRATION_H_
#define BRAID_KERNELS_REFERENCE_REGISTRATION_H_

#include "kernels/backend.h"

namespace braid {

// Conv, pools, Gemm, MatMul, normalizations, Softmax, reductions.
void RegisterReferenceComputeKernels(KernelRegistry& registry);
// Elementwise unary/binary ops, Cast, Where, and the data-movement ops
// (Shape, Gather, Slice, Concat, Split, Transpose, Reshape, Pad, ...).
void RegisterReferenceElementwiseAndDataKernels(KernelRegistry& registry);

}  // namespace braid

#endif  // BRAID_KERNELS_REFERENCE_REGISTRATION_H_
