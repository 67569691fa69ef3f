// Double Deep Q-Network (van Hasselt et al., 2016) for WORL-RTGS
// (scheduler/worl_policy.h): an online and a target Q network (scheduler/mlp.h),
// a replay buffer, epsilon-greedy actions over a masked discrete action set,
// and the Double-DQN target r + gamma * Q_target(s', argmax_a Q_online(s', a)).
// Every random draw comes from the agent's seeded generator.
//
// Optionally a state comes with a prior per action, a part of Q known
// exactly (WORL-RTGS: the simulator's one-step reward of each action);
// then Q(s, a) = prior(a) + net(s)(a) and the networks learn only the rest
// (the value of what follows), instead of re-learning the simulator.
//
//   braid::DdqnOptions o;
//   o.seed = 7;
//   braid::Ddqn agent(/*state_size=*/38, /*num_actions=*/11, o);
//   int a = agent.Act(state, mask, /*greedy=*/false);       // epsilon-greedy
//   agent.Remember({state, next_state, a, reward, done, mask, next_mask});
//   double loss = agent.Update();                            // one step on a sampled batch
#ifndef BRAID_SCHEDULER_WORL_DDQN_H_
#define BRAID_SCHEDULER_WORL_DDQN_H_

#include <Eigen/Dense>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "graph/status.h"
#include "scheduler/mlp.h"
#include "scheduler/replay_buffer.h"
#include "scheduler/worl_options.h"

namespace braid {

struct DdqnTransition {
  Eigen::VectorXd state, next_state;
  int action = 0;
  double reward = 0;
  bool done = false;
  uint32_t mask = ~0u;       // allowed actions in state (bit per action)
  uint32_t next_mask = ~0u;  // allowed actions in next_state
  Eigen::VectorXd prior, next_prior;  // empty: no known part
};

class Ddqn {
 public:
  // num_actions in [1, 32] (masks are 32-bit). Check the options with
  // ValidateDdqnOptions first.
  Ddqn(int state_size, int num_actions, DdqnOptions options);

  int state_size() const { return state_size_; }
  int num_actions() const { return num_actions_; }
  double epsilon() const;
  int64_t actions_taken() const { return steps_; }
  int64_t updates() const { return updates_; }
  size_t replay_size() const { return replay_.size(); }

  // Online Q (plus `prior` when given: num_actions entries).
  Eigen::VectorXd QValues(const Eigen::VectorXd& state, const Eigen::VectorXd* prior = nullptr) const;
  // The allowed action of highest Q (ties: lowest index); -1 for an empty mask.
  int Greedy(const Eigen::VectorXd& state, uint32_t mask,
             const Eigen::VectorXd* prior = nullptr) const;
  // Epsilon-greedy (advances the epsilon schedule) or greedy.
  int Act(const Eigen::VectorXd& state, uint32_t mask, bool greedy,
          const Eigen::VectorXd* prior = nullptr);

  void Remember(DdqnTransition t);
  // One Adam step of the online network on a batch sampled from the replay
  // buffer; hard-copies it to the target every target_sync_every updates.
  // Returns the batch's mean Huber loss before the step (0 below warmup).
  double Update();
  // One step on the given batch (the target network is not synced).
  double UpdateOn(std::span<const DdqnTransition> batch);
  // Mean squared Double-DQN TD error on `batch` (nothing changes).
  double TdError(std::span<const DdqnTransition> batch) const;
  void SyncTarget() { target_ = online_; }

 private:
  // Double-DQN targets for `batch`.
  Eigen::VectorXd Targets(std::span<const DdqnTransition* const> batch) const;
  double Step(std::span<const DdqnTransition* const> batch);

  int state_size_, num_actions_;
  DdqnOptions options_;
  Mlp online_, target_;
  Adam adam_;
  ReplayBuffer<DdqnTransition> replay_;
  int64_t steps_ = 0, updates_ = 0;
  std::mt19937_64 rng_;
};

}  // namespace braid

#endif  // BRAID_SCHEDULER_WORL_DDQN_H_
