// FoldBatchNorm: structural checks plus a numerical before/after comparison
// with the fp64 reference interpreter in reference_eval_test_util.h.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "graph/passes/passes.h"
#include "graph/passes/shape_inference.h"
#include "tests/passes/reference_eval_test_util.h"

namespace braid {
namespace {

using test_eval::AddBnParams;
using test_eval::AddF32;
using test_eval::AddOp;
using test_eval::AddRandomF32;
using test_eval::CountOps;
using test_eval::ExpectEquivalent;
using test_eval::RandomNonZero;

// Folded constants are rounded to f32 once; fp64 evaluation otherwise.
constexpr double kTolerance = 1e-5;

Attributes Epsilon(float eps) {
  Attributes a;
  a.Set("epsilon", eps);
  return a;
}

struct ConvCase {
  int64_t in_channels, out_channels, group;
  bool bias;
};

// x[2,C,7,6] -> Conv(3x3, pads 1, stride 2) -> conv_out -> BN -> y.
Graph ConvBnGraph(const ConvCase& c, uint32_t seed) {
  std::mt19937 rng(seed);
  Graph g;
  ValueId x = g.AddInput("x", DataType::kF32, {2, c.in_channels, 7, 6});
  std::vector<ValueId> conv_in = {
      x, AddRandomF32(g, "w", {c.out_channels, c.in_channels / c.group, 3, 3},
                      rng)};
  if (c.bias) conv_in.push_back(AddRandomF32(g, "b", {c.out_channels}, rng));
  Attributes conv_attrs;
  conv_attrs.Set("group", c.group);
  conv_attrs.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
  conv_attrs.Set("strides", std::vector<int64_t>{2, 2});
  ValueId conv_out = AddOp(g, "conv", "Conv", conv_in, {"conv_out"}, conv_attrs);
  std::vector<ValueId> bn_in = {conv_out};
  for (ValueId p : AddBnParams(g, "bn_", c.out_channels, rng)) bn_in.push_back(p);
  g.outputs().push_back(
      AddOp(g, "bn", "BatchNormalization", bn_in, {"y"}, Epsilon(1e-3f)));
  return g;
}

void ExpectFoldedConvBn(const ConvCase& c) {
  Graph g = ConvBnGraph(c, 7);
  const Graph before = g;
  ASSERT_TRUE(FoldBatchNorm(g).ok());
  EXPECT_EQ(g.num_nodes(), 1);
  EXPECT_EQ(CountOps(g, "BatchNormalization"), 0);
  ASSERT_EQ(g.node(0).op_type, "Conv");
  EXPECT_EQ(g.node(0).name, "conv");
  ASSERT_EQ(g.node(0).inputs.size(), 3u);  // a bias is created when absent
  EXPECT_EQ(g.value(g.outputs()[0]).name, "y");
  EXPECT_TRUE(g.Validate().ok());
  ExpectEquivalent(before, g, 11, kTolerance);
}

TEST(FoldBatchNormTest, ConvWithBias) { ExpectFoldedConvBn({4, 8, 1, true}); }
TEST(FoldBatchNormTest, ConvWithoutBias) {
  ExpectFoldedConvBn({3, 5, 1, false});
}
TEST(FoldBatchNormTest, GroupedConv) { ExpectFoldedConvBn({4, 6, 2, true}); }
TEST(FoldBatchNormTest, DepthwiseConvWithoutBias) {
  ExpectFoldedConvBn({6, 6, 6, false});
}

struct GemmCase {
  bool trans_b;
  std::vector<int64_t> c_dims;  // empty: no C input
  float alpha, beta;
};

// a[3,5] -> Gemm -> BN over 4 columns -> y.
Graph GemmBnGraph(const GemmCase& c, uint32_t seed) {
  std::mt19937 rng(seed);
  Graph g;
  ValueId a = g.AddInput("a", DataType::kF32, {3, 5});
  std::vector<int64_t> b_dims = c.trans_b ? std::vector<int64_t>{4, 5}
                                          : std::vector<int64_t>{5, 4};
  std::vector<ValueId> in = {a, AddRandomF32(g, "b", b_dims, rng)};
  if (!c.c_dims.empty()) in.push_back(AddRandomF32(g, "c", c.c_dims, rng));
  Attributes attrs;
  attrs.Set("transB", static_cast<int64_t>(c.trans_b));
  attrs.Set("alpha", c.alpha);
  attrs.Set("beta", c.beta);
  ValueId mm = AddOp(g, "gemm", "Gemm", in, {"gemm_out"}, attrs);
  std::vector<ValueId> bn_in = {mm};
  for (ValueId p : AddBnParams(g, "bn_", 4, rng)) bn_in.push_back(p);
  g.outputs().push_back(
      AddOp(g, "bn", "BatchNormalization", bn_in, {"y"}, Epsilon(1e-5f)));
  return g;
}

void ExpectFoldedGemmBn(const GemmCase& c) {
  Graph g = GemmBnGraph(c, 3);
  const Graph before = g;
  ASSERT_TRUE(FoldBatchNorm(g).ok());
  ASSERT_EQ(g.num_nodes(), 1);
  EXPECT_EQ(g.node(0).op_type, "Gemm");
  EXPECT_EQ(g.value(g.outputs()[0]).name, "y");
  ExpectEquivalent(before, g, 5, kTolerance);
}

TEST(FoldBatchNormTest, GemmTransBWithBias) {
  ExpectFoldedGemmBn({true, {4}, 1.0f, 1.0f});
}
TEST(FoldBatchNormTest, GemmNoTransBWithoutBias) {
  ExpectFoldedGemmBn({false, {}, 1.0f, 1.0f});
}
TEST(FoldBatchNormTest, GemmScaledWithScalarBias) {
  ExpectFoldedGemmBn({true, {1}, 0.5f, 2.0f});
}
TEST(FoldBatchNormTest, GemmFullBiasMatrix) {
  ExpectFoldedGemmBn({false, {3, 4}, 1.5f, -0.5f});
}

TEST(FoldBatchNormTest, ConvOutputWithTwoReadersIsNotFolded) {
  Graph g = ConvBnGraph({4, 8, 1, true}, 1);
  const ValueId conv_out = g.FindValue("conv_out");
  g.outputs().push_back(AddOp(g, "relu", "Relu", {conv_out}, {"side"}));
  const Graph before = g;
  ASSERT_TRUE(FoldBatchNorm(g).ok());
  EXPECT_EQ(g.num_nodes(), before.num_nodes());
  EXPECT_EQ(CountOps(g, "BatchNormalization"), 1);
  ExpectEquivalent(before, g, 2, kTolerance);
}

TEST(FoldBatchNormTest, ConvOutputThatIsGraphOutputIsNotFolded) {
  Graph g = ConvBnGraph({4, 8, 1, true}, 1);
  g.outputs().push_back(g.FindValue("conv_out"));
  ASSERT_TRUE(FoldBatchNorm(g).ok());
  EXPECT_EQ(CountOps(g, "BatchNormalization"), 1);
}

TEST(FoldBatchNormTest, NonConstantParametersAreNotFolded) {
  std::mt19937 rng(4);
  Graph g;
  ValueId x = g.AddInput("x", DataType::kF32, {1, 2, 4, 4});
  ValueId w = AddRandomF32(g, "w", {3, 2, 1, 1}, rng);
  ValueId conv_out = AddOp(g, "conv", "Conv", {x, w}, {"conv_out"});
  std::vector<ValueId> params = AddBnParams(g, "bn_", 3, rng);
  params[0] = g.AddInput("runtime_scale", DataType::kF32, {3});
  g.outputs().push_back(AddOp(g, "bn", "BatchNormalization",
                              {conv_out, params[0], params[1], params[2],
                               params[3]},
                              {"y"}));
  ASSERT_TRUE(FoldBatchNorm(g).ok());
  EXPECT_EQ(g.num_nodes(), 2);
  EXPECT_EQ(CountOps(g, "BatchNormalization"), 1);
}

TEST(FoldBatchNormTest, BatchNormAfterNonConvIsKept) {
  // DenseNet style: Relu -> BN.
  std::mt19937 rng(5);
  Graph g;
  ValueId x = g.AddInput("x", DataType::kF32, {1, 3, 2, 2});
  ValueId r = AddOp(g, "relu", "Relu", {x}, {"r"});
  std::vector<ValueId> in = {r};
  for (ValueId p : AddBnParams(g, "bn_", 3, rng)) in.push_back(p);
  g.outputs().push_back(AddOp(g, "bn", "BatchNormalization", in, {"y"}));
  ASSERT_TRUE(FoldBatchNorm(g).ok());
  EXPECT_EQ(g.num_nodes(), 2);
}

TEST(FoldBatchNormTest, SharedWeightIsNotMutated) {
  // Two convs share one weight; each is followed by its own BN.
  std::mt19937 rng(6);
  Graph g;
  ValueId x = g.AddInput("x", DataType::kF32, {1, 2, 5, 5});
  ValueId w = AddRandomF32(g, "w", {3, 2, 3, 3}, rng);
  for (const char* branch : {"a", "b"}) {
    const std::string p = branch;
    ValueId c = AddOp(g, "conv_" + p, "Conv", {x, w}, {"conv_out_" + p});
    std::vector<ValueId> in = {c};
    for (ValueId q : AddBnParams(g, "bn_" + p + "_", 3, rng)) in.push_back(q);
    g.outputs().push_back(
        AddOp(g, "bn_" + p, "BatchNormalization", in, {"y_" + p}));
  }
  const std::vector<float> original(g.value(w).constant->as<float>().begin(),
                                    g.value(w).constant->as<float>().end());
  const Graph before = g;
  ASSERT_TRUE(FoldBatchNorm(g).ok());
  EXPECT_EQ(g.num_nodes(), 2);
  EXPECT_EQ(CountOps(g, "BatchNormalization"), 0);
  EXPECT_NE(g.node(0).inputs[1], g.node(1).inputs[1]);
  std::span<const float> still = before.value(w).constant->as<float>();
  EXPECT_TRUE(std::equal(still.begin(), still.end(), original.begin()));
  ExpectEquivalent(before, g, 8, kTolerance);
}

TEST(FoldBatchNormTest, ChainedBatchNormsFoldTwice) {
  Graph g = ConvBnGraph({2, 3, 1, false}, 9);
  std::mt19937 rng(10);
  std::vector<ValueId> in = {g.outputs()[0]};
  for (ValueId p : AddBnParams(g, "bn2_", 3, rng)) in.push_back(p);
  g.outputs()[0] = AddOp(g, "bn2", "BatchNormalization", in, {"z"});
  const Graph before = g;
  ASSERT_TRUE(FoldBatchNorm(g).ok());
  EXPECT_EQ(g.num_nodes(), 1);
  EXPECT_EQ(g.value(g.outputs()[0]).name, "z");
  ExpectEquivalent(before, g, 12, kTolerance);
}

// LeViT's Linear + BatchNorm1d: x[2,5,6] -> MatMul W[6,4] -> [2,5,4] ->
// Flatten(axis 2) or Reshape [-1, 4] -> [10,4] -> BN -> y.
Graph MatMulFlattenBnGraph(bool use_reshape, uint32_t seed) {
  std::mt19937 rng(seed);
  Graph g;
  ValueId x = g.AddInput("x", DataType::kF32, {2, 5, 6});
  ValueId mm = AddOp(g, "linear", "MatMul", {x, AddRandomF32(g, "w", {6, 4}, rng)}, {"mm_out"});
  ValueId flat;
  if (use_reshape) {
    Value shape;
    shape.name = "shape";
    shape.dtype = DataType::kI64;
    shape.has_shape = true;
    shape.shape = {2};
    const std::vector<int64_t> target = {-1, 4};
    shape.constant = TensorData::Copy(target.data(), target.size() * sizeof(int64_t));
    flat = AddOp(g, "flat", "Reshape", {mm, g.AddValue(std::move(shape))}, {"flat"});
  } else {
    Attributes axis;
    axis.Set("axis", int64_t{2});
    flat = AddOp(g, "flat", "Flatten", {mm}, {"flat"}, axis);
  }
  std::vector<ValueId> bn_in = {flat};
  for (ValueId p : AddBnParams(g, "bn_", 4, rng)) bn_in.push_back(p);
  g.outputs().push_back(AddOp(g, "bn", "BatchNormalization", bn_in, {"y"}, Epsilon(1e-5f)));
  EXPECT_TRUE(InferShapes(g, nullptr).ok());
  return g;
}

void ExpectFoldedMatMulBn(bool use_reshape) {
  Graph g = MatMulFlattenBnGraph(use_reshape, 13);
  const Graph before = g;
  ASSERT_TRUE(FoldBatchNorm(g).ok());
  EXPECT_EQ(CountOps(g, "BatchNormalization"), 0);
  EXPECT_EQ(CountOps(g, "MatMul"), 1);
  EXPECT_EQ(CountOps(g, "Add"), 1);  // the shift, before the reshape
  EXPECT_EQ(g.value(g.outputs()[0]).name, "y");
  EXPECT_TRUE(g.Validate().ok());
  ExpectEquivalent(before, g, 21, kTolerance);
  // FuseMatMulBias then makes the MatMul and the shift one Gemm.
  ASSERT_TRUE(FuseMatMulBias(g).ok());
  EXPECT_EQ(CountOps(g, "Gemm"), 1);
  EXPECT_EQ(CountOps(g, "Add"), 0);
  ExpectEquivalent(before, g, 22, kTolerance);
}

TEST(FoldBatchNormTest, MatMulFlattenBatchNorm) { ExpectFoldedMatMulBn(false); }
TEST(FoldBatchNormTest, MatMulFlattenBatchNormWithAShapeReader) {
  // LeViT's export reshapes back with Shape(MatMul output): still folded, and
  // the Shape reads the shifted value so FuseMatMulBias can fuse.
  Graph g = MatMulFlattenBnGraph(false, 15);
  ValueId shape = AddOp(g, "shape", "Shape", {g.FindValue("mm_out")}, {"shape_out"});
  g.outputs().push_back(shape);
  ASSERT_TRUE(InferShapes(g, nullptr).ok());
  const Graph before = g;
  ASSERT_TRUE(FoldBatchNorm(g).ok());
  EXPECT_EQ(CountOps(g, "BatchNormalization"), 0);
  ASSERT_TRUE(FuseMatMulBias(g).ok());
  EXPECT_EQ(CountOps(g, "Gemm"), 1);
  EXPECT_EQ(CountOps(g, "Add"), 0);
  EXPECT_TRUE(g.Validate().ok());
  // The Shape reads a value of the MatMul output's shape; the fp64
  // interpreter has no Shape, so the values compare without it.
  auto drop_shape = [](Graph& graph) {
    std::vector<bool> remove(static_cast<size_t>(graph.num_nodes()), false);
    Shape read;
    for (NodeId id = 0; id < graph.num_nodes(); ++id)
      if (graph.node(id).op_type == "Shape") {
        remove[static_cast<size_t>(id)] = true;
        read = graph.value(graph.node(id).inputs[0]).shape;
      }
    graph.outputs() = {graph.FindValue("y")};
    graph.RemoveNodes(remove);
    return read;
  };
  Graph before_y = before;
  const Shape read_before = drop_shape(before_y);
  EXPECT_EQ(drop_shape(g), read_before);
  EXPECT_EQ(read_before.size(), 3u);
  ExpectEquivalent(before_y, g, 24, kTolerance);
}
TEST(FoldBatchNormTest, MatMulReshapeBatchNorm) { ExpectFoldedMatMulBn(true); }

TEST(FoldBatchNormTest, MatMulReshapeThatMovesTheChannelAxisIsNotFolded) {
  // [2,5,4] -> [5,8]: the BN's channel axis no longer matches W's columns.
  std::mt19937 rng(14);
  Graph g;
  ValueId x = g.AddInput("x", DataType::kF32, {2, 5, 6});
  ValueId mm = AddOp(g, "linear", "MatMul", {x, AddRandomF32(g, "w", {6, 4}, rng)}, {"mm_out"});
  Value shape;
  shape.name = "shape";
  shape.dtype = DataType::kI64;
  shape.has_shape = true;
  shape.shape = {2};
  const std::vector<int64_t> target = {5, 8};
  shape.constant = TensorData::Copy(target.data(), target.size() * sizeof(int64_t));
  ValueId flat = AddOp(g, "flat", "Reshape", {mm, g.AddValue(std::move(shape))}, {"flat"});
  std::vector<ValueId> bn_in = {flat};
  for (ValueId p : AddBnParams(g, "bn_", 8, rng)) bn_in.push_back(p);
  g.outputs().push_back(AddOp(g, "bn", "BatchNormalization", bn_in, {"y"}));
  ASSERT_TRUE(InferShapes(g, nullptr).ok());
  const Graph before = g;
  ASSERT_TRUE(FoldBatchNorm(g).ok());
  EXPECT_EQ(CountOps(g, "BatchNormalization"), 1);
  ExpectEquivalent(before, g, 23, kTolerance);
}

// MixNet: x[1,4,7,7] -> Split-free stand-in: three Convs of x (3x3, 5x5
// depthwise-like groups; widths 2, 3, 4) -> Concat(axis 1) -> BN -> y.
Graph ConcatBnGraph(bool conv_has_other_reader, uint32_t seed) {
  std::mt19937 rng(seed);
  Graph g;
  ValueId x = g.AddInput("x", DataType::kF32, {1, 4, 7, 7});
  std::vector<ValueId> parts;
  const int64_t widths[] = {2, 3, 4};
  const int64_t kernels[] = {1, 3, 5};
  for (int i = 0; i < 3; ++i) {
    Attributes attrs;
    const int64_t pad = kernels[i] / 2;
    attrs.Set("pads", std::vector<int64_t>{pad, pad, pad, pad});
    const std::string n = std::to_string(i);
    std::vector<ValueId> in = {x, AddRandomF32(g, "w" + n, {widths[i], 4, kernels[i], kernels[i]}, rng)};
    if (i == 1) in.push_back(AddRandomF32(g, "b" + n, {widths[i]}, rng));
    parts.push_back(AddOp(g, "conv" + n, "Conv", in, {"part" + n}, attrs));
  }
  Attributes axis;
  axis.Set("axis", int64_t{1});
  ValueId cat = AddOp(g, "concat", "Concat", parts, {"cat"}, axis);
  std::vector<ValueId> bn_in = {cat};
  for (ValueId p : AddBnParams(g, "bn_", 9, rng)) bn_in.push_back(p);
  g.outputs().push_back(AddOp(g, "bn", "BatchNormalization", bn_in, {"y"}, Epsilon(1e-3f)));
  if (conv_has_other_reader) g.outputs().push_back(parts[2]);
  EXPECT_TRUE(InferShapes(g, nullptr).ok());
  return g;
}

TEST(FoldBatchNormTest, ConcatOfConvsBatchNormFoldsIntoEachConv) {
  Graph g = ConcatBnGraph(false, 31);
  const Graph before = g;
  ASSERT_TRUE(FoldBatchNorm(g).ok());
  EXPECT_EQ(CountOps(g, "BatchNormalization"), 0);
  EXPECT_EQ(CountOps(g, "Conv"), 3);
  EXPECT_EQ(g.value(g.outputs()[0]).name, "y");
  EXPECT_TRUE(g.Validate().ok());
  ExpectEquivalent(before, g, 32, kTolerance);
}

TEST(FoldBatchNormTest, ConcatWithAConvReadElsewhereIsNotFolded) {
  Graph g = ConcatBnGraph(true, 33);
  const Graph before = g;
  ASSERT_TRUE(FoldBatchNorm(g).ok());
  EXPECT_EQ(CountOps(g, "BatchNormalization"), 1);
  ExpectEquivalent(before, g, 34, kTolerance);
}

TEST(FoldBatchNormTest, RejectsInvalidGraph) {
  Graph g;
  Node n;
  n.name = "broken";
  n.op_type = "BatchNormalization";
  n.inputs = {42};
  g.nodes().push_back(n);  // AddNode would index the missing values
  EXPECT_FALSE(FoldBatchNorm(g).ok());
}

}  // namespace
}  // namespace braid
