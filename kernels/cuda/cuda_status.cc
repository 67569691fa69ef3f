#include "kernels/cuda/cuda_status.h"

#include <string>

namespace braid::cuda {
namespace {

const char* LibraryName(CudaLibrary library) {
  switch (library) {
    case CudaLibrary::kRuntime: return "cuda";
    case CudaLibrary::kCudnn: return "cudnn";
    case CudaLibrary::kCublas: return "cublas";
  }
  return "cuda";
}

std::string_view BaseName(std::string_view path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

Status FromCode(StatusCode code, std::string message) {
  switch (code) {
    case StatusCode::kOk: return Status::Ok();
    case StatusCode::kInvalidArgument: return InvalidArgument(std::move(message));
    case StatusCode::kNotFound: return NotFound(std::move(message));
    case StatusCode::kUnimplemented: return Unimplemented(std::move(message));
    case StatusCode::kOutOfRange: return OutOfRange(std::move(message));
    case StatusCode::kDataLoss: return DataLoss(std::move(message));
    case StatusCode::kFailedPrecondition: return FailedPrecondition(std::move(message));
    case StatusCode::kResourceExhausted: return ResourceExhausted(std::move(message));
    case StatusCode::kUnavailable: return Unavailable(std::move(message));
    case StatusCode::kInternal: return Internal(std::move(message));
  }
  return Internal(std::move(message));
}

const char* CublasStatusName(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "CUBLAS_STATUS_UNKNOWN";
}

}  // namespace

Status MakeCudaStatus(CudaLibrary library, StatusCode code, std::string_view name,
                      std::string_view description, std::string_view call,
                      std::string_view file, int line) {
  if (code == StatusCode::kOk) return Status::Ok();
  std::string message = LibraryName(library);
  message.append(": ").append(name);
  if (!description.empty() && description != name)
    message.append(" (").append(description).append(")");
  if (!call.empty()) message.append(" in ").append(call);
  if (!file.empty())
    message.append(" at ").append(BaseName(file)).append(":").append(std::to_string(line));
  return FromCode(code, std::move(message));
}

StatusCode ClassifyCudaError(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return StatusCode::kOk;
    case cudaErrorMemoryAllocation: return StatusCode::kResourceExhausted;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorInvalidDevice:
    case cudaErrorDevicesUnavailable:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice:
    case cudaErrorNoKernelImageForDevice:
      return StatusCode::kUnavailable;
    case cudaErrorInvalidValue:
    case cudaErrorInvalidConfiguration:
    case cudaErrorInvalidPitchValue:
    case cudaErrorInvalidDevicePointer:
    case cudaErrorInvalidMemcpyDirection:
      return StatusCode::kInvalidArgument;
    case cudaErrorNotSupported: return StatusCode::kUnimplemented;
    default: return StatusCode::kInternal;
  }
}

StatusCode ClassifyCudnnStatus(cudnnStatus_t status) {
  if (status == CUDNN_STATUS_SUCCESS) return StatusCode::kOk;
  // cuDNN 9 groups its codes by thousands: 2xxx bad parameter, 3xxx not
  // supported, 4xxx internal, 5xxx execution failed.
  const int group = static_cast<int>(status) / 1000;
  if (status == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED ||
      status == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED)
    return StatusCode::kResourceExhausted;
  switch (group) {
    case 2: return StatusCode::kInvalidArgument;
    case 3: return StatusCode::kUnimplemented;
    default: return StatusCode::kInternal;
  }
}

StatusCode ClassifyCublasStatus(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS: return StatusCode::kOk;
    case CUBLAS_STATUS_ALLOC_FAILED: return StatusCode::kResourceExhausted;
    case CUBLAS_STATUS_INVALID_VALUE: return StatusCode::kInvalidArgument;
    case CUBLAS_STATUS_NOT_SUPPORTED:
    case CUBLAS_STATUS_ARCH_MISMATCH: return StatusCode::kUnimplemented;
    case CUBLAS_STATUS_NOT_INITIALIZED: return StatusCode::kUnavailable;
    default: return StatusCode::kInternal;
  }
}

Status CudaCheck(cudaError_t error, std::string_view call, std::string_view file, int line) {
  if (error == cudaSuccess) return Status::Ok();
  return MakeCudaStatus(CudaLibrary::kRuntime, ClassifyCudaError(error),
                        cudaGetErrorName(error), cudaGetErrorString(error), call, file,
                        line);
}

Status CudaCheck(cudnnStatus_t status, std::string_view call, std::string_view file,
                 int line) {
  if (status == CUDNN_STATUS_SUCCESS) return Status::Ok();
  const char* text = cudnnGetErrorString(status);
  return MakeCudaStatus(CudaLibrary::kCudnn, ClassifyCudnnStatus(status), text,
                        "code " + std::to_string(static_cast<int>(status)), call, file,
                        line);
}

Status CudaCheck(cublasStatus_t status, std::string_view call, std::string_view file,
                 int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return Status::Ok();
  return MakeCudaStatus(CudaLibrary::kCublas, ClassifyCublasStatus(status),
                        CublasStatusName(status), cublasGetStatusString(status), call,
                        file, line);
}

std::string CudaUnavailableReason(cudaError_t error) {
  return std::string("cuda: unavailable: ") + cudaGetErrorString(error);
}

}  // namespace braid::cuda
