// The CUDA backend (kernels/backend_registry.h), through cuda_backend.h in
// every build: compiled in, the plugin lib/libbraid_cuda.so loaded on first
// use, or a build without CUDA, whose open reports Unavailable.
#include "kernels/backend_registry.h"
#include "kernels/cuda/cuda_backend.h"

namespace braid {

Backend CudaBackend() {
  Backend b;
  b.name = "cuda";
  b.kind = DeviceKind::kCuda;
  b.traits.async_streams = true;
  b.traits.indexed = true;
  b.compute_units_label = "SMs";
  b.open = [](const BackendOptions& o) -> StatusOr<OpenedDevice> {
    OpenedDevice d;
    ASSIGN_OR_RETURN(d.device, CreateCudaDevice(o.index));
    // An integrated GPU that maps host memory shares the host arena.
    StatusOr<std::vector<CudaDeviceProperties>> props = QueryCudaDevices();
    if (props.ok())
      for (const CudaDeviceProperties& p : *props)
        if (p.ordinal == o.index) d.host_addressable = p.integrated && p.can_map_host_memory;
    return d;
  };
  b.register_kernels = [](KernelRegistry& registry, const BackendOptions&) {
    RegisterCudaKernels(registry);
  };
  b.list = []() -> StatusOr<std::vector<DeviceListing>> {
    ASSIGN_OR_RETURN(std::vector<CudaDeviceProperties> gpus, QueryCudaDevices());
    std::vector<DeviceListing> rows;
    for (const CudaDeviceProperties& p : gpus) {
      DeviceListing r;
      r.info.name = "cuda:" + std::to_string(p.ordinal);
      r.info.kind = DeviceKind::kCuda;
      r.info.description = p.name + " (" + p.Summary() + ")";
      r.info.memory_bytes = p.total_memory;
      r.info.compute_units = p.multiprocessors;
      r.extra = {{"compute_capability",
                  "\"" + std::to_string(p.cc_major) + "." + std::to_string(p.cc_minor) + "\""},
                 {"integrated", p.integrated ? "true" : "false"},
                 {"unified_addressing", p.unified_addressing ? "true" : "false"},
                 {"can_map_host_memory", p.can_map_host_memory ? "true" : "false"},
                 {"clock_khz", std::to_string(p.clock_khz)},
                 {"driver_version", std::to_string(p.driver_version)},
                 {"runtime_version", std::to_string(p.runtime_version)}};
      rows.push_back(std::move(r));
    }
    return rows;
  };
  return b;
}

}  // namespace braid
