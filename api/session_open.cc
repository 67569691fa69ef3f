// Session::Open: the public entry point with the full kernel registry, the
// devices named in SessionOptions::devices and every model name
// (api/model_loader.h, "builtin:NAME" included). Above runtime/, so a
// program that builds sessions with its own registry and graph (tests,
// CreateSession) links neither every backend's kernels nor the model zoo.
#include <algorithm>
#include <utility>

#include "api/model_loader.h"
#include "api/session_open.h"
#include "kernels/cpu/cpu_device.h"
#include "kernels/backend_registry.h"
#include "scheduler/policies.h"

namespace braid {
namespace {

// The CPU kernels' options (the vgpu's too): the sparse crossovers `braid
// calibrate` measured into the profile's "cpu" entry (when it has them),
// then SessionOptions::sparse_crossover and sparse_kernels (docs/sparse.md).
StatusOr<CpuKernelOptions> CpuKernelOptionsFor(const DeviceProfile* profile,
                                               const SessionOptions& options) {
  CpuKernelOptions base;
  const DeviceSpec* cpu = profile ? profile->Find("cpu") : nullptr;
  if (cpu != nullptr) {
    SparseCrossover& table = base.sparse_options.crossover;
    for (auto [name, target] : {std::pair{"conv1x1", &table.conv1x1},
                                std::pair{"conv3x3", &table.conv3x3},
                                std::pair{"gemm", &table.gemm}})
      if (const SparseKernelSpeed* speed = cpu->Sparse(name)) *target = speed->crossover;
  }
  base.sparse = options.sparse_kernels;
  if (!options.sparse_crossover.empty()) {
    StatusOr<SparseCrossover> table =
        ParseSparseCrossover(options.sparse_crossover, base.sparse_options.crossover);
    if (!table.ok())
      return InvalidArgument("SessionOptions::sparse_crossover: " + table.status().message());
    base.sparse_options.crossover = *table;
  }
  return base;
}

// The options every backend opens with: the CPU kernels' options, and the
// timing preset for a virtual device (parsed only when one is named).
StatusOr<BackendOptions> BackendOptionsFor(const BackendRegistry& backends,
                                           const DeviceProfile* profile,
                                           const SessionOptions& options) {
  BackendOptions o;
  ASSIGN_OR_RETURN(o.host_kernels, CpuKernelOptionsFor(profile, options));
  for (const std::string& name : options.devices) {
    StatusOr<const Backend*> b = backends.Find(name);
    if (!b.ok()) return b.status().WithPrefix("SessionOptions");
    if ((*b)->traits.virtual_device) {
      ASSIGN_OR_RETURN(o.vgpu_timing, VgpuTimingPreset(options.vgpu_timing));
    }
  }
  return o;
}

StatusOr<std::vector<SessionDevice>> OpenDevices(const BackendRegistry& backends,
                                                 const SessionOptions& options,
                                                 const DeviceProfile* profile,
                                                 KernelRegistry& registry) {
  ASSIGN_OR_RETURN(BackendOptions o, BackendOptionsFor(backends, profile, options));
  ASSIGN_OR_RETURN(std::vector<OpenedDevice> opened,
                   OpenBackendDevices(backends, options.devices, o, registry));
  std::vector<SessionDevice> devices;
  for (OpenedDevice& d : opened) {
    SessionDevice s;
    s.device = std::move(d.device);
    s.host_addressable = d.host_addressable;
    s.kernel_time = std::move(d.kernel_time);
    // The host runs with the session's threads; others with their own.
    if (!devices.empty()) s.threads = d.threads;
    devices.push_back(std::move(s));
  }
  return devices;
}

}  // namespace

DeviceProfile DerivedSessionProfile(const BackendRegistry& backends,
                                    const std::vector<SessionDevice>& devices) {
  DeviceProfile p = BuiltinHostProfile();
  p.name = "host (derived by the session)";
  const DeviceSpec cpu = p.devices.front();
  DerivedFigures host;
  host.compute_units = cpu.compute_units;
  host.peak_gflops = cpu.peak_gflops;
  host.memory_bandwidth_gbps = cpu.memory_bandwidth_gbps;
  host.launch_overhead_us = cpu.launch_overhead_us;
  for (size_t i = 1; i < devices.size(); ++i) {
    const Device& device = *devices[i].device;
    StatusOr<const Backend*> backend = backends.Find(device.name());
    if (!backend.ok() || !(*backend)->figures) continue;  // e.g. CUDA: no figures without a profile
    const std::optional<DerivedFigures> f = (*backend)->figures(device, host);
    if (!f) continue;
    DeviceSpec d;
    d.name = device.name();
    d.kind = f->kind;
    d.description = f->description;
    d.compute_units = f->compute_units;
    d.peak_gflops = f->peak_gflops;
    d.memory_bandwidth_gbps = f->memory_bandwidth_gbps;
    d.launch_overhead_us = f->launch_overhead_us;
    for (const char* field : {"peak_gflops", "memory_bandwidth_gbps", "launch_overhead_us"})
      d.sources[field] = f->source;
    p.devices.push_back(d);
    for (bool to_device : {true, false}) {
      LinkSpec link;
      link.from = to_device ? cpu.name : d.name;
      link.to = to_device ? d.name : cpu.name;
      link.latency_us = f->copy_latency_us;
      link.bandwidth_gbps = f->copy_bandwidth_gbps;
      link.sources["latency_us"] = f->copy_source;
      link.sources["bandwidth_gbps"] = f->copy_source;
      p.links.push_back(std::move(link));
    }
  }
  return p;
}

StatusOr<DeviceProfile> SessionProfileFor(const SessionOptions& options) {
  if (!options.profile.empty()) return LoadDeviceProfile(options.profile);
  const BackendRegistry backends = BuiltinBackends();
  ASSIGN_OR_RETURN(BackendOptions o, BackendOptionsFor(backends, nullptr, options));
  const Backend* host = backends.host();
  if (host == nullptr) return FailedPrecondition("no host backend registered");
  std::vector<SessionDevice> devices(1);
  ASSIGN_OR_RETURN(OpenedDevice host_device, host->open(o));
  devices[0].device = std::move(host_device.device);
  // Only backends with figures of their own (DerivedSessionProfile): open
  // those devices, without kernels.
  for (const std::string& name : options.devices) {
    ASSIGN_OR_RETURN(const Backend* b, backends.Find(name, &o.index));
    if (b == host || !b->figures) continue;
    ASSIGN_OR_RETURN(OpenedDevice opened, b->open(o));
    SessionDevice d;
    d.device = std::move(opened.device);
    devices.push_back(std::move(d));
  }
  return DerivedSessionProfile(backends, devices);
}

StatusOr<std::unique_ptr<Session>> Session::Open(const std::string& model,
                                                 const SessionOptions& options) {
  return OpenSessionWithGraph(options, [&] { return LoadGraphForExecution(model, options.fuse); });
}

StatusOr<std::unique_ptr<Session>> OpenSessionWithGraph(
    const SessionOptions& options, const std::function<StatusOr<Graph>()>& load_graph) {
  return OpenSessionWithBackends(BuiltinBackends(), options, load_graph);
}

StatusOr<std::unique_ptr<Session>> OpenSessionWithBackends(
    const BackendRegistry& backends, const SessionOptions& options,
    const std::function<StatusOr<Graph>()>& load_graph) {
  RETURN_IF_ERROR(ValidateSessionOptions(options, backends));
  auto registry = std::make_shared<KernelRegistry>();
  SessionInternals internals;
  if (!options.profile.empty()) {
    ASSIGN_OR_RETURN(internals.profile, LoadDeviceProfile(options.profile));
  }
  // Devices before the model: an unavailable device is reported first.
  ASSIGN_OR_RETURN(std::vector<SessionDevice> devices,
                   OpenDevices(backends, options, internals.profile ? &*internals.profile : nullptr,
                               *registry));
  ASSIGN_OR_RETURN(Graph graph, load_graph());
  {
    // The session's policies with its settings; sparoa, which needs a cost
    // model, plans with the fallback profile of an open device's backend
    // (host-vgpu for the vgpu), else the host's.
    PolicySettings settings = options.policy_settings;
    std::string fallback = "host";
    for (const std::string& name : options.devices) {
      StatusOr<const Backend*> b = backends.Find(name);
      if (b.ok() && !(*b)->fallback_profile.empty()) fallback = (*b)->fallback_profile;
    }
    settings.try_emplace("sparoa.fallback_profile", fallback);
    auto policies = std::make_shared<PolicyRegistry>();
    RETURN_IF_ERROR(RegisterPolicies(*policies, settings));
    internals.policies = std::move(policies);
  }
  // The cost model's profile. sparoa brings its own (above) unless a profile
  // is given or adaptation, which corrects the session's profile, is on.
  if (options.profile.empty() && (options.policy != "sparoa" || options.adapt))
    internals.profile = DerivedSessionProfile(backends, devices);
  return CreateSession(std::move(graph), options, std::move(registry), std::move(devices),
                       std::move(internals));
}

}  // namespace braid
