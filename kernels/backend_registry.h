// The backend registry: each backend folder (kernels/cpu, kernels/vgpu,
// kernels/cuda, or one a program defines itself, e.g. a test backend) defines
// one Backend: its name, traits, how it opens a device and registers its
// kernels, and optional hooks. Session::Open, the measurement library,
// `braid devices` and the op harness iterate a BackendRegistry instead of
// naming backends.
//
//   braid::BackendRegistry backends = braid::BuiltinBackends();  // cpu, cuda, vgpu
//   RETURN_IF_ERROR(backends.Add(MyBackend()));                  // one more
//   braid::KernelRegistry kernels;
//   braid::BackendOptions options;
//   ASSIGN_OR_RETURN(std::vector<braid::OpenedDevice> devices,
//                    braid::OpenBackendDevices(backends, {"cpu", "vgpu"}, options, kernels));
//   // devices[0] is the host; each backend's kernels are registered once.
#ifndef BRAID_KERNELS_BACKEND_REGISTRY_H_
#define BRAID_KERNELS_BACKEND_REGISTRY_H_

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/backend.h"
#include "kernels/cpu/cpu_device.h"
#include "kernels/vgpu/vgpu_device.h"

namespace braid {

// What a backend opens a device and registers its kernels with. Explicit:
// no backend reads the environment.
struct BackendOptions {
  int index = 0;    // K of a device named "NAME:K"
  int threads = 0;  // the backend's own worker threads (vgpu); 0: its default
  // The CPU kernels' options; backends that run the CPU kernels (the vgpu, a
  // test backend) take them too, so every device of a session agrees.
  CpuKernelOptions host_kernels;
  VgpuTiming vgpu_timing;  // the virtual GPU's timing shaping; default none
};

struct BackendTraits {
  bool host = false;              // the host CPU: device 0 of every session
  bool host_addressable = false;  // its buffers are host memory the CPU reads
  bool virtual_device = false;    // simulated: its times are a model
  bool async_streams = false;     // Submit only launches (times from events)
  bool real_device_times = true;  // measured times are the device's own
  bool indexed = false;           // also opened as "NAME:K"
};

// A device as a backend opened it, with what the engine needs to know.
struct OpenedDevice {
  std::unique_ptr<Device> device;
  bool host_addressable = false;  // may differ per device (an integrated GPU)
  int threads = 1;                // intra-op threads of its kernels
  std::string note;               // for measurement reports ("" = none)
  // The backend's kernel_time hook bound to this device (empty: none).
  std::function<std::chrono::nanoseconds(double flops, double bytes)> kernel_time;
};

// A device's figures for a cost model when no device profile is given, and
// where they come from: a virtual device derives them from its timing model
// and the host's; a real one has none without a profile (calibrate it).
struct DerivedFigures {
  std::string kind;         // the profile's device kind ("vgpu")
  std::string description;
  int compute_units = 1;
  double peak_gflops = 0;
  double memory_bandwidth_gbps = 0;
  double launch_overhead_us = 0;
  std::string source;       // of the three figures above
  // Copies between the host and the device (each way).
  double copy_latency_us = 0;
  double copy_bandwidth_gbps = 0;
  std::string copy_source;
};

// One row of `braid devices`.
struct DeviceListing {
  DeviceInfo info;
  std::vector<std::pair<std::string, std::string>> extra;  // key, JSON value
};

struct Backend {
  std::string name;  // "cpu", "cuda", "vgpu": devices are NAME or NAME:K
  DeviceKind kind = DeviceKind::kCpu;  // selects its kernels in a KernelRegistry
  BackendTraits traits;
  std::string compute_units_label = "compute units";  // "cores", "SMs", ...
  std::function<StatusOr<OpenedDevice>(const BackendOptions&)> open;
  std::function<void(KernelRegistry&, const BackendOptions&)> register_kernels;
  // Optional hooks.
  // The devices present (`braid devices`); an error's message says why there
  // is none. Empty: the device open({}) gives.
  std::function<StatusOr<std::vector<DeviceListing>>()> list;
  // A modelled time the engine pads each kernel step on `device` up to (the
  // vgpu's timing shaping). Empty: none.
  std::function<std::chrono::nanoseconds(const Device& device, double flops, double bytes)>
      kernel_time;
  // The device's own figures given the host's (compute_units, peak_gflops,
  // memory_bandwidth_gbps, launch_overhead_us); nullopt or empty: none.
  std::function<std::optional<DerivedFigures>(const Device& device, const DerivedFigures& host)>
      figures;
  // The shipped device profile (profiles/NAME.json) a planner that needs a
  // cost model falls back to when this backend's device is open and no
  // profile is given ("host-vgpu"); empty: the host's.
  std::string fallback_profile;
};

class BackendRegistry {
 public:
  // InvalidArgument for a bad or repeated name, a missing open or
  // register_kernels, or a second host backend.
  Status Add(Backend backend);
  // The backend of a device name ("vgpu", "cuda:1"; *index = K or 0).
  // InvalidArgument naming the device and the known names otherwise.
  StatusOr<const Backend*> Find(std::string_view device_name, int* index = nullptr) const;
  const Backend* host() const;  // null until a host backend is added
  std::vector<const Backend*> backends() const;  // in the order added
  std::string KnownNames() const;  // "cpu, cuda, cuda:K, vgpu"

 private:
  std::vector<std::shared_ptr<const Backend>> backends_;
};

// The backend's kernel_time hook bound to `device` (empty when it has none),
// as OpenBackendDevices binds it into OpenedDevice::kernel_time: for callers
// that open devices themselves (engine tests, benchmarks).
std::function<std::chrono::nanoseconds(double flops, double bytes)> BindKernelTime(
    const Backend& backend, const Device& device);

// The built-in backends (kernels/builtin_backends.cc, one line each).
BackendRegistry BuiltinBackends();

// Opens the host and then each of `names` ("cpu" is the host and opens
// nothing more), registering each backend's kernels into `kernels` once.
// Errors name the device: unknown, named twice, or its backend's own.
StatusOr<std::vector<OpenedDevice>> OpenBackendDevices(const BackendRegistry& backends,
                                                       std::span<const std::string> names,
                                                       const BackendOptions& options,
                                                       KernelRegistry& kernels);

}  // namespace braid

#endif  // BRAID_KERNELS_BACKEND_REGISTRY_H_
