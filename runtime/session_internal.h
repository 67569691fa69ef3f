// The Session behind braid::Session::Open, constructible with any kernel
// registry and device so tests can run reference-only sessions, test kernels
// and failing allocators.
//
//   auto registry = std::make_shared<braid::KernelRegistry>();
//   braid::RegisterReferenceKernels(*registry);
//   ASSIGN_OR_RETURN(braid::Graph g, braid::LoadGraphForExecution("m.onnx"));  // api/model_loader.h
//   ASSIGN_OR_RETURN(auto session, braid::CreateSession(std::move(g), {}, registry,
//                                                        braid::CreateCpuDevice()));
#ifndef BRAID_RUNTIME_SESSION_INTERNAL_H_
#define BRAID_RUNTIME_SESSION_INTERNAL_H_

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "braid/braid.h"
#include "graph/ir.h"
#include "kernels/backend.h"
#include "runtime/adaptation.h"
#include "runtime/thread_adaptation.h"
#include "scheduler/device_profile.h"
#include "scheduler/plan.h"

namespace braid {
class BackendRegistry;  // kernels/backend_registry.h
class PolicyRegistry;
}

namespace braid {

// Unknown device names and unknown policies (without a plan file) are
// InvalidArgument listing the known ones; num_threads must be >= 0.
// Availability of the named devices is checked when they are created.
// Device names are checked against the built-in backends, or `backends`.
Status ValidateSessionOptions(const SessionOptions& options);
Status ValidateSessionOptions(const SessionOptions& options, const BackendRegistry& backends);

// One device of a session; devices[0] is the host CPU.
struct SessionDevice {
  std::unique_ptr<Device> device;
  bool host_addressable = false;  // integrated GPU with mapped host memory
  int threads = 1;                // intra-op threads of its kernels (non-CPU)
  // Its backend's timing shaping (OpenedDevice::kernel_time); empty: none.
  std::function<std::chrono::nanoseconds(double flops, double bytes)> kernel_time;
};

// What tests (and embedders of the internal API) may inject.
struct SessionInternals {
  std::optional<Plan> plan;  // wins over SessionOptions::policy / plan_file
  std::shared_ptr<const PolicyRegistry> policies;  // default: SessionPolicyRegistry()
  // The cost model's profile; wins over SessionOptions::profile. Needed by
  // the cost-model policies and by adaptation (every device in it).
  std::optional<DeviceProfile> profile;
  // Adaptation tunables (SessionOptions::adapt turns adaptation on).
  AdaptationOptions adaptation;
  // Tests: after each Run, replaces the measured kernel time per device
  // (`measured_us`, devices in session order) before adaptation sees it;
  // `base_predicted_us` is the running plan's prediction on the uncorrected
  // profile, so a fake "device 2x slower" world is measured = 2 * predicted.
  std::function<void(std::span<const std::string> devices,
                     std::span<const double> base_predicted_us, std::span<double> measured_us)>
      measure;
  // Tests: replaces a fast-path Run's measured latency (ms) before thread
  // adaptation sees it, given the thread count it ran with.
  std::function<double(int threads, double measured_ms)> run_ms;
  ThreadAdaptationOptions thread_adaptation;
  // A device dropped as unavailable is probed (a one-byte allocation) every
  // this many Runs and rejoins when it answers; 0: dropped for good.
  int lost_device_probe_runs = 100;
};

// The policies with default settings (scheduler/policies.h: RegisterPolicies):
// cpu-only, gpu-only, random-K, threshold, heft, partition, optimal, sparoa;
// the cost-model ones need a device profile (SessionOptions::profile or the
// derived one). Session::Open builds its own from SessionOptions.
const PolicyRegistry& SessionPolicyRegistry();

// A plan JSON file (`braid plan --save`); errors name the file.
StatusOr<Plan> LoadPlanFile(const std::string& path);

// Every name in options.devices must match one of `devices` (else
// Unavailable listing what is there).
StatusOr<std::unique_ptr<Session>> CreateSession(Graph graph, const SessionOptions& options,
                                                 std::shared_ptr<const KernelRegistry> registry,
                                                 std::vector<SessionDevice> devices,
                                                 SessionInternals internals = {});

// `graph` has run its passes (api/model_loader.h); shapes may keep
// symbolic dims, which are bound from the inputs at Run.
StatusOr<std::unique_ptr<Session>> CreateSession(
    Graph graph, const SessionOptions& options,
    std::shared_ptr<const KernelRegistry> registry, std::unique_ptr<Device> device);

// num_threads 0 -> the hardware concurrency (at least 1).
int ResolveNumThreads(int num_threads);

}  // namespace braid

#endif  // BRAID_RUNTIME_SESSION_INTERNAL_H_
