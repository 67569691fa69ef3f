// Property tests: random plans (random device per node among cpu / vgpu,
// random CPU streams, random channel / batch / row slices, many seeds) over
// built-in models give the all-CPU outputs within op tolerances; row splits
// of every conv window shape give the whole conv's output.
#include <gtest/gtest.h>

#include <iostream>
#include <set>

#include "runtime/engine.h"
#include "tests/engine/engine_test_util.h"

namespace braid {
namespace {

using test::Compare;
using test::Devices;
using test::EngineRegistry;

struct ModelCase {
  const char* name;
  int64_t batch;
  int64_t hw;
  int seeds;
};

// The all-CPU reference: the engine's sequential path, copying views (the engine
// runs them in place: the reference shares no buffer).
std::vector<std::vector<float>> CpuOutputs(const Graph& g, const test::Inputs& in) {
  std::unique_ptr<Device> cpu = CreateCpuDevice();
  EngineOptions options;
  options.views_in_place = false;
  auto exec = Engine::CreateSequential(g, EngineRegistry(), *cpu, options);
  EXPECT_TRUE(exec.ok()) << exec.status().ToString();
  if (!exec.ok()) return {};
  EXPECT_TRUE((*exec)->Run(in.pointers).ok());
  std::vector<std::vector<float>> out;
  for (size_t k = 0; k < g.outputs().size(); ++k) {
    const float* p = static_cast<const float*>((*exec)->output(k));
    out.emplace_back(p, p + (*exec)->output_desc(k).elements());
  }
  return out;
}

void CheckRandomPlans(const Graph& g, int seeds, uint32_t base_seed) {
  const test::Inputs in = test::RandomInputs(g, base_seed);
  const auto want = CpuOutputs(g, in);
  // The comparison means something: the reference outputs are not all zero.
  double magnitude = 0;
  for (const auto& o : want)
    for (float v : o) magnitude += std::fabs(v);
  ASSERT_GT(magnitude, 0) << g.name();
  Devices devices;
  int sliced_total = 0, copies_total = 0;
  for (int seed = 0; seed < seeds; ++seed) {
    const Plan plan = test::RandomPlan(g, base_seed * 1000 + static_cast<uint32_t>(seed));
    ASSERT_TRUE(ValidatePlan(plan, g).ok()) << ValidatePlan(plan, g).ToString();
    for (const NodePlan& p : plan.nodes) sliced_total += p.slice.has_value();
    auto engine = Engine::Create(g, plan, EngineRegistry(), devices.list, {1});
    ASSERT_TRUE(engine.ok()) << "seed " << seed << ": " << engine.status().ToString();
    copies_total += static_cast<int>((*engine)->num_copy_steps());
    // Streams run in step order, so one wait per other stream suffices.
    const std::vector<StepTiming> steps = (*engine)->timeline();
    for (size_t i = 0; i < steps.size(); ++i) {
      std::set<std::string> tracks;
      for (int d : (*engine)->step_waits(i)) {
        ASSERT_GE(d, 0);
        ASSERT_LT(static_cast<size_t>(d), steps.size());
        EXPECT_NE(steps[static_cast<size_t>(d)].track, steps[i].track) << steps[i].name;
        EXPECT_TRUE(tracks.insert(steps[static_cast<size_t>(d)].track).second)
            << steps[i].name << " waits twice on " << steps[static_cast<size_t>(d)].track;
      }
    }
    // Twice: the second Run reuses every buffer and event.
    for (int run = 0; run < 2; ++run) {
      Status s = (*engine)->Run(in.pointers);
      ASSERT_TRUE(s.ok()) << "seed " << seed << ": " << s.ToString();
      const std::string diff = Compare(test::Outputs(**engine), want, 1e-4, 1e-3);
      ASSERT_EQ(diff, "") << g.name() << " seed " << seed << " run " << run << "\n" << PlanToJson(plan);
    }
  }
  std::cout << "[engine] " << g.name() << ": " << seeds << " random plans, " << sliced_total
            << " sliced nodes, " << copies_total << " copy steps\n";
  // The random plans did exercise slicing and transfers.
  EXPECT_GT(sliced_total, 0);
  EXPECT_GT(copies_total, 0);
}

class RandomPlans : public ::testing::TestWithParam<ModelCase> {};

TEST_P(RandomPlans, MatchAllCpuOutputs) {
  const ModelCase& c = GetParam();
  StatusOr<Graph> g = test::StaticModel(c.name, c.batch, c.hw);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  CheckRandomPlans(*g, c.seeds, 17);
}

INSTANTIATE_TEST_SUITE_P(
    Models, RandomPlans,
    ::testing::Values(ModelCase{"tiny_cnn", 2, 32, 40}, ModelCase{"squeezenet1_1", 1, 48, 8},
                      ModelCase{"mobilenet_v2", 2, 32, 4}),
    [](const ::testing::TestParamInfo<ModelCase>& info) { return std::string(info.param.name); });

// One conv, its output rows split between cpu and vgpu: every window shape
// (strides, dilations, asymmetric and auto pads, groups, a fused activation)
// at split points from the first row to the last gives the whole conv's
// output (the parts' halos and pads, runtime/slicing.cc; a split whose part
// would read only padding moves inward).
TEST(RowSlices, EveryWindowShapeMatchesTheWholeConv) {
  struct Case {
    const char* name;
    ConvSpec spec;
    std::vector<int64_t> dilations, pads;  // empty: the spec's
    const char* auto_pad;                   // nullptr: none
    int64_t hw;
  };
  const Case cases[] = {
      {"3x3 pad 1", {8, 3, 1, 1, 1, true}, {}, {}, nullptr, 13},
      {"3x3 stride 2 pad 1", {8, 3, 2, 1, 1, true}, {}, {}, nullptr, 13},
      {"7x7 stride 2 pad 3 (a stem)", {8, 7, 2, 3, 1, false}, {}, {}, nullptr, 17},
      {"3x3 dilation 2 pad 2", {8, 3, 1, 2, 1, true}, {2, 2}, {}, nullptr, 12},
      {"3x3 asymmetric pads", {8, 3, 1, 0, 1, true}, {}, {0, 1, 2, 0}, nullptr, 11},
      {"3x3 stride 2 SAME_UPPER", {8, 3, 2, 0, 1, true}, {}, {}, "SAME_UPPER", 12},
      {"4x4 stride 2 SAME_LOWER", {8, 4, 2, 0, 1, true}, {}, {}, "SAME_LOWER", 11},
      {"3x3 VALID", {8, 3, 1, 0, 1, true}, {}, {}, "VALID", 10},
      {"3x3 depthwise stride 2", {6, 3, 2, 1, 6, true}, {}, {}, nullptr, 14},
      {"1x1 stride 2", {8, 1, 2, 0, 1, true}, {}, {}, nullptr, 9},
      {"5x5 pad 4 (halos mostly padding)", {4, 5, 1, 4, 1, true}, {}, {}, nullptr, 6},
      // Output rows 0 and 8 read only padding: a split there moves inward.
      {"1x1 pad 1 (edge parts would read only padding)", {8, 1, 1, 1, 1, true}, {}, {}, nullptr, 7},
  };
  Devices devices;
  int checked = 0;
  for (const Case& c : cases) {
    GraphBuilder b("row_split", 3);
    const ValueId x = b.Input("x", {1, 6, Dim(c.hw), Dim(c.hw)});
    const ValueId y = b.Conv(x, "conv", c.spec);
    b.Output(b.Relu(y), "y", {});
    Graph g = std::move(b).Finish();
    Node& conv = g.nodes()[0];
    ASSERT_EQ(conv.op_type, "Conv");
    if (!c.dilations.empty()) conv.attrs.Set("dilations", AttributeValue(c.dilations));
    if (!c.pads.empty()) conv.attrs.Set("pads", AttributeValue(c.pads));
    if (c.auto_pad != nullptr) {
      conv.attrs.Erase("pads");
      conv.attrs.Set("auto_pad", AttributeValue(std::string(c.auto_pad)));
    }
    for (Value& v : g.values())
      if (!v.constant && v.producer != kNoNode) v.has_shape = false;
    ASSERT_TRUE(InferShapes(g).ok()) << c.name;
    ASSERT_TRUE(RunDefaultPasses(g).ok()) << c.name;  // fuses the Relu into the conv
    ASSERT_TRUE(Annotate(g).ok()) << c.name;
    ASSERT_EQ(g.nodes().size(), 1u) << c.name << ": the Relu is fused";
    const int64_t rows = SliceExtent(g, g.nodes()[0], SliceAxis::kRows);
    ASSERT_GE(rows, 3) << c.name;
    const test::Inputs in = test::RandomInputs(g, 11);
    const auto want = CpuOutputs(g, in);
    for (int64_t split = 1; split < rows; ++split) {
      for (const char* main : {"cpu", "vgpu"}) {
        Plan plan = SingleDevicePlan(g, main, "test");
        plan.devices = {"cpu", "vgpu"};
        const double ratio = (static_cast<double>(split) + 0.25) / static_cast<double>(rows);
        plan.nodes[0].slice =
            SliceSpec{SliceAxis::kRows, std::string(main) == "cpu" ? "vgpu" : "cpu", ratio};
        ASSERT_EQ(SliceSplitIndex(rows, ratio, SliceAxis::kRows), split);
        auto engine = Engine::Create(g, plan, EngineRegistry(), devices.list, {1});
        ASSERT_TRUE(engine.ok()) << c.name << " split " << split << ": "
                                 << engine.status().ToString();
        ASSERT_TRUE((*engine)->Run(in.pointers).ok()) << c.name;
        ASSERT_EQ(Compare(test::Outputs(**engine), want, 1e-5, 1e-4), "")
            << c.name << ", rows [0," << split << ") of " << rows << " on " << main;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 100);
}

TEST(RandomPlans, SmallVitMatchesAllCpu) {
  StatusOr<Graph> g = test::SmallVit(2);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  CheckRandomPlans(*g, 16, 5);
}

}  // namespace
}  // namespace braid
