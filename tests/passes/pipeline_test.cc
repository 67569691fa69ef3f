// RunDefaultPasses on a small graph built in code: Identity removal, folding
// of constant chains, BN folding and activation fusion, dead node removal,
// and shapes with the batch kept symbolic. (The model zoo is covered by
// another test when BRAID_ZOO_DIR is set.)
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "graph/passes/passes.h"
#include "tests/passes/pass_test_util.h"

namespace braid {
namespace {

const Dim kN = Dim::Symbol("N");

using pass_test::AddDynamicFlattenTarget;
using pass_test::GraphBuilder;
using pass_test::OpTypes;

// x -> Identity -> Conv -> BatchNormalization -> Relu -> Reshape([N, -1])
//   -> MatMul(Transpose(w)) -> y, where the Reshape target comes from
// Shape->Gather->Unsqueeze->Concat and the bias scale from a foldable
// constant chain Sqrt(Mul(c, c)).
GraphBuilder BuildGraph() {
  GraphBuilder t;
  Graph& g = t.graph();
  g.set_opset(13);
  ValueId x = g.AddInput("x", DataType::kF32, {kN, 3, 8, 8});
  ValueId id = t.Op("Identity", "identity", {x});
  Attributes conv_attrs;
  conv_attrs.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
  conv_attrs.Set("strides", std::vector<int64_t>{2, 2});
  ValueId conv = t.Op("Conv", "conv", {id, t.Floats("w", {4, 3, 3, 3}, 0.1f)},
                      conv_attrs);
  ValueId bn = t.Op("BatchNormalization", "bn",
                    {conv, t.Floats("scale", {4}, 1.5f), t.Floats("shift", {4}, 0.1f),
                     t.Floats("mean", {4}, 0.2f), t.Floats("var", {4}, 2.0f)});
  ValueId relu = t.Op("Relu", "relu", {bn});
  ValueId target = AddDynamicFlattenTarget(t, relu);
  ValueId flat = t.Op("Reshape", "reshape", {relu, target});
  ValueId weight = t.Op("Transpose", "transpose", {t.Floats("fc", {10, 64}, 0.01f)});
  ValueId c = t.Floats("c", {10}, 3.0f);
  ValueId bias = t.Op("Sqrt", "sqrt", {t.Op("Mul", "square", {c, c})});
  ValueId mm = t.Op("MatMul", "matmul", {flat, weight});
  ValueId y = t.Op("Add", "y", {mm, bias});
  g.outputs().push_back(y);
  return t;
}

TEST(Pipeline, DefaultPassesWithFusion) {
  GraphBuilder t = BuildGraph();
  ASSERT_TRUE(t.graph().Validate().ok());
  Status s = RunDefaultPasses(t.graph());
  ASSERT_TRUE(s.ok()) << s.ToString();
  const Graph& g = t.graph();
  EXPECT_EQ(OpTypes(g),
            (std::vector<std::string>{"Conv", "Shape", "Gather", "Unsqueeze",
                                      "Concat", "Reshape", "Gemm"}));
  const Node& conv = g.node(0);
  EXPECT_EQ(conv.attrs.GetString("activation", ""), "Relu");
  EXPECT_EQ(conv.inputs.size(), 3u);  // the folded BN created a bias
  // The Transpose and Sqrt(Mul) chains became constants; the MatMul and its
  // bias Add one Gemm (FuseMatMulBias).
  const Node& gemm = g.node(6);
  ASSERT_EQ(gemm.inputs.size(), 3u);
  EXPECT_TRUE(g.IsConstant(gemm.inputs[1]));
  EXPECT_EQ(g.value(gemm.inputs[1]).shape, (Shape{64, 10}));
  const Value& bias = g.value(gemm.inputs[2]);
  ASSERT_TRUE(bias.constant.has_value());
  EXPECT_EQ(bias.constant->as<float>()[0], 3.0f);
  // Shapes: the batch stays symbolic through the Reshape.
  EXPECT_EQ(g.value(g.node(5).outputs[0]).shape, (Shape{kN, 64}));
  ASSERT_EQ(g.outputs().size(), 1u);
  EXPECT_EQ(g.value(g.outputs()[0]).name, "y");
  EXPECT_EQ(g.value(g.outputs()[0]).shape, (Shape{kN, 10}));
  for (const Value& v : g.values()) EXPECT_TRUE(v.has_shape) << v.name;
}

TEST(Pipeline, DefaultPassesWithoutFusion) {
  GraphBuilder t = BuildGraph();
  PassOptions options;
  options.fuse = false;
  Status s = RunDefaultPasses(t.graph(), options);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(OpTypes(t.graph()),
            (std::vector<std::string>{"Conv", "BatchNormalization", "Relu",
                                      "Shape", "Gather", "Unsqueeze", "Concat",
                                      "Reshape", "MatMul", "Add"}));
  EXPECT_FALSE(t.graph().node(0).attrs.Has("activation"));
  EXPECT_EQ(t.graph().value(t.graph().outputs()[0]).shape, (Shape{kN, 10}));
}

TEST(Pipeline, ShapeErrorStopsPipelineNamingNode) {
  GraphBuilder t;
  ValueId a = t.graph().AddInput("a", DataType::kF32, {2, 3});
  ValueId b = t.graph().AddInput("b", DataType::kF32, {5, 7});
  t.graph().outputs().push_back(t.Op("MatMul", "bad_matmul", {a, b}));
  Status s = RunDefaultPasses(t.graph());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("bad_matmul"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace braid
