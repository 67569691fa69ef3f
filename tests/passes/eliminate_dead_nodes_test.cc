#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "graph/passes/passes.h"
#include "tests/passes/reference_eval_test_util.h"

namespace braid {
namespace {

using test_eval::AddF32;
using test_eval::AddOp;
using test_eval::CountOps;

TEST(EliminateDeadNodesTest, RemovesUnreachableChainsAndTheirValues) {
  Graph g;
  ValueId x = g.AddInput("x", DataType::kF32, {2});
  ValueId c = AddF32(g, "dead_const", {2}, {1.0, 2.0});
  ValueId live = AddOp(g, "relu", "Relu", {x}, {"y"});
  ValueId d1 = AddOp(g, "dead_add", "Add", {x, c}, {"d1"});
  AddOp(g, "dead_sig", "Sigmoid", {d1}, {"d2"});  // read by nobody
  g.outputs().push_back(live);
  ASSERT_TRUE(EliminateDeadNodes(g).ok());
  ASSERT_EQ(g.num_nodes(), 1);
  EXPECT_EQ(g.node(0).name, "relu");
  for (const char* gone : {"dead_const", "d1", "d2"})
    EXPECT_EQ(g.FindValue(gone), kNoValue) << gone;
  EXPECT_EQ(g.value(g.outputs()[0]).name, "y");
  EXPECT_TRUE(g.Validate().ok());
}

TEST(EliminateDeadNodesTest, DeadCycleOfReadsIsRemoved) {
  // A dead node that reads another dead node's output: "has a reader" is not
  // enough to stay alive; reachability to an output is.
  Graph g;
  ValueId x = g.AddInput("x", DataType::kF32, {2});
  ValueId a = AddOp(g, "a", "Relu", {x}, {"va"});
  ValueId b = AddOp(g, "b", "Relu", {a}, {"vb"});
  AddOp(g, "c", "Relu", {b}, {"vc"});
  g.outputs().push_back(AddOp(g, "keep", "Sigmoid", {x}, {"y"}));
  ASSERT_TRUE(EliminateDeadNodes(g).ok());
  ASSERT_EQ(g.num_nodes(), 1);
  EXPECT_EQ(g.node(0).name, "keep");
}

TEST(EliminateDeadNodesTest, KeepsMultiOutputNodeWithOneLiveOutput) {
  Graph g;
  ValueId x = g.AddInput("x", DataType::kF32, {4});
  ValueId first = AddOp(g, "split", "Split", {x}, {"s0", "s1"});
  g.outputs().push_back(AddOp(g, "relu", "Relu", {first}, {"y"}));
  ASSERT_TRUE(EliminateDeadNodes(g).ok());
  EXPECT_EQ(g.num_nodes(), 2);
  EXPECT_NE(g.FindValue("s1"), kNoValue);  // still written by the live Split
}

TEST(EliminateDeadNodesTest, KeepsUnusedGraphInputsAndLiveOrder) {
  Graph g;
  ValueId x = g.AddInput("x", DataType::kF32, {3});
  g.AddInput("unused", DataType::kF32, {3});
  ValueId a = AddOp(g, "n0", "Relu", {x}, {"a"});
  AddOp(g, "dead", "Relu", {a}, {"dead_out"});
  ValueId b = AddOp(g, "n1", "Sigmoid", {a}, {"b"});
  g.outputs().push_back(AddOp(g, "n2", "Add", {a, b}, {"y"}));
  ASSERT_TRUE(EliminateDeadNodes(g).ok());
  ASSERT_EQ(g.num_nodes(), 3);
  EXPECT_EQ(g.node(0).name, "n0");
  EXPECT_EQ(g.node(1).name, "n1");
  EXPECT_EQ(g.node(2).name, "n2");
  EXPECT_EQ(g.inputs().size(), 2u);
  EXPECT_NE(g.FindValue("unused"), kNoValue);
}

TEST(EliminateDeadNodesTest, ConstantOutputNeedsNoNodes) {
  Graph g;
  ValueId x = g.AddInput("x", DataType::kF32, {1});
  AddOp(g, "n", "Relu", {x}, {"r"});
  g.outputs().push_back(AddF32(g, "c", {1}, {3.0}));
  ASSERT_TRUE(EliminateDeadNodes(g).ok());
  EXPECT_EQ(g.num_nodes(), 0);
  EXPECT_EQ(CountOps(g, "Relu"), 0);
  EXPECT_EQ(g.value(g.outputs()[0]).name, "c");
}

TEST(EliminateDeadNodesTest, FullyLiveGraphIsUnchanged) {
  Graph g;
  ValueId x = g.AddInput("x", DataType::kF32, {2});
  ValueId a = AddOp(g, "n0", "Relu", {x}, {"a"});
  g.outputs().push_back(AddOp(g, "n1", "Sigmoid", {a}, {"y"}));
  const Graph before = g;
  ASSERT_TRUE(EliminateDeadNodes(g).ok());
  EXPECT_EQ(g.num_nodes(), before.num_nodes());
  EXPECT_EQ(g.num_values(), before.num_values());
}

}  // namespace
}  // namespace braid
