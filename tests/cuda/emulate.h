// CPU emulation of the CUDA backend's hand-written kernels and cuBLAS calls
// for tests/cuda: an op case is planned exactly as the CUDA kernel's Prepare
// plans it (kernels/cuda/plans.h), then the device_math functions run over
// the emulated grid (launch_config.h: EmulateGridStride), and the cuBLAS
// call is replayed by a column-major reference GEMM and cuDNN's backward-data
// convolution (ConvTranspose) by a direct loop. Conv (cuDNN) is not emulated.
//
//   StatusOr<std::vector<std::vector<std::byte>>> outs = EmulateCuda(instance);
#ifndef BRAID_TESTS_CUDA_EMULATE_H_
#define BRAID_TESTS_CUDA_EMULATE_H_

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "kernels/cuda/plans.h"
#include "tests/kernels/op_harness.h"

namespace braid::cuda_test {

// cuDNN's backward-data convolution (beta 0) on the descriptors of a
// ConvTranspose: dx[n][g*Cg + c][o*s - p + t*d] += dy[n][k][o] * w[k][c][t].
void BackwardDataConvolution(const cuda::ConvTransposeDescriptors& d, const float* dy,
                             const float* w, float* dx);

// Column-major C[m,n] = op(A) op(B) (beta 0), the semantics of cublasSgemm.
void ColumnMajorSgemm(const cuda::CublasGemmCall& c, float alpha, const float* first,
                      const float* second, float* out);

// A CUDA kernel on the CPU: Prepare plans exactly as the CUDA kernel's
// Prepare (plans.h; Unimplemented where it declines, or where the op has no
// emulated path: Conv, which is cuDNN), Run runs its device_math over the
// emulated grid (cuBLAS and cuDNN's backward data replayed) on host pointers.
class EmulatedCudaKernel final : public Kernel {
 public:
  Status Prepare(const PrepareArgs& args) override;
  Status Run(const RunArgs& args) override;

 private:
  std::function<Status(const RunArgs&)> run_;
};

// Outputs per node output, or Unimplemented when the op (or this case) has
// no emulated CUDA path.
StatusOr<std::vector<std::vector<std::byte>>> EmulateCuda(const OpCaseInstance& instance);

// Data-movement and elementwise cases of the CUDA kernels' own (shapes and
// dtypes the CUDA plans special-case); the shared DataOpCases() of
// tests/kernels run too.
std::span<const OpCase> CudaDataOpCases();

// Reference outputs of `instance` (kernels/reference on the CPU).
StatusOr<std::vector<std::vector<std::byte>>> ReferenceOutputs(const OpCaseInstance& instance);

// "" when equal within the case's tolerance, else the first differences.
std::string CompareOutputs(const OpCaseInstance& instance,
                           const std::vector<std::vector<std::byte>>& got,
                           const std::vector<std::vector<std::byte>>& want);

}  // namespace braid::cuda_test

#endif  // BRAID_TESTS_CUDA_EMULATE_H_
