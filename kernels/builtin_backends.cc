// The built-in backends: one line each. A backend defined elsewhere (a test
// backend, a program's own) is added to the registry this returns.
#include "kernels/backend_registry.h"

namespace braid {

Backend CpuBackend();   // kernels/cpu/backend.cc
Backend CudaBackend();  // kernels/cuda/backend.cc (built in, a plugin, or unavailable)
Backend VgpuBackend();  // kernels/vgpu/backend.cc

BackendRegistry BuiltinBackends() {
  BackendRegistry r;
  // The names are fixed and distinct, so Add cannot fail here.
  (void)r.Add(CpuBackend());
  (void)r.Add(CudaBackend());
  (void)r.Add(VgpuBackend());
  return r;
}

}  // namespace braid
