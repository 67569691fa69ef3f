// Session::Open: the public entry point with the full CPU kernel registry.
// Kept apart from session.cc so a program that builds sessions with its own
// registry (tests) does not link the CPU kernels.
#include "kernels/cpu/cpu_device.h"
#include "runtime/model_loader.h"
#include "runtime/session_internal.h"

namespace braid {

StatusOr<std::unique_ptr<Session>> Session::Open(const std::string& model,
                                                 const SessionOptions& options) {
  RETURN_IF_ERROR(ValidateSessionOptions(options));
  ASSIGN_OR_RETURN(Graph graph, LoadGraphForExecution(model, options.fuse));
  auto registry = std::make_shared<KernelRegistry>();
  RegisterCpuKernels(*registry);
  return CreateSession(std::move(graph), options, std::move(registry), CreateCpuDevice());
}

}  // namespace braid
