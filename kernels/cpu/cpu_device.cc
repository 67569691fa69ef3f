#include "kernels/cpu/cpu_device.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

#include "kernels/cpu/prepacked_weights.h"

namespace braid {
namespace {

constexpr size_t kAlignment = 64;

class HostBuffer final : public Buffer {
 public:
  HostBuffer(void* data, size_t size) : data_(data), size_(size) {}
  ~HostBuffer() override { std::free(data_); }
  void* data() override { return data_; }
  size_t size() const override { return size_; }
  MemoryKind memory_kind() const override { return MemoryKind::kDevice; }

 private:
  void* data_;
  size_t size_;
};

class ReadyEvent final : public Event {
 public:
  bool Ready() const override { return true; }
  Status Wait() override { return Status::Ok(); }
};

// Work runs on the submitting thread, so the stream is always drained.
class InlineStream final : public Stream {
 public:
  explicit InlineStream(Device& device) : device_(device) {}
  Device& device() override { return device_; }
  Status Submit(std::function<Status()> work) override { return work(); }
  StatusOr<std::shared_ptr<Event>> Record() override {
    return std::shared_ptr<Event>(std::make_shared<ReadyEvent>());
  }
  StatusOr<std::shared_ptr<Event>> CreateEvent(bool) override { return Record(); }
  // Work already ran when Submit returned: a ReadyEvent is always right.
  Status RecordEvent(const std::shared_ptr<Event>&) override { return Status::Ok(); }
  Status WaitFor(const std::shared_ptr<Event>& event) override {
    return event ? event->Wait() : Status::Ok();
  }
  // Work runs on the submitting thread, so a wait is always the caller's.
  bool WaitsOnDevice(const Event&) const override { return false; }
  Status Synchronize() override { return Status::Ok(); }
  Status CopyToDevice(void* dst, const void* src, size_t bytes) override {
    if (bytes) std::memcpy(dst, src, bytes);
    return Status::Ok();
  }
  Status CopyToHost(void* dst, const void* src, size_t bytes) override {
    if (bytes) std::memcpy(dst, src, bytes);
    return Status::Ok();
  }

 private:
  Device& device_;
};

// aarch64 cores by (implementer, part), as in util-linux's lscpu: the ones a
// Jetson, a Raspberry Pi or an Arm server has.
const char* ArmCoreName(unsigned implementer, unsigned part) {
  struct Core {
    unsigned implementer, part;
    const char* name;
  };
  static constexpr Core kCores[] = {
      {0x41, 0xd03, "ARM Cortex-A53"},     {0x41, 0xd04, "ARM Cortex-A35"},
      {0x41, 0xd05, "ARM Cortex-A55"},     {0x41, 0xd07, "ARM Cortex-A57"},
      {0x41, 0xd08, "ARM Cortex-A72"},     {0x41, 0xd09, "ARM Cortex-A73"},
      {0x41, 0xd0a, "ARM Cortex-A75"},     {0x41, 0xd0b, "ARM Cortex-A76"},
      {0x41, 0xd0c, "ARM Neoverse-N1"},    {0x41, 0xd0d, "ARM Cortex-A77"},
      {0x41, 0xd40, "ARM Neoverse-V1"},    {0x41, 0xd41, "ARM Cortex-A78"},
      {0x41, 0xd42, "ARM Cortex-A78AE"},   {0x41, 0xd44, "ARM Cortex-X1"},
      {0x41, 0xd49, "ARM Neoverse-N2"},    {0x41, 0xd4f, "ARM Neoverse-V2"},
      {0x4e, 0x004, "NVIDIA Carmel"},
  };
  for (const Core& c : kCores)
    if (c.implementer == implementer && c.part == part) return c.name;
  return nullptr;
}

}  // namespace

std::string CpuModelNameFromCpuinfo(std::istream& cpuinfo) {
  std::string line, implementer, part;
  auto value = [&line] {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) return std::string();
    const size_t start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? std::string() : line.substr(start);
  };
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) return value();
    // The first core's ids (big.LITTLE parts differ; the first is enough here).
    if (implementer.empty() && line.rfind("CPU implementer", 0) == 0) implementer = value();
    if (part.empty() && line.rfind("CPU part", 0) == 0) part = value();
  }
  if (implementer.empty() || part.empty()) return "host CPU";
  auto id = [](const std::string& hex) {
    return static_cast<unsigned>(std::strtoul(hex.c_str(), nullptr, 0));
  };
  const char* name = ArmCoreName(id(implementer), id(part));
  if (name != nullptr) return name;
  return "aarch64 CPU (implementer " + implementer + ", part " + part + ")";
}

namespace {

std::string CpuModelName() {
  std::ifstream in("/proc/cpuinfo");
  return CpuModelNameFromCpuinfo(in);
}

class CpuDevice final : public Device {
 public:
  CpuDevice() {
    info_.name = "cpu";
    info_.kind = DeviceKind::kCpu;
    info_.compute_units = static_cast<int>(std::thread::hardware_concurrency());
    info_.description = CpuModelName();
    long pages = sysconf(_SC_PHYS_PAGES);
    long page_size = sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && page_size > 0)
      info_.memory_bytes = static_cast<size_t>(pages) * static_cast<size_t>(page_size);
  }
  const DeviceInfo& info() const override { return info_; }

  StatusOr<std::unique_ptr<Buffer>> Allocate(size_t bytes, MemoryKind) override {
    const size_t rounded = (std::max<size_t>(bytes, 1) + kAlignment - 1) / kAlignment * kAlignment;
    if (rounded < bytes)
      return ResourceExhausted("cpu: cannot allocate " + std::to_string(bytes) + " bytes");
    void* p = AllocateHostMemory(rounded);
    if (p == nullptr)
      return ResourceExhausted("cpu: out of memory allocating " + std::to_string(bytes) +
                               " bytes");
    return std::unique_ptr<Buffer>(std::make_unique<HostBuffer>(p, bytes));
  }

  StatusOr<std::unique_ptr<Stream>> CreateStream() override {
    return std::unique_ptr<Stream>(std::make_unique<InlineStream>(*this));
  }

 PrepackedWeights& prepacked_weights() { return prepacked_weights_; }

 private:
  DeviceInfo info_;
  PrepackedWeights prepacked_weights_;
};

}  // namespace

PrepackedWeights* PrepackedWeightsOf(Device* device) {
  auto* cpu = dynamic_cast<CpuDevice*>(device);
  return cpu == nullptr ? nullptr : &cpu->prepacked_weights();
}

void* AllocateHostMemory(size_t bytes) {
  const size_t rounded = (std::max<size_t>(bytes, 1) + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded < bytes) return nullptr;
  if (rounded < kHugePageBytes) return std::aligned_alloc(kAlignment, rounded);
  void* p = nullptr;
  if (posix_memalign(&p, kHugePageBytes, rounded) != 0) return nullptr;
  // EINVAL where the kernel has no transparent huge pages: the buffer stays
  // on small pages, which is only slower.
  (void)madvise(p, rounded, MADV_HUGEPAGE);
  return p;
}

std::unique_ptr<Device> CreateCpuDevice() { return std::make_unique<CpuDevice>(); }

}  // namespace braid
