// The Session behind braid::Session::Open, constructible with any kernel
// registry and device so tests can run reference-only sessions, test kernels
// and failing allocators.
//
//   auto registry = std::make_shared<braid::KernelRegistry>();
//   braid::RegisterReferenceKernels(*registry);
//   ASSIGN_OR_RETURN(braid::Graph g, braid::LoadGraphForExecution("builtin:resnet18"));
//   ASSIGN_OR_RETURN(auto session, braid::CreateSession(std::move(g), {}, registry,
//                                                        braid::CreateCpuDevice()));
#ifndef BRAID_RUNTIME_SESSION_INTERNAL_H_
#define BRAID_RUNTIME_SESSION_INTERNAL_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "braid/braid.h"
#include "graph/ir.h"
#include "kernels/backend.h"
#include "scheduler/plan.h"

namespace braid {
class PolicyRegistry;
}

namespace braid {

// Unknown device names and unknown policies (without a plan file) are
// InvalidArgument listing the known ones; num_threads must be >= 0.
// Availability of the named devices is checked when they are created.
Status ValidateSessionOptions(const SessionOptions& options);

// One device of a session; devices[0] is the host CPU.
struct SessionDevice {
  std::unique_ptr<Device> device;
  bool host_addressable = false;  // integrated GPU with mapped host memory
  int threads = 1;                // intra-op threads of its kernels (non-CPU)
};

// What tests (and embedders of the internal API) may inject.
struct SessionInternals {
  std::optional<Plan> plan;  // wins over SessionOptions::policy / plan_file
  std::shared_ptr<const PolicyRegistry> policies;  // default: RegisterBasicPolicies
};

// A plan JSON file (`braid plan --save`); errors name the file.
StatusOr<Plan> LoadPlanFile(const std::string& path);

// Every name in options.devices must match one of `devices` (else
// Unavailable listing what is there).
StatusOr<std::unique_ptr<Session>> CreateSession(Graph graph, const SessionOptions& options,
                                                 std::shared_ptr<const KernelRegistry> registry,
                                                 std::vector<SessionDevice> devices,
                                                 SessionInternals internals = {});

// `graph` has run its passes (runtime/model_loader.h); shapes may keep
// symbolic dims, which are bound from the inputs at Run.
StatusOr<std::unique_ptr<Session>> CreateSession(
    Graph graph, const SessionOptions& options,
    std::shared_ptr<const KernelRegistry> registry, std::unique_ptr<Device> device);

// num_threads 0 -> the hardware concurrency (at least 1).
int ResolveNumThreads(int num_threads);

}  // namespace braid

#endif  // BRAID_RUNTIME_SESSION_INTERNAL_H_
