// SpecializeSymbols: a concrete batch makes the PyTorch-style
// Shape->Gather->Unsqueeze->Concat->Reshape chain fold to a constant target,
// every shape becomes static, and unlisted symbols stay symbolic.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "graph/passes/passes.h"
#include "graph/passes/specialize.h"
#include "tests/passes/pass_test_util.h"

namespace braid {
namespace {

const Dim kN = Dim::Symbol("N");

using pass_test::AddDynamicFlattenTarget;
using pass_test::GraphBuilder;
using pass_test::OpTypes;

// x[N,3,4,4] -> Relu -> Reshape(relu, Concat(Unsqueeze(Gather(Shape(relu), 0)), [-1]))
GraphBuilder BuildFlattenGraph() {
  GraphBuilder t;
  Graph& g = t.graph();
  g.set_opset(13);
  ValueId x = g.AddInput("x", DataType::kF32, {kN, 3, 4, 4});
  ValueId relu = t.Op("Relu", "relu", {x});
  g.outputs().push_back(
      t.Op("Reshape", "y", {relu, AddDynamicFlattenTarget(t, relu)}));
  return t;
}

TEST(SpecializeSymbols, ConcreteBatchFoldsShapeChain) {
  GraphBuilder t = BuildFlattenGraph();
  ASSERT_TRUE(RunDefaultPasses(t.graph()).ok());
  // With N symbolic the chain cannot fold.
  ASSERT_EQ(OpTypes(t.graph()).size(), 6u);
  Status s = SpecializeSymbols(t.graph(), {{"N", 3}});
  ASSERT_TRUE(s.ok()) << s.ToString();
  const Graph& g = t.graph();
  EXPECT_EQ(OpTypes(g), (std::vector<std::string>{"Relu", "Reshape"}));
  const Node& reshape = g.node(1);
  ASSERT_TRUE(g.IsConstant(reshape.inputs[1]));
  std::span<const int64_t> target = g.value(reshape.inputs[1]).constant->as<int64_t>();
  EXPECT_EQ(std::vector<int64_t>(target.begin(), target.end()),
            (std::vector<int64_t>{3, -1}));
  EXPECT_EQ(g.value(g.inputs()[0]).shape, (Shape{3, 3, 4, 4}));
  EXPECT_EQ(g.value(g.inputs()[0]).name, "x");
  EXPECT_EQ(g.value(g.outputs()[0]).name, "y");
  EXPECT_EQ(g.value(g.outputs()[0]).shape, (Shape{3, 48}));
  for (const Value& v : g.values()) {
    EXPECT_TRUE(v.has_shape) << v.name;
    EXPECT_TRUE(IsStatic(v.shape)) << v.name << " " << ShapeToString(v.shape);
  }
}

TEST(SpecializeSymbols, UnlistedSymbolStaysSymbolic) {
  GraphBuilder t;
  Graph& g = t.graph();
  ValueId a = g.AddInput("a", DataType::kF32, {kN, Dim::Symbol("T"), 8});
  g.outputs().push_back(t.Op("Relu", "r", {a}));
  Status s = SpecializeSymbols(g, {{"N", 2}});
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(g.value(g.outputs()[0]).shape, (Shape{2, Dim::Symbol("T"), 8}));
}

TEST(SpecializeSymbols, NegativeExtentIsInvalidArgument) {
  GraphBuilder t = BuildFlattenGraph();
  Status s = SpecializeSymbols(t.graph(), {{"N", -2}});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("'N'"), std::string::npos) << s.message();
  EXPECT_EQ(t.graph().value(t.graph().inputs()[0]).shape, (Shape{kN, 3, 4, 4}));
}

}  // namespace
}  // namespace braid
