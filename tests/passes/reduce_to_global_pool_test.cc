// ReduceToGlobalPool: ReduceMean / ReduceMax over the spatial axes of a 4-D
// tensor becomes a global pool (+ Flatten for keepdims=0), checked against
// the fp64 reference interpreter on random non-zero inputs; reductions over
// other axes, other ranks and axes known only at run time stay.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "graph/passes/passes.h"
#include "tests/passes/reference_eval_test_util.h"

namespace braid {
namespace {

using test_eval::AddOp;
using test_eval::CountOps;
using test_eval::ExpectEquivalent;

constexpr double kTolerance = 1e-12;  // fp64, summation order only

struct Case {
  std::string op = "ReduceMean";
  std::vector<int64_t> axes = {2, 3};
  bool keepdims = true;
  bool axes_as_input = false;  // opset 18
  std::vector<int64_t> x_dims = {2, 3, 4, 5};
};

// x -> Relu -> Reduce -> "y".
Graph Build(const Case& c) {
  Graph g;
  g.set_opset(c.axes_as_input ? 18 : 13);
  Shape shape;
  for (int64_t d : c.x_dims) shape.push_back(Dim(d));
  const ValueId x = g.AddInput("x", DataType::kF32, shape);
  const ValueId r = AddOp(g, "act", "Relu", {x}, {"r"});
  Attributes attrs;
  attrs.Set("keepdims", int64_t{c.keepdims ? 1 : 0});
  std::vector<ValueId> inputs = {r};
  if (c.axes_as_input) {
    inputs.push_back(g.AddConstant("axes", DataType::kI64, {Dim(static_cast<int64_t>(c.axes.size()))},
                                   TensorData::Copy(c.axes.data(), c.axes.size() * 8)));
  } else {
    attrs.Set("axes", c.axes);
  }
  const ValueId y = AddOp(g, "/head/ReduceMean", c.op, inputs, {"y"}, attrs);
  g.outputs().push_back(y);
  EXPECT_TRUE(InferShapes(g).ok());
  return g;
}

TEST(ReduceToGlobalPoolTest, SpatialMeanAndMaxBecomeGlobalPools) {
  for (const char* op : {"ReduceMean", "ReduceMax"}) {
    for (bool keepdims : {true, false}) {
      for (bool as_input : {false, true}) {
        for (std::vector<int64_t> axes : {std::vector<int64_t>{2, 3}, {-1, -2}}) {
          Case c;
          c.op = op;
          c.keepdims = keepdims;
          c.axes_as_input = as_input;
          c.axes = axes;
          const std::string label = std::string(op) + (keepdims ? " keepdims" : " no keepdims") +
                                    (as_input ? " axes input" : " axes attribute");
          const Graph before = Build(c);
          Graph after = before;
          ASSERT_TRUE(ReduceToGlobalPool(after).ok()) << label;
          ASSERT_TRUE(EliminateDeadNodes(after).ok()) << label;
          const std::string pool =
              std::string(op) == "ReduceMean" ? "GlobalAveragePool" : "GlobalMaxPool";
          EXPECT_EQ(CountOps(after, op), 0) << label;
          EXPECT_EQ(CountOps(after, pool), 1) << label;
          EXPECT_EQ(CountOps(after, "Flatten"), keepdims ? 0 : 1) << label;
          // The output value and the node's name survive.
          EXPECT_EQ(after.value(after.outputs()[0]).name, "y") << label;
          bool named = false;
          for (const Node& n : after.nodes()) named |= n.name == "/head/ReduceMean" && n.op_type == pool;
          EXPECT_TRUE(named) << label;
          ExpectEquivalent(before, after, 5, kTolerance);
        }
      }
    }
  }
}

TEST(ReduceToGlobalPoolTest, OtherReductionsStay) {
  std::vector<Case> misses(4);
  misses[0].axes = {1, 2};          // channels and height
  misses[1].axes = {3};             // one spatial axis
  misses[2].axes = {1, 2, 3};       // everything but the batch
  misses[3].x_dims = {2, 3, 4};     // rank 3
  misses[3].axes = {1, 2};
  Case sum;
  sum.op = "ReduceSum";
  sum.axes_as_input = true;
  misses.push_back(sum);
  for (const Case& c : misses) {
    Graph g = Build(c);
    ASSERT_TRUE(ReduceToGlobalPool(g).ok());
    EXPECT_EQ(CountOps(g, c.op), 1) << c.op << " axes " << c.axes.size();
    EXPECT_EQ(CountOps(g, "GlobalAveragePool") + CountOps(g, "GlobalMaxPool"), 0);
  }
}

TEST(ReduceToGlobalPoolTest, AxesComputedAtRunTimeStay) {
  Graph g;
  g.set_opset(18);
  const ValueId x = g.AddInput("x", DataType::kF32, {Dim(1), Dim(3), Dim(4), Dim(4)});
  const ValueId axes = g.AddInput("axes", DataType::kI64, {Dim(2)});
  const ValueId y = AddOp(g, "mean", "ReduceMean", {x, axes}, {"y"});
  g.outputs().push_back(y);
  ASSERT_TRUE(ReduceToGlobalPool(g).ok());
  EXPECT_EQ(CountOps(g, "ReduceMean"), 1);
}

}  // namespace
}  // namespace braid
