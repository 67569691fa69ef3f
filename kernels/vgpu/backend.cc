// The virtual GPU backend (kernels/backend_registry.h): the CPU kernels on
// their own worker thread(s) and memory, its times shaped by a model; a test
// and demo device, never a GPU measurement.
#include "kernels/backend_registry.h"

#include <algorithm>

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
  b.figures = [](const Device& device,
                 const DerivedFigures& host) -> std::optional<DerivedFigures> {
    const auto& vgpu = static_cast<const VgpuDevice&>(device);
    const VgpuTiming& t = vgpu.timing();
    // The vgpu runs the CPU kernels on its own thread(s): never faster than
    // that many host threads, slower when its timing model says so.
    const double threads = std::max(1, vgpu.threads());
    const double thread_share = threads / std::max(1, host.compute_units);
    DerivedFigures d;
    d.kind = "vgpu";
    d.description = "braid's virtual GPU (" + t.Describe() + "); a test device, not a GPU";
    d.compute_units = static_cast<int>(threads);
    d.peak_gflops = host.peak_gflops * thread_share;
    d.memory_bandwidth_gbps = host.memory_bandwidth_gbps;
    d.launch_overhead_us = host.launch_overhead_us;
    if (t.enabled) {
      if (t.peak_gflops > 0) d.peak_gflops = std::min(d.peak_gflops, t.peak_gflops);
      if (t.mem_gbps > 0) d.memory_bandwidth_gbps = std::min(d.memory_bandwidth_gbps, t.mem_gbps);
      d.launch_overhead_us = std::max(d.launch_overhead_us, t.launch_us);
    }
    d.source = "derived: min(the vgpu's timing model, its share of the host CPU's estimate)";
    // A copy is a memcpy by the vgpu's worker, padded to the timing model.
    d.copy_latency_us = t.enabled ? std::max(t.copy_latency_us, 5.0) : 5.0;
    d.copy_bandwidth_gbps = t.enabled && t.copy_gbps > 0 ? std::min(t.copy_gbps, 10.0) : 10.0;
    d.copy_source = "estimate: vgpu copy (memcpy on its worker thread, shaped)";
    return d;
  };
  b.fallback_profile = "host-vgpu";
  return b;
}

}  // namespace braid
