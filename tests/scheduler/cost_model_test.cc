#include "scheduler/cost_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "graph/op_schema.h"
#include "scheduler/simulator.h"
#include "tests/scheduler/sim_test_util.h"

namespace braid {
namespace {

using testing::TwoDeviceProfile;

TEST(CostModelTest, RooflineTakesTheSlowerOfComputeAndMemory) {
  DeviceProfile p = TwoDeviceProfile();
  p.devices[0].efficiency[static_cast<size_t>(OpClass::kConv)].compute = 0.5;
  p.devices[0].efficiency[static_cast<size_t>(OpClass::kConv)].memory = 0.25;
  p.devices[0].efficiency[static_cast<size_t>(OpClass::kConv)].overhead_us = 3;
  CostModel m(p);
  // 1 GFLOP/s at 0.5 = 500 FLOP/us; 1 GB/s at 0.25 = 250 B/us.
  OpCost compute_bound = m.Cost(OpClass::kConv, 5000, 500, 0);
  EXPECT_DOUBLE_EQ(compute_bound.compute_us, 10);
  EXPECT_DOUBLE_EQ(compute_bound.memory_us, 2);
  EXPECT_DOUBLE_EQ(compute_bound.TotalUs(), 13);
  EXPECT_DOUBLE_EQ(compute_bound.TotalUs(0.25), 3 + 2.5);
  OpCost memory_bound = m.Cost(OpClass::kConv, 500, 5000, 0);
  EXPECT_DOUBLE_EQ(memory_bound.TotalUs(), 3 + 20);
  // The gpu (4 GFLOP/s, efficiency 1, no overhead).
  EXPECT_DOUBLE_EQ(m.Cost(OpClass::kConv, 4000, 10, 1).TotalUs(), 1);
}

TEST(CostModelTest, ClassesAndDefaults) {
  Node conv;
  conv.op_type = "Conv";
  EXPECT_EQ(ClassifyOp(conv), OpClass::kConv);
  conv.attrs.Set("group", int64_t{32});
  EXPECT_EQ(ClassifyOp(conv), OpClass::kDepthwiseConv);
  Node n;
  for (auto [op, cls] : {std::pair{"MatMul", OpClass::kGemm}, {"Relu", OpClass::kElementwise},
                         {"GlobalAveragePool", OpClass::kPool},
                         {"Softmax", OpClass::kNormalization}, {"ReduceMean", OpClass::kReduce},
                         {"Reshape", OpClass::kDataMovement}, {"Foo", OpClass::kOther}}) {
    n.op_type = op;
    EXPECT_EQ(ClassifyOp(n), cls) << op;
  }
  // Unfitted classes use the defaults, and the device's launch overhead.
  DeviceProfile p = TwoDeviceProfile();
  p.devices[1].efficiency.clear();
  p.devices[1].launch_overhead_us = 7;
  CostModel m(p);
  const OpClassEfficiency d = DefaultEfficiency("gpu", OpClass::kGemm);
  OpCost c = m.Cost(OpClass::kGemm, 4000, 1, 1);
  EXPECT_DOUBLE_EQ(c.overhead_us, 7);
  EXPECT_DOUBLE_EQ(c.compute_us, 1 / d.compute);
}

TEST(CostModelTest, TransfersAndEnergy) {
  CostModel copy(TwoDeviceProfile(10));
  EXPECT_DOUBLE_EQ(copy.TransferUs(0, 1, 3000), 13);
  EXPECT_DOUBLE_EQ(copy.TransferUs(1, 1, 3000), 0);
  EXPECT_FALSE(copy.Mapped(0, 1));
  CostModel mapped(TwoDeviceProfile(10, true));
  EXPECT_DOUBLE_EQ(mapped.TransferUs(0, 1, 3000), 0);
  EXPECT_TRUE(mapped.Mapped(1, 0));
  DeviceProfile none = TwoDeviceProfile();
  none.links.pop_back();
  EXPECT_LT(CostModel(none).TransferUs(1, 0, 10), 0);
  // cpu: 2 W busy, 0.5 W idle: 10 us busy of 30.
  EXPECT_DOUBLE_EQ(copy.DeviceEnergyJ(0, 10, 30), (2 * 10 + 0.5 * 20) * 1e-6);
}

TEST(CostModelTest, DeviceIndexMatchesCudaByPrefix) {
  DeviceProfile p = TwoDeviceProfile();
  p.devices[1].name = "cuda:0";
  CostModel m(p);
  EXPECT_EQ(m.DeviceIndex("cuda:0"), 1);
  EXPECT_EQ(m.DeviceIndex("cuda"), 1);
  EXPECT_EQ(m.DeviceIndex("cpu"), 0);
  EXPECT_EQ(m.DeviceIndex("vgpu"), -1);
}

TEST(CostModelTest, FitRecoversTheFactorsThatGeneratedTheTimes) {
  DeviceSpec device = TwoDeviceProfile().devices[0];
  const double ec = 0.3, em = 0.6, overhead = 4;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> log_size(2, 7);
  std::vector<OpMeasurement> ms;
  for (int i = 0; i < 40; ++i) {
    OpMeasurement m;
    m.op_class = OpClass::kConv;
    m.flops = std::pow(10.0, log_size(rng));
    m.bytes = std::pow(10.0, log_size(rng) - 1);
    m.measured_us = overhead + std::max(m.flops / (1e3 * ec), m.bytes / (1e3 * em));
    ms.push_back(m);
  }
  ms.push_back({OpClass::kPool, 10, 10, 5});  // one sample: not fitted
  std::vector<OpClassEfficiency> fit = FitEfficiency(device, ms);
  ASSERT_EQ(fit.size(), 1u);
  EXPECT_EQ(fit[0].op_class, "conv");
  EXPECT_EQ(fit[0].samples, 40);
  EXPECT_NEAR(fit[0].compute, ec, 0.1 * ec);
  EXPECT_NEAR(fit[0].memory, em, 0.1 * em);
  EXPECT_NEAR(fit[0].overhead_us, overhead, 0.2 * overhead);
}

// Samples that are all memory-bound say nothing about compute efficiency:
// the fit must keep the default there, not the lowest value that still fits
// (which predicted compute-bound MatMuls ~10x too slow).
TEST(CostModelTest, FitKeepsTheDefaultForAnEfficiencyTheSamplesDoNotExercise) {
  DeviceSpec device = TwoDeviceProfile().devices[0];
  const double em = 0.4, overhead = 3;
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> log_bytes(4, 7);
  std::vector<OpMeasurement> ms;
  for (int i = 0; i < 12; ++i) {
    OpMeasurement m;
    m.op_class = OpClass::kGemm;
    m.bytes = std::pow(10.0, log_bytes(rng));
    m.flops = 0.5 * m.bytes;  // GEMV-like: memory-bound at any compute efficiency >= 0.2
    m.measured_us = overhead + m.bytes / (device.memory_bandwidth_gbps * 1e3 * em);
    ms.push_back(m);
  }
  std::vector<OpClassEfficiency> fit = FitEfficiency(device, ms);
  ASSERT_EQ(fit.size(), 1u);
  const OpClassEfficiency prior = DefaultEfficiency(device.kind, OpClass::kGemm);
  EXPECT_DOUBLE_EQ(fit[0].compute, prior.compute);
  EXPECT_NEAR(fit[0].memory, em, 0.1 * em);
  // A compute-bound MatMul is then predicted from the default, not far slower.
  DeviceProfile profile = TwoDeviceProfile();
  profile.devices[0].efficiency = fit;
  CostModel model(profile);
  const double flops = 2e8, bytes = 1e6;
  const double expected = fit[0].overhead_us +
                          flops / (device.peak_gflops * prior.compute * 1e3);
  EXPECT_NEAR(model.Cost(OpClass::kGemm, flops, bytes, 0).TotalUs(), expected, 0.2 * expected);
}

// With a fitted conv class, a gemm class seen only memory-bound takes conv's
// compute efficiency (the same kind of dense kernel).
TEST(CostModelTest, UnexercisedGemmComputeFollowsTheFittedConvClass) {
  DeviceSpec device = TwoDeviceProfile().devices[0];
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> log_size(3, 6);
  std::vector<OpMeasurement> ms;
  for (int i = 0; i < 20; ++i) {
    const double flops = std::pow(10.0, log_size(rng) + 1), bytes = std::pow(10.0, log_size(rng) - 1);
    ms.push_back({OpClass::kConv, flops, bytes, 2 + std::max(flops / 700, bytes / 500)});
  }
  for (int i = 0; i < 5; ++i) {
    const double bytes = std::pow(10.0, log_size(rng));
    ms.push_back({OpClass::kGemm, 0.25 * bytes, bytes, 1 + bytes / 300});
  }
  std::vector<OpClassEfficiency> fit = FitEfficiency(device, ms);
  ASSERT_EQ(fit.size(), 2u);
  EXPECT_EQ(fit[0].op_class, "conv");
  EXPECT_NEAR(fit[0].compute, 0.7, 0.07);
  EXPECT_EQ(fit[1].op_class, "gemm");
  EXPECT_DOUBLE_EQ(fit[1].compute, fit[0].compute);
  EXPECT_NEAR(fit[1].memory, 0.3, 0.03);
}

}  // namespace
TEST(CostModelTest, ViewsOfComputedValuesCostNothing) {
  // x -> relu (100 us) -> Reshape -> relu (100 us); and a Reshape of the graph
  // input, which the engine copies (a view of the caller's buffer would
  // outlive the call).
  testing::TinyGraph t;
  const ValueId x = t.Input("x", 1000);
  const ValueId a = t.Op("a", {x}, 100, 1000);
  const ValueId view = t.Op("view", {a}, 100, 1000, "Reshape");
  t.Output(t.Op("b", {view}, 100, 1000));
  t.Output(t.Op("copy", {x}, 100, 1000, "Reshape"));
  const Graph& g = t.graph();
  EXPECT_TRUE(IsViewOp("Flatten") && IsViewOp("Squeeze") && IsViewOp("Unsqueeze"));
  EXPECT_FALSE(IsViewOp("Transpose"));
  EXPECT_TRUE(RunsAsView(g, g.node(1)));
  EXPECT_FALSE(RunsAsView(g, g.node(3)));  // reads the graph input
  EXPECT_FALSE(RunsAsView(g, g.node(0)));  // a Relu
  // A view whose input is a graph output too is copied: each output keeps
  // bytes of its own.
  testing::TinyGraph both;
  const ValueId produced = both.Op("p", {both.Input("in", 10)}, 1, 10);
  both.Output(produced);
  both.Output(both.Op("v", {produced}, 1, 10, "Flatten"));
  EXPECT_FALSE(RunsAsView(both.graph(), both.graph().node(1)));
  const CostModel model(testing::TwoDeviceProfile());
  const OpWork w = OpWorkOf(g.node(1), &g);
  EXPECT_TRUE(w.view);
  EXPECT_EQ(model.Cost(w, 0).TotalUs(), 0.0);
  EXPECT_FALSE(OpWorkOf(g.node(1)).view);  // without the graph it cannot tell
  EXPECT_DOUBLE_EQ(model.Cost(OpWorkOf(g.node(3), &g), 0).TotalUs(), 100.0);
  // On one device the plan takes the three 100 us nodes; the view adds nothing.
  StatusOr<SimGraph> sg = BuildSimGraph(g, model, {"cpu", "gpu"});
  ASSERT_TRUE(sg.ok()) << sg.status().ToString();
  StatusOr<SimResult> r = SimulatePlan(*sg, SingleDevicePlan(g, "cpu", "test"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_DOUBLE_EQ(r->latency_us, 300.0);
}

}  // namespace braid
