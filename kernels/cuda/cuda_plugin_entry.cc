// libbraid_cuda.so's one exported symbol (see cuda_plugin.h).
#include "kernels/cuda/cuda_plugin.h"

extern "C" __attribute__((visibility("default"))) const braid::CudaPluginApi*
braid_cuda_plugin_v1() {
  static const braid::CudaPluginApi api = {
      braid::kCudaPluginBuild,
      &braid::QueryCudaDevices,
      [](int ordinal) { return braid::CreateCudaDevice(ordinal); },
      &braid::RegisterCudaKernels,
  };
  return &api;
}
