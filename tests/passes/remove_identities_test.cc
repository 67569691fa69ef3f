// RemoveIdentities: structural checks plus before/after evaluation with the
// reference interpreter in reference_eval_test_util.h.
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

constexpr double kTolerance = 1e-12;  // no arithmetic changes at all

ValueId AddBool(Graph& g, const std::string& name, bool v) {
  const uint8_t b = v ? 1 : 0;
  return g.AddConstant(name, DataType::kBool, {}, TensorData::Copy(&b, 1));
}

TEST(RemoveIdentitiesTest, InteriorIdentityIsBypassed) {
  Graph g;
  ValueId x = g.AddInput("x", DataType::kF32, {2, 3});
  ValueId a = AddOp(g, "relu", "Relu", {x}, {"a"});
  ValueId b = AddOp(g, "id", "Identity", {a}, {"b"});
  g.outputs().push_back(AddOp(g, "sig", "Sigmoid", {b}, {"y"}));
  const Graph before = g;
  ASSERT_TRUE(RemoveIdentities(g).ok());
  EXPECT_EQ(g.num_nodes(), 2);
  EXPECT_EQ(CountOps(g, "Identity"), 0);
  EXPECT_EQ(g.FindValue("b"), kNoValue);
  EXPECT_EQ(g.node(1).inputs[0], g.FindValue("a"));
  ExpectEquivalent(before, g, 1, kTolerance);
}

TEST(RemoveIdentitiesTest, IdentityChainIntoGraphOutputKeepsOutputName) {
  Graph g;
  ValueId x = g.AddInput("x", DataType::kF32, {4});
  ValueId a = AddOp(g, "relu", "Relu", {x}, {"a"});
  ValueId b = AddOp(g, "id1", "Identity", {a}, {"b"});
  g.outputs().push_back(AddOp(g, "id2", "Identity", {b}, {"y"}));
  const Graph before = g;
  ASSERT_TRUE(RemoveIdentities(g).ok());
  ASSERT_EQ(g.num_nodes(), 1);
  EXPECT_EQ(g.node(0).op_type, "Relu");
  EXPECT_EQ(g.value(g.node(0).outputs[0]).name, "y");
  EXPECT_EQ(g.outputs()[0], g.node(0).outputs[0]);
  EXPECT_EQ(g.value(g.outputs()[0]).producer, 0);
  ExpectEquivalent(before, g, 2, kTolerance);
}

TEST(RemoveIdentitiesTest, OutputIdentityWhoseInputHasOtherReaders) {
  // a feeds both a Sigmoid and an Identity producing graph output y: the
  // producer of a writes y and the Sigmoid reads y.
  Graph g;
  ValueId x = g.AddInput("x", DataType::kF32, {3});
  ValueId a = AddOp(g, "relu", "Relu", {x}, {"a"});
  g.outputs().push_back(AddOp(g, "sig", "Sigmoid", {a}, {"z"}));
  g.outputs().push_back(AddOp(g, "id", "Identity", {a}, {"y"}));
  const Graph before = g;
  ASSERT_TRUE(RemoveIdentities(g).ok());
  EXPECT_EQ(g.num_nodes(), 2);
  EXPECT_EQ(g.value(g.outputs()[0]).name, "z");
  EXPECT_EQ(g.value(g.outputs()[1]).name, "y");
  EXPECT_EQ(g.FindValue("a"), kNoValue);
  ExpectEquivalent(before, g, 3, kTolerance);
}

TEST(RemoveIdentitiesTest, InputToOutputIdentityIsKept) {
  Graph g;
  ValueId x = g.AddInput("x", DataType::kF32, {3});
  g.outputs().push_back(AddOp(g, "id", "Identity", {x}, {"y"}));
  ASSERT_TRUE(RemoveIdentities(g).ok());
  EXPECT_EQ(g.num_nodes(), 1);
  EXPECT_EQ(g.value(g.outputs()[0]).name, "y");
}

TEST(RemoveIdentitiesTest, OutputToOutputIdentityIsKept) {
  Graph g;
  ValueId x = g.AddInput("x", DataType::kF32, {3});
  ValueId a = AddOp(g, "relu", "Relu", {x}, {"a"});
  g.outputs().push_back(a);
  g.outputs().push_back(AddOp(g, "id", "Identity", {a}, {"y"}));
  ASSERT_TRUE(RemoveIdentities(g).ok());
  EXPECT_EQ(g.num_nodes(), 2);
}

TEST(RemoveIdentitiesTest, IdentityOfConstantOutputBecomesConstant) {
  Graph g;
  g.AddInput("x", DataType::kF32, {1});
  const float values[2] = {1.5f, -2.f};
  ValueId c = g.AddConstant("c", DataType::kF32, {2},
                            TensorData::Copy(values, sizeof(values)));
  g.outputs().push_back(AddOp(g, "id", "Identity", {c}, {"y"}));
  ASSERT_TRUE(RemoveIdentities(g).ok());
  EXPECT_EQ(g.num_nodes(), 0);
  const Value& y = g.value(g.outputs()[0]);
  EXPECT_EQ(y.name, "y");
  ASSERT_TRUE(y.constant.has_value());
  EXPECT_EQ(y.constant->as<float>()[1], -2.f);
}

TEST(RemoveIdentitiesTest, InferenceDropoutIsRemoved) {
  Graph g;
  ValueId x = g.AddInput("x", DataType::kF32, {2, 2});
  ValueId ratio = test_eval::AddF32(g, "ratio", {}, {0.5});
  ValueId training = AddBool(g, "training", false);
  ValueId d = AddOp(g, "drop", "Dropout", {x, ratio, training},
                    {"d", "unused_mask"});
  g.outputs().push_back(AddOp(g, "relu", "Relu", {d}, {"y"}));
  const Graph before = g;
  ASSERT_TRUE(RemoveIdentities(g).ok());
  EXPECT_EQ(g.num_nodes(), 1);
  EXPECT_EQ(g.FindValue("unused_mask"), kNoValue);
  ExpectEquivalent(before, g, 4, kTolerance);
}

TEST(RemoveIdentitiesTest, DropoutWithUsedMaskIsKept) {
  Graph g;
  ValueId x = g.AddInput("x", DataType::kF32, {2, 2});
  ValueId d = AddOp(g, "drop", "Dropout", {x}, {"d", "mask"});
  g.outputs().push_back(AddOp(g, "relu", "Relu", {d}, {"y"}));
  g.outputs().push_back(AddOp(g, "not", "Not", {g.FindValue("mask")}, {"m"}));
  ASSERT_TRUE(RemoveIdentities(g).ok());
  EXPECT_EQ(CountOps(g, "Dropout"), 1);
}

TEST(RemoveIdentitiesTest, DropoutWithMaskAsGraphOutputIsKept) {
  Graph g;
  ValueId x = g.AddInput("x", DataType::kF32, {2, 2});
  ValueId d = AddOp(g, "drop", "Dropout", {x}, {"d", "mask"});
  g.outputs().push_back(AddOp(g, "relu", "Relu", {d}, {"y"}));
  g.outputs().push_back(g.FindValue("mask"));
  ASSERT_TRUE(RemoveIdentities(g).ok());
  EXPECT_EQ(CountOps(g, "Dropout"), 1);
}

TEST(RemoveIdentitiesTest, TrainingModeDropoutIsKept) {
  for (bool runtime_flag : {false, true}) {
    Graph g;
    ValueId x = g.AddInput("x", DataType::kF32, {2, 2});
    ValueId training = runtime_flag
                           ? g.AddInput("training", DataType::kBool, {})
                           : AddBool(g, "training", true);
    ValueId d = AddOp(g, "drop", "Dropout", {x, kNoValue, training}, {"d"});
    g.outputs().push_back(AddOp(g, "relu", "Relu", {d}, {"y"}));
    ASSERT_TRUE(RemoveIdentities(g).ok());
    EXPECT_EQ(CountOps(g, "Dropout"), 1) << "runtime flag " << runtime_flag;
  }
}

TEST(RemoveIdentitiesTest, TrainingModeDropoutOfRatioZeroIsRemoved) {
  // F.dropout(x, p=0.0) exported with training=True (torchvision's swin):
  // nothing is dropped and the scale is 1, so it is the identity.
  for (double ratio_value : {0.0, 0.1}) {
    Graph g;
    ValueId x = g.AddInput("x", DataType::kF32, {2, 2});
    ValueId ratio = test_eval::AddF32(g, "ratio", {}, {ratio_value});
    ValueId d = AddOp(g, "drop", "Dropout", {x, ratio, AddBool(g, "training", true)}, {"d"});
    g.outputs().push_back(AddOp(g, "relu", "Relu", {d}, {"y"}));
    const Graph before = g;
    ASSERT_TRUE(RemoveIdentities(g).ok());
    EXPECT_EQ(CountOps(g, "Dropout"), ratio_value == 0.0 ? 0 : 1) << "ratio " << ratio_value;
    if (ratio_value == 0.0) ExpectEquivalent(before, g, 4, kTolerance);
  }
}

TEST(RemoveIdentitiesTest, BypassedValueKeepsKnownShape) {
  Graph g;
  ValueId x = g.AddInput("x", DataType::kF32, {Dim::Symbol("N"), 3});
  ValueId a = AddOp(g, "relu", "Relu", {x}, {"a"});
  ValueId b = AddOp(g, "id", "Identity", {a}, {"b"});
  g.value(b).dtype = DataType::kF32;
  g.value(b).shape = {Dim::Symbol("N"), 3};
  g.value(b).has_shape = true;
  g.outputs().push_back(AddOp(g, "sig", "Sigmoid", {b}, {"y"}));
  ASSERT_TRUE(RemoveIdentities(g).ok());
  const Value& kept = g.value(g.FindValue("a"));
  EXPECT_TRUE(kept.has_shape);
  EXPECT_EQ(ShapeToString(kept.shape), "[N,3]");
  EXPECT_EQ(kept.dtype, DataType::kF32);
}

TEST(RemoveIdentitiesTest, RejectsInvalidGraph) {
  Graph g;
  Node n;
  n.name = "broken";
  n.op_type = "Identity";
  n.inputs = {7};
  n.outputs = {8};
  g.nodes().push_back(n);  // AddNode would index the missing values
  EXPECT_FALSE(RemoveIdentities(g).ok());
}

}  // namespace
}  // namespace braid
