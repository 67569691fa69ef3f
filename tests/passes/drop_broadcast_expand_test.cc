// DropBroadcastExpand: an Expand read as the broadcast operand of a binary
// op is bypassed when the op's output shape stays the same (checked against
// the fp64 reference interpreter on random non-zero inputs); an Expand that
// widens the result, or feeds anything else, stays.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "graph/passes/passes.h"
#include "graph/passes/shape_inference.h"
#include "tests/passes/reference_eval_test_util.h"

namespace braid {
namespace {

using test_eval::AddOp;
using test_eval::CountOps;
using test_eval::ExpectEquivalent;

constexpr double kTolerance = 1e-12;

ValueId AddShape(Graph& g, const std::string& name, const std::vector<int64_t>& dims) {
  return g.AddConstant(name, DataType::kI64, {Dim(static_cast<int64_t>(dims.size()))},
                       TensorData::Copy(dims.data(), dims.size() * sizeof(int64_t)));
}

// x [2,3,4,5], gate [gate_dims] -> Expand(target) -> `op`(x, e) or (e, x) -> y.
Graph Build(const std::string& op, const std::vector<int64_t>& gate_dims,
            const std::vector<int64_t>& target, bool expand_first) {
  Graph g;
  g.set_opset(13);
  const ValueId x = g.AddInput("x", DataType::kF32, {Dim(2), Dim(3), Dim(4), Dim(5)});
  Shape gate_shape;
  for (int64_t d : gate_dims) gate_shape.push_back(Dim(d));
  const ValueId gate = g.AddInput("gate", DataType::kF32, gate_shape);
  const ValueId e = AddOp(g, "expand", "Expand", {gate, AddShape(g, "target", target)}, {"e"});
  const std::vector<ValueId> in = expand_first ? std::vector<ValueId>{e, x} : std::vector<ValueId>{x, e};
  g.outputs().push_back(AddOp(g, "binary", op, in, {"y"}));
  EXPECT_TRUE(InferShapes(g).ok());
  return g;
}

TEST(DropBroadcastExpandTest, GateExpandIntoEachBinaryOpIsBypassed) {
  for (const char* op : {"Mul", "Add", "Sub", "Div"}) {
    for (bool expand_first : {false, true}) {
      for (std::vector<int64_t> gate : {std::vector<int64_t>{2, 3, 1, 1}, {3, 1, 5}, {1}}) {
        SCOPED_TRACE(std::string(op) + (expand_first ? " expand first" : " x first") +
                     " gate rank " + std::to_string(gate.size()));
        Graph g = Build(op, gate, {2, 3, 4, 5}, expand_first);
        const Graph before = g;
        ASSERT_TRUE(DropBroadcastExpand(g).ok());
        ASSERT_TRUE(EliminateDeadNodes(g).ok());
        EXPECT_EQ(CountOps(g, "Expand"), 0);
        EXPECT_EQ(g.num_nodes(), 1);
        ExpectEquivalent(before, g, 3, kTolerance);
      }
    }
  }
}

TEST(DropBroadcastExpandTest, ExpandThatWidensTheResultStays) {
  // x [2,3,4,5] * Expand(gate [3,1,1], [2,3,4,5]) is fine, but an Expand to
  // [2,2,3,4,5] adds an axis the op would not produce without it.
  Graph g = Build("Mul", {3, 1, 1}, {2, 2, 3, 4, 5}, false);
  const Graph before = g;
  ASSERT_TRUE(DropBroadcastExpand(g).ok());
  EXPECT_EQ(CountOps(g, "Expand"), 1);
  EXPECT_EQ(g.node(1).inputs[1], g.FindValue("e"));
  ExpectEquivalent(before, g, 4, kTolerance);
}

TEST(DropBroadcastExpandTest, ExpandReadByAnotherOpOrAsAnOutputStays) {
  Graph g = Build("Mul", {2, 3, 1, 1}, {2, 3, 4, 5}, false);
  const ValueId e = g.FindValue("e");
  g.outputs().push_back(AddOp(g, "relu", "Relu", {e}, {"side"}));
  ASSERT_TRUE(InferShapes(g).ok());
  ASSERT_TRUE(DropBroadcastExpand(g).ok());
  ASSERT_TRUE(EliminateDeadNodes(g).ok());
  // The Mul reads the gate; the Relu still needs the expanded tensor.
  EXPECT_EQ(CountOps(g, "Expand"), 1);
  for (const Node& n : g.nodes()) {
    if (n.op_type == "Mul") {
      EXPECT_EQ(n.inputs[1], g.FindValue("gate"));
    }
    if (n.op_type == "Relu") {
      EXPECT_EQ(n.inputs[0], g.FindValue("e"));
    }
  }
}

TEST(DropBroadcastExpandTest, SymbolicBatchMatchesBySymbol) {
  Graph g;
  g.set_opset(13);
  const ValueId x = g.AddInput("x", DataType::kF32, {Dim::Symbol("N"), Dim(3), Dim(4), Dim(4)});
  const ValueId gate = g.AddInput("gate", DataType::kF32, {Dim::Symbol("N"), Dim(3), Dim(1), Dim(1)});
  const ValueId shape = AddOp(g, "shape", "Shape", {x}, {"x_shape"});
  const ValueId e = AddOp(g, "expand", "Expand", {gate, shape}, {"e"});
  g.outputs().push_back(AddOp(g, "mul", "Mul", {x, e}, {"y"}));
  ASSERT_TRUE(InferShapes(g).ok());
  ASSERT_TRUE(DropBroadcastExpand(g).ok());
  ASSERT_TRUE(EliminateDeadNodes(g).ok());
  EXPECT_EQ(CountOps(g, "Expand"), 0);
  EXPECT_EQ(CountOps(g, "Shape"), 0);
}

}  // namespace
}  // namespace braid
