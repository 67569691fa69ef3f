// The host CPU backend (kernels/backend_registry.h): device 0 of every
// session; its kernels are oneDNN's, braid's own and the reference ones.
#include "kernels/backend_registry.h"

namespace braid {

Backend CpuBackend() {
  Backend b;
  b.name = "cpu";
  b.kind = DeviceKind::kCpu;
  b.traits.host = true;
  b.traits.host_addressable = true;
  b.compute_units_label = "cores";
  b.open = [](const BackendOptions&) -> StatusOr<OpenedDevice> {
    OpenedDevice d;
    d.device = CreateCpuDevice();
    return d;
  };
  b.register_kernels = [](KernelRegistry& registry, const BackendOptions& o) {
    RegisterCpuKernels(registry, o.host_kernels);
  };
  return b;
}

}  // namespace braid
