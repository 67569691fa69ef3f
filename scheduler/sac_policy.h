// SparOA's refinement step: a discrete-action Soft Actor-Critic agent that
// walks a graph's nodes in order and, starting from the threshold plan,
// picks each node's device (host CPU, the first accelerator, or a channel
// split between them at one of the seven ratio bins kSliceRatioBins) from
// the op's features and the live simulated hardware state (per-device busy
// time and queue end so far, where the node's input and consumers live).
// An episode makes `passes` passes over the nodes (default 2): the second
// pass revisits every node knowing the first pass's decisions downstream.
// Reward is shaped so it sums to the episode's improvement: at step t, the
// drop in cost of (decisions so far + the rest as currently placed: the
// threshold plan in the first pass), cost = simulated latency +
// energy_weight * energy, each relative to the threshold plan.
// Twin Q networks with Polyak-averaged targets, entropy temperature tuned to
// a target entropy, a replay buffer; every random draw is seeded.
//
//   braid::PlacementEnv env(graph, ctx, thresholds, /*energy_weight=*/0.0);  // ctx.cost_model set
//   braid::DiscreteSac agent(braid::PlacementEnv::kStateSize, braid::PlacementEnv::kNumActions,
//   {}); braid::SacEpisode ep = braid::RunSacEpisode(agent, *env, /*learn=*/true);
//   std::vector<braid::SimPlacement> refined = braid::RefinePlacement(agent, *env);  // greedy
#ifndef BRAID_SCHEDULER_SAC_POLICY_H_
#define BRAID_SCHEDULER_SAC_POLICY_H_

#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <vector>

#include "scheduler/mlp.h"
#include "scheduler/placement_space.h"
#include "scheduler/threshold_predictor.h"
#include "scheduler/replay_buffer.h"

namespace braid {

struct SacOptions {
  int hidden = 64;
  double gamma = 0.9;
  double tau = 0.01;            // target-network Polyak rate
  double learning_rate = 1e-3;  // actor and critics
  double alpha_learning_rate = 1e-3;
  double initial_alpha = 0.1;
  double target_entropy_ratio = 0.3;  // target entropy = ratio * log(num_actions)
  int batch_size = 64;
  int replay_capacity = 50'000;
  int warmup_transitions = 256;  // no updates before this many transitions
  uint64_t seed = 1;
};

struct SacTransition {
  Eigen::VectorXd state, next_state;
  int action = 0;
  double reward = 0;
  bool done = false;
  uint32_t mask = ~0u;       // allowed actions in state (bit per action)
  uint32_t next_mask = ~0u;  // allowed actions in next_state
};

struct SacLosses {
  double critic = 0, actor = 0, alpha = 0, entropy = 0;
};

class DiscreteSac {
 public:
  DiscreteSac(int state_size, int num_actions, SacOptions options);

  int state_size() const { return state_size_; }
  int num_actions() const { return num_actions_; }
  double alpha() const { return std::exp(log_alpha_); }

  // pi(.|state) with disallowed actions (mask bit clear) at probability 0.
  Eigen::VectorXd Probabilities(const Eigen::VectorXd& state, uint32_t mask = ~0u) const;
  // Samples from pi (uses the agent's seeded generator) or takes the arg-max.
  int Act(const Eigen::VectorXd& state, uint32_t mask, bool greedy);
  // Samples from pi with the caller's generator (the agent is unchanged).
  int Sample(const Eigen::VectorXd& state, uint32_t mask, std::mt19937_64& rng) const;

  void Remember(SacTransition t);
  size_t replay_size() const { return replay_.size(); }
  // One gradient step of critics, actor and temperature on a sampled batch;
  // no-op (zero losses) below warmup_transitions.
  SacLosses Update();

  // Actor only (inference); Load gives an agent that can act, not learn on
  // from the same state.
  void SaveActor(BinaryWriter& out) const;
  static StatusOr<std::unique_ptr<DiscreteSac>> LoadActor(BinaryReader& in);

  Mlp& actor() { return actor_; }

 private:
  // Column-wise pi from logits with disallowed actions at exactly 0.
  Eigen::MatrixXd Masked(const Eigen::MatrixXd& logits, const std::vector<uint32_t>& masks) const;

  int state_size_, num_actions_;
  SacOptions options_;
  Mlp actor_, q1_, q2_, q1_target_, q2_target_;
  Adam actor_adam_, q1_adam_, q2_adam_;
  double log_alpha_ = 0;
  double target_entropy_ = 0;
  ReplayBuffer<SacTransition> replay_;
  std::mt19937_64 rng_;
};

// The per-node placement MDP on one (graph, profile).
class PlacementEnv {
 public:
  // 30 op / placement / hardware-state features, then per action the
  // simulated cost change of taking it (a one-step lookahead on the
  // simulator; 0 for masked actions).
  static constexpr int kStateSize = 39;
  // 0: host CPU, 1: first accelerator, 2..8: a channel split with the CPU
  // computing kSliceRatioBins[a - 2] of the output (sliceable ops only).
  static constexpr int kNumActions = 9;
  static constexpr int kDefaultPasses = 2;

  // Needs context.cost_model; `start` is the threshold pair whose plan the
  // episode starts from and the reward is measured against.
  static StatusOr<std::unique_ptr<PlacementEnv>> Create(const Graph& graph,
                                                        const PlacementContext& context,
                                                        ThresholdPair start, double energy_weight,
                                                        int passes = kDefaultPasses);

  int num_nodes() const { return space_.sim.num_nodes; }
  int passes() const { return passes_; }
  int node() const { return step_ % num_nodes(); }  // the node the next step places
  const PlacementSpace& space() const { return space_; }
  const std::vector<SimPlacement>& start_placement() const { return start_; }
  const std::vector<SimPlacement>& placement() const { return current_; }
  double start_latency_us() const { return scale_.ref_latency_us; }
  const CostScale& scale() const { return scale_; }
  // Cost of a full placement (1.0 = the start plan, lower is better).
  double CostOf(std::span<const SimPlacement> placement);

  void Reset();
  int step() const { return step_; }
  bool done() const { return step_ >= passes_ * num_nodes(); }
  Eigen::VectorXd State() const;
  uint32_t Mask() const;  // actions allowed for the current node
  // Places the current node and returns the shaped reward.
  double Step(int action);
  double current_cost() const { return cost_; }

 private:
  PlacementEnv() = default;
  SimPlacement PlacementOf(int action) const;
  bool HasOption(int node, const SimPlacement& p) const;

  PlacementSpace space_;
  std::unique_ptr<Simulator> sim_;
  std::vector<SimPlacement> start_, current_;
  std::vector<std::array<double, kNumOpClasses>> op_class_;  // one-hot
  std::vector<double> log_flops_, log_bytes_, log_intensity_, sparsity_;
  std::vector<int> input_producer_;  // first non-constant input's producer node, -1: graph input
  std::vector<int> first_consumer_;  // first node reading its first output, -1: none
  int passes_ = kDefaultPasses;
  double peak_ratio_ = 0, mapped_ = 0;
  int accelerator_ = 0;
  CostScale scale_;
  int step_ = 0;
  double cost_ = 1;
  std::vector<double> node_end_;  // from the last simulated timeline
  std::vector<double> device_busy_, device_queue_end_;
  // State() is cached per step (it runs a simulation per action).
  mutable int cached_step_ = -1;
  mutable Eigen::VectorXd cached_state_;
  mutable std::vector<SimPlacement> scratch_;
};

struct SacEpisode {
  double episode_return = 0;
  double final_cost = 1;  // relative to the start (threshold) plan
  SacLosses losses;       // mean over the episode's updates
  int updates = 0;
};
// One pass over the nodes; `learn`: store transitions and update.
SacEpisode RunSacEpisode(DiscreteSac& agent, PlacementEnv& env, bool learn);
// The greedy (arg-max) placement from the start plan.
std::vector<SimPlacement> RefinePlacement(DiscreteSac& agent, PlacementEnv& env);
// The greedy placement and `samples` episodes sampled from pi (generator
// seeded with `seed`: same seed, same answer); returns the one of lowest
// simulated cost (all are the SAC policy's own decisions).
std::vector<SimPlacement> BestOfSampledPlacements(const DiscreteSac& agent, PlacementEnv& env,
                                                  int samples, uint64_t seed);

}  // namespace braid

#endif  // BRAID_SCHEDULER_SAC_POLICY_H_
