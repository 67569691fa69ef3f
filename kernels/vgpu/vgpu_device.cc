#include "kernels/vgpu/vgpu_device.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "kernels/cpu/cpu_device.h"
#include "kernels/host/precise_wait.h"
#include "kernels/vgpu/streaming_copy.h"
#include "kernels/host/worker_stream.h"

namespace braid {
namespace {

constexpr size_t kAlignment = 64;

std::chrono::nanoseconds Seconds(double s) {
  return std::chrono::nanoseconds(static_cast<int64_t>(s * 1e9));
}

class VgpuBuffer final : public Buffer {
 public:
  // `in_use`: the device's count of kDevice bytes, given back on release.
  VgpuBuffer(void* data, size_t size, MemoryKind kind, std::atomic<size_t>* in_use, size_t counted)
      : data_(data), size_(size), kind_(kind), in_use_(in_use), counted_(counted) {}
  ~VgpuBuffer() override {
    std::free(data_);
    if (in_use_) in_use_->fetch_sub(counted_);
  }
  void* data() override { return data_; }
  size_t size() const override { return size_; }
  MemoryKind memory_kind() const override { return kind_; }

 private:
  void* data_;
  size_t size_;
  MemoryKind kind_;
  std::atomic<size_t>* in_use_;
  size_t counted_;
};

class VgpuDeviceImpl;

Status DeviceOff(const std::string& name) {
  return Unavailable(name + ": device is off (forced off)");
}

// A vgpu stream: a worker thread; copies padded to the timing model.
class VgpuStream final : public WorkerStream {
 public:
  VgpuStream(VgpuDevice& device, int threads)
      : WorkerStream(device, device.name() + "-stream", threads), vgpu_(device) {}

  Status Submit(std::function<Status()> work) override {
    if (vgpu_.forced_off()) return DeviceOff(vgpu_.name());
    return WorkerStream::Submit(std::move(work));
  }
  Status CopyToDevice(void* dst, const void* src, size_t bytes) override {
    if (vgpu_.forced_off()) return DeviceOff(vgpu_.name());
    return WorkerStream::CopyToDevice(dst, src, bytes);
  }
  Status CopyToHost(void* dst, const void* src, size_t bytes) override {
    if (vgpu_.forced_off()) return DeviceOff(vgpu_.name());
    return WorkerStream::CopyToHost(dst, src, bytes);
  }
  // With cuda_semantics an event of another device blocks the caller here,
  // as CudaStream::WaitFor does.
  Status WaitFor(const std::shared_ptr<Event>& event) override {
    if (event && !WaitsOnDevice(*event)) return event->Wait();
    return WorkerStream::WaitFor(event);
  }
  bool WaitsOnDevice(const Event& event) const override {
    if (!vgpu_.cuda_semantics()) return true;
    const auto* own = dynamic_cast<const ManualEvent*>(&event);
    return own != nullptr && own->device() == &vgpu_;
  }
  bool TimedByEvents() const override { return vgpu_.cuda_semantics(); }

 protected:
  void Copy(void* dst, const void* src, size_t bytes) override {
    const auto start = std::chrono::steady_clock::now();
    // Like a copy engine: the bytes land in memory, in no core's cache.
    StreamingCopy(dst, src, bytes);
    if (vgpu_.timing().enabled)
      WaitUntil(start + vgpu_.timing().CopyTime(static_cast<double>(bytes)));
  }

 private:
  VgpuDevice& vgpu_;
};

class VgpuDeviceImpl final : public VgpuDevice {
 public:
  explicit VgpuDeviceImpl(const VgpuOptions& options)
      : timing_(options.timing),
        threads_(std::max(1, options.threads)),
        cuda_semantics_(options.cuda_semantics),
        memory_bytes_(options.memory_bytes) {
    info_.name = options.name;
    info_.kind = DeviceKind::kVirtualGpu;
    info_.virtual_device = true;
    info_.compute_units = threads_;
    info_.memory_bytes = memory_bytes_;  // 0: no limit of its own
    info_.description = "virtual GPU: CPU kernels on their own worker threads with a separate "
                        "memory space; timing " +
                        timing_.Describe() +
                        (cuda_semantics_ ? "; CUDA stream semantics (waits on other devices "
                                           "block the caller, steps timed by events)"
                                         : "");
  }
  const DeviceInfo& info() const override { return info_; }
  const VgpuTiming& timing() const override { return timing_; }
  int threads() const override { return threads_; }
  void SetForcedOff(bool off) override { off_.store(off); }
  bool forced_off() const override { return off_.load(); }
  bool cuda_semantics() const override { return cuda_semantics_; }

  StatusOr<std::unique_ptr<Buffer>> Allocate(size_t bytes, MemoryKind kind) override {
    if (forced_off()) return DeviceOff(name());
    const size_t rounded = (std::max<size_t>(bytes, 1) + kAlignment - 1) / kAlignment * kAlignment;
    if (rounded < bytes)
      return ResourceExhausted(name() + ": cannot allocate " + std::to_string(bytes) + " bytes");
    const bool counted = kind == MemoryKind::kDevice && memory_bytes_ > 0;
    if (counted) {
      const size_t before = in_use_.fetch_add(rounded);
      if (before + rounded > memory_bytes_) {
        in_use_.fetch_sub(rounded);
        return ResourceExhausted(name() + ": out of memory allocating " + std::to_string(bytes) +
                                 " bytes (" + std::to_string(memory_bytes_ - std::min(before, memory_bytes_)) +
                                 " of " + std::to_string(memory_bytes_) + " free)");
      }
    }
    void* p = AllocateHostMemory(rounded);
    if (p == nullptr) {
      if (counted) in_use_.fetch_sub(rounded);
      return ResourceExhausted(name() + ": out of memory allocating " + std::to_string(bytes) +
                               " bytes");
    }
    return std::unique_ptr<Buffer>(std::make_unique<VgpuBuffer>(
        p, bytes, kind, counted ? &in_use_ : nullptr, counted ? rounded : 0));
  }

  StatusOr<size_t> FreeMemory() const override {
    if (memory_bytes_ == 0) return Device::FreeMemory();  // no limit: like the host
    return memory_bytes_ - std::min(in_use_.load(), memory_bytes_);
  }

  StatusOr<std::unique_ptr<Stream>> CreateStream() override {
    if (forced_off()) return DeviceOff(name());
    return std::unique_ptr<Stream>(std::make_unique<VgpuStream>(*this, threads_));
  }

 private:
  DeviceInfo info_;
  VgpuTiming timing_;
  int threads_;
  const bool cuda_semantics_;
  const size_t memory_bytes_;
  std::atomic<size_t> in_use_{0};
  std::atomic<bool> off_{false};
};

}  // namespace

std::chrono::nanoseconds VgpuTiming::KernelTime(double flops, double bytes) const {
  if (!enabled) return std::chrono::nanoseconds(0);
  if (kernel_model_us) return Seconds(std::max(0.0, kernel_model_us(flops, bytes)) * 1e-6);
  const double compute = peak_gflops > 0 ? flops / (peak_gflops * 1e9) : 0;
  const double memory = mem_gbps > 0 ? bytes / (mem_gbps * 1e9) : 0;
  return Seconds(launch_us * 1e-6 + std::max(compute, memory));
}

std::chrono::nanoseconds VgpuTiming::CopyTime(double bytes) const {
  if (!enabled) return std::chrono::nanoseconds(0);
  double s = copy_latency_us * 1e-6;
  if (copy_gbps > 0) s += bytes / (copy_gbps * 1e9);
  return Seconds(s);
}

std::string VgpuTiming::Describe() const {
  if (!enabled) return "none (kernels and copies run at CPU speed)";
  char buf[256];
  std::snprintf(buf, sizeof(buf),
                "%s (model): %.4g GFLOP/s, %.4g GB/s memory, %.4g GB/s copies + %.4g us, "
                "%.4g us launch",
                label.c_str(), peak_gflops, mem_gbps, copy_gbps, copy_latency_us, launch_us);
  return buf;
}

std::vector<std::string> VgpuTimingPresetNames() { return {"none", "orin-like"}; }

StatusOr<VgpuTiming> VgpuTimingPreset(std::string_view name) {
  VgpuTiming t;
  if (name == "none") return t;
  if (name == "orin-like") {
    // Shaped on Jetson AGX Orin's published figures (fp32 CUDA-core peak,
    // LPDDR5 bandwidth); copies as through pinned host memory. A model only.
    t.label = "orin-like";
    t.enabled = true;
    t.peak_gflops = 5300;
    t.mem_gbps = 204.8;
    t.copy_gbps = 25;
    t.copy_latency_us = 10;
    t.launch_us = 5;
    return t;
  }
  std::string known;
  for (const std::string& n : VgpuTimingPresetNames()) known += (known.empty() ? "" : ", ") + n;
  return NotFound("unknown vgpu timing '" + std::string(name) + "' (known: " + known + ")");
}

std::unique_ptr<VgpuDevice> CreateVgpuDevice(const VgpuOptions& options) {
  return std::make_unique<VgpuDeviceImpl>(options);
}

std::unique_ptr<VgpuDevice> CreateVgpuDevice() {
  VgpuOptions options;
  return std::make_unique<VgpuDeviceImpl>(options);
}

void RegisterVgpuKernels(KernelRegistry& registry) { RegisterVgpuKernels(registry, {}); }

void RegisterVgpuKernels(KernelRegistry& registry, const CpuKernelOptions& options) {
  KernelRegistry cpu;
  RegisterCpuKernels(cpu, options);
  for (const std::string& op : cpu.OpTypes(DeviceKind::kCpu)) {
    for (const KernelEntry* e : cpu.Candidates(op, DeviceKind::kCpu)) {
      KernelEntry copy = *e;
      copy.device = DeviceKind::kVirtualGpu;
      registry.Register(std::move(copy));
    }
  }
}

}  // namespace braid
