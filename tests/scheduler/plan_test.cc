#include "scheduler/plan.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "graph/passes/passes.h"
#include "graph/passes/specialize.h"
#include "models/architectures.h"
#include "tests/fuzz/regression_inputs.h"

namespace braid {
namespace {

Graph StaticTinyCnn(int64_t batch = 2) {
  Graph g = BuildTinyCnn(3);
  EXPECT_TRUE(RunDefaultPasses(g).ok());
  EXPECT_TRUE(SpecializeSymbols(g, {{"N", batch}}).ok());
  return g;
}

int FirstNodeOf(const Graph& g, const std::string& op) {
  for (size_t i = 0; i < g.nodes().size(); ++i)
    if (g.nodes()[i].op_type == op) return static_cast<int>(i);
  return -1;
}

TEST(PlanTest, SingleDevicePlanCoversEveryNodeAndValidates) {
  Graph g = StaticTinyCnn();
  Plan plan = SingleDevicePlan(g, "cpu", "cpu-only");
  ASSERT_EQ(plan.nodes.size(), g.nodes().size());
  for (size_t i = 0; i < g.nodes().size(); ++i) EXPECT_EQ(plan.nodes[i].node, g.nodes()[i].name);
  EXPECT_TRUE(ValidatePlan(plan, g).ok());
  EXPECT_EQ(plan.Find(g.nodes()[1].name), &plan.nodes[1]);
  EXPECT_EQ(plan.Find("no such node"), nullptr);
}

TEST(PlanTest, JsonRoundTripKeepsEveryField) {
  Graph g = StaticTinyCnn();
  Plan plan = SingleDevicePlan(g, "cpu", "threshold");
  plan.devices.push_back("vgpu");
  const int conv = FirstNodeOf(g, "Conv");
  ASSERT_GE(conv, 0);
  plan.nodes[conv].slice = SliceSpec{SliceAxis::kOutputChannels, "vgpu", 0.375};
  plan.nodes[conv].reason = "intensity 41.2 \"high\"";
  plan.nodes[conv].predicted_ms = 0.25;
  plan.nodes.back().device = "vgpu";
  plan.nodes.back().stream = 2;
  ASSERT_TRUE(ValidatePlan(plan, g).ok());

  StatusOr<Plan> again = PlanFromJson(PlanToJson(plan));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->policy, "threshold");
  EXPECT_EQ(again->devices, plan.devices);
  ASSERT_EQ(again->nodes.size(), plan.nodes.size());
  const NodePlan& c = again->nodes[conv];
  ASSERT_TRUE(c.slice.has_value());
  EXPECT_EQ(c.slice->axis, SliceAxis::kOutputChannels);
  EXPECT_EQ(c.slice->other_device, "vgpu");
  EXPECT_DOUBLE_EQ(c.slice->ratio, 0.375);
  EXPECT_EQ(c.reason, plan.nodes[conv].reason);
  EXPECT_DOUBLE_EQ(c.predicted_ms, 0.25);
  EXPECT_EQ(again->nodes.back().device, "vgpu");
  EXPECT_EQ(again->nodes.back().stream, 2);
  for (size_t i = 0; i < plan.nodes.size(); ++i)
    EXPECT_EQ(again->nodes[i].slice.has_value(), static_cast<int>(i) == conv) << i;
  EXPECT_TRUE(ValidatePlan(*again, g).ok());
}

// Inputs fuzz_plan_json once failed on (tests/fuzz/regressions/): each is an
// error or writes JSON that reads back and writes the same.
TEST(PlanTest, FuzzRegressionsRoundTrip) {
  int files = 0;
  for (const auto& [path, text] : test::FuzzRegressionInputs("fuzz_plan_json")) {
    StatusOr<Plan> read = PlanFromJson(text);
    ++files;
    if (!read.ok()) continue;
    const std::string json = PlanToJson(*read);
    StatusOr<Plan> again = PlanFromJson(json);
    ASSERT_TRUE(again.ok()) << path << ": " << again.status().ToString();
    EXPECT_EQ(PlanToJson(*again), json) << path;
  }
  EXPECT_GE(files, 1);
}

TEST(PlanTest, FromJsonRejectsMalformedEntriesNamingThem) {
  const std::map<std::string, std::string> cases = {
      {R"({"devices":"cpu","nodes":[]})", "\"devices\" must be an array"},
      {R"({"devices":["cpu"]})", "\"nodes\" must be an array"},
      {R"({"devices":["cpu"],"nodes":[{"device":"cpu"}]})", "nodes[0]: has no \"node\""},
      {R"({"devices":["cpu"],"nodes":[{"node":"a","device":"cpu","stream":-1}]})",
       "bad \"stream\""},
      {R"({"devices":["cpu"],"nodes":[{"node":"a","device":"cpu","slice":{"axis":"depth","other_device":"vgpu"}}]})",
       "slice axis 'depth' (expected channels, batch or rows)"},
      {R"({"devices":["cpu"],"nodes":[{"node":"a","device":7}]})", "'device' must be a string"},
      {"[1,2", "JSON:"},
  };
  for (const auto& [text, expected] : cases) {
    StatusOr<Plan> plan = PlanFromJson(text);
    ASSERT_FALSE(plan.ok()) << text;
    EXPECT_NE(plan.status().message().find(expected), std::string::npos)
        << text << " -> " << plan.status().ToString();
  }
}

TEST(PlanTest, ValidateRejectsStructuralErrors) {
  Graph g = StaticTinyCnn();
  const int conv = FirstNodeOf(g, "Conv");
  const int pool = FirstNodeOf(g, "MaxPool");
  ASSERT_GE(pool, 0);
  int depthwise = -1;
  for (int i = 0; i < g.num_nodes(); ++i)
    if (g.node(i).op_type == "Conv" && g.node(i).attrs.GetInt("group", 1) > 1) depthwise = i;
  ASSERT_GE(depthwise, 0);
  auto expect_error = [&](Plan plan, const std::string& expected) {
    Status s = ValidatePlan(plan, g);
    ASSERT_FALSE(s.ok()) << expected;
    EXPECT_NE(s.message().find(expected), std::string::npos) << s.ToString();
  };
  Plan base = SingleDevicePlan(g, "cpu", "test");
  base.devices.push_back("vgpu");

  Plan p = base;
  p.nodes.pop_back();
  expect_error(p, "node entries");
  p = base;
  std::swap(p.nodes[0], p.nodes[1]);
  expect_error(p, "does not match graph node 0");
  p = base;
  p.nodes[2].device = "cuda:0";
  expect_error(p, "device 'cuda:0' is not among");
  p = base;
  p.nodes[conv].slice = SliceSpec{SliceAxis::kOutputChannels, "cpu", 0.5};
  expect_error(p, "two different devices");
  p = base;
  p.nodes[conv].slice = SliceSpec{SliceAxis::kOutputChannels, "vgpu", 1.0};
  expect_error(p, "ratio must be in (0, 1)");
  p = base;
  p.nodes[pool].slice = SliceSpec{SliceAxis::kBatch, "vgpu", 0.5};
  expect_error(p, "MaxPool cannot be sliced along batch");
  p = base;
  p.nodes[depthwise].slice = SliceSpec{SliceAxis::kOutputChannels, "vgpu", 0.5};
  expect_error(p, "Conv cannot be sliced along channels");
  p.nodes[depthwise].slice = SliceSpec{SliceAxis::kBatch, "vgpu", 0.5};
  EXPECT_TRUE(ValidatePlan(p, g).ok());
}

TEST(PlanTest, BatchSliceNeedsBatchOfTwo) {
  Graph one = StaticTinyCnn(1);
  Graph two = StaticTinyCnn(2);
  const int conv = FirstNodeOf(one, "Conv");
  for (Graph* g : {&one, &two}) {
    Plan p = SingleDevicePlan(*g, "cpu", "test");
    p.devices.push_back("vgpu");
    p.nodes[conv].slice = SliceSpec{SliceAxis::kBatch, "vgpu", 0.5};
    EXPECT_EQ(ValidatePlan(p, *g).ok(), g == &two);
  }
}

TEST(PlanTest, RowSlicesNeedATwoDimensionalConvOfAnyGroupAndRoundTrip) {
  Graph g = StaticTinyCnn();
  const int conv = FirstNodeOf(g, "Conv");
  const int gemm = FirstNodeOf(g, "Gemm");
  ASSERT_GE(conv, 0);
  ASSERT_GE(gemm, 0);
  const Node& c = g.nodes()[conv];
  EXPECT_TRUE(IsSliceable(c, SliceAxis::kRows));
  EXPECT_FALSE(IsSliceable(g.nodes()[gemm], SliceAxis::kRows));
  Node grouped = c;
  grouped.attrs.Set("group", AttributeValue(int64_t{2}));
  EXPECT_TRUE(IsSliceable(grouped, SliceAxis::kRows));  // every part keeps all channels
  EXPECT_FALSE(IsSliceable(grouped, SliceAxis::kOutputChannels));
  EXPECT_EQ(SliceOutputAxis(c, SliceAxis::kRows, 4), 2);
  EXPECT_EQ(SliceExtent(g, c, SliceAxis::kRows),
            g.value(c.outputs[0]).shape[2].extent());
  EXPECT_EQ(SliceSplitIndex(55, 0.3, SliceAxis::kRows), 17);  // whole rows, no blocks
  EXPECT_EQ(SliceSplitIndex(55, 0.999, SliceAxis::kRows), 54);

  Plan plan = SingleDevicePlan(g, "cpu", "test");
  plan.devices.push_back("vgpu");
  plan.nodes[conv].slice = SliceSpec{SliceAxis::kRows, "vgpu", 0.3};
  ASSERT_TRUE(ValidatePlan(plan, g).ok()) << ValidatePlan(plan, g).ToString();
  const std::string json = PlanToJson(plan);
  EXPECT_NE(json.find("\"axis\":\"rows\""), std::string::npos) << json;
  StatusOr<Plan> again = PlanFromJson(json);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  ASSERT_TRUE(again->nodes[conv].slice.has_value());
  EXPECT_EQ(again->nodes[conv].slice->axis, SliceAxis::kRows);
  plan.nodes[conv].slice.reset();
  plan.nodes[gemm].slice = SliceSpec{SliceAxis::kRows, "vgpu", 0.5};
  const Status refused = ValidatePlan(plan, g);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("cannot be sliced along rows"), std::string::npos)
      << refused.ToString();
}

TEST(PlanTest, PinsWinAndCannotBeOverridden) {
  Graph g = StaticTinyCnn();
  const int conv = FirstNodeOf(g, "Conv");
  g.nodes()[conv].device_pin = "cuda";
  Plan p = SingleDevicePlan(g, "cpu", "test");
  p.nodes[conv].slice = SliceSpec{SliceAxis::kOutputChannels, "cpu", 0.5};
  Status missing = ApplyDevicePins(g, p);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("pinned to 'cuda'"), std::string::npos);

  p.devices.push_back("cuda:0");
  ASSERT_TRUE(ApplyDevicePins(g, p).ok());
  EXPECT_EQ(p.nodes[conv].device, "cuda:0");
  EXPECT_TRUE(p.nodes[conv].pinned);
  EXPECT_FALSE(p.nodes[conv].slice.has_value());
  EXPECT_TRUE(ValidatePlan(p, g).ok());
  p.nodes[conv].device = "cpu";
  Status overridden = ValidatePlan(p, g);
  ASSERT_FALSE(overridden.ok());
  EXPECT_NE(overridden.message().find("pins it to 'cuda'"), std::string::npos);
}

TEST(PlanTest, SplitIndexRoundsAndClamps) {
  constexpr SliceAxis kBatch = SliceAxis::kBatch, kChannels = SliceAxis::kOutputChannels;
  EXPECT_EQ(SliceSplitIndex(64, 0.5, kBatch), 32);
  EXPECT_EQ(SliceSplitIndex(10, 0.37, kBatch), 4);
  EXPECT_EQ(SliceSplitIndex(10, 0.001, kBatch), 1);
  EXPECT_EQ(SliceSplitIndex(10, 0.999, kBatch), 9);
  EXPECT_EQ(SliceSplitIndex(2, 0.5, kBatch), 1);
  // Channels: whole blocks of 16 once the extent holds two, each part >= 16.
  EXPECT_EQ(SliceSplitIndex(64, 0.875, kChannels), 48);  // 56 would pad to 64 on the CPU
  EXPECT_EQ(SliceSplitIndex(64, 0.6, kChannels), 32);
  EXPECT_EQ(SliceSplitIndex(64, 0.05, kChannels), 16);
  EXPECT_EQ(SliceSplitIndex(1000, 0.25, kChannels), 256);
  EXPECT_EQ(SliceSplitIndex(1000, 0.999, kChannels), 992);
  EXPECT_EQ(SliceSplitIndex(40, 0.5, kChannels), 16);  // 20 -> 1.25 blocks -> 1
  EXPECT_EQ(SliceSplitIndex(31, 0.5, kChannels), 16);  // too narrow for blocks: plain rounding
  EXPECT_EQ(SliceSplitIndex(20, 0.37, kChannels), 7);
  EXPECT_TRUE(PinMatchesDevice("cuda", "cuda:1"));
  EXPECT_TRUE(PinMatchesDevice("cpu", "cpu"));
  EXPECT_FALSE(PinMatchesDevice("cuda", "cudax"));
  EXPECT_FALSE(PinMatchesDevice("cuda:1", "cuda:0"));
}

}  // namespace
}  // namespace braid
