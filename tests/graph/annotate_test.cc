// Annotate / ComputeTotals on small hand-built graphs whose shapes are set by
// hand (no shape inference), checked against hand-computed numbers.
#include "graph/annotate.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace braid {
namespace {

const Dim kN = Dim::Symbol("N");

// Constant f32 tensor with seeded non-zero values (their exact values do not
// matter for FLOPs or bytes).
ValueId AddWeight(Graph& g, const std::string& name, Shape shape) {
  const auto count = static_cast<size_t>(ElementCount(shape));
  std::vector<float> values(count);
  uint32_t state = 12345;
  for (float& v : values) {
    state = state * 1664525u + 1013904223u;
    v = 0.5f + static_cast<float>(state >> 8) / static_cast<float>(1 << 24);
  }
  return g.AddConstant(name, DataType::kF32, std::move(shape),
                       TensorData::Copy(values.data(), count * sizeof(float)));
}

ValueId AddShaped(Graph& g, const std::string& name, Shape shape,
                  DataType dtype = DataType::kF32) {
  Value v;
  v.name = name;
  v.dtype = dtype;
  v.shape = std::move(shape);
  v.has_shape = true;
  return g.AddValue(std::move(v));
}

NodeId AddNode(Graph& g, const std::string& name, const std::string& op,
               std::vector<ValueId> inputs, std::vector<ValueId> outputs,
               Attributes attrs = {}) {
  Node n;
  n.name = name;
  n.op_type = op;
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  n.attrs = std::move(attrs);
  return g.AddNode(std::move(n));
}

Attributes ConvAttrs(int64_t k, int64_t stride, int64_t pad,
                     int64_t group = 1) {
  Attributes a;
  a.Set("kernel_shape", std::vector<int64_t>{k, k});
  a.Set("strides", std::vector<int64_t>{stride, stride});
  a.Set("pads", std::vector<int64_t>{pad, pad, pad, pad});
  a.Set("group", group);
  return a;
}

// One Conv node: x [N, cin, h, w], weight [cout, cin/group, k, k], output
// shape given by hand.
struct ConvCase {
  Graph g;
  NodeId node = kNoNode;
};
ConvCase MakeConv(Shape x_shape, Shape w_shape, Shape y_shape, int64_t k,
                  int64_t stride, int64_t pad, int64_t group, bool bias,
                  const std::string& activation = "") {
  ConvCase c;
  ValueId x = c.g.AddInput("x", DataType::kF32, std::move(x_shape));
  const int64_t cout = w_shape[0].extent();
  std::vector<ValueId> inputs = {x, AddWeight(c.g, "w", std::move(w_shape))};
  if (bias) inputs.push_back(AddWeight(c.g, "b", {cout}));
  ValueId y = AddShaped(c.g, "y", std::move(y_shape));
  Attributes attrs = ConvAttrs(k, stride, pad, group);
  if (!activation.empty()) attrs.Set("activation", activation);
  c.node = AddNode(c.g, "conv", "Conv", inputs, {y}, std::move(attrs));
  c.g.outputs().push_back(y);
  return c;
}

TEST(AnnotateTest, Conv3x3Stride1Pad1) {
  ConvCase c = MakeConv({kN, 16, 32, 32}, {32, 16, 3, 3}, {kN, 32, 32, 32}, 3,
                        1, 1, 1, /*bias=*/false);
  ASSERT_TRUE(Annotate(c.g).ok());
  // 2 * Cout 32 * Hout 32 * Wout 32 * (Cin 16 / 1) * 3 * 3
  //   = 2 * 32768 * 144 = 9,437,184
  EXPECT_DOUBLE_EQ(c.g.node(c.node).annotation.flops, 9437184.0);
}

TEST(AnnotateTest, ConvBiasAndFusedActivationAddPerOutputElement) {
  ConvCase with_bias = MakeConv({kN, 16, 32, 32}, {32, 16, 3, 3},
                                {kN, 32, 32, 32}, 3, 1, 1, 1, true, "Relu");
  ASSERT_TRUE(Annotate(with_bias.g).ok());
  // 9,437,184 (MACs) + 32768 (bias) + 32768 (Relu, 1 per element)
  EXPECT_DOUBLE_EQ(with_bias.g.node(with_bias.node).annotation.flops,
                   9437184.0 + 32768.0 + 32768.0);

  ConvCase hardswish =
      MakeConv({kN, 16, 32, 32}, {32, 16, 3, 3}, {kN, 32, 32, 32}, 3, 1, 1, 1,
               true, "HardSwish");
  ASSERT_TRUE(Annotate(hardswish.g).ok());
  // HardSwish is documented as 4 FLOPs per element: 9,437,184 + 32768 +
  // 4 * 32768.
  EXPECT_DOUBLE_EQ(hardswish.g.node(hardswish.node).annotation.flops,
                   9437184.0 + 32768.0 + 4 * 32768.0);
}

TEST(AnnotateTest, ConvStride2) {
  ConvCase c = MakeConv({1, 16, 32, 32}, {32, 16, 3, 3}, {1, 32, 16, 16}, 3, 2,
                        1, 1, false);
  ASSERT_TRUE(Annotate(c.g).ok());
  // 2 * 32 * 16 * 16 * 16 * 9 = 2 * 8192 * 144 = 2,359,296
  EXPECT_DOUBLE_EQ(c.g.node(c.node).annotation.flops, 2359296.0);
}

TEST(AnnotateTest, DepthwiseConv) {
  ConvCase c = MakeConv({kN, 32, 56, 56}, {32, 1, 3, 3}, {kN, 32, 56, 56}, 3, 1,
                        1, /*group=*/32, false);
  ASSERT_TRUE(Annotate(c.g).ok());
  // 2 * Cout 32 * 56 * 56 * (Cin 32 / group 32 = 1) * 9
  //   = 2 * 100352 * 9 = 1,806,336
  EXPECT_DOUBLE_EQ(c.g.node(c.node).annotation.flops, 1806336.0);
}

TEST(AnnotateTest, GroupedConv) {
  ConvCase c = MakeConv({1, 64, 14, 14}, {128, 16, 3, 3}, {1, 128, 14, 14}, 3,
                        1, 1, /*group=*/4, false);
  ASSERT_TRUE(Annotate(c.g).ok());
  // 2 * 128 * 14 * 14 * (64 / 4 = 16) * 9 = 2 * 25088 * 144 = 7,225,344
  EXPECT_DOUBLE_EQ(c.g.node(c.node).annotation.flops, 7225344.0);
}

TEST(AnnotateTest, ConvBytesAndIntensity) {
  ConvCase c = MakeConv({1, 16, 32, 32}, {32, 16, 3, 3}, {1, 32, 32, 32}, 3, 1,
                        1, 1, /*bias=*/true);
  ASSERT_TRUE(Annotate(c.g).ok());
  const Annotation& a = c.g.node(c.node).annotation;
  // x 16*32*32 = 16384 floats = 65,536 B; w 32*16*3*3 = 4608 floats =
  // 18,432 B; b 32 floats = 128 B; y 32*32*32 = 32768 floats = 131,072 B.
  // Total 215,168 B.
  EXPECT_DOUBLE_EQ(a.bytes, 215168.0);
  // 9,437,184 + 32,768 (bias) = 9,469,952 FLOPs; / 215,168 B = 44.0118...
  EXPECT_DOUBLE_EQ(a.flops, 9469952.0);
  EXPECT_DOUBLE_EQ(a.intensity, 9469952.0 / 215168.0);
  EXPECT_NEAR(a.intensity, 44.0119, 1e-4);
  EXPECT_EQ(a.params, 4608 + 32);
  EXPECT_DOUBLE_EQ(a.weight_sparsity, 0.0);
  // Not Annotate's job: runtime/activation_sparsity.h measures it.
  EXPECT_DOUBLE_EQ(a.activation_sparsity, -1.0);
}

TEST(AnnotateTest, BytesUseDtypeSizes) {
  Graph g;
  ValueId x = g.AddInput("x", DataType::kF16, {kN, 10, 20});
  ValueId shape =
      g.AddConstant("shape", DataType::kI64, {2},
                    TensorData::Copy(std::vector<int64_t>{0, -1}.data(),
                                     2 * sizeof(int64_t)));
  ValueId y = AddShaped(g, "y", {kN, 200}, DataType::kF16);
  NodeId n = AddNode(g, "reshape", "Reshape", {x, shape}, {y});
  ASSERT_TRUE(Annotate(g).ok());
  // x 200 * 2 B + shape 2 * 8 B + y 200 * 2 B = 816 B; data movement: 0 FLOPs
  EXPECT_DOUBLE_EQ(g.node(n).annotation.bytes, 816.0);
  EXPECT_DOUBLE_EQ(g.node(n).annotation.flops, 0.0);
  EXPECT_DOUBLE_EQ(g.node(n).annotation.intensity, 0.0);
  EXPECT_EQ(g.node(n).annotation.params, 2);
}

TEST(AnnotateTest, GemmWithBias) {
  Graph g;
  ValueId a = g.AddInput("a", DataType::kF32, {kN, 512});
  ValueId w = AddWeight(g, "w", {1000, 512});
  ValueId b = AddWeight(g, "b", {1000});
  ValueId y = AddShaped(g, "y", {kN, 1000});
  Attributes attrs;
  attrs.Set("transB", int64_t{1});
  NodeId n = AddNode(g, "fc", "Gemm", {a, w, b}, {y}, attrs);
  ASSERT_TRUE(Annotate(g).ok());
  // 2 * M 1 * N 1000 * K 512 + bias 1 * 1000 = 1,024,000 + 1000 = 1,025,000
  EXPECT_DOUBLE_EQ(g.node(n).annotation.flops, 1025000.0);
}

TEST(AnnotateTest, GemmTransposedA) {
  Graph g;
  ValueId a = g.AddInput("a", DataType::kF32, {512, 4});  // A^T: K x M
  ValueId w = AddWeight(g, "w", {512, 1000});
  ValueId y = AddShaped(g, "y", {4, 1000});
  Attributes attrs;
  attrs.Set("transA", int64_t{1});
  NodeId n = AddNode(g, "fc", "Gemm", {a, w}, {y}, attrs);
  ASSERT_TRUE(Annotate(g).ok());
  // 2 * M 4 * N 1000 * K 512 = 4,096,000 (no bias)
  EXPECT_DOUBLE_EQ(g.node(n).annotation.flops, 4096000.0);
}

TEST(AnnotateTest, BatchedMatMul) {
  Graph g;
  ValueId q = g.AddInput("q", DataType::kF32, {kN, 3, 197, 64});
  ValueId k = g.AddInput("k", DataType::kF32, {kN, 3, 64, 197});
  ValueId y = AddShaped(g, "scores", {kN, 3, 197, 197});
  NodeId n = AddNode(g, "attn", "MatMul", {q, k}, {y});
  ASSERT_TRUE(Annotate(g).ok());
  // 2 * batch 3 * M 197 * N 197 * K 64 = 2 * 3 * 38809 * 64 = 14,902,656
  EXPECT_DOUBLE_EQ(g.node(n).annotation.flops, 14902656.0);
}

TEST(AnnotateTest, MatMulBroadcastWeight) {
  Graph g;
  ValueId x = g.AddInput("x", DataType::kF32, {kN, 197, 192});
  ValueId w = AddWeight(g, "w", {192, 768});
  ValueId y = AddShaped(g, "y", {kN, 197, 768});
  NodeId n = AddNode(g, "fc1", "MatMul", {x, w}, {y});
  ASSERT_TRUE(Annotate(g).ok());
  // 2 * 197 * 768 * 192 = 58,097,664
  EXPECT_DOUBLE_EQ(g.node(n).annotation.flops, 58097664.0);
  EXPECT_EQ(g.node(n).annotation.params, 192 * 768);
}

TEST(AnnotateTest, RecurrentCellsCountEveryGateProduct) {
  Graph g;
  ValueId x = g.AddInput("x", DataType::kF32, {10, kN, 16});
  ValueId y = AddShaped(g, "y", {10, 2, kN, 32});
  NodeId n = AddNode(g, "lstm", "LSTM",
                     {x, AddWeight(g, "w", {2, 128, 16}), AddWeight(g, "r", {2, 128, 32})}, {y});
  ASSERT_TRUE(Annotate(g).ok());
  // 2 * (10 steps * batch 1) * 2 directions * 128 gate rows * (16 + 32) = 245,760
  EXPECT_DOUBLE_EQ(g.node(n).annotation.flops, 245760.0);
}

TEST(AnnotateTest, PoolsNormalizationsAndElementwise) {
  Graph g;
  ValueId x = g.AddInput("x", DataType::kF32, {kN, 64, 112, 112});
  ValueId pooled = AddShaped(g, "pooled", {kN, 64, 56, 56});
  Attributes pool = ConvAttrs(3, 2, 1);
  NodeId max_pool = AddNode(g, "pool", "MaxPool", {x}, {pooled}, pool);
  ValueId gap = AddShaped(g, "gap", {kN, 64, 1, 1});
  NodeId global = AddNode(g, "gap", "GlobalAveragePool", {pooled}, {gap});
  ValueId bn_out = AddShaped(g, "bn_out", {kN, 64, 56, 56});
  NodeId bn = AddNode(g, "bn", "BatchNormalization",
                      {pooled, AddWeight(g, "s", {64}), AddWeight(g, "b", {64}),
                       AddWeight(g, "m", {64}), AddWeight(g, "v", {64})},
                      {bn_out});
  ValueId sm = AddShaped(g, "sm", {kN, 64, 56, 56});
  NodeId softmax = AddNode(g, "softmax", "Softmax", {bn_out}, {sm});
  ValueId ln = AddShaped(g, "ln", {kN, 64, 56, 56});
  NodeId layer_norm = AddNode(
      g, "ln", "LayerNormalization",
      {sm, AddWeight(g, "ln_s", {56}), AddWeight(g, "ln_b", {56})}, {ln});
  ValueId erf = AddShaped(g, "erf", {kN, 64, 56, 56});
  NodeId erf_node = AddNode(g, "erf", "Erf", {ln}, {erf});
  ValueId sum = AddShaped(g, "sum", {kN, 64, 56, 56});
  NodeId add = AddNode(g, "add", "Add", {erf, ln}, {sum});
  ValueId odd = AddShaped(g, "odd", {kN, 64, 56, 56});
  NodeId unknown = AddNode(g, "custom", "SomeCustomOp", {sum}, {odd});
  ASSERT_TRUE(Annotate(g).ok());
  const double out = 64.0 * 56 * 56;  // 200,704 elements per image
  EXPECT_DOUBLE_EQ(g.node(max_pool).annotation.flops, 9 * out);  // 3x3 window
  EXPECT_DOUBLE_EQ(g.node(global).annotation.flops, out);  // input elements
  EXPECT_DOUBLE_EQ(g.node(bn).annotation.flops, 2 * out);
  EXPECT_DOUBLE_EQ(g.node(softmax).annotation.flops, 5 * out);
  EXPECT_DOUBLE_EQ(g.node(layer_norm).annotation.flops, 8 * out);
  EXPECT_DOUBLE_EQ(g.node(erf_node).annotation.flops, 4 * out);
  EXPECT_DOUBLE_EQ(g.node(add).annotation.flops, out);
  EXPECT_DOUBLE_EQ(g.node(unknown).annotation.flops, 0.0);
  EXPECT_GT(g.node(unknown).annotation.bytes, 0.0);
}

TEST(AnnotateTest, WeightSparsityCountsPlantedZerosIncludingNegativeZero) {
  Graph g;
  ValueId x = g.AddInput("x", DataType::kF32, {kN, 4});
  std::vector<float> w(16, 0.25f);
  w[1] = 0.0f;
  w[6] = -0.0f;
  w[11] = 0.0f;
  w[12] = 1e-30f;  // tiny but not zero
  std::vector<float> b = {0.5f, -0.0f, 1.5f, 2.0f};
  ValueId wv = g.AddConstant("w", DataType::kF32, {4, 4},
                             TensorData::Copy(w.data(), w.size() * 4));
  ValueId bv = g.AddConstant("b", DataType::kF32, {4},
                             TensorData::Copy(b.data(), b.size() * 4));
  ValueId y = AddShaped(g, "y", {kN, 4});
  NodeId n = AddNode(g, "fc", "Gemm", {x, wv, bv}, {y});
  ASSERT_TRUE(Annotate(g).ok());
  // zeros: w[1], w[6] (-0.0), w[11], b[1] (-0.0) = 4 of 16 + 4 = 20 params
  EXPECT_EQ(g.node(n).annotation.params, 20);
  EXPECT_DOUBLE_EQ(g.node(n).annotation.weight_sparsity, 4.0 / 20.0);
}

TEST(AnnotateTest, WeightSparsityOfF16AndIntegerConstants) {
  Graph g;
  ValueId x = g.AddInput("x", DataType::kF16, {8});
  // f16 bits: 0x0000 = +0, 0x8000 = -0, 0x3C00 = 1.0, 0x0001 = tiny subnormal
  std::vector<uint16_t> half = {0x0000, 0x8000, 0x3C00, 0x0001};
  ValueId h = g.AddConstant("h", DataType::kF16, {4},
                            TensorData::Copy(half.data(), half.size() * 2));
  std::vector<int64_t> ints = {0, 5, 0, -1};
  ValueId i = g.AddConstant("i", DataType::kI64, {4},
                            TensorData::Copy(ints.data(), ints.size() * 8));
  ValueId y = AddShaped(g, "y", {8}, DataType::kF16);
  NodeId n = AddNode(g, "op", "SomeCustomOp", {x, h, i}, {y});
  ASSERT_TRUE(Annotate(g).ok());
  // zeros: 2 of 4 halves, 2 of 4 ints -> 4 / 8
  EXPECT_EQ(g.node(n).annotation.params, 8);
  EXPECT_DOUBLE_EQ(g.node(n).annotation.weight_sparsity, 0.5);
}

TEST(AnnotateTest, TotalsCountASharedConstantOnce) {
  Graph g;
  ValueId x = g.AddInput("x", DataType::kF32, {kN, 8});
  std::vector<float> shared(8, 1.0f);
  shared[0] = 0.0f;
  shared[5] = 0.0f;
  ValueId c = g.AddConstant("shared", DataType::kF32, {8},
                            TensorData::Copy(shared.data(), 8 * 4));
  ValueId d = AddWeight(g, "d", {8});
  ValueId y1 = AddShaped(g, "y1", {kN, 8});
  ValueId y2 = AddShaped(g, "y2", {kN, 8});
  ValueId y3 = AddShaped(g, "y3", {kN, 8});
  AddNode(g, "mul1", "Mul", {x, c}, {y1});
  AddNode(g, "mul2", "Mul", {y1, c}, {y2});
  AddNode(g, "add", "Add", {y2, d}, {y3});
  g.outputs().push_back(y3);
  ASSERT_TRUE(Annotate(g).ok());
  EXPECT_EQ(g.node(0).annotation.params, 8);
  EXPECT_EQ(g.node(1).annotation.params, 8);
  EXPECT_DOUBLE_EQ(g.node(1).annotation.weight_sparsity, 2.0 / 8.0);
  ModelTotals t = ComputeTotals(g);
  // shared (8, 2 zeros) once + d (8, no zeros): 16 params, 2/16 sparse.
  EXPECT_EQ(t.params, 16);
  EXPECT_DOUBLE_EQ(t.weight_sparsity, 2.0 / 16.0);
  EXPECT_DOUBLE_EQ(t.flops, 3 * 8.0);  // three 8-element elementwise ops
  // Each node moves 3 * 8 floats = 96 B.
  EXPECT_DOUBLE_EQ(t.bytes, 3 * 96.0);
  EXPECT_EQ(t.nodes, 3);
}

TEST(AnnotateTest, MissingShapeIsAnErrorNamingTheNode) {
  Graph g;
  ValueId x = g.AddInput("x", DataType::kF32, {kN, 8});
  ValueId y = g.AddValue("relu_out");  // no shape
  AddNode(g, "/block/relu/Relu", "Relu", {x}, {y});
  Status s = Annotate(g);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("/block/relu/Relu"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("Relu"), std::string::npos);
  EXPECT_NE(s.message().find("relu_out"), std::string::npos);
}

TEST(AnnotateTest, EmptyGraphTotalsAreZero) {
  Graph g;
  ASSERT_TRUE(Annotate(g).ok());
  ModelTotals t = ComputeTotals(g);
  EXPECT_EQ(t.flops, 0.0);
  EXPECT_EQ(t.params, 0);
  EXPECT_EQ(t.weight_sparsity, 0.0);
  EXPECT_EQ(t.nodes, 0);
}

}  // namespace
}  // namespace braid
