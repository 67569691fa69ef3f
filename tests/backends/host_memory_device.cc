#include "tests/backends/host_memory_device.h"

#include <functional>
#include <utility>

#include "kernels/cpu/cpu_device.h"

namespace braid::testing {
namespace {

class HostMemoryStream final : public Stream {
 public:
  HostMemoryStream(Device& device, std::unique_ptr<Stream> host)
      : device_(device), host_(std::move(host)) {}
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

class HostMemoryDevice final : public Device {
 public:
  HostMemoryDevice(const std::string& name, DeviceKind kind, const std::string& description)
      : host_(CreateCpuDevice()) {
    info_ = host_->info();
    info_.name = name;
    info_.kind = kind;
    info_.description = description;
  }
  const DeviceInfo& info() const override { return info_; }
  StatusOr<std::unique_ptr<Buffer>> Allocate(size_t bytes, MemoryKind kind) override {
    return host_->Allocate(bytes, kind);
  }
  StatusOr<std::unique_ptr<Stream>> CreateStream() override {
    ASSIGN_OR_RETURN(std::unique_ptr<Stream> host, host_->CreateStream());
    return std::unique_ptr<Stream>(std::make_unique<HostMemoryStream>(*this, std::move(host)));
  }

 private:
  std::unique_ptr<Device> host_;
  DeviceInfo info_;
};

}  // namespace

std::unique_ptr<Device> CreateHostMemoryDevice(const std::string& name, DeviceKind kind,
                                               const std::string& description) {
  return std::make_unique<HostMemoryDevice>(name, kind, description);
}

Backend HostMemoryBackend(const std::string& name, DeviceKind kind,
                          const std::string& description,
                          std::function<void(KernelRegistry&)> register_kernels) {
  Backend b;
  b.name = name;
  b.kind = kind;
  b.traits.host_addressable = true;
  b.compute_units_label = "cores (" + name + ")";
  b.open = [name, kind, description](const BackendOptions&) -> StatusOr<OpenedDevice> {
    OpenedDevice d;
    d.device = CreateHostMemoryDevice(name, kind, description);
    d.host_addressable = true;
    return d;
  };
  b.register_kernels = [register_kernels = std::move(register_kernels)](
                           KernelRegistry& registry, const BackendOptions&) {
    register_kernels(registry);
  };
  return b;
}

}  // namespace braid::testing
