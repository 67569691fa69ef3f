// Session::Open: the public entry point with the full kernel registry and the
// devices named in SessionOptions::devices. Kept apart from session.cc so a
// program that builds sessions with its own registry (tests) does not link
// every backend's kernels.
#include <cstdlib>

#include "kernels/cpu/cpu_device.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/vgpu/vgpu_device.h"
#include "runtime/model_loader.h"
#include "runtime/session_internal.h"

namespace braid {
namespace {

// "cuda" -> 0, "cuda:K" -> K.
int CudaOrdinal(const std::string& name) {
  if (name.size() <= 5) return 0;
  const long k = std::strtol(name.c_str() + 5, nullptr, 10);
  return k > 1 << 20 ? 1 << 20 : static_cast<int>(k);
}

StatusOr<std::vector<SessionDevice>> OpenDevices(const SessionOptions& options,
                                                 KernelRegistry& registry) {
  std::vector<SessionDevice> devices(1);
  devices[0].device = CreateCpuDevice();  // always: the host
  RegisterCpuKernels(registry);
  bool cuda_kernels = false;
  for (const std::string& name : options.devices) {
    if (name == "cpu") continue;
    SessionDevice d;
    if (name == "vgpu") {
      VgpuOptions vgpu;
      ASSIGN_OR_RETURN(vgpu.timing, VgpuTimingPreset(options.vgpu_timing));
      d.device = CreateVgpuDevice(vgpu);
      d.threads = vgpu.threads;
      RegisterVgpuKernels(registry);
    } else {
      const int ordinal = CudaOrdinal(name);
      ASSIGN_OR_RETURN(d.device, CreateCudaDevice(ordinal));
      // An integrated GPU that maps host memory shares the host arena.
      StatusOr<std::vector<CudaDeviceProperties>> props = QueryCudaDevices();
      if (props.ok())
        for (const CudaDeviceProperties& p : *props)
          if (p.ordinal == ordinal) d.host_addressable = p.integrated && p.can_map_host_memory;
      if (!cuda_kernels) RegisterCudaKernels(registry);
      cuda_kernels = true;
    }
    devices.push_back(std::move(d));
  }
  return devices;
}

}  // namespace

StatusOr<std::unique_ptr<Session>> Session::Open(const std::string& model,
                                                 const SessionOptions& options) {
  RETURN_IF_ERROR(ValidateSessionOptions(options));
  auto registry = std::make_shared<KernelRegistry>();
  // Devices before the model: an unavailable device is reported first.
  ASSIGN_OR_RETURN(std::vector<SessionDevice> devices, OpenDevices(options, *registry));
  ASSIGN_OR_RETURN(Graph graph, LoadGraphForExecution(model, options.fuse));
  return CreateSession(std::move(graph), options, std::move(registry), std::move(devices));
}

}  // namespace braid
