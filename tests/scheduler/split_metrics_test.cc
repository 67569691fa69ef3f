// Split-layer metrics (scheduler/split_metrics.h): the timing gap and the
// hidden copy share on hand-built timelines with known answers, and from a
// simulation of a sliced node.
#include <gtest/gtest.h>

#include <cmath>

#include "scheduler/simulator.h"
#include "scheduler/split_metrics.h"
#include "tests/scheduler/sim_test_util.h"

namespace braid {
namespace {

TEST(SplitMetricsTest, HandBuiltTwoPartLayer) {
  // Part a (cpu) runs 0..100, part b (gpu) 10..70. Copies: the input to the
  // gpu 0..10 (under part a), part b's output back 70..120 (30 of 50 us
  // under part a).
  SplitLayerTimeline t;
  t.node = "conv";
  t.device = "cpu";
  t.other_device = "gpu";
  t.share = 0.25;
  t.part_a = {0, 100};
  t.part_b = {10, 70};
  t.copies = {{0, 10}, {70, 120}};
  const SplitLayerMetrics m = MeasureSplitLayer(t);
  EXPECT_DOUBLE_EQ(m.part_a_us, 100);
  EXPECT_DOUBLE_EQ(m.part_b_us, 60);
  EXPECT_DOUBLE_EQ(m.finish_a_us, 100);
  EXPECT_DOUBLE_EQ(m.finish_b_us, 70);
  EXPECT_DOUBLE_EQ(m.gap_us, 30);
  EXPECT_DOUBLE_EQ(m.copy_us, 60);
  EXPECT_DOUBLE_EQ(m.hidden_copy_us, 40);
  EXPECT_DOUBLE_EQ(m.hidden_share, 40.0 / 60.0);
  EXPECT_EQ(m.node, "conv");
  EXPECT_DOUBLE_EQ(m.share, 0.25);
}

TEST(SplitMetricsTest, OverlapWithBothPartsCountsOnceAndLateStartsCount) {
  SplitLayerTimeline t;
  t.part_a = {50, 80};   // started late: its device was busy
  t.part_b = {40, 100};
  t.copies = {{60, 70}, {100, 110}};  // under both parts; after both
  const SplitLayerMetrics m = MeasureSplitLayer(t);
  EXPECT_DOUBLE_EQ(m.finish_a_us, 40);  // from the layer's start at 40
  EXPECT_DOUBLE_EQ(m.finish_b_us, 60);
  EXPECT_DOUBLE_EQ(m.gap_us, 20);
  EXPECT_DOUBLE_EQ(m.hidden_copy_us, 10);
  EXPECT_DOUBLE_EQ(m.hidden_share, 0.5);
}

TEST(SplitMetricsTest, NoCopiesMeansNoShare) {
  SplitLayerTimeline t;
  t.part_a = {0, 10};
  t.part_b = {0, 10};
  const SplitLayerMetrics m = MeasureSplitLayer(t);
  EXPECT_DOUBLE_EQ(m.gap_us, 0);
  EXPECT_DOUBLE_EQ(m.hidden_share, -1);
  const SplitSummary s = SummarizeSplits(std::vector<SplitLayerMetrics>{m});
  EXPECT_EQ(s.layers, 1);
  EXPECT_DOUBLE_EQ(s.hidden_share, -1);
}

TEST(SplitMetricsTest, SummaryWeighsCopiesByTime) {
  SplitLayerMetrics a, b;
  a.gap_us = 10;
  a.copy_us = 10;
  a.hidden_copy_us = 10;
  b.gap_us = 30;
  b.copy_us = 30;
  b.hidden_copy_us = 0;
  const SplitSummary s = SummarizeSplits(std::vector<SplitLayerMetrics>{a, b});
  EXPECT_DOUBLE_EQ(s.mean_gap_us, 20);
  EXPECT_DOUBLE_EQ(s.max_gap_us, 30);
  EXPECT_DOUBLE_EQ(s.hidden_share, 0.25);
}

// A Gemm-like split simulated: in -> a (cpu) -> b (sliced cpu/gpu) -> out.
TEST(SplitMetricsTest, FromASimulatedSlice) {
  testing::TinyGraph tg;
  const ValueId in = tg.Input("in", 250);
  const ValueId a = tg.Op("a", {in}, 100);
  const ValueId b = tg.Op("b", {a}, 400, 250, "MatMul");
  tg.Output(b);
  Graph& g = tg.graph();
  // b is a MatMul: sliceable along its output columns.
  g.value(b).shape = {1, 250};
  CostModel model(testing::TwoDeviceProfile(/*latency_us=*/10));
  StatusOr<SimGraph> sg = BuildSimGraph(g, model, {"cpu", "gpu"});
  ASSERT_TRUE(sg.ok()) << sg.status().ToString();
  Plan plan = SingleDevicePlan(g, "cpu", "test");
  plan.devices = {"cpu", "gpu"};
  plan.nodes[1].slice = SliceSpec{SliceAxis::kOutputChannels, "gpu", 0.5};
  StatusOr<std::vector<SimPlacement>> placement = CompilePlacement(*sg, plan);
  ASSERT_TRUE(placement.ok());
  Simulator sim(*sg);
  const SimResult& r = sim.Run(*placement, /*timeline=*/true);
  const std::vector<SplitLayerMetrics> ms = SplitMetricsFromSim(*sg, *placement, r);
  ASSERT_EQ(ms.size(), 1u);
  const SplitLayerMetrics& m = ms[0];
  EXPECT_EQ(m.node, "b");
  EXPECT_EQ(m.device, "cpu");
  EXPECT_EQ(m.other_device, "gpu");
  const SimNodeTime& t = r.nodes[1];
  EXPECT_DOUBLE_EQ(m.gap_us, std::abs(t.end_us - t.other_end_us));
  EXPECT_GT(m.part_a_us, m.part_b_us);  // half the work on the 4x slower cpu
  // Its copies: a's output to the gpu, part b's output back; none of the
  // graph output's (already on the cpu).
  int copies = 0;
  for (const SimCopy& c : r.copy_log) copies += c.node == 1;
  EXPECT_EQ(copies, 2);
  EXPECT_GT(m.copy_us, 20);  // two copies of at least the 10 us latency
  EXPECT_GE(m.hidden_share, 0);
  EXPECT_LE(m.hidden_share, 1);
  // Without a timeline there is nothing to measure.
  const SimResult& plain = sim.Run(*placement);
  EXPECT_TRUE(SplitMetricsFromSim(*sg, *placement, plain).empty());
}

}  // namespace
}  // namespace braid
