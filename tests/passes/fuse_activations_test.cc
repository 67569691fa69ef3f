// FuseActivations: structural checks (node counts, attributes, names) plus a
// numerical before/after comparison with the fp64 reference interpreter in
// reference_eval_test_util.h, which applies the fused "activation"
// attributes exactly as docs/ir.md specifies them.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "graph/passes/passes.h"
#include "tests/passes/reference_eval_test_util.h"

namespace braid {
namespace {

using test_eval::AddF32;
using test_eval::AddOp;
using test_eval::AddRandomF32;
using test_eval::CountOps;
using test_eval::ExpectEquivalent;

// Constants are unchanged or a sum of two f32 values rounded once.
constexpr double kTolerance = 1e-5;

Attributes FloatAttrs(std::initializer_list<std::pair<const char*, float>> kv) {
  Attributes a;
  for (const auto& [k, v] : kv) a.Set(k, v);
  return a;
}

// x[2,3,6,5] -> Conv(4 out channels, 3x3, pads 1) -> "conv_out".
struct ConvStart {
  Graph g;
  ValueId out;
  std::mt19937 rng;
};
ConvStart StartConv(bool bias, uint32_t seed = 1) {
  ConvStart s{Graph(), kNoValue, std::mt19937(seed)};
  ValueId x = s.g.AddInput("x", DataType::kF32, {2, 3, 6, 5});
  std::vector<ValueId> in = {x, AddRandomF32(s.g, "w", {4, 3, 3, 3}, s.rng)};
  if (bias) in.push_back(AddRandomF32(s.g, "b", {4}, s.rng));
  Attributes attrs;
  attrs.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
  s.out = AddOp(s.g, "conv", "Conv", in, {"conv_out"}, attrs);
  return s;
}

// Runs the pass, expects a single fused Conv named "conv" producing the
// graph output "y" with activation `kind`, and compares numerically.
const Node& ExpectFusedTo(Graph& g, const std::string& kind,
                          const std::string& op = "Conv",
                          const std::string& name = "conv") {
  const Graph before = g;
  Status s = FuseActivations(g);
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(g.num_nodes(), 1);
  const Node& fused = g.node(0);
  EXPECT_EQ(fused.op_type, op);
  EXPECT_EQ(fused.name, name);
  EXPECT_EQ(fused.attrs.GetString("activation", ""), kind);
  EXPECT_EQ(g.value(g.outputs()[0]).name, "y");
  EXPECT_EQ(g.value(g.outputs()[0]).producer, 0);
  ExpectEquivalent(before, g, 17, kTolerance);
  return fused;
}

TEST(FuseActivationsTest, ConvRelu) {
  ConvStart s = StartConv(true);
  s.g.outputs().push_back(AddOp(s.g, "relu", "Relu", {s.out}, {"y"}));
  const Node& fused = ExpectFusedTo(s.g, "Relu");
  EXPECT_FALSE(fused.attrs.Has("activation_min"));
}

TEST(FuseActivationsTest, ConvGelu) {
  ConvStart s = StartConv(true);
  s.g.outputs().push_back(AddOp(s.g, "gelu", "Gelu", {s.out}, {"y"}));
  const Node& fused = ExpectFusedTo(s.g, "Gelu");
  EXPECT_FALSE(fused.attrs.Has("activation_approximate"));  // erf form
}

TEST(FuseActivationsTest, GemmBiasGeluTanh) {
  std::mt19937 rng(9);
  Graph g;
  ValueId a = g.AddInput("a", DataType::kF32, {3, 5});
  ValueId b = AddRandomF32(g, "b", {5, 4}, rng);
  ValueId c = AddRandomF32(g, "c", {4}, rng);
  ValueId mm = AddOp(g, "fc", "Gemm", {a, b, c}, {"mm"});
  Attributes tanh;
  tanh.Set("approximate", std::string("tanh"));
  g.outputs().push_back(AddOp(g, "gelu", "Gelu", {mm}, {"y"}, tanh));
  const Node& fused = ExpectFusedTo(g, "Gelu", "Gemm", "fc");
  EXPECT_EQ(fused.attrs.GetString("activation_approximate", ""), "tanh");
}

// A transformer's Linear after FuseMatMulBias: Gemm -> Reshape -> Gelu. The
// Gemm takes the Gelu; the Reshape produces "y".
TEST(FuseActivationsTest, GemmReshapeGelu) {
  std::mt19937 rng(10);
  Graph g;
  ValueId a = g.AddInput("a", DataType::kF32, {6, 5});
  ValueId b = AddRandomF32(g, "b", {5, 4}, rng);
  ValueId c = AddRandomF32(g, "c", {4}, rng);
  ValueId mm = AddOp(g, "fc", "Gemm", {a, b, c}, {"mm"});
  const std::vector<int64_t> dims = {2, 3, 4};
  ValueId shape = g.AddConstant("shape", DataType::kI64, StaticShape(std::vector<int64_t>{3}),
                                TensorData::Copy(dims.data(), dims.size() * sizeof(int64_t)));
  ValueId rows = AddOp(g, "unrows", "Reshape", {mm, shape}, {"unrows_out"});
  g.outputs().push_back(AddOp(g, "gelu", "Gelu", {rows}, {"y"}));
  const Graph before = g;
  ASSERT_TRUE(FuseActivations(g).ok());
  ASSERT_EQ(g.num_nodes(), 2);
  EXPECT_EQ(g.node(0).op_type, "Gemm");
  EXPECT_EQ(g.node(0).attrs.GetString("activation", ""), "Gelu");
  EXPECT_EQ(g.node(1).op_type, "Reshape");
  EXPECT_EQ(g.value(g.outputs()[0]).name, "y");
  EXPECT_EQ(g.value(g.outputs()[0]).producer, 1);
  ExpectEquivalent(before, g, 11, kTolerance);
}

TEST(FuseActivationsTest, GeluWithAnUnknownApproximationStays) {
  ConvStart s = StartConv(true);
  Attributes odd;
  odd.Set("approximate", std::string("sigmoid"));
  s.g.outputs().push_back(AddOp(s.g, "gelu", "Gelu", {s.out}, {"y"}, odd));
  ASSERT_TRUE(FuseActivations(s.g).ok());
  EXPECT_EQ(s.g.num_nodes(), 2);
  EXPECT_FALSE(s.g.node(0).attrs.Has("activation"));
}

TEST(FuseActivationsTest, ConvBiasAddReluCreatesBias) {
  ConvStart s = StartConv(/*bias=*/false);
  ValueId c = AddRandomF32(s.g, "c", {1, 4, 1, 1}, s.rng);
  ValueId a = AddOp(s.g, "add", "Add", {c, s.out}, {"a"});  // constant first
  s.g.outputs().push_back(AddOp(s.g, "relu", "Relu", {a}, {"y"}));
  const Node& fused = ExpectFusedTo(s.g, "Relu");
  ASSERT_EQ(fused.inputs.size(), 3u);
  EXPECT_TRUE(s.g.IsConstant(fused.inputs[2]));
}

TEST(FuseActivationsTest, ConvBiasAddWithoutActivationFoldsBias) {
  ConvStart s = StartConv(true);
  ValueId c = AddRandomF32(s.g, "c", {4, 1, 1}, s.rng);
  s.g.outputs().push_back(AddOp(s.g, "add", "Add", {s.out, c}, {"y"}));
  const Graph before = s.g;
  ASSERT_TRUE(FuseActivations(s.g).ok());
  ASSERT_EQ(s.g.num_nodes(), 1);
  EXPECT_FALSE(s.g.node(0).attrs.Has("activation"));
  EXPECT_EQ(s.g.value(s.g.outputs()[0]).name, "y");
  ExpectEquivalent(before, s.g, 3, kTolerance);
}

TEST(FuseActivationsTest, ConvAddOfLastAxisVectorIsNotAChannelBias) {
  // A [C] addend aligns with the width axis of NCHW (here width == C == 4),
  // so it is not a per-channel bias and must stay an Add (which then takes
  // the Relu as a plain broadcasting Add).
  std::mt19937 rng(2);
  Graph g;
  ValueId x = g.AddInput("x", DataType::kF32, {1, 2, 4, 4});
  ValueId w = AddRandomF32(g, "w", {4, 2, 1, 1}, rng);
  ValueId conv = AddOp(g, "conv", "Conv", {x, w}, {"conv_out"});
  ValueId c = AddRandomF32(g, "c", {4}, rng);
  ValueId a = AddOp(g, "add", "Add", {conv, c}, {"a"});
  g.outputs().push_back(AddOp(g, "relu", "Relu", {a}, {"y"}));
  const Graph before = g;
  ASSERT_TRUE(FuseActivations(g).ok());
  EXPECT_EQ(g.num_nodes(), 2);
  EXPECT_EQ(CountOps(g, "Add"), 1);
  EXPECT_FALSE(g.node(0).attrs.Has("activation"));  // the Conv
  ExpectEquivalent(before, g, 4, kTolerance);
}

TEST(FuseActivationsTest, ScalarAddIsFolded) {
  ConvStart s = StartConv(true);
  ValueId c = AddF32(s.g, "c", {}, {0.25});
  ValueId a = AddOp(s.g, "add", "Add", {s.out, c}, {"a"});
  s.g.outputs().push_back(AddOp(s.g, "relu", "Relu", {a}, {"y"}));
  ExpectFusedTo(s.g, "Relu");
}

TEST(FuseActivationsTest, ClipOpset11InputsIsRelu6) {
  ConvStart s = StartConv(true);
  s.g.set_opset(13);
  ValueId lo = AddF32(s.g, "lo", {}, {0.0});
  ValueId hi = AddF32(s.g, "hi", {}, {0.5});  // small: the bound is exercised
  s.g.outputs().push_back(AddOp(s.g, "clip", "Clip", {s.out, lo, hi}, {"y"}));
  const Node& fused = ExpectFusedTo(s.g, "Clip");
  EXPECT_EQ(fused.attrs.GetFloat("activation_min", -1), 0.0f);
  EXPECT_EQ(fused.attrs.GetFloat("activation_max", -1), 0.5f);
}

// ONNX's default bound, numeric_limits<float>::lowest(): -Inf clips to
// -FLT_MAX, as ONNX Runtime's Clip(x, None, 0.3) gives.
TEST(FuseActivationsTest, ClipMissingMinIsLowestFloat) {
  ConvStart s = StartConv(true);
  ValueId hi = AddF32(s.g, "hi", {1}, {0.3});
  s.g.outputs().push_back(
      AddOp(s.g, "clip", "Clip", {s.out, kNoValue, hi}, {"y"}));
  const Node& fused = ExpectFusedTo(s.g, "Clip");
  EXPECT_EQ(fused.attrs.GetFloat("activation_min", 0), std::numeric_limits<float>::lowest());
  EXPECT_EQ(fused.attrs.GetFloat("activation_max", 0), 0.3f);
}

TEST(FuseActivationsTest, ClipOpset6Attributes) {
  ConvStart s = StartConv(true);
  s.g.set_opset(6);
  s.g.outputs().push_back(AddOp(s.g, "clip", "Clip", {s.out}, {"y"},
                                FloatAttrs({{"min", -0.2f}, {"max", 0.4f}})));
  const Node& fused = ExpectFusedTo(s.g, "Clip");
  EXPECT_EQ(fused.attrs.GetFloat("activation_min", 0), -0.2f);
  EXPECT_EQ(fused.attrs.GetFloat("activation_max", 0), 0.4f);
}

TEST(FuseActivationsTest, ClipWithRuntimeBoundIsNotFused) {
  ConvStart s = StartConv(true);
  ValueId hi = s.g.AddInput("hi", DataType::kF32, {});
  s.g.outputs().push_back(
      AddOp(s.g, "clip", "Clip", {s.out, kNoValue, hi}, {"y"}));
  ASSERT_TRUE(FuseActivations(s.g).ok());
  EXPECT_EQ(s.g.num_nodes(), 2);
  EXPECT_FALSE(s.g.node(0).attrs.Has("activation"));
}

TEST(FuseActivationsTest, SigmoidAlone) {
  ConvStart s = StartConv(false);
  s.g.outputs().push_back(AddOp(s.g, "sig", "Sigmoid", {s.out}, {"y"}));
  ExpectFusedTo(s.g, "Sigmoid");
}

TEST(FuseActivationsTest, HardSwishOp) {
  ConvStart s = StartConv(true);
  s.g.outputs().push_back(AddOp(s.g, "hs", "HardSwish", {s.out}, {"y"}));
  ExpectFusedTo(s.g, "HardSwish");
}

class FuseActivationsGatedTest : public testing::TestWithParam<bool> {};

TEST_P(FuseActivationsGatedTest, SiluBothOrders) {
  ConvStart s = StartConv(true);
  ValueId g = AddOp(s.g, "sig", "Sigmoid", {s.out}, {"gate"});
  std::vector<ValueId> mul_in = {s.out, g};
  if (GetParam()) std::swap(mul_in[0], mul_in[1]);
  s.g.outputs().push_back(AddOp(s.g, "mul", "Mul", mul_in, {"y"}));
  ExpectFusedTo(s.g, "SiLU");
}

TEST_P(FuseActivationsGatedTest, Opset13HardSwishBothOrders) {
  ConvStart s = StartConv(true);
  ValueId c = AddRandomF32(s.g, "c", {1, 4, 1, 1}, s.rng);
  ValueId a = AddOp(s.g, "add", "Add", {s.out, c}, {"a"});
  ValueId g = AddOp(s.g, "hsig", "HardSigmoid", {a}, {"gate"},
                    FloatAttrs({{"alpha", 1.0f / 6.0f}, {"beta", 0.5f}}));
  std::vector<ValueId> mul_in = {a, g};
  if (GetParam()) std::swap(mul_in[0], mul_in[1]);
  s.g.outputs().push_back(AddOp(s.g, "mul", "Mul", mul_in, {"y"}));
  ExpectFusedTo(s.g, "HardSwish");
}

INSTANTIATE_TEST_SUITE_P(OperandOrder, FuseActivationsGatedTest, testing::Bool());

TEST(FuseActivationsTest, HardSigmoidGateWithOtherParametersIsNotHardSwish) {
  ConvStart s = StartConv(true);
  ValueId g = AddOp(s.g, "hsig", "HardSigmoid", {s.out}, {"gate"});
  s.g.outputs().push_back(AddOp(s.g, "mul", "Mul", {s.out, g}, {"y"}));
  const Graph before = s.g;
  ASSERT_TRUE(FuseActivations(s.g).ok());
  EXPECT_EQ(s.g.num_nodes(), 3);
  ExpectEquivalent(before, s.g, 5, kTolerance);
}

TEST(FuseActivationsTest, SigmoidOutputWithOtherReaderIsNotSilu) {
  ConvStart s = StartConv(true);
  ValueId g = AddOp(s.g, "sig", "Sigmoid", {s.out}, {"gate"});
  s.g.outputs().push_back(AddOp(s.g, "mul", "Mul", {s.out, g}, {"y"}));
  s.g.outputs().push_back(g);
  ASSERT_TRUE(FuseActivations(s.g).ok());
  EXPECT_EQ(s.g.num_nodes(), 3);
  EXPECT_FALSE(s.g.node(0).attrs.Has("activation"));
}

TEST(FuseActivationsTest, GemmBiasLeakyRelu) {
  std::mt19937 rng(6);
  Graph g;
  ValueId a = g.AddInput("a", DataType::kF32, {3, 5});
  ValueId b = AddRandomF32(g, "b", {5, 4}, rng);
  ValueId c = AddRandomF32(g, "c", {4}, rng);
  ValueId mm = AddOp(g, "fc", "Gemm", {a, b, c}, {"mm"},
                     FloatAttrs({{"alpha", 0.5f}, {"beta", 2.0f}}));
  ValueId d = AddRandomF32(g, "d", {4}, rng);
  ValueId sum = AddOp(g, "add", "Add", {mm, d}, {"sum"});
  g.outputs().push_back(AddOp(g, "lrelu", "LeakyRelu", {sum}, {"y"},
                              FloatAttrs({{"alpha", 0.1f}})));
  const Node& fused = ExpectFusedTo(g, "LeakyRelu", "Gemm", "fc");
  EXPECT_EQ(fused.attrs.GetFloat("activation_alpha", 0), 0.1f);
  EXPECT_EQ(fused.attrs.GetFloat("beta", 0), 1.0f);
}

TEST(FuseActivationsTest, GemmTransBRowBiasHardSigmoid) {
  std::mt19937 rng(7);
  Graph g;
  ValueId a = g.AddInput("a", DataType::kF32, {2, 5});
  ValueId b = AddRandomF32(g, "b", {4, 5}, rng);
  Attributes attrs;
  attrs.Set("transB", int64_t{1});
  ValueId mm = AddOp(g, "fc", "Gemm", {a, b}, {"mm"}, attrs);
  ValueId d = AddRandomF32(g, "d", {1, 4}, rng);
  ValueId sum = AddOp(g, "add", "Add", {d, mm}, {"sum"});
  g.outputs().push_back(AddOp(g, "hsig", "HardSigmoid", {sum}, {"y"},
                              FloatAttrs({{"alpha", 0.3f}, {"beta", 0.4f}})));
  const Node& fused = ExpectFusedTo(g, "HardSigmoid", "Gemm", "fc");
  EXPECT_EQ(fused.attrs.GetFloat("activation_alpha", 0), 0.3f);
  EXPECT_EQ(fused.attrs.GetFloat("activation_beta", 0), 0.4f);
}

TEST(FuseActivationsTest, ConvOutputWithSecondReaderIsNotFused) {
  ConvStart s = StartConv(true);
  s.g.outputs().push_back(AddOp(s.g, "relu", "Relu", {s.out}, {"y"}));
  s.g.outputs().push_back(AddOp(s.g, "neg", "Sigmoid", {s.out}, {"z"}));
  ASSERT_TRUE(FuseActivations(s.g).ok());
  EXPECT_EQ(s.g.num_nodes(), 3);
  EXPECT_FALSE(s.g.node(0).attrs.Has("activation"));
}

TEST(FuseActivationsTest, BiasSumThatIsGraphOutputStopsBeforeActivation) {
  ConvStart s = StartConv(true);
  ValueId c = AddRandomF32(s.g, "c", {1, 4, 1, 1}, s.rng);
  ValueId a = AddOp(s.g, "add", "Add", {s.out, c}, {"a"});
  s.g.outputs().push_back(AddOp(s.g, "relu", "Relu", {a}, {"y"}));
  s.g.outputs().push_back(a);
  const Graph before = s.g;
  ASSERT_TRUE(FuseActivations(s.g).ok());
  EXPECT_EQ(s.g.num_nodes(), 2);  // Conv(+bias) and Relu
  EXPECT_EQ(CountOps(s.g, "Relu"), 1);
  EXPECT_EQ(s.g.value(s.g.outputs()[1]).name, "a");
  ExpectEquivalent(before, s.g, 6, kTolerance);
}

TEST(FuseActivationsTest, AlreadyFusedConvIsLeftAlone) {
  ConvStart s = StartConv(true);
  ValueId r = AddOp(s.g, "relu1", "Relu", {s.out}, {"r"});
  s.g.outputs().push_back(AddOp(s.g, "relu2", "Sigmoid", {r}, {"y"}));
  const Graph before = s.g;
  ASSERT_TRUE(FuseActivations(s.g).ok());
  ASSERT_TRUE(FuseActivations(s.g).ok());
  EXPECT_EQ(s.g.num_nodes(), 2);
  EXPECT_EQ(s.g.node(0).attrs.GetString("activation", ""), "Relu");
  ExpectEquivalent(before, s.g, 7, kTolerance);
}

TEST(FuseActivationsTest, RuntimeAddendIsNotFolded) {
  ConvStart s = StartConv(true);
  ValueId c = s.g.AddInput("c", DataType::kF32, {1, 4, 1, 1});
  ValueId a = AddOp(s.g, "add", "Add", {s.out, c}, {"a"});
  s.g.outputs().push_back(AddOp(s.g, "relu", "Relu", {a}, {"y"}));
  const Graph before = s.g;
  ASSERT_TRUE(FuseActivations(s.g).ok());
  EXPECT_EQ(s.g.num_nodes(), 2);  // Conv, Add(+Relu)
  EXPECT_FALSE(s.g.node(0).attrs.Has("activation"));
  EXPECT_EQ(s.g.node(1).attrs.GetString("activation", ""), "Relu");
  ExpectEquivalent(before, s.g, 8, kTolerance);
}

TEST(FuseActivationsTest, SingleElementAddendOfHigherRankIsNotFolded) {
  // [1,1,1,1,1] + [2,4,6,5] is [1,2,4,6,5]: folding it into the bias used to
  // make the output rank 4 and change the graph output's shape.
  ConvStart s = StartConv(true);
  ValueId c = AddF32(s.g, "c", {1, 1, 1, 1, 1}, {0.25});
  s.g.outputs().push_back(AddOp(s.g, "add", "Add", {s.out, c}, {"y"}));
  ASSERT_TRUE(InferShapes(s.g).ok());
  const Shape expected = s.g.value(s.g.outputs()[0]).shape;
  ASSERT_EQ(expected.size(), 5u);
  ASSERT_TRUE(FuseActivations(s.g).ok());
  EXPECT_EQ(CountOps(s.g, "Add"), 1);
  ASSERT_TRUE(InferShapes(s.g).ok());
  EXPECT_EQ(s.g.value(s.g.outputs()[0]).shape, expected);
}

// Residual Add -> activation (resnet's Add -> Relu): the Add keeps its name
// and op type, takes the activation and the activation's output value.

// x[2,3,6,5] -> Conv -> "conv_out" [2,4,6,5]; Add(conv_out, skip) -> "sum".
struct ResidualStart {
  ConvStart conv;
  ValueId sum;
};
ResidualStart StartResidual(Shape skip_dims, uint32_t seed) {
  ResidualStart r{StartConv(true, seed), kNoValue};
  ValueId skip = r.conv.g.AddInput("skip", DataType::kF32, std::move(skip_dims));
  r.sum = AddOp(r.conv.g, "add", "Add", {r.conv.out, skip}, {"sum"});
  return r;
}

const Node& ExpectAddFused(Graph& g, const std::string& kind, uint32_t seed) {
  const Graph before = g;
  Status s = FuseActivations(g);
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(g.num_nodes(), 2);  // Conv, Add(+activation)
  EXPECT_FALSE(g.node(0).attrs.Has("activation"));
  const Node& add = g.node(1);
  EXPECT_EQ(add.op_type, "Add");
  EXPECT_EQ(add.name, "add");
  EXPECT_EQ(add.attrs.GetString("activation", ""), kind);
  EXPECT_EQ(g.value(g.outputs()[0]).name, "y");
  EXPECT_EQ(g.value(g.outputs()[0]).producer, 1);
  ExpectEquivalent(before, g, seed, kTolerance);
  return add;
}

TEST(FuseActivationsTest, ResidualAddRelu) {
  ResidualStart r = StartResidual({2, 4, 6, 5}, 11);
  r.conv.g.outputs().push_back(AddOp(r.conv.g, "relu", "Relu", {r.sum}, {"y"}));
  ExpectAddFused(r.conv.g, "Relu", 11);
}

TEST(FuseActivationsTest, BroadcastAddClipOpset13) {
  ResidualStart r = StartResidual({4, 1, 5}, 12);  // broadcasts over N and H
  r.conv.g.set_opset(13);
  ValueId lo = AddF32(r.conv.g, "lo", {}, {-0.1});
  ValueId hi = AddF32(r.conv.g, "hi", {}, {0.4});
  r.conv.g.outputs().push_back(
      AddOp(r.conv.g, "clip", "Clip", {r.sum, lo, hi}, {"y"}));
  const Node& add = ExpectAddFused(r.conv.g, "Clip", 12);
  EXPECT_EQ(add.attrs.GetFloat("activation_min", 0), -0.1f);
  EXPECT_EQ(add.attrs.GetFloat("activation_max", 0), 0.4f);
}

TEST(FuseActivationsTest, ResidualAddLeakyRelu) {
  ResidualStart r = StartResidual({2, 4, 6, 5}, 13);
  r.conv.g.outputs().push_back(AddOp(r.conv.g, "lrelu", "LeakyRelu", {r.sum},
                                     {"y"}, FloatAttrs({{"alpha", 0.2f}})));
  const Node& add = ExpectAddFused(r.conv.g, "LeakyRelu", 13);
  EXPECT_EQ(add.attrs.GetFloat("activation_alpha", 0), 0.2f);
}

TEST(FuseActivationsTest, AddOfTwoInputsRelu) {
  // No Conv at all: two graph inputs, the sum's only reader is the Relu.
  Graph g;
  ValueId a = g.AddInput("a", DataType::kF32, {3, 4});
  ValueId b = g.AddInput("b", DataType::kF32, {4});
  ValueId sum = AddOp(g, "add", "Add", {a, b}, {"sum"});
  g.outputs().push_back(AddOp(g, "relu", "Relu", {sum}, {"y"}));
  const Graph before = g;
  ASSERT_TRUE(FuseActivations(g).ok());
  ASSERT_EQ(g.num_nodes(), 1);
  EXPECT_EQ(g.node(0).attrs.GetString("activation", ""), "Relu");
  EXPECT_EQ(g.value(g.outputs()[0]).name, "y");
  ExpectEquivalent(before, g, 14, kTolerance);
}

TEST(FuseActivationsTest, AddSumThatIsGraphOutputIsNotFused) {
  ResidualStart r = StartResidual({2, 4, 6, 5}, 15);
  r.conv.g.outputs().push_back(AddOp(r.conv.g, "relu", "Relu", {r.sum}, {"y"}));
  r.conv.g.outputs().push_back(r.sum);
  ASSERT_TRUE(FuseActivations(r.conv.g).ok());
  EXPECT_EQ(r.conv.g.num_nodes(), 3);
  EXPECT_EQ(CountOps(r.conv.g, "Relu"), 1);
}

TEST(FuseActivationsTest, AddSumWithSecondReaderIsNotFused) {
  ResidualStart r = StartResidual({2, 4, 6, 5}, 16);
  r.conv.g.outputs().push_back(AddOp(r.conv.g, "relu", "Relu", {r.sum}, {"y"}));
  r.conv.g.outputs().push_back(AddOp(r.conv.g, "sig", "Sigmoid", {r.sum}, {"z"}));
  ASSERT_TRUE(FuseActivations(r.conv.g).ok());
  EXPECT_EQ(r.conv.g.num_nodes(), 4);
  EXPECT_EQ(CountOps(r.conv.g, "Relu"), 1);
}

TEST(FuseActivationsTest, IntegerAddIsNotFused) {
  Graph g;
  ValueId a = g.AddInput("a", DataType::kI32, {3, 4});
  ValueId b = g.AddInput("b", DataType::kI32, {3, 4});
  ValueId sum = AddOp(g, "add", "Add", {a, b}, {"sum"});
  g.outputs().push_back(AddOp(g, "relu", "Relu", {sum}, {"y"}));
  ASSERT_TRUE(FuseActivations(g).ok());
  EXPECT_EQ(g.num_nodes(), 2);
  EXPECT_FALSE(g.node(0).attrs.Has("activation"));
}

TEST(FuseActivationsTest, AddAlreadyCarryingActivationIsLeftAlone) {
  ResidualStart r = StartResidual({2, 4, 6, 5}, 17);
  ValueId y1 = AddOp(r.conv.g, "relu", "Relu", {r.sum}, {"y1"});
  r.conv.g.outputs().push_back(AddOp(r.conv.g, "sig", "Sigmoid", {y1}, {"y"}));
  const Graph before = r.conv.g;
  ASSERT_TRUE(FuseActivations(r.conv.g).ok());
  ASSERT_TRUE(FuseActivations(r.conv.g).ok());
  EXPECT_EQ(r.conv.g.num_nodes(), 3);  // Conv, Add(+Relu), Sigmoid
  EXPECT_EQ(CountOps(r.conv.g, "Sigmoid"), 1);
  ExpectEquivalent(before, r.conv.g, 17, kTolerance);
}

TEST(FuseActivationsTest, BiasAddFoldedIntoConvIsNotAResidualAnchor) {
  // Conv -> Add(constant channel bias) -> Relu is the Conv's pattern; the
  // residual rule must not also claim it.
  ConvStart s = StartConv(true);
  ValueId c = AddRandomF32(s.g, "c", {1, 4, 1, 1}, s.rng);
  ValueId a = AddOp(s.g, "add", "Add", {s.out, c}, {"a"});
  s.g.outputs().push_back(AddOp(s.g, "relu", "Relu", {a}, {"y"}));
  ExpectFusedTo(s.g, "Relu");
}

}  // namespace
}  // namespace braid
