// FuseGelu: the exported five-node GELU in its association orders becomes
// one Gelu node (checked against the fp64 reference interpreter on random
// non-zero inputs); near misses stay untouched.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <string>

#include "graph/passes/passes.h"
#include "models/builtin.h"
#include "tests/passes/reference_eval_test_util.h"

namespace braid {
namespace {

using test_eval::AddF32;
using test_eval::AddOp;
using test_eval::CountOps;
using test_eval::ExpectEquivalent;

enum class Order { kTimesXThenHalf, kHalfFirst, kHalfOfGate };

struct GeluGraph {
  Graph g;
  ValueId x = kNoValue;
};

// x[2,8] -> Relu (so x is not a graph input) -> GELU as exported -> "y".
GeluGraph Build(Order order, bool divide = false, double one = 1.0, double half = 0.5) {
  GeluGraph t;
  ValueId in = t.g.AddInput("in", DataType::kF32, {2, 8});
  t.x = AddOp(t.g, "pre", "Sigmoid", {in}, {"x"});
  const ValueId x = t.x;
  const ValueId s =
      divide ? AddOp(t.g, "div", "Div", {x, AddF32(t.g, "sqrt2", {}, {std::numbers::sqrt2})}, {"s"})
             : AddOp(t.g, "scale", "Mul",
                     {AddF32(t.g, "inv_sqrt2", {}, {1.0 / std::numbers::sqrt2}), x}, {"s"});
  const ValueId e = AddOp(t.g, "act/Erf", "Erf", {s}, {"e"});
  const ValueId a = AddOp(t.g, "plus1", "Add", {AddF32(t.g, "one", {}, {one}), e}, {"a"});
  const ValueId h = AddF32(t.g, "half", {1}, {half});
  ValueId y = kNoValue;
  switch (order) {
    case Order::kTimesXThenHalf:
      y = AddOp(t.g, "m2", "Mul", {AddOp(t.g, "m1", "Mul", {x, a}, {"xa"}), h}, {"y"});
      break;
    case Order::kHalfFirst:
      y = AddOp(t.g, "m1", "Mul", {AddOp(t.g, "halfx", "Mul", {h, x}, {"hx"}), a}, {"y"});
      break;
    case Order::kHalfOfGate:
      y = AddOp(t.g, "m2", "Mul", {x, AddOp(t.g, "m1", "Mul", {a, h}, {"ah"})}, {"y"});
      break;
  }
  t.g.outputs().push_back(y);
  EXPECT_TRUE(InferShapes(t.g).ok());
  return t;
}

TEST(FuseGeluTest, EveryExportedOrderBecomesOneGelu) {
  for (Order order : {Order::kTimesXThenHalf, Order::kHalfFirst, Order::kHalfOfGate}) {
    for (bool divide : {false, true}) {
      GeluGraph t = Build(order, divide);
      const Graph before = t.g;
      ASSERT_EQ(t.g.num_nodes(), 6);
      Status s = FuseGelu(t.g);
      ASSERT_TRUE(s.ok()) << s.ToString();
      EXPECT_EQ(t.g.num_nodes(), 2) << static_cast<int>(order) << " " << divide;
      ASSERT_EQ(CountOps(t.g, "Gelu"), 1);
      const Node& gelu = t.g.node(1);
      EXPECT_EQ(gelu.name, "act/Gelu");
      EXPECT_EQ(gelu.attrs.GetString("approximate", ""), "none");
      ASSERT_EQ(gelu.inputs.size(), 1u);
      EXPECT_EQ(gelu.inputs[0], t.x);
      // The graph output keeps its value (and name).
      EXPECT_EQ(t.g.value(t.g.outputs()[0]).name, "y");
      EXPECT_EQ(t.g.value(t.g.outputs()[0]).producer, 1);
      ExpectEquivalent(before, t.g, 7, 1e-6);
    }
  }
}

TEST(FuseGeluTest, NearMissesAreLeftAlone) {
  // Wrong constants: x * (1 + erf(x/sqrt2)) * 0.6, or + 2.
  for (GeluGraph t : {Build(Order::kTimesXThenHalf, false, 1.0, 0.6),
                      Build(Order::kHalfFirst, false, 2.0, 0.5)}) {
    ASSERT_TRUE(FuseGelu(t.g).ok());
    EXPECT_EQ(CountOps(t.g, "Gelu"), 0);
    EXPECT_EQ(CountOps(t.g, "Erf"), 1);
  }
  // An intermediate read outside the pattern (the Erf's output is a graph
  // output too): fusing would lose it.
  GeluGraph t = Build(Order::kTimesXThenHalf);
  for (const Node& n : t.g.nodes())
    if (n.op_type == "Erf") t.g.outputs().push_back(n.outputs[0]);
  ASSERT_TRUE(FuseGelu(t.g).ok());
  EXPECT_EQ(CountOps(t.g, "Gelu"), 0);
  EXPECT_EQ(t.g.num_nodes(), 6);
}

TEST(FuseGeluTest, DefaultPipelineFusesTheVitsGelusIntoTheirLinears) {
  // The built-in ViT's MLPs use GraphBuilder::Gelu (the exported form).
  StatusOr<Graph> vit = BuildBuiltinModel("vit_tiny");
  ASSERT_TRUE(vit.ok()) << vit.status().ToString();
  const int erfs = CountOps(*vit, "Erf");
  ASSERT_GT(erfs, 0);
  ASSERT_TRUE(RunDefaultPasses(*vit).ok());
  // Each Gelu then runs inside the MLP's first Linear (FuseActivations).
  int fused = 0;
  for (const Node& n : vit->nodes())
    fused += n.op_type == "Gemm" && n.attrs.GetString("activation", "") == "Gelu";
  EXPECT_EQ(fused, erfs);
  EXPECT_EQ(CountOps(*vit, "Gelu"), 0);
  EXPECT_EQ(CountOps(*vit, "Erf"), 0);
}

}  // namespace
}  // namespace braid
