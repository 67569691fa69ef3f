// CudaDeviceProperties::Summary: plain C++, compiled wherever
// cuda_backend.h is (with the CUDA backend, without it, and on both sides of
// the plugin boundary).
#include <cstdio>
#include <string>

#include "kernels/cuda/cuda_backend.h"

namespace braid {

std::string CudaDeviceProperties::Summary() const {
  char memory[32];
  std::snprintf(memory, sizeof(memory), "%.1f GiB",
                static_cast<double>(total_memory) / (1024.0 * 1024.0 * 1024.0));
  std::string s = "sm_" + std::to_string(cc_major) + std::to_string(cc_minor) + ", " +
                  std::to_string(multiprocessors) + " SMs, " + memory;
  s += integrated ? ", integrated (shares host DRAM)" : ", discrete";
  if (unified_addressing) s += ", unified addressing";
  if (can_map_host_memory) s += ", mapped host memory";
  return s;
}

}  // namespace braid
