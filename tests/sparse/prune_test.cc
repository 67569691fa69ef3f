// graph/passes/prune: exact per-layer fractions, magnitude order, block
// structure, skip rules, option parsing; and the annotation of sparsity a
// model already has (no pruning) and after pruning.
#include "graph/passes/prune.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "graph/annotate.h"
#include "graph/passes/passes.h"
#include "tests/sparse/sparse_test_util.h"

namespace braid {
namespace {

ValueId Weight(Graph& g, const std::string& name, std::vector<int64_t> dims,
               std::mt19937& rng, std::vector<float> data = {}) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  if (data.empty()) data = sparse_test::RandomNonZero(n, rng);
  return g.AddConstant(name, DataType::kF32, StaticShape(dims),
                       TensorData::Copy(data.data(), data.size() * sizeof(float)));
}

void AddOp(Graph& g, const std::string& name, const std::string& op, ValueId x,
           ValueId w, std::vector<std::pair<std::string, AttributeValue>> attrs = {}) {
  Node n;
  n.name = name;
  n.op_type = op;
  n.inputs = {x, w};
  n.outputs = {g.AddValue(name + "_out")};
  for (auto& [k, v] : attrs) n.attrs.Set(k, v);
  g.AddNode(std::move(n));
}

// stem 3x3 conv, depthwise 3x3, 1x1 conv, Gemm (transB), Gemm, MatMul. The
// graph is only a holder of weights here (pruning reads no shapes but the
// weights').
Graph Layers(std::mt19937& rng) {
  Graph g;
  const ValueId x = g.AddInput("x", DataType::kF32, StaticShape(std::vector<int64_t>{1, 3, 8, 8}));
  AddOp(g, "stem", "Conv", x, Weight(g, "w_stem", {16, 3, 3, 3}, rng));
  AddOp(g, "dw", "Conv", x, Weight(g, "w_dw", {16, 1, 3, 3}, rng), {{"group", int64_t{16}}});
  AddOp(g, "pw", "Conv", x, Weight(g, "w_pw", {24, 16, 1, 1}, rng));
  AddOp(g, "fc_t", "Gemm", x, Weight(g, "w_fc_t", {10, 37}, rng), {{"transB", int64_t{1}}});
  AddOp(g, "fc", "Gemm", x, Weight(g, "w_fc", {37, 10}, rng));
  AddOp(g, "mm", "MatMul", x, Weight(g, "w_mm", {2, 13, 9}, rng));
  return g;
}

std::span<const float> WeightOf(const Graph& g, const std::string& node) {
  for (const Node& n : g.nodes())
    if (n.name == node) return g.value(n.inputs[1]).constant->as<float>();
  ADD_FAILURE() << node;
  return {};
}

int64_t Zeros(std::span<const float> w) { return std::count(w.begin(), w.end(), 0.0f); }

TEST(Prune, UnstructuredZeroesTheExactFractionOfSmallestWeightsPerLayer) {
  std::mt19937 rng(1);
  Graph g = Layers(rng);
  const Graph before = g;
  for (double ratio : {0.0, 0.5, 0.9, 0.99, 1.0}) {
    g = before;
    PruneOptions o;
    o.ratio = ratio;
    StatusOr<PruneReport> r = PruneWeights(g, o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->layers.size(), 6u);
    EXPECT_TRUE(r->skipped.empty());
    for (const PrunedLayer& layer : r->layers) {
      SCOPED_TRACE(layer.node + " ratio " + std::to_string(ratio));
      std::span<const float> w = WeightOf(g, layer.node);
      std::span<const float> old = WeightOf(before, layer.node);
      const int64_t n = static_cast<int64_t>(w.size());
      EXPECT_EQ(Zeros(w), std::llround(ratio * static_cast<double>(n)));
      EXPECT_EQ(layer.zeros_after, Zeros(w));
      EXPECT_EQ(layer.zeros_before, 0);
      // Every zeroed weight was no larger than every kept one.
      float largest_zeroed = 0, smallest_kept = INFINITY;
      for (size_t i = 0; i < w.size(); ++i) {
        if (w[i] == 0.0f) largest_zeroed = std::max(largest_zeroed, std::fabs(old[i]));
        else {
          smallest_kept = std::min(smallest_kept, std::fabs(w[i]));
          EXPECT_EQ(w[i], old[i]);
        }
      }
      EXPECT_LE(largest_zeroed, smallest_kept);
    }
  }
  // The original graph's constants were not touched (copy on prune).
  EXPECT_EQ(Zeros(WeightOf(before, "pw")), 0);
}

// Checks that w, seen as [rows, cols] with element (r, c) at
// r * row_stride + c * col_stride, is zero in whole blocks only, and that
// round(ratio * blocks) blocks are zero.
void ExpectBlocks(std::span<const float> w, int64_t rows, int64_t cols, int64_t row_stride,
                  int64_t col_stride, int64_t br, int64_t bc, double ratio) {
  const int64_t brs = (rows + br - 1) / br, bcs = (cols + bc - 1) / bc;
  int64_t zero_blocks = 0;
  for (int64_t i = 0; i < brs; ++i) {
    for (int64_t j = 0; j < bcs; ++j) {
      int64_t zeros = 0, count = 0;
      for (int64_t r = i * br; r < std::min(rows, (i + 1) * br); ++r)
        for (int64_t c = j * bc; c < std::min(cols, (j + 1) * bc); ++c, ++count)
          zeros += w[static_cast<size_t>(r * row_stride + c * col_stride)] == 0.0f;
      EXPECT_TRUE(zeros == 0 || zeros == count) << "block " << i << "," << j;
      zero_blocks += zeros == count;
    }
  }
  EXPECT_EQ(zero_blocks, std::llround(ratio * static_cast<double>(brs * bcs)));
}

TEST(Prune, BlockStructureZeroesWholeBlocksAlongOutputsAndReduction) {
  std::mt19937 rng(2);
  for (auto [br, bc] : std::vector<std::pair<int64_t, int64_t>>{{4, 4}, {1, 4}, {4, 1}, {3, 5}}) {
    SCOPED_TRACE(std::to_string(br) + "x" + std::to_string(bc));
    Graph g = Layers(rng);
    PruneOptions o;
    o.ratio = 0.75;
    o.block_rows = br;
    o.block_cols = bc;
    ASSERT_TRUE(PruneWeights(g, o).ok());
    ExpectBlocks(WeightOf(g, "stem"), 16, 27, 27, 1, br, bc, 0.75);
    ExpectBlocks(WeightOf(g, "pw"), 24, 16, 16, 1, br, bc, 0.75);
    ExpectBlocks(WeightOf(g, "fc_t"), 10, 37, 37, 1, br, bc, 0.75);  // [N, K]
    ExpectBlocks(WeightOf(g, "fc"), 10, 37, 1, 10, br, bc, 0.75);    // [K, N]
    // MatMul [2, 13, 9]: two [K=13, N=9] matrices; blocks counted over both.
    std::span<const float> mm = WeightOf(g, "mm");
    const int64_t per = ((9 + br - 1) / br) * ((13 + bc - 1) / bc);
    int64_t zero_elements = Zeros(mm);
    EXPECT_GE(zero_elements, 1);
    EXPECT_LE(zero_elements, std::llround(0.75 * 2.0 * static_cast<double>(per)) * br * bc);
  }
}

TEST(Prune, SkipRulesKeepTheStemAndDepthwiseDense) {
  std::mt19937 rng(3);
  Graph g = Layers(rng);
  PruneOptions o;
  o.ratio = 0.9;
  ASSERT_TRUE(ParsePruneSkip("first,depthwise", o).ok());
  StatusOr<PruneReport> r = PruneWeights(g, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Zeros(WeightOf(g, "stem")), 0);
  EXPECT_EQ(Zeros(WeightOf(g, "dw")), 0);
  EXPECT_EQ(Zeros(WeightOf(g, "pw")), std::llround(0.9 * 24 * 16));
  ASSERT_EQ(r->skipped.size(), 2u);
  EXPECT_EQ(r->skipped[0], "node 'stem' (Conv): first layer");
  EXPECT_EQ(r->skipped[1], "node 'dw' (Conv): depthwise");
  EXPECT_EQ(r->layers.size(), 4u);
}

TEST(Prune, SharedWeightsArePrunedOnceAndRuntimeWeightsSkipped) {
  std::mt19937 rng(4);
  Graph g;
  const ValueId x = g.AddInput("x", DataType::kF32, StaticShape(std::vector<int64_t>{2, 8}));
  const ValueId w = Weight(g, "w", {8, 8}, rng);
  AddOp(g, "a", "MatMul", x, w);
  AddOp(g, "b", "MatMul", x, w);
  AddOp(g, "c", "MatMul", x, x);
  PruneOptions o;
  o.ratio = 0.5;
  StatusOr<PruneReport> r = PruneWeights(g, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->layers.size(), 1u);
  EXPECT_EQ(Zeros(WeightOf(g, "a")), 32);
  ASSERT_EQ(r->skipped.size(), 1u);
  EXPECT_NE(r->skipped[0].find("not a constant"), std::string::npos);
}

TEST(Prune, ParsesOptionsAndRejectsBadOnes) {
  PruneOptions o;
  ASSERT_TRUE(ParsePruneStructure("block:4x1", o).ok());
  EXPECT_EQ(o.block_rows, 4);
  EXPECT_EQ(o.block_cols, 1);
  ASSERT_TRUE(ParsePruneStructure("unstructured", o).ok());
  EXPECT_EQ(o.block_rows, 1);
  for (const char* bad : {"block:0x4", "block:4", "block:4x", "blocks:4x4", "block:ax2", ""})
    EXPECT_EQ(ParsePruneStructure(bad, o).code(), StatusCode::kInvalidArgument) << bad;
  EXPECT_EQ(ParsePruneSkip("first,last", o).code(), StatusCode::kInvalidArgument);
  Graph g;
  o.ratio = 1.5;
  EXPECT_EQ(PruneWeights(g, o).status().code(), StatusCode::kInvalidArgument);
  o.ratio = 0.5;
  o.block_rows = 0;
  EXPECT_EQ(PruneWeights(g, o).status().code(), StatusCode::kInvalidArgument);
}

// A conv whose weights already hold zeros (a pruned model) is annotated with
// that sparsity without any pruning; pruning then raises it.
TEST(Prune, AnnotationReportsExistingAndPrunedSparsity) {
  std::mt19937 rng(5);
  std::vector<float> w = sparse_test::RandomNonZero(8 * 4 * 9, rng);
  sparse_test::Sparsify(w, 8, 36, 0.6, 1, 1, rng);
  Graph g;
  const ValueId x = g.AddInput("x", DataType::kF32, StaticShape(std::vector<int64_t>{1, 4, 6, 6}));
  Node conv;
  conv.name = "conv";
  conv.op_type = "Conv";
  conv.inputs = {x, Weight(g, "w", {8, 4, 3, 3}, rng, w), Weight(g, "b", {8}, rng)};
  conv.outputs = {g.AddValue("y")};
  conv.attrs.Set("kernel_shape", std::vector<int64_t>{3, 3});
  g.AddNode(std::move(conv));
  g.outputs().push_back(g.node(0).outputs[0]);
  ASSERT_TRUE(InferShapes(g).ok());
  ASSERT_TRUE(Annotate(g).ok());
  // Zeros over all constant inputs of the node: 0.6 of 288 weights, no bias zeros.
  EXPECT_NEAR(g.node(0).annotation.weight_sparsity, std::llround(0.6 * 288) / 296.0, 1e-12);

  PruneOptions o;
  o.ratio = 0.9;
  StatusOr<PruneReport> r = PruneWeights(g, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->layers[0].zeros_before, std::llround(0.6 * 288));
  EXPECT_EQ(r->layers[0].zeros_after, std::llround(0.9 * 288));
  ASSERT_TRUE(Annotate(g).ok());
  EXPECT_NEAR(g.node(0).annotation.weight_sparsity, std::llround(0.9 * 288) / 296.0, 1e-12);
}

}  // namespace
}  // namespace braid
