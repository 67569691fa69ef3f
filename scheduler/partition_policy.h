// partition: a CoDL-style greedy. It starts from the best (simulated) of
// cpu-only, gpu-only and heft, then improves the plan by local moves until
// no move helps: move one node to another device, split a Conv/Gemm/MatMul
// between two devices (SliceSpec along output channels) at the ratio bins
// nearest to where the cost model says both sides finish together (input
// copies and the copy back of the other part included), or move a run of
// 2/4/8 consecutive nodes to one device (single moves cannot cross a
// transfer-cost hill). Every move is judged by the simulator (latency, then
// energy). Deterministic. Needs PlacementContext::cost_model.
//
//   braid::RegisterBaselinePolicies(policies);      // scheduler/optimal.h
//   ASSIGN_OR_RETURN(braid::Plan plan, braid::MakePlan(policies, "partition", graph, ctx));
#ifndef BRAID_SCHEDULER_PARTITION_POLICY_H_
#define BRAID_SCHEDULER_PARTITION_POLICY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "scheduler/placement_space.h"
#include "scheduler/policy.h"

namespace braid {

struct LocalSearchStats {
  int sweeps = 0;
  int64_t evaluations = 0;  // simulations run
  int moves = 0;            // moves taken
};

// The ratio at which the part on p.device and the part on p.other_device
// finish together, in [0, 1], given where `placement` puts the node's inputs
// (copies in, copy of the other part back). Ignores queueing.
double BalancedSliceRatio(const PlacementSpace& space, std::span<const SimPlacement> placement,
                          int node, int device, int other_device);

// Greedy descent: sweeps the nodes in graph order, takes a node's best move
// when it beats the current plan, until a sweep changes nothing or
// `max_evaluations` simulations ran. `placement` is improved in place.
LocalSearchStats ImproveByLocalMoves(const PlacementSpace& space, Simulator& sim,
                                     std::vector<SimPlacement>& placement,
                                     int64_t max_evaluations = 2'000'000);

struct PartitionResult {
  std::vector<SimPlacement> placement;
  std::string start;  // "cpu-only", "gpu-only" or "heft"
  double start_latency_us = 0;
  double latency_us = 0;  // simulated
  double energy_j = 0;    // simulated
  LocalSearchStats stats;
};
PartitionResult PlacePartition(const PlacementSpace& space, int64_t max_evaluations = 2'000'000);

class PartitionPolicy : public Policy {
 public:
  std::string name() const override { return "partition"; }
  StatusOr<Plan> Place(const Graph& graph, const PlacementContext& context) const override;
};

}  // namespace braid

#endif  // BRAID_SCHEDULER_PARTITION_POLICY_H_
