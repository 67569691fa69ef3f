// The `temporl` policy (scheduler/temporl_policy.h): valid plans with slices
// only on sliceable nodes, determinism, the model file's round trip and
// errors, and that training lowers the timing gap against the 50/50 split.
// Every latency and gap here is simulated (cost model + simulator).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "graph/annotate.h"
#include "graph/passes/passes.h"
#include "models/builtin.h"
#include "scheduler/device_profile.h"
#include "scheduler/optimal.h"
#include "scheduler/policies.h"
#include "scheduler/temporl_policy.h"
#include "tests/scheduler/model_setup_test_util.h"

namespace braid {
namespace {

using testing::MakeSetup;
using testing::ModelSetup;

std::string TempPath(const std::string& leaf) {
  return ::testing::TempDir() + "/braid_temporl_" + leaf;
}

Plan BasePlan(const ModelSetup& s) {
  PolicyRegistry r;
  RegisterBaselinePolicies(r);
  StatusOr<Plan> plan = MakePlan(r, "partition", s.graph, s.ctx);
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  return *plan;
}

// A small trained model, shared by the tests (trained once, seeded).
const TemporlModel& TrainedModel() {
  static const TemporlModel* model = [] {
    ModelSetup s = MakeSetup("squeezenet1_1", "host-vgpu");
    StatusOr<std::unique_ptr<TemporlEnv>> env = TemporlEnv::Create(s.graph, s.ctx, BasePlan(s));
    EXPECT_TRUE(env.ok());
    auto* m = new TemporlModel(NewTemporlModel(32, 7));
    TemporlTrainOptions o;
    o.episodes = 400;
    o.seed = 7;
    o.hidden = 32;
    o.eval_every = 1000;
    TemporlEnv* envs[] = {env->get()};
    TrainTemporl(envs, envs, o, *m);
    return m;
  }();
  return *model;
}

TEST(TemporlTest, TrainingLowersTheGapAgainstTheHalfSplit) {
  // squeezenet1_1 on cpu + vgpu: partition splits 13 layers whose split can move.
  ModelSetup s = MakeSetup("squeezenet1_1", "host-vgpu");
  StatusOr<std::unique_ptr<TemporlEnv>> env = TemporlEnv::Create(s.graph, s.ctx, BasePlan(s));
  ASSERT_TRUE(env.ok()) << env.status().ToString();
  ASSERT_FALSE((*env)->layers().empty());
  TemporlEnv* envs[] = {env->get()};
  TemporlModel model = NewTemporlModel(32, 7);
  // Untrained: ratio ~0.5 on every layer, so about the 50/50 split's gap (a
  // row split of an odd extent, 0.5 * 55 rows, may round the other way).
  const TemporlComparison before = CompareTemporl(**env, model, *s.model, /*guard=*/false);
  EXPECT_NEAR(before.gap_us, before.half_gap_us, 0.15 * before.half_gap_us);
  TemporlTrainOptions o;
  o.episodes = 400;
  o.seed = 7;
  o.hidden = 32;
  o.eval_every = 100;
  const std::vector<TemporlCurvePoint> curve = TrainTemporl(envs, envs, o, model);
  ASSERT_EQ(curve.size(), 401u);
  const TemporlComparison after = CompareTemporl(**env, model, *s.model, /*guard=*/false);
  ASSERT_GT(after.movable_layers, 5);
  // The agent's own ratios (no guard) on the same layers.
  EXPECT_LT(after.movable_gap_us, 0.7 * after.movable_half_gap_us)
      << "gap " << after.movable_gap_us << " us vs 50/50 " << after.movable_half_gap_us << " us";
  EXPECT_LT(after.latency_us, before.latency_us);
  // The rewards rose over training (mean of the last 50 episodes vs the first 50).
  double first = 0, last = 0;
  for (int i = 1; i <= 50; ++i) {
    first += curve[static_cast<size_t>(i)].train_reward;
    last += curve[curve.size() - static_cast<size_t>(i)].train_reward;
  }
  EXPECT_GT(last, first);
}

// Each layer splits along the axis with more split points: squeezenet1_1's
// 64-channel expand convs at 55x55 by rows, its 1000-channel classifier by
// channels; the plan carries the axis and the key names it.
TEST(TemporlTest, LayersSplitAlongTheAxisWithMoreSplitPoints) {
  ModelSetup s = MakeSetup("squeezenet1_1", "host-vgpu");
  const Plan base = BasePlan(s);
  StatusOr<std::unique_ptr<TemporlEnv>> env = TemporlEnv::Create(s.graph, s.ctx, base);
  ASSERT_TRUE(env.ok()) << env.status().ToString();
  const SimGraph& g = (*env)->space().sim;
  int rows = 0, channels = 0;
  for (size_t k = 0; k < (*env)->layers().size(); ++k) {
    const int n = (*env)->layers()[k];
    const SliceAxis axis = (*env)->axis(k);
    EXPECT_EQ(axis, FinestSplitAxis(g, n));
    const int32_t h = g.SliceExtentOf(n, SliceAxis::kRows);
    const int32_t c = g.SliceExtentOf(n, SliceAxis::kOutputChannels);
    if (axis == SliceAxis::kRows) {
      ++rows;
      EXPECT_GT(h - 1, c / kSliceChannelMultiple - 1) << g.node_names[static_cast<size_t>(n)];
      EXPECT_NE((*env)->LayerKey(k).find("/H=" + std::to_string(h)), std::string::npos);
    } else {
      ++channels;
      EXPECT_LE(h - 1, c / kSliceChannelMultiple - 1) << g.node_names[static_cast<size_t>(n)];
      EXPECT_NE((*env)->LayerKey(k).find("/C=" + std::to_string(c)), std::string::npos);
    }
  }
  EXPECT_GT(rows, 0);
  EXPECT_GT(channels, 0);
  const TemporlPass pass = (*env)->Run(FinishTogetherRatio, /*guard=*/false);
  const Plan plan = (*env)->ToPlan(base, pass, "temporl", "partition");
  ASSERT_TRUE(ValidatePlan(plan, s.graph).ok()) << ValidatePlan(plan, s.graph).ToString();
  for (size_t k = 0; k < (*env)->layers().size(); ++k) {
    const NodePlan& p = plan.nodes[static_cast<size_t>((*env)->layers()[k])];
    ASSERT_TRUE(p.slice.has_value()) << p.node;
    EXPECT_EQ(p.slice->axis, (*env)->axis(k)) << p.node;
    EXPECT_NE(p.reason.find((*env)->axis(k) == SliceAxis::kRows ? "whole rows of" : "blocks of 16"),
              std::string::npos)
        << p.reason;
  }
}

// The no-learning reference: equal parts when both devices start together;
// a later own start moves work to the other device; and on the simulator it
// leaves less gap than the 50/50 split on the layers whose split can move.
TEST(TemporlTest, FinishTogetherRatioBalancesThePartsByTheirTimes) {
  TemporlState s{};
  s[0] = 0.5;  // both devices equally fast, no overhead, same start
  EXPECT_NEAR(FinishTogetherRatio(s), 0.5, 1e-12);
  s[3] = 0.25;  // own device starts 0.25 S later: 0.25 + 0.5 r == 0.5 (1 - r)
  EXPECT_NEAR(FinishTogetherRatio(s), 0.25, 1e-12);
  s[3] = 0;
  s[0] = 0.2;  // own device 4x faster: 0.2 r == 0.8 (1 - r)
  EXPECT_NEAR(FinishTogetherRatio(s), 0.8, 1e-12);
  s[3] = -4;  // the other device is far behind: everything here, clamped
  EXPECT_NEAR(FinishTogetherRatio(s), 0.99, 1e-12);

  ModelSetup setup = MakeSetup("squeezenet1_1", "host-vgpu");
  StatusOr<std::unique_ptr<TemporlEnv>> env =
      TemporlEnv::Create(setup.graph, setup.ctx, BasePlan(setup));
  ASSERT_TRUE(env.ok()) << env.status().ToString();
  const TemporlComparison c = CompareTemporl(**env, NewTemporlModel(8, 1), *setup.model,
                                             /*guard=*/false, FinishTogetherRatio);
  ASSERT_GT(c.movable_layers, 5);
  EXPECT_LT(c.movable_gap_us, 0.5 * c.movable_half_gap_us)
      << "gap " << c.movable_gap_us << " us vs 50/50 " << c.movable_half_gap_us << " us";
}

TEST(TemporlTest, PolicyPlansAreValidDeterministicAndNoSlowerThanTheBase) {
  const std::string path = TempPath("valid.bin");
  ASSERT_TRUE(SaveTemporlModel(TrainedModel(), path).ok());
  for (const char* name : {"tiny_cnn", "squeezenet1_1"}) {
    ModelSetup s = MakeSetup(name, "host-vgpu");
    PolicyRegistry r;
    // Without the guard every layer the agent decides is split.
    ASSERT_TRUE(RegisterPolicies(r, {{"temporl.model", path}, {"temporl.guard", "0"}}).ok());
    StatusOr<Plan> plan = MakePlan(r, "temporl", s.graph, s.ctx);
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    EXPECT_EQ(plan->policy, "temporl");
    int slices = 0;
    for (size_t i = 0; i < plan->nodes.size(); ++i) {
      const NodePlan& p = plan->nodes[i];
      EXPECT_EQ(p.reason.rfind("temporl: ", 0), 0u) << p.reason;
      if (!p.slice) continue;
      ++slices;
      EXPECT_TRUE(IsSliceable(s.graph.node(static_cast<NodeId>(i)), p.slice->axis)) << p.node;
      EXPECT_GT(p.slice->ratio, 0);
      EXPECT_LT(p.slice->ratio, 1);
    }
    EXPECT_GT(slices, 0) << name;
    StatusOr<Plan> again = MakePlan(r, "temporl", s.graph, s.ctx);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(PlanToJson(*plan), PlanToJson(*again));
    // The guard: never slower (simulated) than the base plan.
    PolicyRegistry guarded;
    ASSERT_TRUE(RegisterPolicies(guarded, {{"temporl.model", path}}).ok());
    plan = MakePlan(guarded, "temporl", s.graph, s.ctx);
    ASSERT_TRUE(plan.ok());
    StatusOr<Plan> base = MakePlan(r, "partition", s.graph, s.ctx);
    ASSERT_TRUE(base.ok());
    StatusOr<SimGraph> sg = BuildSimGraph(s.graph, *s.model, s.ctx.devices);
    ASSERT_TRUE(sg.ok());
    StatusOr<SimResult> a = SimulatePlan(*sg, *plan), b = SimulatePlan(*sg, *base);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_LE(a->latency_us, b->latency_us * (1 + 1e-9)) << name;
  }
  std::remove(path.c_str());
}

TEST(TemporlTest, OtherBasePolicyAndSettingsErrors) {
  const std::string path = TempPath("base.bin");
  ASSERT_TRUE(SaveTemporlModel(TrainedModel(), path).ok());
  ModelSetup s = MakeSetup("tiny_cnn", "host-vgpu");
  PolicyRegistry r;
  ASSERT_TRUE(RegisterPolicies(r, {{"temporl.model", path}, {"temporl.base", "heft"}}).ok());
  StatusOr<Plan> plan = MakePlan(r, "temporl", s.graph, s.ctx);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  bool mentions_heft = false;
  for (const NodePlan& p : plan->nodes) mentions_heft |= p.reason.find("heft") != std::string::npos;
  EXPECT_TRUE(mentions_heft);

  PolicyRegistry self;
  ASSERT_TRUE(RegisterPolicies(self, {{"temporl.model", path}, {"temporl.base", "temporl"}}).ok());
  EXPECT_FALSE(MakePlan(self, "temporl", s.graph, s.ctx).ok());
  PolicyRegistry unknown;
  ASSERT_TRUE(RegisterPolicies(unknown, {{"temporl.model", path}, {"temporl.base", "nope"}}).ok());
  StatusOr<Plan> failed = MakePlan(unknown, "temporl", s.graph, s.ctx);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().ToString().find("nope"), std::string::npos);
  PolicyRegistry bad_guard;
  EXPECT_FALSE(RegisterPolicies(bad_guard, {{"temporl.guard", "yes"}}).ok());
  // No model: a clear error naming the setting.
  PolicyRegistry none;
  ASSERT_TRUE(RegisterPolicies(none).ok());
  StatusOr<Plan> untrained = MakePlan(none, "temporl", s.graph, s.ctx);
  ASSERT_FALSE(untrained.ok());
  EXPECT_NE(untrained.status().ToString().find("temporl.model"), std::string::npos);
  // One device: nothing to split between.
  PlacementContext one = s.ctx;
  one.devices = {"cpu"};
  EXPECT_FALSE(MakePlan(r, "temporl", s.graph, one).ok());
  std::remove(path.c_str());
}

TEST(TemporlTest, ModelFileRoundTripAndCorruptFiles) {
  const TemporlModel& model = TrainedModel();
  const std::string path = TempPath("model.bin");
  ASSERT_TRUE(SaveTemporlModel(model, path).ok());
  StatusOr<TemporlModel> again = LoadTemporlModel(path);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->episodes, model.episodes);
  EXPECT_EQ(again->seed, model.seed);
  TemporlState state{};
  for (int i = 0; i < kTemporlStateSize; ++i) state[static_cast<size_t>(i)] = 0.05 * i;
  EXPECT_EQ(TemporlRatio(*again, state), TemporlRatio(model, state));

  StatusOr<std::string> bytes = ReadFileBytes(path);
  ASSERT_TRUE(bytes.ok());
  auto load_with = [&](const std::string& content) {
    EXPECT_TRUE(WriteFileBytes(path, content).ok());
    return LoadTemporlModel(path);
  };
  StatusOr<TemporlModel> truncated = load_with(bytes->substr(0, bytes->size() - 5));
  ASSERT_FALSE(truncated.ok());
  EXPECT_NE(truncated.status().ToString().find("truncated"), std::string::npos);
  StatusOr<TemporlModel> trailing = load_with(*bytes + "x");
  ASSERT_FALSE(trailing.ok());
  EXPECT_NE(trailing.status().ToString().find("trailing"), std::string::npos);
  std::string wrong_magic = *bytes;
  wrong_magic[0] = 'X';
  StatusOr<TemporlModel> magic = load_with(wrong_magic);
  ASSERT_FALSE(magic.ok());
  EXPECT_NE(magic.status().ToString().find("BRAIDTRL"), std::string::npos);
  std::string wrong_size = *bytes;
  wrong_size[12] = 9;  // the state size after magic and version
  EXPECT_FALSE(load_with(wrong_size).ok());
  EXPECT_FALSE(load_with("").ok());
  // A bad file reaches Place as an error, never as an untrained plan.
  ASSERT_TRUE(WriteFileBytes(path, bytes->substr(0, 20)).ok());
  ModelSetup s = MakeSetup("tiny_cnn", "jetson-orin-nano-8gb");
  PolicyRegistry r;
  ASSERT_TRUE(RegisterPolicies(r, {{"temporl.model", path}}).ok());
  EXPECT_FALSE(MakePlan(r, "temporl", s.graph, s.ctx).ok());
  PolicyRegistry missing;
  ASSERT_TRUE(RegisterPolicies(missing, {{"temporl.model", TempPath("nope.bin")}}).ok());
  EXPECT_FALSE(MakePlan(missing, "temporl", s.graph, s.ctx).ok());
  std::remove(path.c_str());
}

TEST(TemporlTest, SameSeedSameAgent) {
  ModelSetup s = MakeSetup("tiny_cnn", "host-vgpu");
  StatusOr<std::unique_ptr<TemporlEnv>> env = TemporlEnv::Create(s.graph, s.ctx, BasePlan(s));
  ASSERT_TRUE(env.ok());
  TemporlEnv* envs[] = {env->get()};
  TemporlTrainOptions o;
  o.episodes = 10;
  o.hidden = 16;
  o.eval_every = 100;
  TemporlModel a = NewTemporlModel(16, 3), b = NewTemporlModel(16, 3);
  TrainTemporl(envs, envs, o, a);
  TrainTemporl(envs, envs, o, b);
  const TemporlPass pa = (*env)->Run(GreedyChooser(a), true);
  const TemporlPass pb = (*env)->Run(GreedyChooser(b), true);
  ASSERT_EQ(pa.steps.size(), pb.steps.size());
  for (size_t i = 0; i < pa.steps.size(); ++i)
    EXPECT_EQ(pa.steps[i].asked_ratio, pb.steps[i].asked_ratio);
}

TEST(TemporlTest, MeasuredBalancedShareFromPartTimes) {
  // Half each, part a twice as slow per unit of share: a's share should be 1/3.
  SplitLayerMetrics m;
  m.share = 0.5;
  m.part_a_us = 200, m.finish_a_us = 200;
  m.part_b_us = 100, m.finish_b_us = 100;
  EXPECT_NEAR(MeasuredBalancedShare(m), 1.0 / 3.0, 1e-12);
  // Part b starts 60 us late (its input copy): a takes more.
  m.finish_b_us = 160;
  EXPECT_NEAR(MeasuredBalancedShare(m), (60.0 + 200.0) / 600.0, 1e-12);
}

// A made-up machine where the CPU runs every part `cpu_factor` times slower
// than the cost model says (the accelerator as modelled): part times from
// the sim graph's per-device overhead and work, both parts starting together.
SplitLayerMetrics FakeMeasured(const SimGraph& g, int node, int main, int other, double share,
                               double cpu_factor) {
  const size_t D = static_cast<size_t>(g.num_devices);
  auto part = [&](int dev, double s) {
    const size_t k = static_cast<size_t>(node) * D + static_cast<size_t>(dev);
    const double t = g.overhead_us[k] + s * g.work_us[k];
    return g.devices[static_cast<size_t>(dev)] == "cpu" ? cpu_factor * t : t;
  };
  SplitLayerMetrics m;
  m.node = g.node_names[static_cast<size_t>(node)];
  m.share = share;
  m.part_a_us = m.finish_a_us = part(main, share);
  m.part_b_us = m.finish_b_us = part(other, 1 - share);
  m.gap_us = std::abs(m.finish_a_us - m.finish_b_us);
  return m;
}

// Per node of the layers whose split can move: its fake measured gap and the CPU's share.
struct FakeRound {
  std::vector<TemporlMeasuredLayer> layers;
  std::map<int, double> gap, cpu_share;
};

// An untrained agent (ratio ~0.5, no guard: the same layers every round)
// fine-tuned for `rounds` rounds on the fake machine; the first and last
// rounds' measurements.
std::pair<FakeRound, FakeRound> FineTuneOnFake(TemporlEnv& e, double cpu_factor, int rounds,
                                               TemporlCorrection* correction) {
  const SimGraph& g = e.space().sim;
  const TemporlModel model = NewTemporlModel(32, 7);
  auto measure = [&] {
    FakeRound r;
    const TemporlPass pass = e.Run(GreedyChooser(model), false, model.weights, correction);
    for (size_t k = 0; k < e.layers().size(); ++k) {
      const TemporlStep& step = pass.steps[k];
      if (!SplitCanMove(g, step.node, e.axis(k))) continue;
      const SplitLayerMetrics m =
          FakeMeasured(g, step.node, e.main_device(k), e.other_device(k), step.share, cpu_factor);
      r.layers.push_back({e.LayerKey(k), e.PairKey(k), step.agent_ratio, step.asked_ratio, m});
      r.gap[step.node] = m.gap_us;
      r.cpu_share[step.node] =
          g.devices[static_cast<size_t>(e.main_device(k))] == "cpu" ? step.share : 1 - step.share;
    }
    return r;
  };
  const FakeRound first = measure();
  FakeRound last = first;
  for (int round = 0; round < rounds; ++round) {
    EXPECT_EQ(FineTuneTemporl(last.layers, {}, *correction), static_cast<int>(last.layers.size()));
    last = measure();
  }
  return {first, last};
}

TEST(TemporlTest, FineTuningOnMeasuredTimesMovesTheRatioAndLowersTheGap) {
  ModelSetup s = MakeSetup("squeezenet1_1", "host-vgpu");
  StatusOr<std::unique_ptr<TemporlEnv>> env = TemporlEnv::Create(s.graph, s.ctx, BasePlan(s));
  ASSERT_TRUE(env.ok()) << env.status().ToString();
  const SimGraph& g = (*env)->space().sim;
  // The CPU 2x slower than modelled, and as modelled (the reference).
  TemporlCorrection slow_cpu, as_modelled;
  const auto [first, slow] = FineTuneOnFake(**env, 2.0, 6, &slow_cpu);
  const auto [first_modelled, modelled] = FineTuneOnFake(**env, 1.0, 6, &as_modelled);
  ASSERT_GE(first.layers.size(), 5u);
  EXPECT_EQ(slow_cpu.updates, 6);
  // A slower CPU must get a smaller share than the cost model's balance on
  // every layer (smaller on most, equal only where the channel blocks leave
  // no split point in between), and the summed gap must more than halve.
  int lower = 0;
  double gap_before = 0, gap_after = 0, modelled_before = 0, modelled_after = 0;
  for (const auto& [node, share] : slow.cpu_share) {
    const std::string& name = g.node_names[static_cast<size_t>(node)];
    EXPECT_LE(share, modelled.cpu_share.at(node) + 1e-12) << name;
    lower += share < modelled.cpu_share.at(node) ? 1 : 0;
    gap_before += first.gap.at(node);
    gap_after += slow.gap.at(node);
    modelled_before += first_modelled.gap.at(node);
    modelled_after += modelled.gap.at(node);
  }
  EXPECT_GE(lower, static_cast<int>(slow.cpu_share.size()) / 2);
  EXPECT_LT(gap_after, 0.5 * gap_before) << "fake measured gap " << gap_before << " -> " << gap_after;
  EXPECT_LT(modelled_after, 0.5 * modelled_before);
}

TEST(TemporlTest, FineTunedModelRoundTripAndUseByThePolicy) {
  TemporlModel model = TrainedModel();
  ModelSetup s = MakeSetup("squeezenet1_1", "host-vgpu");
  StatusOr<std::unique_ptr<TemporlEnv>> env = TemporlEnv::Create(s.graph, s.ctx, BasePlan(s));
  ASSERT_TRUE(env.ok());
  // Every layer's CPU part said to be 3x the accelerator's: offsets learned.
  std::vector<TemporlMeasuredLayer> layers;
  const TemporlPass pass = (*env)->Run(GreedyChooser(model), false, model.weights);
  for (size_t k = 0; k < (*env)->layers().size(); ++k) {
    SplitLayerMetrics m;
    m.share = pass.steps[k].share;
    m.part_a_us = m.finish_a_us = 300 * m.share;
    m.part_b_us = m.finish_b_us = 100 * (1 - m.share);
    layers.push_back({(*env)->LayerKey(k), (*env)->PairKey(k), pass.steps[k].agent_ratio,
                      pass.steps[k].asked_ratio, m});
  }
  ASSERT_GT(FineTuneTemporl(layers, {}, model.correction), 0);
  model.correction.measured_on = "test";
  const std::string path = TempPath("tuned.bin"), plain = TempPath("plain.bin");
  ASSERT_TRUE(SaveTemporlModel(model, path).ok());
  ASSERT_TRUE(SaveTemporlModel(TrainedModel(), plain).ok());
  StatusOr<TemporlModel> again = LoadTemporlModel(path);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->correction.layer_offset, model.correction.layer_offset);
  EXPECT_EQ(again->correction.pair_offset, model.correction.pair_offset);
  EXPECT_EQ(again->correction.updates, 1);
  EXPECT_EQ(again->correction.measured_on, "test");
  // The policy plans with the loaded correction: other ratios than without.
  auto plan_with = [&](const std::string& file) {
    PolicyRegistry r;
    EXPECT_TRUE(RegisterPolicies(r, {{"temporl.model", file}}).ok());
    StatusOr<Plan> plan = MakePlan(r, "temporl", s.graph, s.ctx);
    EXPECT_TRUE(plan.ok()) << plan.status().ToString();
    return plan.ok() ? PlanToJson(*plan) : std::string();
  };
  const std::string tuned_plan = plan_with(path), plain_plan = plan_with(plain);
  EXPECT_NE(tuned_plan, plain_plan);
  EXPECT_NE(tuned_plan.find("measured correction"), std::string::npos);
  // A corrupt correction count fails cleanly.
  StatusOr<std::string> bytes = ReadFileBytes(path);
  ASSERT_TRUE(bytes.ok());
  ASSERT_TRUE(WriteFileBytes(path, bytes->substr(0, bytes->size() - 3)).ok());
  EXPECT_FALSE(LoadTemporlModel(path).ok());
  std::remove(path.c_str());
  std::remove(plain.c_str());
}

TEST(TemporlTest, DevicePairOffsetCoversUnmeasuredLayersBothWaysRound) {
  ModelSetup s = MakeSetup("squeezenet1_1", "host-vgpu");
  StatusOr<std::unique_ptr<TemporlEnv>> env = TemporlEnv::Create(s.graph, s.ctx, BasePlan(s));
  ASSERT_TRUE(env.ok());
  const SimGraph& g = (*env)->space().sim;
  TemporlCorrection c;
  c.pair_offset["vgpu+cpu"] = 1.0;  // the vgpu's share up wherever it is split with the cpu
  const TemporlModel& model = TrainedModel();
  const TemporlPass pass = (*env)->Run(GreedyChooser(model), /*guard=*/true, model.weights, &c);
  int vgpu_main = 0, cpu_main = 0;
  for (size_t k = 0; k < (*env)->layers().size(); ++k) {
    const TemporlStep& step = pass.steps[k];
    EXPECT_TRUE(step.pair_corrected);
    EXPECT_FALSE(step.measured);
    EXPECT_TRUE(step.kept);  // a measured correction is not undone by the simulated guard
    const double logit_change = std::log(step.asked_ratio / (1 - step.asked_ratio)) -
                                std::log(step.agent_ratio / (1 - step.agent_ratio));
    if (g.devices[static_cast<size_t>((*env)->main_device(k))] == "vgpu") {
      EXPECT_NEAR(logit_change, 1.0, 1e-9);
      ++vgpu_main;
    } else {
      EXPECT_NEAR(logit_change, -1.0, 1e-9);
      ++cpu_main;
    }
  }
  EXPECT_GT(vgpu_main, 0);
  EXPECT_GT(cpu_main, 0);
}

TEST(TemporlTest, ModelFilesFromBeforeRowSplitsAreRefusedWithAReason) {
  // Version 1 (before fine-tuning): magic, version, state size, reward
  // weights, trained_on, episodes, seed, actor; nothing after. Versions 1 and
  // 2 were trained on the channel-only split granularity (state feature 13):
  // refused, naming the cure; version 3 (this build's) round-trips; 4 is
  // refused by number.
  const TemporlModel& model = TrainedModel();
  BinaryWriter w;
  w.Bytes("BRAIDTRL");
  w.U32(1);
  w.U32(kTemporlStateSize);
  w.F64(model.weights.gap);
  w.F64(model.weights.hidden);
  w.F64(model.weights.latency);
  w.Str("old");
  w.U64(123);
  w.U64(model.seed);
  model.actor.Save(w);
  const std::string path = TempPath("v1.bin");
  for (char version : {1, 2}) {
    std::string old = w.bytes();
    old[8] = version;
    ASSERT_TRUE(WriteFileBytes(path, old).ok());
    StatusOr<TemporlModel> refused = LoadTemporlModel(path);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.status().ToString().find("before row splits"), std::string::npos)
        << refused.status().ToString();
    EXPECT_NE(refused.status().ToString().find("retrain"), std::string::npos);
  }
  ASSERT_TRUE(SaveTemporlModel(model, path).ok());
  StatusOr<TemporlModel> loaded = LoadTemporlModel(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  TemporlState state{};
  for (int i = 0; i < kTemporlStateSize; ++i) state[static_cast<size_t>(i)] = 0.03 * i;
  EXPECT_EQ(TemporlRatio(*loaded, state), TemporlRatio(model, state));
  std::string future = w.bytes();
  future[8] = 4;
  ASSERT_TRUE(WriteFileBytes(path, future).ok());
  StatusOr<TemporlModel> refused = LoadTemporlModel(path);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().ToString().find("version 4"), std::string::npos);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace braid
