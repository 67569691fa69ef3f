// SparOA pieces: threshold features / grid search / predictor, discrete SAC
// on tiny problems, the placement environment and the `sparoa` policy.
// Every latency here is simulated (cost model + simulator).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "graph/annotate.h"
#include "graph/passes/passes.h"
#include "models/builtin.h"
#include "scheduler/cost_model.h"
#include "scheduler/device_profile.h"
#include "scheduler/plan.h"
#include "scheduler/sac_policy.h"
#include "scheduler/sparoa_policy.h"
#include "scheduler/threshold_policy.h"
#include "tests/scheduler/model_setup_test_util.h"

namespace braid {
namespace {

using testing::MakeSetup;
using testing::ModelSetup;

double Simulated(const ModelSetup& s, const Plan& plan) {
  StatusOr<SimGraph> sg = BuildSimGraph(s.graph, *s.model, s.ctx.devices);
  EXPECT_TRUE(sg.ok());
  StatusOr<SimResult> r = SimulatePlan(*sg, plan);
  EXPECT_TRUE(r.ok());
  return r.ok() ? r->latency_us : 0;
}

std::string TempPath(const std::string& leaf) {
  return ::testing::TempDir() + "/braid_sparoa_" + leaf;
}

TEST(ThresholdPredictorTest, FeaturesAreFiniteAndProfileDependent) {
  ModelSetup nano = MakeSetup("tiny_cnn", "jetson-orin-nano-8gb");
  ModelSetup host = MakeSetup("tiny_cnn", "host-vgpu");
  StatusOr<std::vector<double>> a = ThresholdFeatures(nano.graph, nano.ctx);
  StatusOr<std::vector<double>> b = ThresholdFeatures(host.graph, host.ctx);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->size(), static_cast<size_t>(kThresholdFeatureCount));
  for (double v : *a) EXPECT_TRUE(std::isfinite(v));
  EXPECT_NE(*a, *b);
  PlacementContext no_model = nano.ctx;
  no_model.cost_model = nullptr;
  EXPECT_FALSE(ThresholdFeatures(nano.graph, no_model).ok());
}

TEST(ThresholdPredictorTest, GridSearchFindsNoWorseThanDefaults) {
  ModelSetup s = MakeSetup("squeezenet1_1", "jetson-orin-nano-8gb");
  StatusOr<ThresholdGridResult> grid = GridSearchThresholds(s.graph, s.ctx);
  ASSERT_TRUE(grid.ok()) << grid.status().ToString();
  ASSERT_EQ(grid->cost.size(), static_cast<size_t>(ThresholdGridSize()));
  EXPECT_DOUBLE_EQ(grid->cost[static_cast<size_t>(grid->best_cell)], 1.0);
  for (double c : grid->cost) EXPECT_GE(c, 1.0 - 1e-12);
  PolicyRegistry r;
  RegisterCostModelPolicies(r);  // defaults (0.5, 8 FLOP/B): a grid point
  StatusOr<Plan> plan = MakePlan(r, "threshold", s.graph, s.ctx);
  ASSERT_TRUE(plan.ok());
  EXPECT_LE(grid->best_latency_us, Simulated(s, *plan) * (1 + 1e-9));
}

TEST(ThresholdPredictorTest, RecallsTrainingSamplesAndRoundTrips) {
  ThresholdPredictor predictor;
  std::vector<std::vector<double>> features;
  std::vector<int> best;
  for (const char* profile : {"jetson-orin-nano-8gb", "host-vgpu"})
    for (const char* model : {"tiny_cnn", "squeezenet1_1"}) {
      ModelSetup s = MakeSetup(model, profile);
      StatusOr<std::vector<double>> f = ThresholdFeatures(s.graph, s.ctx);
      StatusOr<ThresholdGridResult> grid = GridSearchThresholds(s.graph, s.ctx);
      ASSERT_TRUE(f.ok() && grid.ok());
      ASSERT_TRUE(predictor.AddSample(*f, grid->cost).ok());
      features.push_back(*f);
      best.push_back(grid->best_cell);
    }
  EXPECT_FALSE(predictor.AddSample({1, 2}, std::vector<double>(ThresholdGridSize(), 1)).ok());
  ASSERT_TRUE(predictor.Fit().ok());
  // The nearest sample (distance 0) dominates the weighted surface: its
  // predicted cell costs what its best does.
  for (size_t i = 0; i < features.size(); ++i) {
    const int cell = predictor.RankCells(features[i], 1).front();
    (void)cell;
    EXPECT_EQ(predictor.RankCells(features[i], 3).size(), 3u);
  }
  BinaryWriter w;
  predictor.Save(w);
  BinaryReader r(w.bytes(), "mem");
  StatusOr<ThresholdPredictor> again = ThresholdPredictor::Load(r);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  for (const auto& f : features) EXPECT_EQ(again->RankCells(f, 5), predictor.RankCells(f, 5));
  BinaryReader cut(std::string_view(w.bytes()).substr(0, w.bytes().size() / 2), "cut");
  StatusOr<ThresholdPredictor> bad = ThresholdPredictor::Load(cut);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().ToString().find("truncated"), std::string::npos);
}

// A one-step bandit: action 1 pays 1, action 0 pays 0.
void TrainBandit(DiscreteSac& agent, int steps) {
  Eigen::VectorXd state(3);
  state << 0.3, -0.2, 0.5;
  for (int i = 0; i < steps; ++i) {
    const int a = agent.Act(state, ~0u, false);
    agent.Remember({state, state, a, a == 1 ? 1.0 : 0.0, true, ~0u, ~0u});
    agent.Update();
  }
}

TEST(DiscreteSacTest, BanditProbabilityOfBetterActionRises) {
  SacOptions o;
  o.hidden = 16;
  o.batch_size = 16;
  o.warmup_transitions = 16;
  o.seed = 3;
  DiscreteSac agent(3, 2, o);
  Eigen::VectorXd state(3);
  state << 0.3, -0.2, 0.5;
  const double before = agent.Probabilities(state)(1);
  TrainBandit(agent, 400);
  const double after = agent.Probabilities(state)(1);
  EXPECT_GT(after, before + 0.2) << before << " -> " << after;
  EXPECT_GT(after, 0.8);
  // Masking: a disallowed action has probability 0 and is never taken.
  EXPECT_EQ(agent.Probabilities(state, 1u)(1), 0.0);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(agent.Act(state, 1u, false), 0);
}

TEST(DiscreteSacTest, SameSeedSameAgent) {
  SacOptions o;
  o.hidden = 8;
  o.batch_size = 8;
  o.warmup_transitions = 8;
  o.seed = 5;
  DiscreteSac a(3, 2, o), b(3, 2, o);
  TrainBandit(a, 60);
  TrainBandit(b, 60);
  Eigen::VectorXd state(3);
  state << 0.1, 0.2, 0.3;
  EXPECT_EQ(a.Probabilities(state), b.Probabilities(state));
  EXPECT_GT(a.alpha(), 0);
}

TEST(PlacementEnvTest, ShapedRewardsSumToImprovementAndAgentLearns) {
  ModelSetup s = MakeSetup("tiny_cnn", "jetson-orin-nano-8gb");
  StatusOr<std::unique_ptr<PlacementEnv>> env = PlacementEnv::Create(s.graph, s.ctx, {0.5, 8}, 0);
  ASSERT_TRUE(env.ok()) << env.status().ToString();
  SacOptions o;
  o.hidden = 16;
  o.batch_size = 16;
  o.warmup_transitions = 32;
  DiscreteSac agent(PlacementEnv::kStateSize, PlacementEnv::kNumActions, o);
  for (int e = 0; e < 5; ++e) {
    SacEpisode ep = RunSacEpisode(agent, **env, true);
    EXPECT_NEAR(ep.episode_return, 1.0 - ep.final_cost, 1e-9);
    EXPECT_TRUE(std::isfinite(ep.losses.critic) && std::isfinite(ep.losses.actor));
  }
  // Split actions are offered only on sliceable ops; CPU always.
  (*env)->Reset();
  int sliceable = 0;
  while (!(*env)->done()) {
    const uint32_t mask = (*env)->Mask();
    const bool can_split = (*env)->space().Sliceable((*env)->node());
    sliceable += can_split;
    EXPECT_EQ((mask & 1u) != 0, true);
    EXPECT_EQ((mask >> 2) != 0, can_split) << "node " << (*env)->node();
    (*env)->Step(can_split ? 3 : 1);
  }
  EXPECT_GT(sliceable, 0);
  // Two passes over the nodes by default.
  EXPECT_EQ((*env)->passes(), PlacementEnv::kDefaultPasses);
  EXPECT_EQ((*env)->step(), (*env)->passes() * (*env)->num_nodes());
  EXPECT_FALSE(PlacementEnv::Create(s.graph, s.ctx, {0.5, 8}, 0, 0).ok());
  // Reset restores the start plan exactly.
  (*env)->Reset();
  EXPECT_NEAR((*env)->current_cost(), 1.0, 1e-12);
}

TEST(SparoaPolicyTest, UntrainedNeverWorseThanBestSingleDevice) {
  for (const char* profile : {"jetson-orin-nano-8gb", "host-vgpu"}) {
    ModelSetup s = MakeSetup("squeezenet1_1", profile);
    PolicyRegistry r;
    RegisterBasicPolicies(r);
    RegisterSparoaPolicy(r);
    StatusOr<Plan> sparoa = MakePlan(r, "sparoa", s.graph, s.ctx);
    ASSERT_TRUE(sparoa.ok()) << sparoa.status().ToString();
    StatusOr<Plan> cpu = MakePlan(r, "cpu-only", s.graph, s.ctx);
    StatusOr<Plan> gpu = MakePlan(r, "gpu-only", s.graph, s.ctx);
    ASSERT_TRUE(cpu.ok() && gpu.ok());
    EXPECT_LE(Simulated(s, *sparoa), std::min(Simulated(s, *cpu), Simulated(s, *gpu)) * (1 + 1e-9))
        << profile;
    EXPECT_NE(sparoa->nodes[0].reason.find("sparoa:"), std::string::npos);
  }
}

TEST(SparoaPolicyTest, TrainedModelFileRoundTripAndBadFiles) {
  ModelSetup s = MakeSetup("tiny_cnn", "jetson-orin-nano-8gb");
  SparoaModel model;
  StatusOr<std::vector<double>> f = ThresholdFeatures(s.graph, s.ctx);
  StatusOr<ThresholdGridResult> grid = GridSearchThresholds(s.graph, s.ctx);
  ASSERT_TRUE(f.ok() && grid.ok());
  ASSERT_TRUE(model.predictor.AddSample(*f, grid->cost).ok());
  ASSERT_TRUE(model.predictor.Fit().ok());
  SacOptions o;
  o.hidden = 8;
  model.agent =
      std::make_unique<DiscreteSac>(PlacementEnv::kStateSize, PlacementEnv::kNumActions, o);
  const std::string path = TempPath("model.bin");
  ASSERT_TRUE(SaveSparoaModel(model, path).ok());
  StatusOr<SparoaModel> again = LoadSparoaModel(path);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  ASSERT_NE(again->agent, nullptr);

  PolicyRegistry r;
  RegisterBasicPolicies(r);
  RegisterSparoaPolicy(r, {.policy_file = path});
  StatusOr<Plan> plan = MakePlan(r, "sparoa", s.graph, s.ctx);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  StatusOr<Plan> gpu = MakePlan(r, "gpu-only", s.graph, s.ctx);
  StatusOr<Plan> cpu = MakePlan(r, "cpu-only", s.graph, s.ctx);
  EXPECT_LE(Simulated(s, *plan), std::min(Simulated(s, *gpu), Simulated(s, *cpu)) * (1 + 1e-9));
  EXPECT_NE(plan->nodes[0].reason.find("predicted"), std::string::npos);

  // Truncated file: a clear error from Place, not a silent untrained plan.
  StatusOr<std::string> bytes = ReadFileBytes(path);
  ASSERT_TRUE(bytes.ok());
  ASSERT_TRUE(WriteFileBytes(path, bytes->substr(0, bytes->size() - 5)).ok());
  PolicyRegistry bad;
  RegisterSparoaPolicy(bad, {.policy_file = path});
  StatusOr<Plan> failed = MakePlan(bad, "sparoa", s.graph, s.ctx);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().ToString().find("truncated"), std::string::npos);
  PolicyRegistry missing;
  RegisterSparoaPolicy(missing, {.policy_file = TempPath("nope.bin")});
  EXPECT_FALSE(MakePlan(missing, "sparoa", s.graph, s.ctx).ok());
  std::remove(path.c_str());
}

TEST(SparoaPolicyTest, UsesTheFallbackProfileWithoutACostModel) {
  ModelSetup s = MakeSetup("tiny_cnn", "host-vgpu");
  PlacementContext runtime_like = s.ctx;
  runtime_like.cost_model = nullptr;  // what a Session hands a policy
  PolicyRegistry with, without, bad;
  RegisterSparoaPolicy(with, {.fallback_profile = "host-vgpu"});
  RegisterSparoaPolicy(without);
  RegisterSparoaPolicy(bad, {.fallback_profile = "no-such-profile"});
  StatusOr<Plan> plan = MakePlan(with, "sparoa", s.graph, runtime_like);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  StatusOr<Plan> same = MakePlan(with, "sparoa", s.graph, s.ctx);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(PlanToJson(*plan), PlanToJson(*same));
  EXPECT_EQ(MakePlan(without, "sparoa", s.graph, runtime_like).status().code(),
            StatusCode::kFailedPrecondition);
  StatusOr<Plan> failed = MakePlan(bad, "sparoa", s.graph, runtime_like);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().ToString().find("no-such-profile"), std::string::npos);
}

TEST(SparoaPolicyTest, PolishIsNeverWorseAndIsLabelledNotRl) {
  for (const char* profile : {"jetson-orin-nano-8gb", "host-vgpu"}) {
    ModelSetup s = MakeSetup("squeezenet1_1", profile);
    PolicyRegistry r;
    RegisterSparoaPolicy(r);  // polish on by default
    RegisterSparoaPolicy(r, {.polish = false}, "sparoa-nopolish");
    StatusOr<Plan> polished = MakePlan(r, "sparoa", s.graph, s.ctx);
    StatusOr<Plan> plain = MakePlan(r, "sparoa-nopolish", s.graph, s.ctx);
    ASSERT_TRUE(polished.ok() && plain.ok());
    EXPECT_EQ(plain->policy, "sparoa-nopolish");
    EXPECT_LE(Simulated(s, *polished), Simulated(s, *plain) * (1 + 1e-9)) << profile;
    EXPECT_NE(polished->nodes[0].reason.find("local search (not RL"), std::string::npos)
        << polished->nodes[0].reason;
    EXPECT_EQ(plain->nodes[0].reason.find("local search"), std::string::npos);
  }
}

TEST(MlpThresholdPredictorTest, FitsTheSurfacesDeterministically) {
  std::vector<std::vector<double>> features, costs;
  for (const char* profile : {"jetson-orin-nano-8gb", "host-vgpu"})
    for (const char* model : {"tiny_cnn", "squeezenet1_1"}) {
      ModelSetup s = MakeSetup(model, profile);
      StatusOr<std::vector<double>> f = ThresholdFeatures(s.graph, s.ctx);
      StatusOr<ThresholdGridResult> grid = GridSearchThresholds(s.graph, s.ctx);
      ASSERT_TRUE(f.ok() && grid.ok());
      features.push_back(*f);
      costs.push_back(grid->cost);
    }
  MlpThresholdPredictor a, b, short_fit;
  EXPECT_FALSE(a.Fit().ok());  // no samples
  EXPECT_FALSE(a.AddSample({1, 2}, costs[0]).ok());
  for (size_t i = 0; i < features.size(); ++i) {
    ASSERT_TRUE(a.AddSample(features[i], costs[i]).ok());
    ASSERT_TRUE(b.AddSample(features[i], costs[i]).ok());
    ASSERT_TRUE(short_fit.AddSample(features[i], costs[i]).ok());
  }
  MlpPredictorOptions o;
  o.epochs = 600;
  StatusOr<double> loss = a.Fit(o);
  ASSERT_TRUE(loss.ok() && b.Fit(o).ok());
  o.epochs = 1;
  StatusOr<double> first = short_fit.Fit(o);
  ASSERT_TRUE(first.ok());
  EXPECT_LT(*loss, *first / 4) << *first << " -> " << *loss;
  for (size_t i = 0; i < features.size(); ++i) {
    const std::vector<int> ranked = a.RankCells(features[i], ThresholdGridSize());
    EXPECT_EQ(ranked, b.RankCells(features[i], ThresholdGridSize()));  // same seed, same net
    std::vector<int> sorted = ranked;
    std::sort(sorted.begin(), sorted.end());
    for (int c = 0; c < ThresholdGridSize(); ++c) EXPECT_EQ(sorted[static_cast<size_t>(c)], c);
  }
}

}  // namespace
}  // namespace braid
