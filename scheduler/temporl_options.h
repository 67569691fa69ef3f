// TempoRL's options and registration, apart from the policy's internals
// (scheduler/temporl_policy.h pulls in Eigen and the MLPs), so the runtime
// can register "temporl" without them.
//
//   braid::TemporlOptions o;
//   o.model_file = "temporl.bin";            // from `braid train --policy temporl`
//   o.base = "partition";                     // places the unsplit nodes
//   auto base = std::make_shared<braid::PolicyRegistry>(policies);  // the other policies
//   braid::RegisterTemporlPolicy(policies, o, base);
#ifndef BRAID_SCHEDULER_TEMPORL_OPTIONS_H_
#define BRAID_SCHEDULER_TEMPORL_OPTIONS_H_

#include <memory>
#include <string>

#include "scheduler/policy.h"

namespace braid {

struct TemporlOptions {
  std::string model_file;        // "" = no trained agent: Place fails, naming the setting
  std::string base = "partition";  // the policy whose plan gives every node's device
  // Keep the agent's split of a layer only where the simulated end-to-end
  // latency is no worse than without it (so never slower than the base).
  bool guard = true;
};

// Registers "temporl". `base_policies` holds the policies `base` may name
// (not temporl itself); the model file is loaded when the policy is
// created, and a missing or bad file makes Place fail with the load error.
void RegisterTemporlPolicy(PolicyRegistry& registry, const TemporlOptions& options,
                           std::shared_ptr<const PolicyRegistry> base_policies);

}  // namespace braid

#endif  // BRAID_SCHEDULER_TEMPORL_OPTIONS_H_
