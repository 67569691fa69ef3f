// The host CPU as a braid Device.
//
//   std::unique_ptr<braid::Device> cpu = braid::CreateCpuDevice();
//   auto buffer = cpu->Allocate(1 << 20);       // 64-byte aligned host memory
//   auto arena = cpu->Allocate(64 << 20);       // 2 MiB aligned, huge pages advised
//   auto stream = cpu->CreateStream();          // runs submitted work inline
#ifndef BRAID_KERNELS_CPU_CPU_DEVICE_H_
#define BRAID_KERNELS_CPU_CPU_DEVICE_H_

#include <istream>
#include <memory>
#include <string>

#include "kernels/backend.h"
#include "kernels/cpu/sparse/sparse_kernels.h"

namespace braid {

std::unique_ptr<Device> CreateCpuDevice();

class PrepackedWeights;
// The packed constants `device` keeps for its kernels (kernels/cpu/
// prepacked_weights.h) when it is a device from CreateCpuDevice; null for
// any other device or none (kernels then pack privately).
PrepackedWeights* PrepackedWeightsOf(Device* device);

// The CPU's name from /proc/cpuinfo's text (the cpu device's description):
// x86's "model name"; aarch64 kernels print none, so there it is the core
// named from "CPU implementer" / "CPU part" (a Jetson Orin: "ARM
// Cortex-A78AE"), or those ids when the core is not in braid's short table.
// "host CPU" when neither is there.
std::string CpuModelNameFromCpuinfo(std::istream& cpuinfo);

// Buffers of at least this many bytes (an activation arena, a kernel
// workspace) are aligned to it and advised as transparent huge pages
// (madvise MADV_HUGEPAGE: THP's "madvise" mode, Debian's and L4T's default,
// backs them with 2 MiB pages; "never" leaves them on small ones). A memory-
// bound op then misses the TLB 512x less often: resnet50's residual Adds took
// up to a third less time on a KVM guest, where each miss walks two page
// tables (docs/profiling.md round 12 in its git history, bench/kernels_bench.cc's HugePages
// cases).
inline constexpr size_t kHugePageBytes = size_t{2} << 20;
// `bytes` of host memory as the CPU and vgpu devices allocate it (64-byte
// aligned; huge-page aligned and advised from kHugePageBytes up); free with
// std::free. Null when out of memory.
void* AllocateHostMemory(size_t bytes);

// Registers every CPU kernel: the weight-sparse kernels first (they decline
// below their crossover, kernels/cpu/sparse/), oneDNN next, braid's own CPU
// kernels next, reference kernels last (kernels/reference/).
void RegisterCpuKernels(KernelRegistry& registry);

// What the CPU backend's own kernels are given (a device profile's measured
// sparse crossover, for one). RegisterCpuKernels(registry) uses the defaults;
// nothing here reads the environment (the CLI maps BRAID_SPARSE and
// BRAID_SPARSE_CROSSOVER onto SessionOptions: docs/sparse.md).
struct CpuKernelOptions {
  bool sparse = true;  // register the sparse kernels (kernels/cpu/sparse/)
  SparseKernelOptions sparse_options;
};
void RegisterCpuKernels(KernelRegistry& registry, const CpuKernelOptions& options);
void RegisterReferenceKernels(KernelRegistry& registry);

// How this CPU runs precision bf16 (docs/ir.md): kNative with bf16
// dot-product instructions (AVX512_BF16, AMX); kEmulated when oneDNN's JIT
// kernels convert instead (other AVX-512 CPUs: slower than f32); kReference
// when oneDNN has no bf16 kernel here, so braid's reference loops run it
// (hundreds of times slower than f32).
enum class Bf16Support { kNative, kEmulated, kReference };
Bf16Support CpuBf16Support();

}  // namespace braid

#endif  // BRAID_KERNELS_CPU_CPU_DEVICE_H_
