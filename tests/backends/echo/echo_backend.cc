#include "tests/backends/echo/echo_backend.h"

#include <memory>
#include <utility>

namespace braid::testing {
namespace {

// The first kind free for a backend defined outside kernels/.
constexpr DeviceKind kEchoKind = DeviceKind::kFirstCustom;

// Host memory and the CPU's inline stream, under echo's own name and kind,
// so that the engine and the harness treat it as a device of its own.
class EchoStream final : public Stream {
 public:
  EchoStream(Device& device, std::unique_ptr<Stream> host) : device_(device), host_(std::move(host)) {}
  Device& device() override { return device_; }
  Status Submit(std::function<Status()> work) override { return host_->Submit(std::move(work)); }
  StatusOr<std::shared_ptr<Event>> Record() override { return host_->Record(); }
  StatusOr<std::shared_ptr<Event>> CreateEvent(bool timing) override {
    return host_->CreateEvent(timing);
  }
  Status RecordEvent(const std::shared_ptr<Event>& e) override { return host_->RecordEvent(e); }
  Status WaitFor(const std::shared_ptr<Event>& e) override { return host_->WaitFor(e); }
  bool WaitsOnDevice(const Event& e) const override { return host_->WaitsOnDevice(e); }
  Status Synchronize() override { return host_->Synchronize(); }
  Status CopyToDevice(void* dst, const void* src, size_t bytes) override {
    return host_->CopyToDevice(dst, src, bytes);
  }
  Status CopyToHost(void* dst, const void* src, size_t bytes) override {
    return host_->CopyToHost(dst, src, bytes);
  }

 private:
  Device& device_;
  std::unique_ptr<Stream> host_;
};

class EchoDevice final : public Device {
 public:
  EchoDevice() : host_(CreateCpuDevice()) {
    info_ = host_->info();
    info_.name = "echo";
    info_.kind = kEchoKind;
    info_.description = "echo: a test backend (reference kernels in host memory)";
  }
  const DeviceInfo& info() const override { return info_; }
  StatusOr<std::unique_ptr<Buffer>> Allocate(size_t bytes, MemoryKind kind) override {
    return host_->Allocate(bytes, kind);
  }
  StatusOr<std::unique_ptr<Stream>> CreateStream() override {
    ASSIGN_OR_RETURN(std::unique_ptr<Stream> host, host_->CreateStream());
    return std::unique_ptr<Stream>(std::make_unique<EchoStream>(*this, std::move(host)));
  }

 private:
  std::unique_ptr<Device> host_;
  DeviceInfo info_;
};

}  // namespace

const std::vector<std::string>& EchoOpTypes() {
  static const std::vector<std::string> ops = {"Add",  "AveragePool", "Flatten",
                                               "Gemm", "GlobalAveragePool", "MaxPool",
                                               "Relu"};
  return ops;
}

Backend EchoBackend() {
  Backend b;
  b.name = "echo";
  b.kind = kEchoKind;
  b.traits.host_addressable = true;
  b.compute_units_label = "cores (echo)";
  b.open = [](const BackendOptions&) -> StatusOr<OpenedDevice> {
    OpenedDevice d;
    d.device = std::make_unique<EchoDevice>();
    d.host_addressable = true;
    return d;
  };
  b.register_kernels = [](KernelRegistry& registry, const BackendOptions&) {
    KernelRegistry reference;
    RegisterReferenceKernels(reference);
    for (const std::string& op : EchoOpTypes())
      for (const KernelEntry* e : reference.Candidates(op, DeviceKind::kCpu)) {
        KernelEntry copy = *e;
        copy.device = kEchoKind;
        copy.impl = "echo";
        registry.Register(std::move(copy));
      }
  };
  return b;
}

}  // namespace braid::testing
