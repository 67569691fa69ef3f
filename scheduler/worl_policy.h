// The `worl` policy: WORL-RTGS (Du et al., BDCC 9(11):284, 2025) on braid's
// placement space -- a Whale Optimization Algorithm (Mirjalili & Lewis,
// 2016) over per-node placements, steered by a Double DQN that proposes
// plans, and the running time gap strategy built on the correlation between
// scheduling-plan distance (SPD) and finish-time gap (FTG). Every figure is
// simulated (scheduler/simulator.h is the fitness function).
//
//   braid::WorlOptions o;                            // scheduler/worl_options.h
//   ASSIGN_OR_RETURN(braid::PlacementSpace space, braid::BuildPlacementSpace(graph, ctx, "worl"));
//   ASSIGN_OR_RETURN(braid::WorlResult r, braid::PlaceWorl(space, o));
//   std::cout << r.latency_us << " us simulated after " << r.stats.evaluations << " plans\n";
//
//   braid::PlanDistanceStudy s = braid::StudyPlanDistance(space, r.placement, 500, /*seed=*/1);
//   std::cout << "SPD/FTG Pearson " << s.pearson << "\n";
//
// Encoding: whale w holds a position x[n] in [0, K_n) per node, K_n the
// node's options in the space (devices, then slices); the plan takes option
// floor(x[n]). One iteration (a falls linearly from 2 to 0; r1, r2, p, l
// drawn per whale, C per node):
//  - WOA: p < 0.5 and |A| < 1: encircle the leader, x = X* - A |C X* - x|;
//    p < 0.5 and |A| >= 1: search around a random whale Xr, x = Xr - A |C Xr - x|;
//    p >= 0.5: spiral, x = |X* - x| e^{b l} cos(2 pi l) + X*.
//  - RTGS (our reading of the abstract, the full text is not available to
//    us): FTG grows with SPD, so a whale whose plan is g us slower than the
//    leader's is about g / k nodes from leader-quality plans, k the
//    least-squares FTG-per-node slope of the population against the leader.
//    A whale's move changes at most max(1, ceil(g / k)) node placements (the
//    nodes whose positions moved most): whales close in time refine close
//    in plan space, far ones move freely. Whales that sit on the leader's
//    plan (all but one) move to a random plan within `reach` nodes of it,
//    reach = ceil(mean gap of the other whales / k): the leader's
//    neighbourhood is searched at the distance the correlation ties to the
//    population's running time gap.
//  - DDQN: an episode from the leader revisits a window of nodes; per node
//    it picks the device (or a host/accelerator slice) from the node's
//    features, where its neighbours sit and a one-step simulated lookahead
//    of each action; the reward is the drop in simulated latency. The
//    episode's plan replaces the worst whale (and becomes the leader when
//    better); the net learns online from a replay buffer during the search.
// The leader is the best plan seen (elitist). Seeded: same seed, same plan.
// The start population: HEFT's plan, partition's (WorlOptions::
// seed_partition, on by default), every node on each device, the rest
// uniform random.
#ifndef BRAID_SCHEDULER_WORL_POLICY_H_
#define BRAID_SCHEDULER_WORL_POLICY_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "scheduler/placement_space.h"
#include "scheduler/policy.h"
#include "scheduler/worl_options.h"

namespace braid {

struct WorlStats {
  int64_t evaluations = 0;           // plans simulated
  int iterations = 0;
  std::vector<double> leader_us;     // leader's simulated latency after each iteration
  double start_us = 0;               // best of the start population
  int ddqn_episodes = 0;
  int ddqn_leads = 0;                // DDQN plans that became the leader
  int woa_leads = 0;                 // whale moves that became the leader
  int rtgs_leads = 0;                // RTGS neighbourhood plans that became the leader
  double td_loss = 0;                // mean DDQN loss over the last iteration's updates
  // The population's SPD/FTG against the leader, averaged over iterations
  // (iterations where every whale sits on the leader's plan are skipped).
  double spd_ftg_pearson = 0;
  double ftg_us_per_node = 0;        // the RTGS slope k, averaged likewise
};

struct WorlResult {
  std::vector<SimPlacement> placement;
  double latency_us = 0;  // simulated
  double energy_j = 0;    // simulated
  WorlStats stats;
};

// Errors: invalid options (ValidateWorlOptions), an empty graph.
StatusOr<WorlResult> PlaceWorl(const PlacementSpace& space, const WorlOptions& options);

// Scheduling-plan distance: nodes whose placements differ (SamePlacement).
int PlanDistance(std::span<const SimPlacement> a, std::span<const SimPlacement> b);

// Plans at Hamming distance d (uniform in [1, nodes with two or more
// options]) from `reference`, d random nodes moved to another of their
// options; per plan its SPD and FTG = its latency - the reference's.
struct PlanDistanceStudy {
  std::vector<int> distance;
  std::vector<double> gap_us;  // simulated
  double pearson = 0;          // of (SPD, FTG)
  double spearman = 0;         // rank correlation, ties averaged
  double slope_us_per_node = 0;  // least squares through the origin
};
PlanDistanceStudy StudyPlanDistance(const PlacementSpace& space,
                                    std::span<const SimPlacement> reference, int samples,
                                    uint64_t seed);

double Pearson(std::span<const double> x, std::span<const double> y);   // 0 if degenerate
double Spearman(std::span<const double> x, std::span<const double> y);  // 0 if degenerate

class WorlPolicy : public Policy {
 public:
  explicit WorlPolicy(WorlOptions options = {}, std::string name = "worl")
      : options_(std::move(options)), name_(std::move(name)) {}
  std::string name() const override { return name_; }
  StatusOr<Plan> Place(const Graph& graph, const PlacementContext& context) const override;

 private:
  WorlOptions options_;
  std::string name_;
};

}  // namespace braid

#endif  // BRAID_SCHEDULER_WORL_POLICY_H_
