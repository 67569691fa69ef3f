// heft and partition on small hand-built graphs whose best plans are worked
// out by hand (tests/scheduler/sim_test_util.h: the cpu does 1000 FLOP/us,
// the gpu 4000 unless a class is slowed; a copy costs latency + 1 us/KB).
#include <gtest/gtest.h>

#include "graph/annotate.h"
#include "graph/passes/passes.h"
#include "models/architectures.h"
#include "scheduler/heft_policy.h"
#include "scheduler/partition_policy.h"
#include "tests/scheduler/baseline_test_util.h"

namespace braid {
namespace {

using testing::PlanAndSimulate;
using testing::TinyGraph;

PlacementContext Context(const CostModel& model) {
  PlacementContext ctx;
  ctx.devices = {"cpu", "gpu"};
  ctx.cost_model = &model;
  return ctx;
}

TEST(BaselinePoliciesTest, RegisteredByName) {
  PolicyRegistry registry;
  RegisterBasicPolicies(registry);
  RegisterBaselinePolicies(registry);
  EXPECT_EQ(registry.Names(),
            (std::vector<std::string>{"cpu-only", "gpu-only", "heft", "optimal", "partition",
                                      "random-1", "random-2", "random-3", "random-4", "random-5"}));
}

TEST(BaselinePoliciesTest, NeedACostModel) {
  TinyGraph t;
  t.Output(t.Op("a", {t.Input("x", 250)}, 10));
  PlacementContext ctx;
  ctx.devices = {"cpu", "gpu"};
  for (const Policy* p : std::initializer_list<const Policy*>{
           new HeftPolicy, new PartitionPolicy, new OptimalPolicy}) {
    StatusOr<Plan> plan = p->Place(t.graph(), ctx);
    ASSERT_FALSE(plan.ok());
    EXPECT_NE(plan.status().message().find("cost model"), std::string::npos);
    delete p;
  }
}

// Relu is 2.5x slower on the gpu, MaxPool 4x faster; each costs 10 us on
// the cpu and a copy costs 11 us. Chasing the faster device per node pays
// two copies per MaxPool (22 us to save 7.5): all-cpu (60 us) is best.
TEST(BaselinePoliciesTest, ChainWhereAlternatingPaysTransfersStaysOnOneDevice) {
  DeviceProfile profile = testing::TwoDeviceProfile(10);
  testing::SetGpuCompute(profile, "elementwise", 0.1);
  CostModel model(profile);
  TinyGraph t;
  ValueId v = t.Input("x", 250);
  for (int i = 0; i < 6; ++i)
    v = t.Op(testing::NodeName(i), {v}, 10, 250, i % 2 ? "MaxPool" : "Relu");
  t.Output(v);
  for (const char* policy : {"heft", "partition", "optimal"}) {
    testing::Planned p = PlanAndSimulate(policy, t.graph(), Context(model));
    EXPECT_NEAR(p.latency_us, 60, 1e-9) << policy;
    for (const NodePlan& n : p.plan.nodes) EXPECT_EQ(n.device, "cpu") << policy << " " << n.node;
  }
}

// Two independent 40 us branches, equally fast on both devices (mapped
// link, no copy cost): the best plan runs them at once, one per device:
// 4 + 40 + 4 = 48 us, against 88 us on one device.
TEST(BaselinePoliciesTest, ForkSendsTheBranchesToDifferentDevices) {
  DeviceProfile profile = testing::TwoDeviceProfile(0, /*mapped=*/true);
  testing::SetGpuCompute(profile, "elementwise", 0.25);
  CostModel model(profile);
  TinyGraph t;
  ValueId a = t.Op("a", {t.Input("x", 250)}, 4);
  ValueId b = t.Op("b", {a}, 40);
  ValueId c = t.Op("c", {a}, 40);
  t.Output(t.Op("d", {b, c}, 4));
  for (const char* policy : {"heft", "partition", "optimal"}) {
    testing::Planned p = PlanAndSimulate(policy, t.graph(), Context(model));
    EXPECT_NEAR(p.latency_us, 48, 1e-9) << policy;
    EXPECT_NE(p.plan.nodes[1].device, p.plan.nodes[2].device) << policy;
  }
  EXPECT_NEAR(PlanAndSimulate("cpu-only", t.graph(), Context(model)).latency_us, 88, 1e-9);
}

// MaxPools are 4x faster on the gpu, but the middle one has no gpu kernel
// and another is pinned to the cpu: every policy keeps them there.
TEST(BaselinePoliciesTest, RespectAllowedDevicesAndPins) {
  DeviceProfile profile = testing::TwoDeviceProfile(1);
  CostModel model(profile);
  TinyGraph t;
  ValueId v = t.Input("x", 250);
  for (int i = 0; i < 5; ++i) v = t.Op(testing::NodeName(i), {v}, 100, 250, "MaxPool");
  t.Output(v);
  t.graph().node(4).device_pin = "cpu";
  PlacementContext ctx = Context(model);
  ctx.allowed_devices.assign(5, {});
  ctx.allowed_devices[2] = {"cpu"};
  for (const char* policy : {"heft", "partition", "optimal"}) {
    testing::Planned p = PlanAndSimulate(policy, t.graph(), ctx);
    EXPECT_EQ(p.plan.nodes[2].device, "cpu") << policy;
    EXPECT_EQ(p.plan.nodes[4].device, "cpu") << policy;
    EXPECT_TRUE(p.plan.nodes[4].pinned) << policy;
    // The heavy unconstrained nodes go to the faster device.
    EXPECT_EQ(p.plan.nodes[0].device, "gpu") << policy;
    EXPECT_EQ(p.plan.nodes[3].device, "gpu") << policy;
  }
}

// A heavy Gemm on a mapped link: the gpu is 4x faster, so the two parts
// finish together near ratio 0.8 on the gpu; partition splits it at a bin
// and beats the best single device.
TEST(BaselinePoliciesTest, PartitionSplitsAHeavyGemm) {
  DeviceProfile profile = testing::TwoDeviceProfile(0, /*mapped=*/true);
  CostModel model(profile);
  TinyGraph t;
  t.Output(t.Op("gemm", {t.Input("x", 256)}, 400, 256, "Gemm"));
  PlacementContext ctx = Context(model);
  StatusOr<PlacementSpace> space = BuildPlacementSpace(t.graph(), ctx, "test");
  ASSERT_TRUE(space.ok());
  std::vector<SimPlacement> all_cpu = space->SingleDevice(0);
  EXPECT_NEAR(BalancedSliceRatio(*space, all_cpu, 0, 1, 0), 0.8, 1e-12);
  EXPECT_NEAR(BalancedSliceRatio(*space, all_cpu, 0, 0, 1), 0.2, 1e-12);
  testing::Planned p = PlanAndSimulate("partition", t.graph(), ctx);
  ASSERT_TRUE(p.plan.nodes[0].slice.has_value());
  const double gpu_only = PlanAndSimulate("gpu-only", t.graph(), ctx).latency_us;  // 100 us
  EXPECT_NEAR(gpu_only, 100, 1e-9);
  // Best bin: 0.75 on the gpu: max(0.75 * 100, 0.25 * 400) = 100; 0.875:
  // max(87.5, 50) = 87.5, then the gpu joins the parts (the 256-float
  // output copied in and out, as the engine's "#join" step).
  OpWork join;
  join.op_class = OpClass::kDataMovement;
  join.op_type = "Reshape";
  join.bytes = 2 * 256 * 4;
  const double join_us = model.Cost(join, 1).TotalUs();
  EXPECT_LT(87.5 + join_us, gpu_only);
  EXPECT_NEAR(p.latency_us, 87.5 + join_us, 1e-6);
  EXPECT_NEAR(PlanAndSimulate("optimal", t.graph(), ctx).latency_us, 87.5 + join_us, 1e-6);
}

TEST(BaselinePoliciesTest, PartitionNeverWorseThanItsStartsAndPlansValidate) {
  Graph g = BuildTinyCnn(5);
  ASSERT_TRUE(RunDefaultPasses(g).ok());
  ASSERT_TRUE(Annotate(g).ok());
  DeviceProfile profile = testing::TwoDeviceProfile(5);
  CostModel model(profile);
  PlacementContext ctx = Context(model);
  const double partition = PlanAndSimulate("partition", g, ctx).latency_us;
  for (const char* start : {"cpu-only", "gpu-only", "heft"})
    EXPECT_LE(partition, PlanAndSimulate(start, g, ctx).latency_us + 1e-9) << start;
  for (const char* policy : {"heft", "partition"}) {
    testing::Planned p = PlanAndSimulate(policy, g, ctx);
    for (const NodePlan& n : p.plan.nodes) {
      EXPECT_NE(n.reason.find(policy), std::string::npos) << n.reason;
      EXPECT_GE(n.predicted_ms, 0);
    }
  }
}

}  // namespace
}  // namespace braid
