// The optimal reference: the best plan in the placement space (each node on
// one allowed device, or a Conv/Gemm/MatMul split between two at the ratio
// bins of scheduler/placement_space.h; stream 0; nodes issued in graph
// order), judged by simulated latency (energy breaks ties).
//
//  - chain graphs: exact, by dynamic programming over the device holding
//    the live value (each step is simulated exactly: copies, slices, copy
//    engines), linear in the nodes;
//  - small graphs (options product <= exhaustive_limit): exact, exhaustive;
//  - other DAGs: the best plan a seeded simulated-annealing search finds,
//    started from the partition plan (itself the best of cpu-only, gpu-only
//    and heft, improved) and polished by local moves, together with a proven
//    lower bound: max(critical path with every node at its fastest placement
//    and free transfers, total least busy time / kernel slots).
//
//   braid::OptimalOptions o;
//   o.search_iterations = 50'000;
//   ASSIGN_OR_RETURN(braid::OptimalResult best, braid::FindOptimalPlan(graph, ctx, o));
//   std::cout << OptimalKindName(best.kind) << " " << best.latency_us << " us simulated, gap "
//             << 100 * best.Gap() << "%\n";
//
//   braid::RegisterBaselinePolicies(policies);   // heft, partition, optimal
#ifndef BRAID_SCHEDULER_OPTIMAL_H_
#define BRAID_SCHEDULER_OPTIMAL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "scheduler/placement_space.h"
#include "scheduler/policy.h"

namespace braid {

enum class OptimalMethod {
  kAuto,        // chain DP if a chain, else exhaustive if small, else search
  kChainDp,     // error unless the graph is a chain
  kExhaustive,  // error if the options product exceeds exhaustive_limit
  kSearch,
};

enum class OptimalKind { kChainDp, kExhaustive, kSearched };
// "exact (chain DP)", "exact (exhaustive)", "searched + bound"
const char* OptimalKindName(OptimalKind kind);

struct OptimalOptions {
  OptimalMethod method = OptimalMethod::kAuto;
  bool allow_slices = true;
  int64_t exhaustive_limit = int64_t{1} << 16;  // plans simulated at most
  int64_t search_iterations = 20'000;           // annealing steps
  uint64_t seed = 1;
};

struct OptimalResult {
  std::vector<SimPlacement> placement;
  OptimalKind kind = OptimalKind::kSearched;
  double latency_us = 0;      // simulated
  double energy_j = 0;        // simulated
  double lower_bound_us = 0;  // proven (PlacementLowerBoundUs); exact kinds: their latency
  int64_t evaluations = 0;    // plans simulated
  bool exact() const { return kind != OptimalKind::kSearched; }
  // (latency - bound) / bound; 0 for exact results.
  double Gap() const {
    return exact() || lower_bound_us <= 0 ? 0.0 : (latency_us - lower_bound_us) / lower_bound_us;
  }
};

// A lower bound on the simulated latency of every placement in `space`.
double PlacementLowerBoundUs(const PlacementSpace& space);

// True when the graph is a chain the DP solves exactly: every node has one
// non-constant output, the first reads one graph input, each other reads
// only the previous node's output, and only the last node's output is a
// graph output.
bool IsChain(const SimGraph& graph);

StatusOr<OptimalResult> FindOptimal(const PlacementSpace& space, const OptimalOptions& options = {});
// Builds the space and converts the result; the plan's node reasons say the
// kind, the bound and the gap.
StatusOr<Plan> FindOptimalPlan(const Graph& graph, const PlacementContext& context,
                               const OptimalOptions& options = {},
                               OptimalResult* result = nullptr);

class OptimalPolicy : public Policy {
 public:
  explicit OptimalPolicy(OptimalOptions options = {}) : options_(options) {}
  std::string name() const override { return "optimal"; }
  StatusOr<Plan> Place(const Graph& graph, const PlacementContext& context) const override;

 private:
  OptimalOptions options_;
};

// Registers heft, partition and optimal (all need a cost model). Kept apart
// from RegisterBasicPolicies and RegisterCostModelPolicies.
void RegisterBaselinePolicies(PolicyRegistry& registry, const OptimalOptions& optimal = {});

}  // namespace braid

#endif  // BRAID_SCHEDULER_OPTIMAL_H_
