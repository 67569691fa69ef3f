// Placement policies: (annotated graph, devices, cost model, live state) ->
// Plan. Policies are registered by name in an explicit registry; the runtime
// and `braid plan` look them up there. User pins always win: MakePlan applies
// them after the policy and validates the result.
//
//   braid::PolicyRegistry policies;
//   braid::RegisterBasicPolicies(policies);          // cpu-only, gpu-only, random-K
//   braid::PlacementContext ctx;
//   ctx.devices = {"cpu", "vgpu"};
//   ASSIGN_OR_RETURN(braid::Plan plan, braid::MakePlan(policies, "gpu-only", graph, ctx));
#ifndef BRAID_SCHEDULER_POLICY_H_
#define BRAID_SCHEDULER_POLICY_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "graph/ir.h"
#include "graph/status.h"
#include "scheduler/plan.h"

namespace braid {

class CostModel;  // scheduler/cost_model.h

// What a policy may look at besides the graph.
struct PlacementContext {
  // Device names the plan may use; the first one is the host CPU ("cpu").
  std::vector<std::string> devices;
  // Per graph node: the devices that have a kernel for it (from the runtime's
  // kernel registry). Empty means every device may run every node.
  std::vector<std::vector<std::string>> allowed_devices;
  // Predicted costs (may be null: policies that need it fail clearly).
  const CostModel* cost_model = nullptr;

  // True when node `index` may run on `device`.
  bool Allows(size_t index, std::string_view device) const;
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string name() const = 0;
  // A plan before pins are applied; MakePlan applies pins and validates.
  virtual StatusOr<Plan> Place(const Graph& graph, const PlacementContext& context) const = 0;
};

class PolicyRegistry {
 public:
  void Register(std::string name, std::function<std::unique_ptr<Policy>()> create);
  // NotFound listing the registered names.
  StatusOr<std::unique_ptr<Policy>> Create(std::string_view name) const;
  std::vector<std::string> Names() const;  // sorted

 private:
  std::vector<std::pair<std::string, std::function<std::unique_ptr<Policy>()>>> entries_;
};

// cpu-only: every node on devices[0]. gpu-only: every node on the first
// non-CPU device that has a kernel for it, else on the CPU with the reason
// recorded in NodePlan::reason (a fallback is never silent). random-1 ..
// random-kRandomPolicySeeds: seeded random plans over devices[0] and [1]
// with channel / batch slices, for testing engines and devices (outputs must
// not depend on placement); never a scheduling choice.
inline constexpr uint32_t kRandomPolicySeeds = 5;
void RegisterBasicPolicies(PolicyRegistry& registry);

// Runs policy `name`, then applies pins (ApplyDevicePins), checks each node's
// device against context.allowed_devices and validates (ValidatePlan).
StatusOr<Plan> MakePlan(const PolicyRegistry& registry, std::string_view name,
                        const Graph& graph, const PlacementContext& context);

}  // namespace braid

#endif  // BRAID_SCHEDULER_POLICY_H_
