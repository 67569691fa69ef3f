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
#include "kernels/vgpu/vgpu_device.h"
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

DeviceProfile DerivedSessionProfile(const std::vector<SessionDevice>& devices) {
  DeviceProfile p = BuiltinHostProfile();
  p.name = "host (derived by the session)";
  const DeviceSpec cpu = p.devices.front();
  for (size_t i = 1; i < devices.size(); ++i) {
    const auto* vgpu = dynamic_cast<const VgpuDevice*>(devices[i].device.get());
    if (vgpu == nullptr) continue;  // CUDA: no figures without a profile
    const VgpuTiming& t = vgpu->timing();
    // The vgpu runs the CPU kernels on its own thread(s): never faster than
    // that many host threads, slower when its timing model says so.
    const double threads = std::max(1, vgpu->threads());
    const double thread_share = threads / std::max(1, cpu.compute_units);
    DeviceSpec d;
    d.name = vgpu->name();
    d.kind = "vgpu";
    d.description = "braid's virtual GPU (" + t.Describe() + "); a test device, not a GPU";
    d.compute_units = static_cast<int>(threads);
    d.peak_gflops = cpu.peak_gflops * thread_share;
    d.memory_bandwidth_gbps = cpu.memory_bandwidth_gbps;
    d.launch_overhead_us = cpu.launch_overhead_us;
    if (t.enabled) {
      if (t.peak_gflops > 0) d.peak_gflops = std::min(d.peak_gflops, t.peak_gflops);
      if (t.mem_gbps > 0) d.memory_bandwidth_gbps = std::min(d.memory_bandwidth_gbps, t.mem_gbps);
      d.launch_overhead_us = std::max(d.launch_overhead_us, t.launch_us);
    }
    const std::string source =
        "derived: min(the vgpu's timing model, its share of the host CPU's estimate)";
    for (const char* f : {"peak_gflops", "memory_bandwidth_gbps", "launch_overhead_us"})
      d.sources[f] = source;
    p.devices.push_back(d);
    for (bool to_device : {true, false}) {
      LinkSpec link;
      link.from = to_device ? cpu.name : d.name;
      link.to = to_device ? d.name : cpu.name;
      // A copy is a memcpy by the vgpu's worker, padded to the timing model.
      link.latency_us = t.enabled ? std::max(t.copy_latency_us, 5.0) : 5.0;
      link.bandwidth_gbps = t.enabled && t.copy_gbps > 0 ? std::min(t.copy_gbps, 10.0) : 10.0;
      link.sources["latency_us"] = "estimate: vgpu copy (memcpy on its worker thread, shaped)";
      link.sources["bandwidth_gbps"] = link.sources["latency_us"];
      p.links.push_back(std::move(link));
    }
  }
  return p;
}

StatusOr<DeviceProfile> SessionProfileFor(const SessionOptions& options) {
  if (!options.profile.empty()) return LoadDeviceProfile(options.profile);
  const BackendRegistry backends = BuiltinBackends();
  ASSIGN_OR_RETURN(BackendOptions o, BackendOptionsFor(backends, nullptr, options));
  std::vector<SessionDevice> devices(1);
  devices[0].device = CreateCpuDevice();
  // Only virtual devices carry figures of their own (DerivedSessionProfile):
  // open those, without kernels.
  for (const std::string& name : options.devices) {
    ASSIGN_OR_RETURN(const Backend* b, backends.Find(name, &o.index));
    if (!b->traits.virtual_device) continue;
    ASSIGN_OR_RETURN(OpenedDevice opened, b->open(o));
    SessionDevice d;
    d.device = std::move(opened.device);
    devices.push_back(std::move(d));
  }
  return DerivedSessionProfile(devices);
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
    // model, plans with the host-vgpu profile when vgpu is open, else host.
    PolicySettings settings = options.policy_settings;
    const bool vgpu = std::find(options.devices.begin(), options.devices.end(), "vgpu") !=
                      options.devices.end();
    settings.try_emplace("sparoa.fallback_profile", vgpu ? "host-vgpu" : "host");
    auto policies = std::make_shared<PolicyRegistry>();
    RETURN_IF_ERROR(RegisterPolicies(*policies, settings));
    internals.policies = std::move(policies);
  }
  // The cost model's profile. sparoa brings its own (above) unless a profile
  // is given or adaptation, which corrects the session's profile, is on.
  if (options.profile.empty() && (options.policy != "sparoa" || options.adapt))
    internals.profile = DerivedSessionProfile(devices);
  return CreateSession(std::move(graph), options, std::move(registry), std::move(devices),
                       std::move(internals));
}

}  // namespace braid
