// A test backend on the host: its device is host memory and the CPU's
// inline stream under the backend's own name and kind, so the engine and the
// op harness treat it as a device of its own (tests/backends/echo,
// tests/cuda's "cuda_emu").
//
//   braid::Backend b = braid::testing::HostMemoryBackend(
//       "echo", braid::DeviceKind::kFirstCustom, "echo: a test backend",
//       [](braid::KernelRegistry& registry) { /* entries for kFirstCustom */ });
#ifndef BRAID_TESTS_BACKENDS_HOST_MEMORY_DEVICE_H_
#define BRAID_TESTS_BACKENDS_HOST_MEMORY_DEVICE_H_

#include <functional>
#include <memory>
#include <string>

#include "kernels/backend_registry.h"

namespace braid::testing {

std::unique_ptr<Device> CreateHostMemoryDevice(const std::string& name, DeviceKind kind,
                                               const std::string& description);

// A Backend whose device is CreateHostMemoryDevice(name, kind, description)
// and whose kernels `register_kernels` registers.
Backend HostMemoryBackend(const std::string& name, DeviceKind kind,
                          const std::string& description,
                          std::function<void(KernelRegistry&)> register_kernels);

}  // namespace braid::testing

#endif  // BRAID_TESTS_BACKENDS_HOST_MEMORY_DEVICE_H_
