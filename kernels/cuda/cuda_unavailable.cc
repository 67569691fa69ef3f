// cuda_backend.h in a build without CUDA (BRAID_CUDA=OFF, or AUTO without
// nvcc / cuDNN / cuBLAS): everything reports why there is no CUDA device.
#include <string>

#include "kernels/cuda/cuda_backend.h"

namespace braid {
namespace {

Status NotBuilt() {
  return Unavailable("cuda: unavailable: braid was built without CUDA (BRAID_CUDA=OFF)");
}

}  // namespace

bool CudaBackendCompiled() { return false; }

StatusOr<std::vector<CudaDeviceProperties>> QueryCudaDevices() { return NotBuilt(); }

StatusOr<std::unique_ptr<Device>> CreateCudaDevice(int) { return NotBuilt(); }

void RegisterCudaKernels(KernelRegistry&) {}

}  // namespace braid
