#include "scheduler/policy.h"

#include <gtest/gtest.h>

#include "graph/passes/passes.h"
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
  EXPECT_EQ(registry.Names(), (std::vector<std::string>{"cpu-only", "gpu-only"}));
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
