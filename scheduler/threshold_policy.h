// The static-threshold policy (SparOA's two axes with user-given
// thresholds): high-intensity dense ops go to the accelerator, low-intensity
// or sparse ops stay on the CPU. Ops without compute (reshape, concat, ...)
// stay with their input so they add no copies.
//
//   braid::PolicyRegistry policies;
//   braid::RegisterBasicPolicies(policies);               // cpu-only, gpu-only
//   braid::ThresholdOptions t;
//   t.intensity_threshold = 12;                            // FLOP per byte
//   t.sparsity_threshold = 0.6;
//   braid::RegisterCostModelPolicies(policies, t);        // threshold
//   ASSIGN_OR_RETURN(braid::Plan plan, braid::MakePlan(policies, "threshold", graph, ctx));
#ifndef BRAID_SCHEDULER_THRESHOLD_POLICY_H_
#define BRAID_SCHEDULER_THRESHOLD_POLICY_H_

#include "scheduler/policy.h"

namespace braid {

struct ThresholdOptions {
  // Arithmetic intensity (FLOPs per byte moved, graph/annotate.h) at or above
  // which a dense op goes to the accelerator.
  double intensity_threshold = 8.0;
  // Sparsity (the larger of weight sparsity and measured activation
  // sparsity) at or above which an op stays on the CPU.
  double sparsity_threshold = 0.5;
  // Zero-FLOP ops stay on their first input's device.
  bool data_ops_follow_input = true;
};

class ThresholdPolicy : public Policy {
 public:
  explicit ThresholdPolicy(ThresholdOptions options = {}) : options_(options) {}
  std::string name() const override { return "threshold"; }
  // Fills NodePlan::reason with the rule that decided, and predicted_ms when
  // context.cost_model is set.
  StatusOr<Plan> Place(const Graph& graph, const PlacementContext& context) const override;

 private:
  ThresholdOptions options_;
};

// Registers "threshold" (with `options`). Kept apart from
// RegisterBasicPolicies so the basic set stays cpu-only / gpu-only.
void RegisterCostModelPolicies(PolicyRegistry& registry, const ThresholdOptions& options = {});

}  // namespace braid

#endif  // BRAID_SCHEDULER_THRESHOLD_POLICY_H_
