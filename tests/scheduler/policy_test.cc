#include "scheduler/policy.h"

#include <gtest/gtest.h>

#include "graph/passes/passes.h"
#include "scheduler/policies.h"
#include "models/architectures.h"

namespace braid {
namespace {

Graph TinyCnn() {
  Graph g = BuildTinyCnn(5);
  EXPECT_TRUE(RunDefaultPasses(g).ok());
  return g;
}

TEST(PolicyTest, RegistryListsNamesAndRejectsUnknown) {
  PolicyRegistry registry;
  RegisterBasicPolicies(registry);
  EXPECT_EQ(registry.Names(), (std::vector<std::string>{"cpu-only", "gpu-only", "random-1", "random-2", "random-3", "random-4", "random-5"}));
  StatusOr<std::unique_ptr<Policy>> bad = registry.Create("magic");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("known: cpu-only, gpu-only"), std::string::npos);
}

TEST(PolicyTest, CpuOnlyPutsEverythingOnTheHost) {
  PolicyRegistry registry;
  RegisterBasicPolicies(registry);
  Graph g = TinyCnn();
  PlacementContext ctx;
  ctx.devices = {"cpu", "vgpu"};
  StatusOr<Plan> plan = MakePlan(registry, "cpu-only", g, ctx);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->policy, "cpu-only");
  for (const NodePlan& p : plan->nodes) EXPECT_EQ(p.device, "cpu");
}

TEST(PolicyTest, GpuOnlyFallsBackVisiblyWhereNoKernelExists) {
  PolicyRegistry registry;
  RegisterBasicPolicies(registry);
  Graph g = TinyCnn();
  PlacementContext ctx;
  ctx.devices = {"cpu", "vgpu"};
  ctx.allowed_devices.resize(g.nodes().size(), {"cpu", "vgpu"});
  ctx.allowed_devices[1] = {"cpu"};
  StatusOr<Plan> plan = MakePlan(registry, "gpu-only", g, ctx);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  for (size_t i = 0; i < plan->nodes.size(); ++i) {
    EXPECT_EQ(plan->nodes[i].device, i == 1 ? "cpu" : "vgpu") << i;
    EXPECT_EQ(plan->nodes[i].reason.empty(), i != 1) << plan->nodes[i].reason;
  }
  ctx.devices = {"cpu"};
  StatusOr<Plan> none = MakePlan(registry, "gpu-only", g, ctx);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("no device besides 'cpu'"), std::string::npos);
}

TEST(PolicyTest, RegisterPoliciesHasEveryPolicyAndChecksItsSettings) {
  PolicyRegistry all;
  ASSERT_TRUE(RegisterPolicies(all).ok());
  for (const char* name : {"cpu-only", "gpu-only", "random-1", "threshold", "heft", "partition",
                           "optimal", "sparoa"})
    EXPECT_TRUE(all.Create(name).ok()) << name;
  EXPECT_EQ(PolicyOfSetting("sparoa.polish"), "sparoa");
  PolicyRegistry ok;
  EXPECT_TRUE(RegisterPolicies(ok, {{"threshold.intensity", "12.5"},
                                    {"threshold.sparsity", "0.25"},
                                    {"sparoa.polish", "0"},
                                    {"sparoa.policy_file", "x.bin"}})
                  .ok());
  for (const PolicySettings& bad :
       {PolicySettings{{"threshold.intensty", "8"}}, PolicySettings{{"threshold.intensity", "a"}},
        PolicySettings{{"sparoa.polish", "yes"}}, PolicySettings{{"heft", "1"}}}) {
    PolicyRegistry r;
    Status s = RegisterPolicies(r, bad);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << bad.begin()->first;
    EXPECT_NE(s.message().find(bad.begin()->first), std::string::npos) << s.message();
  }
}

TEST(PolicyTest, RandomPlansAreSeededValidSlicedAndRespectKernels) {
  PolicyRegistry registry;
  RegisterBasicPolicies(registry);
  Graph g = BuildResNet18(3);
  ASSERT_TRUE(RunDefaultPasses(g).ok());
  PlacementContext ctx;
  ctx.devices = {"cpu", "cuda:0"};
  ctx.allowed_devices.resize(g.nodes().size(), {"cpu", "cuda:0"});
  ctx.allowed_devices[0] = {"cpu"};  // no accelerator kernel: never there, never sliced
  std::vector<std::string> placements;
  for (uint32_t seed = 1; seed <= kRandomPolicySeeds; ++seed) {
    const std::string name = "random-" + std::to_string(seed);
    StatusOr<Plan> plan = MakePlan(registry, name, g, ctx);  // validates
    ASSERT_TRUE(plan.ok()) << name << ": " << plan.status().ToString();
    StatusOr<Plan> again = MakePlan(registry, name, g, ctx);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(PlanToJson(*plan), PlanToJson(*again)) << name << " is not deterministic";
    int on_gpu = 0, sliced = 0;
    std::string devices;
    for (const NodePlan& p : plan->nodes) {
      on_gpu += p.device == "cuda:0";
      sliced += p.slice.has_value();
      devices += p.device + (p.slice ? "+" + p.slice->other_device : "") + ",";
    }
    EXPECT_EQ(plan->nodes[0].device, "cpu");
    EXPECT_FALSE(plan->nodes[0].slice.has_value());
    EXPECT_GT(on_gpu, 0) << name;
    EXPECT_LT(on_gpu, static_cast<int>(plan->nodes.size())) << name;
    EXPECT_GT(sliced, 0) << name;
    placements.push_back(devices);
  }
  EXPECT_NE(placements[0], placements[1]);
  ctx.devices = {"cpu"};
  EXPECT_FALSE(MakePlan(registry, "random-1", g, ctx).ok());
}

TEST(PolicyTest, PinsWinButMustHaveAKernel) {
  PolicyRegistry registry;
  RegisterBasicPolicies(registry);
  Graph g = TinyCnn();
  g.nodes()[2].device_pin = "vgpu";
  PlacementContext ctx;
  ctx.devices = {"cpu", "vgpu"};
  StatusOr<Plan> plan = MakePlan(registry, "cpu-only", g, ctx);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->nodes[2].device, "vgpu");
  EXPECT_TRUE(plan->nodes[2].pinned);
  ctx.allowed_devices.resize(g.nodes().size());
  ctx.allowed_devices[2] = {"cpu"};
  StatusOr<Plan> impossible = MakePlan(registry, "cpu-only", g, ctx);
  ASSERT_FALSE(impossible.ok());
  EXPECT_NE(impossible.status().message().find("has no kernel for it"), std::string::npos);
}

}  // namespace
}  // namespace braid
