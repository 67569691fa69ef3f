// WORL-RTGS's options and registration, apart from the policy's internals
// (scheduler/worl_policy.h pulls in Eigen and the MLPs), so policies.cc and
// the runtime can register "worl" without them.
//
//   braid::WorlOptions o;
//   o.whales = 30;
//   o.seed = 7;                                  // same seed, same plan
//   braid::RegisterWorlPolicy(policies, o);      // needs ctx.cost_model at Place time
//   RETURN_IF_ERROR(braid::SetWorlOption(o, "worl.iterations", "200"));   // "POLICY.KEY" form
#ifndef BRAID_SCHEDULER_WORL_OPTIONS_H_
#define BRAID_SCHEDULER_WORL_OPTIONS_H_

#include <cstdint>
#include <string>

#include "graph/status.h"
#include "scheduler/policy.h"

namespace braid {

// The Double DQN that steers the whales (scheduler/worl_ddqn.h).
struct DdqnOptions {
  int hidden = 64;                // two hidden ReLU layers of this width
  double gamma = 0.5;
  double learning_rate = 1e-3;    // Adam
  int batch_size = 32;
  int replay_capacity = 20'000;
  int warmup_transitions = 64;    // no updates before this many transitions
  int target_sync_every = 100;    // updates between hard target copies
  double epsilon_start = 1.0;     // epsilon-greedy, linear decay per action
  double epsilon_end = 0.05;
  int epsilon_decay_steps = 2'000;  // PlaceWorl: half its DDQN steps
  double huber_delta = 1.0;       // Huber loss: quadratic within, linear outside
  uint64_t seed = 1;              // PlaceWorl derives it from WorlOptions::seed
};

// The paper (WORL-RTGS, BDCC 9(11):284) is available to us as its abstract
// only; the WOA constants are Mirjalili & Lewis's (2016): a from 2 to 0,
// b = 1, l in [-1, 1], p = 0.5 between encircling and the spiral, 30 whales.
struct WorlOptions {
  int whales = 30;
  int iterations = 100;
  double spiral_b = 1.0;
  bool allow_slices = true;  // slices between two devices at kSliceRatioBins
  // The DDQN runs an episode every `ddqn_every` iterations from the leader;
  // its plan replaces the worst whale. Off: plain WOA (+ RTGS).
  bool ddqn = true;
  int ddqn_every = 1;
  int episode_nodes = 48;    // nodes one DDQN episode revisits (a window)
  // Running time gap strategy: a whale's move radius follows its finish-time
  // gap to the leader through the fitted SPD/FTG slope (docs/scheduler.md).
  bool rtgs = true;
  // The start population holds HEFT's plan, each single device and, when
  // set, partition's plan (scheduler/partition_policy.h); the rest random.
  bool seed_partition = true;
  uint64_t seed = 1;
  DdqnOptions ddqn_options;
};

// InvalidArgument naming the first bad field.
Status ValidateDdqnOptions(const DdqnOptions& options);
Status ValidateWorlOptions(const WorlOptions& options);

// Applies one "worl.KEY" setting: worl.whales, worl.iterations, worl.seed
// (integers), worl.ddqn, worl.rtgs, worl.slices, worl.seed_partition (0 or 1). InvalidArgument
// names the key or the value.
Status SetWorlOption(WorlOptions& options, const std::string& key, const std::string& value);

// Registers `name` (default "worl"); bad options make Place fail with the
// validation error.
void RegisterWorlPolicy(PolicyRegistry& registry, const WorlOptions& options = {},
                        const std::string& name = "worl");

}  // namespace braid

#endif  // BRAID_SCHEDULER_WORL_OPTIONS_H_
