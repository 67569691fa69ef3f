// braid is an inference runtime: shape inference rejects training
// configurations (BatchNormalization training_mode=1 or its training outputs,
// Dropout with training_mode true or computed) as Unimplemented naming the
// node, and accepts the inference forms.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "graph/passes/passes.h"
#include "graph/passes/shape_inference.h"

namespace braid {
namespace {

ValueId Floats(Graph& g, const std::string& name, Shape shape) {
  std::vector<float> v(static_cast<size_t>(ElementCount(shape)), 0.5f);
  return g.AddConstant(name, DataType::kF32, std::move(shape),
                       TensorData::Copy(v.data(), v.size() * sizeof(float)));
}

NodeId AddOp(Graph& g, const std::string& op, const std::string& name,
             std::vector<ValueId> inputs, int num_outputs, Attributes attrs = {}) {
  Node n;
  n.name = name;
  n.op_type = op;
  n.inputs = std::move(inputs);
  n.attrs = std::move(attrs);
  for (int i = 0; i < num_outputs; ++i)
    n.outputs.push_back(g.AddValue(name + "_out" + std::to_string(i)));
  g.outputs().push_back(n.outputs[0]);
  return g.AddNode(std::move(n));
}

Graph BatchNormGraph(int64_t training_mode, int num_outputs) {
  Graph g;
  g.set_opset(15);
  ValueId x = g.AddInput("x", DataType::kF32, {2, 3, 4});
  std::vector<ValueId> in = {x};
  for (const char* p : {"scale", "b", "mean", "var"}) in.push_back(Floats(g, p, {3}));
  Attributes attrs;
  if (training_mode >= 0) attrs.Set("training_mode", training_mode);
  AddOp(g, "BatchNormalization", "bn", in, num_outputs, attrs);
  return g;
}

void ExpectDeclined(Graph& g, const std::string& node, const std::string& reason) {
  Status s = InferShapes(g);
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented) << s.ToString();
  EXPECT_NE(s.message().find(node), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(reason), std::string::npos) << s.message();
}

TEST(TrainingModeTest, BatchNormTrainingIsDeclined) {
  Graph training = BatchNormGraph(1, 1);
  ExpectDeclined(training, "node 'bn' (BatchNormalization)",
                 "training_mode=1 is not supported (inference runtime)");
  // Running/saved statistics outputs (the pre-14 training form).
  Graph outputs = BatchNormGraph(-1, 3);
  outputs.set_opset(9);
  ExpectDeclined(outputs, "node 'bn' (BatchNormalization)",
                 "training outputs (running/saved mean and variance) are not supported");
}

TEST(TrainingModeTest, BatchNormInferenceIsInferred) {
  for (int64_t mode : {int64_t{-1}, int64_t{0}}) {
    Graph g = BatchNormGraph(mode, 1);
    ASSERT_TRUE(InferShapes(g).ok()) << mode;
    const Value& y = g.value(g.outputs()[0]);
    EXPECT_EQ(ShapeToString(y.shape), "[2,3,4]");
    EXPECT_EQ(y.dtype, DataType::kF32);
  }
}

enum class Training { kAbsent, kFalse, kTrue, kComputed };

Graph DropoutGraph(Training t) {
  Graph g;
  g.set_opset(13);
  ValueId x = g.AddInput("x", DataType::kF32, {2, 3});
  std::vector<ValueId> in = {x};
  if (t != Training::kAbsent) {
    in.push_back(kNoValue);  // ratio omitted
    if (t == Training::kComputed) {
      in.push_back(g.AddInput("training", DataType::kBool, {}));
    } else {
      const uint8_t v = t == Training::kTrue ? 1 : 0;
      in.push_back(g.AddConstant("training", DataType::kBool, {}, TensorData::Copy(&v, 1)));
    }
  }
  AddOp(g, "Dropout", "drop", in, 2);
  return g;
}

TEST(TrainingModeTest, DropoutTrainingIsDeclined) {
  Graph on = DropoutGraph(Training::kTrue);
  ExpectDeclined(on, "node 'drop' (Dropout)",
                 "training_mode=1 is not supported (inference runtime)");
  Graph computed = DropoutGraph(Training::kComputed);
  ExpectDeclined(computed, "node 'drop' (Dropout)",
                 "a computed training_mode is not supported (inference runtime");
}

TEST(TrainingModeTest, DropoutInferenceIsInferred) {
  for (Training t : {Training::kAbsent, Training::kFalse}) {
    Graph g = DropoutGraph(t);
    ASSERT_TRUE(InferShapes(g).ok());
    const Node& n = g.nodes().back();
    EXPECT_EQ(ShapeToString(g.value(n.outputs[0]).shape), "[2,3]");
    EXPECT_EQ(g.value(n.outputs[1]).dtype, DataType::kBool);
  }
}

}  // namespace
}  // namespace braid
