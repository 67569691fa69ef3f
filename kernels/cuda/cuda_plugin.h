// The CUDA backend as a plugin (BRAID_CUDA_PLUGIN=ON, what scripts/bundle.sh
// builds): the CUDA device and kernels live in libbraid_cuda.so, which alone
// links cuDNN, cuBLAS and the CUDA runtime; braid_kernels carries a loader
// (cuda_plugin_loader.cc) that implements cuda_backend.h by dlopen'ing it on
// first use. So one binary starts and runs on the CPU on a machine without
// any NVIDIA library, and `braid devices` says why cuda is unavailable.
//
//   // libbraid_cuda.so (cuda_plugin_entry.cc):
//   extern "C" const braid::CudaPluginApi* braid_cuda_plugin_v1();
//   // the loader: dlopen, dlsym("braid_cuda_plugin_v1"), check `build`, call.
//
// The table passes C++ types (Status, std::vector, std::unique_ptr<Device>,
// KernelRegistry&): the plugin and the program are built together from one
// tree by one compiler, and the loader refuses a plugin whose `build` string
// differs from its own. The plugin exports nothing else (a version script)
// and keeps its own copies of the few braid functions it needs
// (kernels/backend.cc, kernels/params/, braid_graph), hidden.
#ifndef BRAID_KERNELS_CUDA_CUDA_PLUGIN_H_
#define BRAID_KERNELS_CUDA_CUDA_PLUGIN_H_

#include <memory>
#include <vector>

#include "kernels/cuda/cuda_backend.h"

#ifndef BRAID_CUDA_PLUGIN_BUILD_ID
#define BRAID_CUDA_PLUGIN_BUILD_ID "unknown"
#endif

namespace braid {

// The plugin's file name; the loader's search order is in docs/cuda.md.
inline constexpr const char* kCudaPluginFile = "libbraid_cuda.so";
inline constexpr const char* kCudaPluginEntry = "braid_cuda_plugin_v1";
// braid's version and the compiler: both sides must agree.
inline constexpr const char* kCudaPluginBuild = BRAID_CUDA_PLUGIN_BUILD_ID " " __VERSION__;

struct CudaPluginApi {
  const char* build = nullptr;  // kCudaPluginBuild of the plugin
  StatusOr<std::vector<CudaDeviceProperties>> (*query_devices)() = nullptr;
  StatusOr<std::unique_ptr<Device>> (*create_device)(int ordinal) = nullptr;
  void (*register_kernels)(KernelRegistry& registry) = nullptr;
};

}  // namespace braid

extern "C" {
using BraidCudaPluginEntry = const braid::CudaPluginApi* (*)();
}

#endif  // BRAID_KERNELS_CUDA_CUDA_PLUGIN_H_
