// The cost model's copy of the host arena (scheduler/cache_residency.h,
// HostArenaMirror) against the engine's own layout: the same buffers, in the
// same order, at the same offsets, for all-CPU and mixed CPU + vgpu plans,
// with and without slices.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "runtime/slicing.h"
#include "scheduler/cache_residency.h"
#include "tests/engine/engine_test_util.h"

namespace braid {
namespace {

using test::Devices;
using test::EngineRegistry;

// Every node on cpu or vgpu at random, on stream 0 (SlicedPlan adds slices).
Plan MixedPlan(const Graph& g, uint32_t seed) {
  std::mt19937 rng(seed);
  Plan plan = SingleDevicePlan(g, "cpu", "mixed");
  plan.devices = {"cpu", "vgpu"};
  for (NodePlan& p : plan.nodes) p.device = rng() % 2 ? "vgpu" : "cpu";
  return plan;
}

// MixedPlan, then every sliceable node (output channels, else batch) split
// with the other device with probability 1/2 at a random ratio.
Plan SlicedPlan(const Graph& g, uint32_t seed) {
  Plan plan = MixedPlan(g, seed);
  std::mt19937 rng(seed * 7919u);
  int sliced = 0;
  for (size_t i = 0; i < plan.nodes.size(); ++i) {
    const Node& node = g.nodes()[i];
    for (SliceAxis axis : {SliceAxis::kOutputChannels, SliceAxis::kBatch}) {
      if (!IsSliceable(node, axis) || SliceExtent(g, node, axis) < 2 || rng() % 2 == 0) continue;
      NodePlan& p = plan.nodes[i];
      p.slice = SliceSpec{axis, p.device == "cpu" ? "vgpu" : "cpu",
                          0.1 + 0.8 * static_cast<double>(rng() % 1000) / 1000.0};
      ++sliced;
      break;
    }
  }
  EXPECT_GT(sliced, 0) << "seed " << seed << ": no node was sliced";
  plan.policy = "sliced " + std::to_string(seed);
  return plan;
}

std::string Describe(const Graph& g, const ArenaBuffer& b) {
  return (b.value == kNoValue ? std::string("(own slot)") : g.value(b.value).name) + " at " +
         std::to_string(b.offset) + ", " + std::to_string(b.bytes) + " B";
}

void ExpectMirrorIsTheEngines(const Graph& graph, const Plan& plan, bool channels_last) {
  Devices devices;
  EngineOptions options;
  options.channels_last = channels_last;
  auto engine = Engine::Create(graph, plan, EngineRegistry(), devices.list, options);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  const Graph& g = (*engine)->graph();
  // Where each node ran (a fallback to the CPU would show here; the plans
  // below have none, which the check against ExpandSlices asserts).
  std::vector<uint8_t> on_host;
  for (const NodePlacement& p : (*engine)->placements()) on_host.push_back(p.device == "cpu");
  ASSERT_EQ(on_host.size(), static_cast<size_t>(g.num_nodes()));
  const std::vector<ArenaBuffer>& engine_arena = (*engine)->host_arena();
  const std::vector<ArenaBuffer> mirror = HostArenaMirror(g, on_host);
  ASSERT_EQ(mirror.size(), engine_arena.size()) << plan.policy;
  for (size_t i = 0; i < mirror.size(); ++i) {
    EXPECT_EQ(Describe(g, mirror[i]), Describe(g, engine_arena[i]))
        << plan.policy << " buffer " << i;
  }
  // What `braid profile` predicts from (tools/profile_report.cc): the plan's
  // graph with its slices expanded as the engine expands them, each node
  // where the plan puts it.
  StatusOr<SlicedGraph> sliced = ExpandSlices(graph, plan);
  ASSERT_TRUE(sliced.ok()) << sliced.status().ToString();
  std::vector<uint8_t> planned_on_host;
  for (const SlicedNode& n : sliced->nodes) planned_on_host.push_back(n.device == "cpu");
  EXPECT_EQ(planned_on_host, on_host) << plan.policy << ": a node fell back";
  const std::vector<ArenaBuffer> predicted = HostArenaMirror(sliced->graph, planned_on_host);
  ASSERT_EQ(predicted.size(), engine_arena.size()) << plan.policy;
  for (size_t i = 0; i < predicted.size(); ++i)
    EXPECT_EQ(Describe(sliced->graph, predicted[i]), Describe(g, engine_arena[i]))
        << plan.policy << " buffer " << i;
}

TEST(ArenaMirror, AllCpuPlansMatchTheEngine) {
  for (const char* name : {"tiny_cnn", "squeezenet1_1", "mobilenet_v2", "resnet18"}) {
    StatusOr<Graph> g = test::StaticModel(name, 1, 64);
    ASSERT_TRUE(g.ok()) << name << ": " << g.status().ToString();
    SCOPED_TRACE(name);
    ExpectMirrorIsTheEngines(*g, SingleDevicePlan(*g, "cpu", name), true);
  }
  StatusOr<Graph> vit = test::SmallVit(2);
  ASSERT_TRUE(vit.ok()) << vit.status().ToString();
  ExpectMirrorIsTheEngines(*vit, SingleDevicePlan(*vit, "cpu", "vit"), true);
  // Views of arena buffers share them; a Flatten of the graph input is a
  // copy with bytes of its own. In either layout.
  const Graph views = test::ViewsGraph();
  ExpectMirrorIsTheEngines(views, SingleDevicePlan(views, "cpu", "views"), true);
  ExpectMirrorIsTheEngines(views, SingleDevicePlan(views, "cpu", "views"), false);
}

// x -> relu -> a; outputs a, x itself (bytes of its own) and relu(a).
Graph InputAsOutputGraph() {
  GraphBuilder b("input_as_output", 3);
  const ValueId x = b.Input("x", {1, 4, 8, 8});
  const ValueId a = b.Relu(x);
  b.Output(a, "a", {1, 4, 8, 8});
  b.Output(x, "x_again", {1, 4, 8, 8});
  b.Output(b.Relu(a), "b", {1, 4, 8, 8});
  Graph g = std::move(b).Finish();
  EXPECT_TRUE(InferShapes(g).ok());
  EXPECT_TRUE(Annotate(g).ok());
  return g;
}

TEST(ArenaMirror, MixedPlansMatchTheEngine) {
  // Copies in and out (a view's value copied apart from the value it
  // views), graph outputs made on the vgpu copied back, views on either
  // device, a graph input that is also an output.
  StatusOr<Graph> cnn = test::StaticModel("tiny_cnn", 1, 32);
  ASSERT_TRUE(cnn.ok()) << cnn.status().ToString();
  StatusOr<Graph> squeeze = test::StaticModel("squeezenet1_1", 1, 32);
  ASSERT_TRUE(squeeze.ok()) << squeeze.status().ToString();
  StatusOr<Graph> vit = test::SmallVit(1);
  ASSERT_TRUE(vit.ok()) << vit.status().ToString();
  const Graph views = test::ViewsGraph();
  const Graph input_as_output = InputAsOutputGraph();
  for (uint32_t seed = 1; seed <= 24; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    ExpectMirrorIsTheEngines(*cnn, MixedPlan(*cnn, seed), true);
    ExpectMirrorIsTheEngines(*squeeze, MixedPlan(*squeeze, seed), true);
    ExpectMirrorIsTheEngines(*vit, MixedPlan(*vit, seed), true);
    ExpectMirrorIsTheEngines(views, MixedPlan(views, seed), seed % 2 == 0);
    ExpectMirrorIsTheEngines(input_as_output, MixedPlan(input_as_output, seed), true);
  }
  ExpectMirrorIsTheEngines(input_as_output, SingleDevicePlan(input_as_output, "cpu", "cpu"), true);
}

TEST(ArenaMirror, SlicedPlansMatchTheEngine) {
  // Parts, the Slice nodes that split a computed input and the joins have
  // buffers of their own; a part on the vgpu is copied back for its join.
  StatusOr<Graph> cnn = test::StaticModel("tiny_cnn", 2, 32);
  ASSERT_TRUE(cnn.ok()) << cnn.status().ToString();
  StatusOr<Graph> squeeze = test::StaticModel("squeezenet1_1", 1, 32);
  ASSERT_TRUE(squeeze.ok()) << squeeze.status().ToString();
  StatusOr<Graph> vit = test::SmallVit(2);
  ASSERT_TRUE(vit.ok()) << vit.status().ToString();
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    ExpectMirrorIsTheEngines(*cnn, SlicedPlan(*cnn, seed), seed % 2 == 0);
    ExpectMirrorIsTheEngines(*squeeze, SlicedPlan(*squeeze, seed), true);
    ExpectMirrorIsTheEngines(*vit, SlicedPlan(*vit, seed), true);
  }
}

}  // namespace
}  // namespace braid
