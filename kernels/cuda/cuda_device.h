// The CUDA device behind kernels/backend.h, as the CUDA kernels see it.
// Public entry points are in cuda_backend.h; this header is for kernels/cuda/.
//
//   ASSIGN_OR_RETURN(cuda::CudaDevice* device, cuda::AsCudaDevice(args.device));  // Prepare
//   ASSIGN_OR_RETURN(cuda::CudaStream* stream, cuda::AsCudaStream(run.stream));     // Run
//   my_kernel<<<grid, block, 0, stream->native()>>>(...);
//   CUDA_RETURN_IF_ERROR(cudnnConvolutionForward(stream->cudnn(), ...));
//
// Memory kinds: kDevice comes from a per-device arena of large cudaMalloc
// chunks (OffsetAllocator); kHostPinned is cudaHostAlloc'ed page-locked host
// memory (fast async copies); kHostMapped is cudaHostAllocMapped memory the
// GPU reads directly (zero-copy; the right choice on integrated GPUs such as
// Jetson, where CPU and GPU share DRAM). Buffers must not outlive the device.
#ifndef BRAID_KERNELS_CUDA_CUDA_DEVICE_H_
#define BRAID_KERNELS_CUDA_CUDA_DEVICE_H_

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "kernels/backend.h"
#include "kernels/cuda/cuda_backend.h"

namespace braid::cuda {

class CudaDevice;

// An ordered queue on one GPU, with a cuDNN and a cuBLAS handle bound to it.
class CudaStream final : public Stream {
 public:
  static StatusOr<std::unique_ptr<CudaStream>> Create(CudaDevice& device);
  ~CudaStream() override;

  Device& device() override;
  // Enqueueing work is a host-side call: `work` runs now and its kernels
  // join the stream.
  Status Submit(std::function<Status()> work) override;
  StatusOr<std::shared_ptr<Event>> Record() override;
  // A cudaEvent_t made once (with timing: cudaEventDefault) and recorded
  // again by RecordEvent (cudaEventRecord).
  StatusOr<std::shared_ptr<Event>> CreateEvent(bool timing) override;
  Status RecordEvent(const std::shared_ptr<Event>& event) override;
  // A CUDA event: cudaStreamWaitEvent, queued on the GPU. Any other event
  // (the CPU's, a vgpu's) is waited for on the calling thread.
  Status WaitFor(const std::shared_ptr<Event>& event) override;
  bool WaitsOnDevice(const Event& event) const override;
  // Submit launches kernels that run later: steps are timed by events.
  bool TimedByEvents() const override { return true; }
  Status Synchronize() override;
  // Asynchronous with respect to the host only for pinned / mapped host
  // memory (pageable memory makes cudaMemcpyAsync synchronous).
  Status CopyToDevice(void* dst, const void* src, size_t bytes) override;
  Status CopyToHost(void* dst, const void* src, size_t bytes) override;

  cudaStream_t native() const { return stream_; }
  cudnnHandle_t cudnn() const { return cudnn_; }
  cublasHandle_t cublas() const { return cublas_; }

 private:
  explicit CudaStream(CudaDevice& device) : device_(device) {}
  CudaDevice& device_;
  cudaStream_t stream_ = nullptr;
  cudnnHandle_t cudnn_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
};

// A chosen cuDNN algorithm and its workspace, cached per problem key.
struct CachedAlgorithm {
  int algorithm = 0;
  size_t workspace_bytes = 0;
  int math_type = 0;
};

class CudaDevice final : public Device {
 public:
  static StatusOr<std::unique_ptr<CudaDevice>> Create(int ordinal);
  ~CudaDevice() override;

  const DeviceInfo& info() const override { return info_; }
  StatusOr<std::unique_ptr<Buffer>> Allocate(size_t bytes, MemoryKind kind) override;
  StatusOr<std::unique_ptr<Stream>> CreateStream() override;
  // cudaMemGetInfo's free bytes plus what this device's arena chunks hold
  // unused (the engine's buffers come from those first).
  StatusOr<size_t> FreeMemory() const override;

  const CudaDeviceProperties& properties() const { return properties_; }
  int ordinal() const { return properties_.ordinal; }
  // Makes this device current on the calling thread.
  Status Activate() const;
  // Handles for Prepare-time work (algorithm search), on the legacy stream.
  cudnnHandle_t prepare_cudnn() const { return prepare_cudnn_; }

  // Algorithm cache shared by all kernels on this device (thread-safe).
  bool LookupAlgorithm(const std::string& key, CachedAlgorithm* out) const;
  void StoreAlgorithm(const std::string& key, const CachedAlgorithm& algorithm);

  // Arena bookkeeping for device buffers (called by the buffers).
  StatusOr<void*> ArenaAllocate(size_t bytes, size_t* chunk, size_t* offset);
  void ArenaFree(size_t chunk, size_t offset);

 private:
  CudaDevice() = default;
  struct Chunk;

  DeviceInfo info_;
  CudaDeviceProperties properties_;
  cudnnHandle_t prepare_cudnn_ = nullptr;
  mutable std::mutex mutex_;
  std::map<std::string, CachedAlgorithm> algorithms_;
  std::vector<std::unique_ptr<Chunk>> chunks_;
};

// The CUDA device behind PrepareArgs::device, or FailedPrecondition naming
// what was passed instead.
StatusOr<CudaDevice*> AsCudaDevice(Device* device);
// The CUDA stream behind RunArgs::stream, or FailedPrecondition.
StatusOr<CudaStream*> AsCudaStream(Stream* stream);

// Arena chunk size: requests larger than this get a chunk of their own.
inline constexpr size_t kArenaChunkBytes = size_t{64} << 20;
// Alignment of every device buffer (cuDNN / cuBLAS / vector loads).
inline constexpr size_t kDeviceAlignment = 256;
// `bytes` rounded up to kDeviceAlignment (wraps to a smaller value only past
// SIZE_MAX - 255: callers that take untrusted sizes check `rounded < bytes`).
inline constexpr size_t RoundUpToDeviceAlignment(size_t bytes) {
  return (bytes + kDeviceAlignment - 1) / kDeviceAlignment * kDeviceAlignment;
}

}  // namespace braid::cuda

#endif  // BRAID_KERNELS_CUDA_CUDA_DEVICE_H_
