// The one function that assembles braid's placement policies: the Session,
// the CLI and the benchmarks all call it, so a new policy is registered in
// one place (docs/architecture.md).
//
//   braid::PolicyRegistry policies;
//   RETURN_IF_ERROR(braid::RegisterPolicies(policies, {{"sparoa.policy_file", "sparoa.bin"}}));
//   ASSIGN_OR_RETURN(braid::Plan plan, braid::MakePlan(policies, "sparoa", graph, context));
//
// Registers cpu-only, gpu-only, random-1..5, threshold, heft, partition,
// optimal, sparoa, worl and temporl. Policy-specific settings come in one generic form,
// "POLICY.KEY" -> value:
//   threshold.intensity         FLOP/byte at or above which a dense op goes to
//                               the accelerator (default 8)
//   threshold.sparsity          sparsity at or above which an op stays on the
//                               CPU (default 0.5)
//   sparoa.policy_file          a model from `braid train` (default: none,
//                               grid-searched thresholds, no SAC step)
//   sparoa.polish               1 or 0: the simulator's local-search polish
//                               after SAC (default 1)
//   sparoa.fallback_profile     the profile sparoa plans with when the
//                               placement context has no cost model
//   temporl.model               a model from `braid train --policy temporl`
//                               (required by temporl's Place)
//   temporl.base                the policy placing every node before temporl
//                               picks split ratios (default partition)
//   temporl.guard               1 or 0: keep a split only where simulated
//                               latency is no worse (default 1)
//   worl.whales, worl.iterations, worl.seed, worl.ddqn, worl.rtgs, worl.slices
//                               WORL-RTGS (scheduler/worl_options.h)
// An unknown key or a malformed value is InvalidArgument naming it.
#ifndef BRAID_SCHEDULER_POLICIES_H_
#define BRAID_SCHEDULER_POLICIES_H_

#include <map>
#include <string>

#include "scheduler/policy.h"

namespace braid {

using PolicySettings = std::map<std::string, std::string>;

Status RegisterPolicies(PolicyRegistry& registry, const PolicySettings& settings = {});

// The policy a setting belongs to: "sparoa" for "sparoa.polish".
std::string PolicyOfSetting(const std::string& key);

// The setting naming `policy`'s trained model file ("sparoa.policy_file",
// "temporl.model"), or "" for a policy that reads none: the CLI's
// --policy-file maps through it.
std::string PolicyFileSetting(const std::string& policy);

}  // namespace braid

#endif  // BRAID_SCHEDULER_POLICIES_H_
