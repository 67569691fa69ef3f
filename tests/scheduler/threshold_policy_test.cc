#include "scheduler/threshold_policy.h"

#include <gtest/gtest.h>

#include "graph/annotate.h"
#include "graph/passes/passes.h"
#include "models/architectures.h"
#include "scheduler/cost_model.h"
#include "tests/scheduler/sim_test_util.h"

namespace braid {
namespace {

Graph AnnotatedTinyCnn() {
  Graph g = BuildTinyCnn(5);
  EXPECT_TRUE(RunDefaultPasses(g).ok());
  EXPECT_TRUE(Annotate(g).ok());
  return g;
}

TEST(ThresholdPolicyTest, RegisteredBesideTheBasicOnes) {
  PolicyRegistry registry;
  RegisterBasicPolicies(registry);
  RegisterCostModelPolicies(registry);
  EXPECT_EQ(registry.Names(), (std::vector<std::string>{"cpu-only", "gpu-only", "random-1", "random-2", "random-3", "random-4", "random-5", "threshold"}));
}

// The threshold policy at intensity 4 FLOP/B on cpu + vgpu, no cost model.
StatusOr<Plan> ThresholdPlanAtIntensity4(const Graph& g) {
  PolicyRegistry registry;
  ThresholdOptions options;
  options.intensity_threshold = 4;
  RegisterCostModelPolicies(registry, options);
  PlacementContext ctx;
  ctx.devices = {"cpu", "vgpu"};
  return MakePlan(registry, "threshold", g, ctx);
}

TEST(ThresholdPolicyTest, IntenseDenseOpsGoToTheAcceleratorOthersStay) {
  Graph g = AnnotatedTinyCnn();
  StatusOr<Plan> plan = ThresholdPlanAtIntensity4(g);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  int on_accelerator = 0;
  for (size_t i = 0; i < plan->nodes.size(); ++i) {
    const Node& n = g.nodes()[i];
    const NodePlan& p = plan->nodes[i];
    EXPECT_FALSE(p.reason.empty()) << n.name;
    if (n.annotation.flops == 0) continue;
    const bool intense = n.annotation.intensity >= 4 && n.annotation.weight_sparsity < 0.5;
    EXPECT_EQ(p.device, intense ? "vgpu" : "cpu") << n.name << " " << p.reason;
    on_accelerator += intense;
  }
  EXPECT_GT(on_accelerator, 0);
}

TEST(ThresholdPolicyTest, SparseOpsStayOnTheCpuAndCostsAreFilled) {
  Graph g = AnnotatedTinyCnn();
  size_t conv = 0;
  while (g.nodes()[conv].op_type != "Conv") ++conv;
  g.nodes()[conv].annotation.intensity = 1e6;
  g.nodes()[conv].annotation.weight_sparsity = 0.9;
  ThresholdPolicy policy;
  DeviceProfile profile = testing::TwoDeviceProfile();
  profile.devices[1].name = "vgpu";
  profile.devices[1].kind = "vgpu";
  for (LinkSpec& l : profile.links) (l.from == "gpu" ? l.from : l.to) = "vgpu";
  CostModel model(profile);
  PlacementContext ctx;
  ctx.devices = {"cpu", "vgpu"};
  ctx.cost_model = &model;
  StatusOr<Plan> plan = policy.Place(g, ctx);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->nodes[conv].device, "cpu");
  EXPECT_NE(plan->nodes[conv].reason.find("sparsity 0.90"), std::string::npos);
  for (const NodePlan& p : plan->nodes) EXPECT_GE(p.predicted_ms, 0) << p.node;
}

TEST(ThresholdPolicyTest, MeasuredActivationSparsityIsNotRoutedOn) {
  // No CPU kernel skips scattered zeros entering a conv: a measured 90% must
  // not move an intense dense conv to the CPU. (tiny_cnn's fc keeps a
  // symbolic batch here, so the input-sparse rule, tested in
  // cost_model_fit_test, does not apply to it either.)
  Graph g = AnnotatedTinyCnn();
  StatusOr<Plan> unmeasured = ThresholdPlanAtIntensity4(g);
  ASSERT_TRUE(unmeasured.ok()) << unmeasured.status().ToString();
  for (Node& n : g.nodes()) n.annotation.activation_sparsity = 0.9;
  StatusOr<Plan> measured = ThresholdPlanAtIntensity4(g);
  ASSERT_TRUE(measured.ok()) << measured.status().ToString();
  int on_accelerator = 0;
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    EXPECT_EQ(measured->nodes[i].device, unmeasured->nodes[i].device) << g.nodes()[i].name;
    on_accelerator += measured->nodes[i].device == "vgpu";
  }
  EXPECT_GT(on_accelerator, 0);
  Node conv;
  conv.op_type = "Conv";
  conv.annotation.activation_sparsity = 0.9;
  EXPECT_EQ(RoutableSparsity(conv, nullptr), 0.0);
  conv.annotation.weight_sparsity = 0.6;
  EXPECT_EQ(RoutableSparsity(conv, nullptr), 0.6);
}

TEST(ThresholdPolicyTest, NoAcceleratorKernelMeansCpuWithAReason) {
  Graph g = AnnotatedTinyCnn();
  ThresholdOptions options;
  options.intensity_threshold = 0;
  ThresholdPolicy policy(options);
  PlacementContext ctx;
  ctx.devices = {"cpu", "vgpu"};
  ctx.allowed_devices.assign(g.nodes().size(), {"cpu"});
  StatusOr<Plan> plan = policy.Place(g, ctx);
  ASSERT_TRUE(plan.ok());
  for (const NodePlan& p : plan->nodes) EXPECT_EQ(p.device, "cpu") << p.reason;
  ThresholdOptions bad;
  bad.sparsity_threshold = 2;
  EXPECT_FALSE(ThresholdPolicy(bad).Place(g, ctx).ok());
}

}  // namespace
}  // namespace braid
