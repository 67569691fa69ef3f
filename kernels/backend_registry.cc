#include "kernels/backend_registry.h"

#include <algorithm>
#include <set>

namespace braid {
namespace {

bool IsBackendName(std::string_view name) {
  if (name.empty() || name[0] < 'a' || name[0] > 'z') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

}  // namespace

Status BackendRegistry::Add(Backend backend) {
  if (!IsBackendName(backend.name))
    return InvalidArgument("backend name '" + backend.name + "' is not [a-z][a-z0-9_]*");
  if (!backend.open || !backend.register_kernels)
    return InvalidArgument("backend '" + backend.name + "' has no open or register_kernels");
  for (const auto& b : backends_) {
    if (b->name == backend.name)
      return InvalidArgument("backend '" + backend.name + "' added twice");
    if (b->traits.host && backend.traits.host)
      return InvalidArgument("backend '" + backend.name + "': '" + b->name +
                             "' is already the host");
  }
  backends_.push_back(std::make_shared<const Backend>(std::move(backend)));
  return Status::Ok();
}

StatusOr<const Backend*> BackendRegistry::Find(std::string_view device_name, int* index) const {
  const size_t colon = device_name.find(':');
  const std::string_view name = device_name.substr(0, colon);
  int k = 0;
  bool good = true;
  if (colon != std::string_view::npos) {
    const std::string_view digits = device_name.substr(colon + 1);
    good = !digits.empty() && digits.size() <= 6 &&
           digits.find_first_not_of("0123456789") == std::string_view::npos;
    for (char c : digits) k = good ? k * 10 + (c - '0') : 0;
  }
  for (const auto& b : backends_)
    if (good && b->name == name && (colon == std::string_view::npos || b->traits.indexed)) {
      if (index != nullptr) *index = k;
      return b.get();
    }
  return InvalidArgument("unknown device '" + std::string(device_name) + "' (known: " +
                         KnownNames() + ")");
}

const Backend* BackendRegistry::host() const {
  for (const auto& b : backends_)
    if (b->traits.host) return b.get();
  return nullptr;
}

std::vector<const Backend*> BackendRegistry::backends() const {
  std::vector<const Backend*> list;
  for (const auto& b : backends_) list.push_back(b.get());
  return list;
}

std::string BackendRegistry::KnownNames() const {
  std::vector<std::string> names;
  for (const auto& b : backends_) {
    names.push_back(b->name);
    if (b->traits.indexed) names.push_back(b->name + ":K");
  }
  std::sort(names.begin(), names.end());
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
  return list;
}

std::function<std::chrono::nanoseconds(double flops, double bytes)> BindKernelTime(
    const Backend& backend, const Device& device) {
  if (!backend.kernel_time) return {};
  return [hook = backend.kernel_time, &device](double flops, double bytes) {
    return hook(device, flops, bytes);
  };
}

StatusOr<std::vector<OpenedDevice>> OpenBackendDevices(const BackendRegistry& backends,
                                                       std::span<const std::string> names,
                                                       const BackendOptions& options,
                                                       KernelRegistry& kernels) {
  const Backend* host = backends.host();
  if (host == nullptr) return FailedPrecondition("no host backend registered");
  std::vector<OpenedDevice> devices;
  std::set<const Backend*> registered;
  auto open = [&](const Backend& b, const std::string& name, int index) -> Status {
    BackendOptions o = options;
    o.index = index;
    StatusOr<OpenedDevice> d = b.open(o);
    if (!d.ok()) return d.status();
    if (d->device == nullptr) return Internal("backend '" + b.name + "' opened no device");
    if (!d->kernel_time) d->kernel_time = BindKernelTime(b, *d->device);
    if (registered.insert(&b).second) b.register_kernels(kernels, o);
    for (const OpenedDevice& e : devices)
      if (e.device->name() == d->device->name())
        return InvalidArgument("device '" + name + "' named twice");
    devices.push_back(std::move(*d));
    return Status::Ok();
  };
  RETURN_IF_ERROR(open(*host, host->name, 0));
  for (const std::string& name : names) {
    int index = 0;
    ASSIGN_OR_RETURN(const Backend* b, backends.Find(name, &index));
    if (b == host) continue;
    RETURN_IF_ERROR(open(*b, name, index));
  }
  return devices;
}

}  // namespace braid
