// "cuda_emu": the CUDA backend's kernels on the CPU as a device of its own,
// so whole models run through the CUDA plans and device math without a GPU
// (tests/cuda/emulated_models_test.cc). Every entry RegisterCudaKernels
// makes is registered for it with the same op, implementation name and
// priority; its kernels are EmulatedCudaKernel (tests/cuda/emulate.h), and
// cuDNN's Conv, which is not emulated, plans its descriptors as the CUDA
// kernel does (declining what it declines) and computes with the CPU's
// kernels. Host memory: what it checks is which nodes the CUDA kernels take
// and what they compute, not copies, streams or timing.
//
//   braid::BackendRegistry backends = braid::BuiltinBackends();
//   ASSERT_TRUE(backends.Add(braid::cuda_test::CudaEmulatedBackend()).ok());
//   // SessionOptions::devices = {"cpu", "cuda_emu"}, policy "gpu-only"
#ifndef BRAID_TESTS_CUDA_EMULATED_BACKEND_H_
#define BRAID_TESTS_CUDA_EMULATED_BACKEND_H_

#include "kernels/backend_registry.h"

namespace braid::cuda_test {

Backend CudaEmulatedBackend();

}  // namespace braid::cuda_test

#endif  // BRAID_TESTS_CUDA_EMULATED_BACKEND_H_
