// The engine's sequential path runs views (RunsAsView) in place: their output is
// their input's arena slot and no kernel runs.
#include <gtest/gtest.h>

#include <algorithm>

#include "graph/op_schema.h"
#include "runtime/engine.h"
#include "tests/engine/engine_test_util.h"

namespace braid {
namespace {

StatusOr<std::unique_ptr<Engine>> SequentialCpu(Graph g) {
  static const std::unique_ptr<Device> cpu = CreateCpuDevice();
  return Engine::CreateSequential(std::move(g), test::EngineRegistry(), *cpu, {});
}

TEST(SequentialViews, AChainOfViewsKeepsOneBuffer) {
  // relu(x) through Reshape, Flatten and Unsqueeze to the output: one 1 KB
  // slot in all (a copy per view would need at least two).
  GraphBuilder b("view_chain", 3);
  const ValueId x = b.Input("x", {1, 4, 8, 8});
  const ValueId flat = b.Flatten(b.Reshape(b.Relu(x), {1, 4, 64}), 1);
  const ValueId out = b.Op("Unsqueeze", {flat, b.ConstantI64("axes", {1}, {0})});
  b.Output(out, "y", {1, 1, 256});
  Graph g = std::move(b).Finish();
  ASSERT_TRUE(InferShapes(g).ok());
  for (const Node& n : g.nodes()) EXPECT_EQ(RunsAsView(g, n), n.op_type != "Relu") << n.name;
  const test::Inputs in = test::RandomInputs(g, 3);
  StatusOr<std::unique_ptr<Engine>> e = SequentialCpu(std::move(g));
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ((*e)->arena_bytes(), 256 * sizeof(float));
  for (const NodePlacement& p : (*e)->placements())
    EXPECT_EQ(p.implementation == "view", p.op_type != "Relu") << p.node;
  std::vector<float> relu;
  for (float v : in.data[0]) relu.push_back(std::max(v, 0.0f));
  for (int run = 0; run < 2; ++run) {
    ASSERT_TRUE((*e)->Run(in.pointers).ok());
    EXPECT_EQ(test::Compare(test::Outputs(**e), {relu}, 0, 0), "");
  }
}

TEST(SequentialViews, AViewsInputReadAfterItAndAGraphInputViewStayCorrect) {
  Graph g = test::ViewsGraph();
  const test::Inputs in = test::RandomInputs(g, 5);
  StatusOr<std::unique_ptr<Engine>> e = SequentialCpu(std::move(g));
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  std::vector<float> relu, square;
  for (float v : in.data[0]) {
    relu.push_back(std::max(v, 0.0f));
    square.push_back(relu.back() * relu.back());
  }
  ASSERT_TRUE((*e)->Run(in.pointers).ok());
  EXPECT_EQ(test::Compare(test::Outputs(**e), {relu, square, in.data[0]}, 0, 0), "");
}

}  // namespace
}  // namespace braid
