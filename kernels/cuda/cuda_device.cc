#include "kernels/cuda/cuda_device.h"

#include <cstdio>
#include <utility>

#include "kernels/cuda/cuda_status.h"
#include "kernels/cuda/offset_allocator.h"

namespace braid::cuda {

// One cudaMalloc'ed chunk of the device arena.
struct CudaDevice::Chunk {
  void* base = nullptr;
  OffsetAllocator allocator;
  Chunk(void* b, size_t bytes) : base(b), allocator(bytes, kDeviceAlignment) {}
};

namespace {

class ArenaBuffer final : public Buffer {
 public:
  ArenaBuffer(CudaDevice& device, void* data, size_t size, size_t chunk, size_t offset)
      : device_(device), data_(data), size_(size), chunk_(chunk), offset_(offset) {}
  ~ArenaBuffer() override { device_.ArenaFree(chunk_, offset_); }
  void* data() override { return data_; }
  size_t size() const override { return size_; }
  MemoryKind memory_kind() const override { return MemoryKind::kDevice; }

 private:
  CudaDevice& device_;
  void* data_;
  size_t size_;
  size_t chunk_;
  size_t offset_;
};

// Page-locked host memory; `device_data` is where kernels address it (equal
// to the host pointer under unified addressing, which every 64-bit CUDA
// platform braid targets has).
class HostBuffer final : public Buffer {
 public:
  HostBuffer(void* host, void* device_data, size_t size, MemoryKind kind)
      : host_(host), device_data_(device_data), size_(size), kind_(kind) {}
  ~HostBuffer() override {
    const Status s = CudaCheck(cudaFreeHost(host_), "cudaFreeHost", __FILE__, __LINE__);
    if (!s.ok()) std::fprintf(stderr, "braid: %s\n", s.ToString().c_str());
  }
  // Mapped memory: the device address (what kernels take).
  void* data() override { return device_data_; }
  size_t size() const override { return size_; }
  MemoryKind memory_kind() const override { return kind_; }

 private:
  void* host_;
  void* device_data_;
  size_t size_;
  MemoryKind kind_;
};

class CudaEvent final : public Event {
 public:
  explicit CudaEvent(cudaEvent_t event) : event_(event) {}
  ~CudaEvent() override { (void)cudaEventDestroy(event_); }
  // Complete, or failed (a sticky error): either way waiting is over.
  bool Ready() const override { return cudaEventQuery(event_) != cudaErrorNotReady; }
  Status Wait() override {
    CUDA_RETURN_IF_ERROR(cudaEventSynchronize(event_));
    return Status::Ok();
  }
  // cudaEventElapsedTime: both events made with timing on, both complete.
  StatusOr<double> MicrosecondsSince(const Event& earlier) const override {
    const auto* from = dynamic_cast<const CudaEvent*>(&earlier);
    if (from == nullptr) return InvalidArgument("MicrosecondsSince: not a CUDA event");
    float ms = 0;
    CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, from->event_, event_));
    return static_cast<double>(ms) * 1e3;
  }
  cudaEvent_t native() const { return event_; }

 private:
  cudaEvent_t event_;
};

void LogIfError(const Status& s) {
  if (!s.ok()) std::fprintf(stderr, "braid: %s\n", s.ToString().c_str());
}

}  // namespace

// ---- stream -----------------------------------------------------------------

StatusOr<std::unique_ptr<CudaStream>> CudaStream::Create(CudaDevice& device) {
  std::unique_ptr<CudaStream> s(new CudaStream(device));
  RETURN_IF_ERROR(device.Activate());
  CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&s->stream_, cudaStreamNonBlocking));
  CUDA_RETURN_IF_ERROR(cudnnCreate(&s->cudnn_));
  CUDA_RETURN_IF_ERROR(cudnnSetStream(s->cudnn_, s->stream_));
  CUDA_RETURN_IF_ERROR(cublasCreate(&s->cublas_));
  CUDA_RETURN_IF_ERROR(cublasSetStream(s->cublas_, s->stream_));
  // Results must match the fp32 reference: no TF32 tensor-core rounding.
  CUDA_RETURN_IF_ERROR(cublasSetMathMode(s->cublas_, CUBLAS_PEDANTIC_MATH));
  return s;
}

CudaStream::~CudaStream() {
  if (cublas_) LogIfError(CudaCheck(cublasDestroy(cublas_), "cublasDestroy", __FILE__, __LINE__));
  if (cudnn_) LogIfError(CudaCheck(cudnnDestroy(cudnn_), "cudnnDestroy", __FILE__, __LINE__));
  if (stream_)
    LogIfError(CudaCheck(cudaStreamDestroy(stream_), "cudaStreamDestroy", __FILE__, __LINE__));
}

Device& CudaStream::device() { return device_; }

Status CudaStream::Submit(std::function<Status()> work) {
  RETURN_IF_ERROR(device_.Activate());
  return work();
}

StatusOr<std::shared_ptr<Event>> CudaStream::Record() {
  RETURN_IF_ERROR(device_.Activate());
  cudaEvent_t event = nullptr;
  CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  auto wrapped = std::make_shared<CudaEvent>(event);
  CUDA_RETURN_IF_ERROR(cudaEventRecord(event, stream_));
  return std::shared_ptr<Event>(std::move(wrapped));
}

StatusOr<std::shared_ptr<Event>> CudaStream::CreateEvent(bool timing) {
  RETURN_IF_ERROR(device_.Activate());
  cudaEvent_t event = nullptr;
  CUDA_RETURN_IF_ERROR(
      cudaEventCreateWithFlags(&event, timing ? cudaEventDefault : cudaEventDisableTiming));
  return std::shared_ptr<Event>(std::make_shared<CudaEvent>(event));
}

Status CudaStream::RecordEvent(const std::shared_ptr<Event>& event) {
  auto* cuda_event = dynamic_cast<CudaEvent*>(event.get());
  if (cuda_event == nullptr)
    return InvalidArgument(device_.name() + ": RecordEvent takes an event of CreateEvent");
  CUDA_RETURN_IF_ERROR(cudaEventRecord(cuda_event->native(), stream_));
  return Status::Ok();
}

bool CudaStream::WaitsOnDevice(const Event& event) const {
  return dynamic_cast<const CudaEvent*>(&event) != nullptr;
}

Status CudaStream::WaitFor(const std::shared_ptr<Event>& event) {
  if (!event) return Status::Ok();
  if (auto* cuda_event = dynamic_cast<CudaEvent*>(event.get())) {
    CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(stream_, cuda_event->native(), 0));
    return Status::Ok();
  }
  // An event of another device (CPU, vgpu): wait on the host.
  return event->Wait();
}

Status CudaStream::Synchronize() {
  CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_));
  return Status::Ok();
}

Status CudaStream::CopyToDevice(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return Status::Ok();
  CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream_));
  return Status::Ok();
}

Status CudaStream::CopyToHost(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return Status::Ok();
  CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream_));
  return Status::Ok();
}

// ---- device -----------------------------------------------------------------

StatusOr<std::unique_ptr<CudaDevice>> CudaDevice::Create(int ordinal) {
  ASSIGN_OR_RETURN(std::vector<CudaDeviceProperties> all, QueryCudaDevices());
  if (ordinal < 0 || static_cast<size_t>(ordinal) >= all.size())
    return OutOfRange("cuda: no device cuda:" + std::to_string(ordinal) + " (" +
                      std::to_string(all.size()) + " visible)");
  std::unique_ptr<CudaDevice> d(new CudaDevice);
  d->properties_ = all[static_cast<size_t>(ordinal)];
  d->info_.name = "cuda:" + std::to_string(ordinal);
  d->info_.kind = DeviceKind::kCuda;
  d->info_.description = d->properties_.name + " (" + d->properties_.Summary() + ")";
  d->info_.memory_bytes = d->properties_.total_memory;
  d->info_.compute_units = d->properties_.multiprocessors;
  RETURN_IF_ERROR(d->Activate());
  CUDA_RETURN_IF_ERROR(cudnnCreate(&d->prepare_cudnn_));
  return d;
}

CudaDevice::~CudaDevice() {
  if (prepare_cudnn_)
    LogIfError(CudaCheck(cudnnDestroy(prepare_cudnn_), "cudnnDestroy", __FILE__, __LINE__));
  for (const auto& chunk : chunks_)
    LogIfError(CudaCheck(cudaFree(chunk->base), "cudaFree", __FILE__, __LINE__));
}

Status CudaDevice::Activate() const {
  CUDA_RETURN_IF_ERROR(cudaSetDevice(properties_.ordinal));
  return Status::Ok();
}

StatusOr<std::unique_ptr<Buffer>> CudaDevice::Allocate(size_t bytes, MemoryKind kind) {
  RETURN_IF_ERROR(Activate());
  const size_t size = std::max<size_t>(bytes, 1);
  switch (kind) {
    case MemoryKind::kDevice: {
      size_t chunk = 0, offset = 0;
      ASSIGN_OR_RETURN(void* p, ArenaAllocate(size, &chunk, &offset));
      return std::unique_ptr<Buffer>(
          std::make_unique<ArenaBuffer>(*this, p, bytes, chunk, offset));
    }
    case MemoryKind::kHostPinned: {
      void* host = nullptr;
      RETURN_IF_ERROR(CudaCheck(cudaHostAlloc(&host, size, cudaHostAllocDefault),
                                "cudaHostAlloc(" + std::to_string(size) + " bytes)",
                                __FILE__, __LINE__));
      return std::unique_ptr<Buffer>(
          std::make_unique<HostBuffer>(host, host, bytes, MemoryKind::kHostPinned));
    }
    case MemoryKind::kHostMapped: {
      if (!properties_.can_map_host_memory)
        return Unimplemented(info_.name + ": cannot map host memory (canMapHostMemory = 0); "
                             "use kHostPinned and copies");
      void* host = nullptr;
      RETURN_IF_ERROR(CudaCheck(cudaHostAlloc(&host, size, cudaHostAllocMapped),
                                "cudaHostAlloc(" + std::to_string(size) + " bytes, mapped)",
                                __FILE__, __LINE__));
      void* device_ptr = nullptr;
      const Status mapped = CudaCheck(cudaHostGetDevicePointer(&device_ptr, host, 0),
                                      "cudaHostGetDevicePointer", __FILE__, __LINE__);
      auto buffer = std::make_unique<HostBuffer>(host, device_ptr, bytes,
                                                 MemoryKind::kHostMapped);
      RETURN_IF_ERROR(mapped);
      return std::unique_ptr<Buffer>(std::move(buffer));
    }
  }
  return InvalidArgument(info_.name + ": unknown memory kind");
}

StatusOr<void*> CudaDevice::ArenaAllocate(size_t bytes, size_t* chunk, size_t* offset) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (size_t i = 0; i < chunks_.size(); ++i) {
    if (std::optional<size_t> at = chunks_[i]->allocator.Allocate(bytes)) {
      *chunk = i;
      *offset = *at;
      return static_cast<char*>(chunks_[i]->base) + *at;
    }
  }
  const size_t rounded = RoundUpToDeviceAlignment(bytes);
  if (rounded < bytes)
    return ResourceExhausted(info_.name + ": cannot allocate " + std::to_string(bytes) +
                             " bytes");
  const size_t chunk_bytes = std::max(kArenaChunkBytes, rounded);
  void* base = nullptr;
  const cudaError_t err = cudaMalloc(&base, chunk_bytes);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky-free error state
    return CudaCheck(err, "cudaMalloc(" + std::to_string(chunk_bytes) + " bytes) for a " +
                              std::to_string(bytes) + "-byte buffer on " + info_.name,
                     __FILE__, __LINE__);
  }
  chunks_.push_back(std::make_unique<Chunk>(base, chunk_bytes));
  *chunk = chunks_.size() - 1;
  std::optional<size_t> at = chunks_.back()->allocator.Allocate(bytes);
  if (!at) return Internal(info_.name + ": fresh arena chunk cannot hold the request");
  *offset = *at;
  return static_cast<char*>(base) + *at;
}

void CudaDevice::ArenaFree(size_t chunk, size_t offset) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (chunk < chunks_.size()) chunks_[chunk]->allocator.Free(offset);
}

StatusOr<size_t> CudaDevice::FreeMemory() const {
  RETURN_IF_ERROR(Activate());
  size_t free_bytes = 0, total = 0;
  CUDA_RETURN_IF_ERROR(cudaMemGetInfo(&free_bytes, &total));
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& chunk : chunks_) free_bytes += chunk->allocator.capacity() - chunk->allocator.used();
  return free_bytes;
}

StatusOr<std::unique_ptr<Stream>> CudaDevice::CreateStream() {
  ASSIGN_OR_RETURN(std::unique_ptr<CudaStream> s, CudaStream::Create(*this));
  return std::unique_ptr<Stream>(std::move(s));
}

bool CudaDevice::LookupAlgorithm(const std::string& key, CachedAlgorithm* out) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = algorithms_.find(key);
  if (it == algorithms_.end()) return false;
  *out = it->second;
  return true;
}

void CudaDevice::StoreAlgorithm(const std::string& key, const CachedAlgorithm& algorithm) {
  std::lock_guard<std::mutex> lock(mutex_);
  algorithms_[key] = algorithm;
}

StatusOr<CudaDevice*> AsCudaDevice(Device* device) {
  if (auto* cuda = dynamic_cast<CudaDevice*>(device)) return cuda;
  return FailedPrecondition(std::string("cuda kernel prepared for device '") +
                            (device ? device->name() : std::string("(none)")) +
                            "', which is not a CUDA device");
}

StatusOr<CudaStream*> AsCudaStream(Stream* stream) {
  if (auto* cuda = dynamic_cast<CudaStream*>(stream)) return cuda;
  return FailedPrecondition(std::string("cuda kernel run on stream of device '") +
                            (stream ? stream->device().name() : std::string("(none)")) +
                            "', which is not a CUDA stream");
}

}  // namespace braid::cuda
