// HEFT (Topcuoglu et al., 2002): list scheduling by upward rank with costs
// averaged over the devices a node may use, each node then placed on the
// device where it finishes earliest, counting the copies its inputs need
// (from the cost model's links; zero on mapped links). Allowed devices and
// pins are respected. Needs PlacementContext::cost_model.
//
//   braid::PolicyRegistry policies;
//   braid::RegisterBaselinePolicies(policies);      // scheduler/optimal.h: heft, partition, optimal
//   ctx.cost_model = &cost_model;
//   ASSIGN_OR_RETURN(braid::Plan plan, braid::MakePlan(policies, "heft", graph, ctx));
//
// A Plan has no issue order (the runtime and the simulator issue nodes in
// graph order), so HEFT's rank order shapes only the device choice; the
// simulated latency of the plan is what the other policies compare against.
#ifndef BRAID_SCHEDULER_HEFT_POLICY_H_
#define BRAID_SCHEDULER_HEFT_POLICY_H_

#include <string>
#include <vector>

#include "scheduler/placement_space.h"
#include "scheduler/policy.h"

namespace braid {

struct HeftPlacement {
  std::vector<SimPlacement> placement;  // single devices only
  std::vector<double> rank_us;          // upward rank per node
  std::vector<double> finish_us;        // HEFT's own estimate per node
  std::vector<std::string> reasons;
};

// HEFT over an already built space (one SimGraph for many policies).
HeftPlacement PlaceHeft(const PlacementSpace& space);

class HeftPolicy : public Policy {
 public:
  std::string name() const override { return "heft"; }
  StatusOr<Plan> Place(const Graph& graph, const PlacementContext& context) const override;
};

}  // namespace braid

#endif  // BRAID_SCHEDULER_HEFT_POLICY_H_
