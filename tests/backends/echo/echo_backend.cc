#include "tests/backends/echo/echo_backend.h"

#include <utility>

#include "tests/backends/host_memory_device.h"

namespace braid::testing {
namespace {

// The first kind free for a backend defined outside kernels/.
constexpr DeviceKind kEchoKind = DeviceKind::kFirstCustom;

}  // namespace

const std::vector<std::string>& EchoOpTypes() {
  static const std::vector<std::string> ops = {"Add",  "AveragePool", "Flatten",
                                               "Gemm", "GlobalAveragePool", "MaxPool",
                                               "Relu"};
  return ops;
}

Backend EchoBackend() {
  return HostMemoryBackend("echo", kEchoKind,
                           "echo: a test backend (reference kernels in host memory)",
                           [](KernelRegistry& registry) {
                             KernelRegistry reference;
                             RegisterReferenceKernels(reference);
                             for (const std::string& op : EchoOpTypes())
                               for (const KernelEntry* e :
                                    reference.Candidates(op, DeviceKind::kCpu)) {
                                 KernelEntry copy = *e;
                                 copy.device = kEchoKind;
                                 copy.impl = "echo";
                                 registry.Register(std::move(copy));
                               }
                           });
}

}  // namespace braid::testing
