// SparOA's options and registration, apart from the policy's internals
// (scheduler/sparoa_policy.h pulls in Eigen and the MLPs), so the runtime can
// register "sparoa" without them.
//
//   braid::SparoaOptions o;
//   o.policy_file = "sparoa.bin";            // from `braid train`
//   o.fallback_profile = "host-vgpu";        // when the context has no cost model
//   braid::RegisterSparoaPolicy(policies, o);
#ifndef BRAID_SCHEDULER_SPAROA_OPTIONS_H_
#define BRAID_SCHEDULER_SPAROA_OPTIONS_H_

#include <cstdint>
#include <string>

#include "scheduler/policy.h"

namespace braid {

struct SparoaOptions {
  std::string policy_file;       // "" = no trained model
  double energy_weight = -1;     // < 0: the value stored in the file (0 without one)
  int threshold_candidates = 3;  // predicted pairs verified on the simulator
  // SAC episodes sampled from the policy besides the greedy one; the lowest
  // simulated cost is kept (seeded: same plan every time).
  int sac_samples = 32;
  // After SAC and the safety net: greedy local moves judged by the simulator
  // (ImproveByLocalMoves, scheduler/partition_policy.h). Not RL; reported.
  bool polish = true;
  int64_t polish_evaluations = 200'000;  // simulations at most
  // Device profile (name or file) whose cost model is used when the
  // PlacementContext has none (the runtime's sessions); "" = fail then.
  std::string fallback_profile;
};

// Registers `name` (default "sparoa"). The policy file (and the fallback
// profile) are loaded when the policy is created; a missing or bad file
// makes Place fail with the load error (never a silent untrained fallback).
void RegisterSparoaPolicy(PolicyRegistry& registry, const SparoaOptions& options = {},
                          const std::string& name = "sparoa");

}  // namespace braid

#endif  // BRAID_SCHEDULER_SPAROA_OPTIONS_H_
