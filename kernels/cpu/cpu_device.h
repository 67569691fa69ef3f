// The host CPU as a braid Device.
//
//   std::unique_ptr<braid::Device> cpu = braid::CreateCpuDevice();
//   auto buffer = cpu->Allocate(1 << 20);       // 64-byte aligned host memory
//   auto stream = cpu->CreateStream();          // runs submitted work inline
#ifndef BRAID_KERNELS_CPU_CPU_DEVICE_H_
#define BRAID_KERNELS_CPU_CPU_DEVICE_H_

#include <memory>

#include "kernels/backend.h"

namespace braid {

std::unique_ptr<Device> CreateCpuDevice();

// Registers every CPU kernel: oneDNN first, braid's own CPU kernels next,
// reference kernels last (kernels/reference/).
void RegisterCpuKernels(KernelRegistry& registry);
void RegisterReferenceKernels(KernelRegistry& registry);

}  // namespace braid

#endif  // BRAID_KERNELS_CPU_CPU_DEVICE_H_
