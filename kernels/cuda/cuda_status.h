// The one choke point where CUDA runtime, cuDNN and cuBLAS results become
// braid Status values. Every call into those libraries goes through
// CUDA_RETURN_IF_ERROR (or CudaCheck directly), so every failure carries the
// library's name for the code, its description, the call text and file:line.
//
//   CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, s));
//   CUDA_RETURN_IF_ERROR(cudnnSetStream(handle, s));
//   CUDA_RETURN_IF_ERROR(cublasSgemm(...));
//   // -> Internal("cuda: cudaErrorInvalidValue (invalid argument) in
//   //              cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, s) at stream.cc:42")
//
// Codes: out of memory -> ResourceExhausted; no device / driver too old ->
// Unavailable; bad arguments / unsupported configurations -> InvalidArgument
// / Unimplemented; everything else -> Internal.
#ifndef BRAID_KERNELS_CUDA_CUDA_STATUS_H_
#define BRAID_KERNELS_CUDA_CUDA_STATUS_H_

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <string_view>

#include "graph/status.h"

namespace braid::cuda {

// Which library produced a failure, and how braid classifies it.
enum class CudaLibrary { kRuntime, kCudnn, kCublas };

// The library-independent core: builds "<lib>: <name> (<description>) in
// <call> at <file>:<line>" with `code`. Plain C++, unit-tested.
Status MakeCudaStatus(CudaLibrary library, StatusCode code, std::string_view name,
                      std::string_view description, std::string_view call,
                      std::string_view file, int line);

// Classification of each library's result codes (OK codes map to kOk).
StatusCode ClassifyCudaError(cudaError_t error);
StatusCode ClassifyCudnnStatus(cudnnStatus_t status);
StatusCode ClassifyCublasStatus(cublasStatus_t status);

// The translations. `call` is the stringified call, `file` may be a path
// (only its base name is kept).
Status CudaCheck(cudaError_t error, std::string_view call, std::string_view file, int line);
Status CudaCheck(cudnnStatus_t status, std::string_view call, std::string_view file, int line);
Status CudaCheck(cublasStatus_t status, std::string_view call, std::string_view file, int line);

// The reason string for an absent GPU: the runtime's description of
// cudaGetDeviceCount's error (no call text: it is shown to users).
std::string CudaUnavailableReason(cudaError_t error);

}  // namespace braid::cuda

#define CUDA_RETURN_IF_ERROR(expr) \
  RETURN_IF_ERROR(::braid::cuda::CudaCheck((expr), #expr, __FILE__, __LINE__))

#endif  // BRAID_KERNELS_CUDA_CUDA_STATUS_H_
