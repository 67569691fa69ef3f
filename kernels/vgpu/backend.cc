// The virtual GPU backend (kernels/backend_registry.h): the CPU kernels on
// their own worker thread(s) and memory, its times shaped by a model; a test
// and demo device, never a GPU measurement.
#include "kernels/backend_registry.h"

namespace braid {

Backend VgpuBackend() {
  Backend b;
  b.name = "vgpu";
  b.kind = DeviceKind::kVirtualGpu;
  b.traits.virtual_device = true;
  b.traits.real_device_times = false;
  b.compute_units_label = "worker thread(s) (virtual)";
  b.open = [](const BackendOptions& o) -> StatusOr<OpenedDevice> {
    VgpuOptions vgpu;
    vgpu.timing = o.vgpu_timing;
    if (o.threads > 0) vgpu.threads = o.threads;
    OpenedDevice d;
    d.device = CreateVgpuDevice(vgpu);
    d.threads = vgpu.threads;
    d.note = "vgpu: braid's VIRTUAL GPU (CPU kernels on their own thread and memory); "
             "its times are a model, not a GPU measurement; timing shaping: " +
             vgpu.timing.Describe();
    return d;
  };
  b.register_kernels = [](KernelRegistry& registry, const BackendOptions& o) {
    RegisterVgpuKernels(registry, o.host_kernels);
  };
  b.list = []() -> StatusOr<std::vector<DeviceListing>> {
    DeviceListing l;
    l.info = CreateVgpuDevice()->info();
    // Its memory is the host's.
    l.info.memory_bytes = CreateCpuDevice()->info().memory_bytes;
    l.extra = {{"virtual", "true"}};
    return std::vector<DeviceListing>{std::move(l)};
  };
  b.kernel_time = [](const Device& device, double flops, double bytes) {
    return static_cast<const VgpuDevice&>(device).timing().KernelTime(flops, bytes);
  };
  return b;
}

}  // namespace braid
