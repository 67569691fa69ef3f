// What Session::Open (include/braid/braid.h) does besides CreateSession: it
// opens the devices SessionOptions names and derives the cost model's
// profile from them. The CLI predicts with the same profile:
//
//   ASSIGN_OR_RETURN(braid::DeviceProfile p, braid::SessionProfileFor(options));
//
// This layer sits above runtime/ (it links the model zoo for "builtin:NAME",
// api/model_loader.h); runtime/ itself runs graphs it is handed.
#ifndef BRAID_API_SESSION_OPEN_H_
#define BRAID_API_SESSION_OPEN_H_

#include <functional>
#include <memory>
#include <vector>

#include "braid/braid.h"
#include "kernels/backend_registry.h"
#include "runtime/session_internal.h"
#include "scheduler/device_profile.h"

namespace braid {

// Session::Open with the model's graph from `load_graph` (run once, after the
// devices are open, so that an unavailable device is reported first): the
// graph has run its passes. SlimmableModel opens its segments through it.
StatusOr<std::unique_ptr<Session>> OpenSessionWithGraph(
    const SessionOptions& options, const std::function<StatusOr<Graph>()>& load_graph);
// The same with the devices from `backends` (BuiltinBackends() above), e.g.
// the built-ins plus a test backend: SessionOptions::devices name them.
StatusOr<std::unique_ptr<Session>> OpenSessionWithBackends(
    const BackendRegistry& backends, const SessionOptions& options,
    const std::function<StatusOr<Graph>()>& load_graph);

// The cost model's profile when SessionOptions::profile is empty: the
// built-in host CPU estimate plus, per device whose backend has a `figures`
// hook (the vgpu: its timing model capped at the host threads it runs on), a
// device with copy links to the host.
DeviceProfile DerivedSessionProfile(const BackendRegistry& backends,
                                    const std::vector<SessionDevice>& devices);
// The profile Session::Open predicts with for `options`: SessionOptions::profile
// loaded, else DerivedSessionProfile of the devices the options name (CUDA
// devices get no figures: give a profile for them).
StatusOr<DeviceProfile> SessionProfileFor(const SessionOptions& options);

}  // namespace braid

#endif  // BRAID_API_SESSION_OPEN_H_
