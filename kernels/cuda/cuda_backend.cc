// cuda_backend.h in a build with CUDA: discovery and device creation.
#include "kernels/cuda/cuda_backend.h"

#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/cuda_status.h"

namespace braid {

bool CudaBackendCompiled() { return true; }

StatusOr<std::vector<CudaDeviceProperties>> QueryCudaDevices() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    return Unavailable(cuda::CudaUnavailableReason(err));
  }
  if (count <= 0)
    return Unavailable(
        "cuda: unavailable: no CUDA device is visible (CUDA_VISIBLE_DEVICES may hide them)");
  int driver = 0, runtime = 0;
  CUDA_RETURN_IF_ERROR(cudaDriverGetVersion(&driver));
  CUDA_RETURN_IF_ERROR(cudaRuntimeGetVersion(&runtime));
  std::vector<CudaDeviceProperties> out;
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    CUDA_RETURN_IF_ERROR(cudaGetDeviceProperties(&prop, i));
    CudaDeviceProperties p;
    p.ordinal = i;
    p.name = prop.name;
    p.cc_major = prop.major;
    p.cc_minor = prop.minor;
    p.total_memory = prop.totalGlobalMem;
    p.multiprocessors = prop.multiProcessorCount;
    p.integrated = prop.integrated != 0;
    p.unified_addressing = prop.unifiedAddressing != 0;
    p.can_map_host_memory = prop.canMapHostMemory != 0;
    p.concurrent_managed_access = prop.concurrentManagedAccess != 0;
    p.memory_bus_width_bits = prop.memoryBusWidth;
    p.l2_cache_bytes = prop.l2CacheSize;
    CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&p.clock_khz, cudaDevAttrClockRate, i));
    p.driver_version = driver;
    p.runtime_version = runtime;
    out.push_back(std::move(p));
  }
  return out;
}

StatusOr<std::unique_ptr<Device>> CreateCudaDevice(int ordinal) {
  ASSIGN_OR_RETURN(std::unique_ptr<cuda::CudaDevice> d, cuda::CudaDevice::Create(ordinal));
  return std::unique_ptr<Device>(std::move(d));
}

}  // namespace braid
