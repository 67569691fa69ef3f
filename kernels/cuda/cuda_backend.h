// The CUDA backend's public face, compiled in every build. With
// BRAID_CUDA=OFF (BRAID_HAVE_CUDA=0) every function reports Unavailable
// "braid was built without CUDA (BRAID_CUDA=OFF)"; on a build with CUDA but a
// machine without a usable GPU they report Unavailable with the CUDA
// runtime's own reason, e.g. "cuda: unavailable: CUDA driver version is
// insufficient for CUDA runtime version".
//
//   StatusOr<std::vector<braid::CudaDeviceProperties>> gpus = braid::QueryCudaDevices();
//   if (!gpus.ok()) std::cerr << gpus.status().message() << "\n";   // why not
//   StatusOr<std::unique_ptr<braid::Device>> cuda = braid::CreateCudaDevice(0);  // "cuda:0"
//   braid::KernelRegistry registry;
//   braid::RegisterCudaKernels(registry);   // DeviceKind::kCuda entries
//
// Kernels registered here expect RunArgs::stream to be a stream of a CUDA
// device (CreateCudaDevice(...)->CreateStream()) and device-addressable
// pointers in RunArgs::src / dst / workspace.
#ifndef BRAID_KERNELS_CUDA_CUDA_BACKEND_H_
#define BRAID_KERNELS_CUDA_CUDA_BACKEND_H_

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "kernels/backend.h"

namespace braid {

struct CudaDeviceProperties {
  int ordinal = 0;
  std::string name;           // "Orin", "NVIDIA GeForce RTX 4090"
  int cc_major = 0;           // compute capability (8.7 = Jetson Orin)
  int cc_minor = 0;
  size_t total_memory = 0;    // bytes
  int multiprocessors = 0;
  bool integrated = false;    // shares DRAM with the CPU (Jetson)
  bool unified_addressing = false;
  bool can_map_host_memory = false;  // zero-copy mapped host buffers
  bool concurrent_managed_access = false;
  int clock_khz = 0;
  int memory_bus_width_bits = 0;
  int l2_cache_bytes = 0;
  int driver_version = 0;     // 12040 = 12.4
  int runtime_version = 0;

  // "sm_87, 16 SMs, 7.4 GiB, integrated, mapped host memory"
  std::string Summary() const;
};

// True when this build contains the CUDA backend (BRAID_HAVE_CUDA).
bool CudaBackendCompiled();

// Every visible CUDA device. No GPU / no driver / built without CUDA:
// Unavailable whose message starts "cuda: unavailable: " and gives the reason.
// Zero devices is also Unavailable ("no CUDA device is visible").
StatusOr<std::vector<CudaDeviceProperties>> QueryCudaDevices();

// The device with `ordinal` (DeviceKind::kCuda, name "cuda:<ordinal>").
// Unavailable as above; OutOfRange for an ordinal that does not exist.
StatusOr<std::unique_ptr<Device>> CreateCudaDevice(int ordinal = 0);

// Registers every CUDA kernel (DeviceKind::kCuda). Registers nothing in a
// build without CUDA; `braid devices --ops` shows which ops have none.
void RegisterCudaKernels(KernelRegistry& registry);

}  // namespace braid

#endif  // BRAID_KERNELS_CUDA_CUDA_BACKEND_H_
