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
#include <string>

#include "braid/braid.h"
#include "graph/ir.h"
#include "kernels/backend.h"

namespace braid {

// Devices other than "cpu" are Unavailable; policies other than "cpu-only"
// are InvalidArgument listing the known ones; num_threads must be >= 0.
Status ValidateSessionOptions(const SessionOptions& options);

// `graph` has run its passes (runtime/model_loader.h); shapes may keep
// symbolic dims, which are bound from the inputs at Run.
StatusOr<std::unique_ptr<Session>> CreateSession(
    Graph graph, const SessionOptions& options,
    std::shared_ptr<const KernelRegistry> registry, std::unique_ptr<Device> device);

// num_threads 0 -> the hardware concurrency (at least 1).
int ResolveNumThreads(int num_threads);

}  // namespace braid

#endif  // BRAID_RUNTIME_SESSION_INTERNAL_H_
