// The Double DQN of WORL-RTGS (scheduler/worl_ddqn.h): updates reduce the
// TD error on a fixed batch, terminal values converge to the reward, masks
// and the epsilon schedule hold, bad options are named.
#include "scheduler/worl_ddqn.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace braid {
namespace {

std::vector<DdqnTransition> RandomBatch(int state_size, int actions, int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0, 1);
  std::vector<DdqnTransition> batch;
  for (int i = 0; i < n; ++i) {
    DdqnTransition t;
    t.state = Eigen::VectorXd(state_size);
    t.next_state = Eigen::VectorXd(state_size);
    for (int j = 0; j < state_size; ++j) {
      t.state(j) = normal(rng);
      t.next_state(j) = normal(rng);
    }
    t.action = static_cast<int>(rng() % static_cast<uint64_t>(actions));
    t.reward = t.state(0) > 0 ? 1.0 : -0.5;  // learnable from the state
    t.done = rng() % 4 == 0;
    batch.push_back(std::move(t));
  }
  return batch;
}

TEST(WorlDdqnTest, UpdatesReduceTdErrorOnAFixedBatch) {
  DdqnOptions o;
  o.seed = 3;
  Ddqn agent(6, 4, o);
  const std::vector<DdqnTransition> batch = RandomBatch(6, 4, 64, 5);
  const double before = agent.TdError(batch);
  ASSERT_GT(before, 0.05);
  for (int i = 0; i < 300; ++i) agent.UpdateOn(batch);
  const double after = agent.TdError(batch);
  EXPECT_LT(after, 0.25 * before) << before << " -> " << after;
  EXPECT_EQ(agent.updates(), 300);
}

TEST(WorlDdqnTest, TerminalValuesConvergeToTheRewardThroughTheReplayBuffer) {
  DdqnOptions o;
  o.warmup_transitions = 8;
  o.batch_size = 8;
  o.learning_rate = 3e-3;
  Ddqn agent(3, 2, o);
  Eigen::VectorXd s(3);
  s << 0.5, -1, 2;
  for (int a = 0; a < 2; ++a)
    agent.Remember({s, s, a, a == 0 ? 1.0 : -1.0, /*done=*/true, 3u, 3u});
  EXPECT_EQ(agent.Update(), 0);  // below warmup: no step
  EXPECT_EQ(agent.updates(), 0);
  for (int i = 0; i < 6; ++i)
    agent.Remember({s, s, i % 2, i % 2 == 0 ? 1.0 : -1.0, true, 3u, 3u});
  for (int i = 0; i < 400; ++i) agent.Update();
  const Eigen::VectorXd q = agent.QValues(s);
  EXPECT_NEAR(q(0), 1.0, 0.05);
  EXPECT_NEAR(q(1), -1.0, 0.05);
  EXPECT_EQ(agent.Greedy(s, 3u), 0);
  EXPECT_EQ(agent.Greedy(s, 2u), 1);  // masked: only action 1 allowed
  EXPECT_EQ(agent.Greedy(s, 0u), -1);
}

TEST(WorlDdqnTest, EpsilonDecaysAndMasksHoldWhileExploring) {
  DdqnOptions o;
  o.epsilon_start = 1.0;
  o.epsilon_end = 0.1;
  o.epsilon_decay_steps = 100;
  Ddqn agent(2, 5, o);
  EXPECT_DOUBLE_EQ(agent.epsilon(), 1.0);
  Eigen::VectorXd s = Eigen::VectorXd::Zero(2);
  std::vector<int> seen(5, 0);
  for (int i = 0; i < 100; ++i) {
    const int a = agent.Act(s, 0b10110u, false);
    ASSERT_TRUE(a == 1 || a == 2 || a == 4) << a;
    ++seen[static_cast<size_t>(a)];
  }
  EXPECT_GT(seen[1], 0);
  EXPECT_GT(seen[2], 0);
  EXPECT_GT(seen[4], 0);
  EXPECT_DOUBLE_EQ(agent.epsilon(), 0.1);
  // Same seed, same choices.
  Ddqn a1(2, 5, o), a2(2, 5, o);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(a1.Act(s, 31u, false), a2.Act(s, 31u, false));
}

TEST(WorlDdqnTest, BadOptionsAreNamed) {
  auto field = [](DdqnOptions o) { return ValidateDdqnOptions(o).message(); };
  DdqnOptions o;
  EXPECT_TRUE(ValidateDdqnOptions(o).ok());
  o.batch_size = 0;
  EXPECT_NE(field(o).find("batch_size"), std::string::npos);
  o = {};
  o.replay_capacity = 4;
  EXPECT_NE(field(o).find("replay_capacity"), std::string::npos);
  o = {};
  o.learning_rate = -1;
  EXPECT_NE(field(o).find("learning_rate"), std::string::npos);
  o = {};
  o.target_sync_every = 0;
  EXPECT_NE(field(o).find("target_sync_every"), std::string::npos);
}

}  // namespace
}  // namespace braid
