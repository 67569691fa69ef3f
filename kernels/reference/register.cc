#include "kernels/cpu/cpu_device.h"
#include "kernels/reference/registration.h"

namespace braid {

void RegisterReferenceKernels(KernelRegistry& registry) {
  RegisterReferenceComputeKernels(registry);
  RegisterReferenceElementwiseAndDataKernels(registry);
}

}  // namespace braid
