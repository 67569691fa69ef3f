// MergeParallelConvs: re-parameterizable blocks (RepVGG / MobileOne /
// FastViT) become one Conv, checked structurally and against the fp64
// reference interpreter on random inputs; blocks it must leave alone.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "graph/passes/passes.h"
#include "tests/passes/reference_eval_test_util.h"

namespace braid {
namespace {

using test_eval::AddBnParams;
using test_eval::AddF32;
using test_eval::AddOp;
using test_eval::AddRandomF32;
using test_eval::CountOps;
using test_eval::ExpectEquivalent;

// Merged weights are sums rounded to f32 once.
constexpr double kTolerance = 1e-5;

Attributes ConvAttrs(int64_t group, std::vector<int64_t> pads, std::vector<int64_t> strides = {}) {
  Attributes a;
  a.Set("group", group);
  a.Set("pads", std::move(pads));
  if (!strides.empty()) a.Set("strides", std::move(strides));
  return a;
}

// BN(x) over `channels` (test_eval::AddBnParams).
ValueId AddBatchNorm(Graph& g, const std::string& name, ValueId x, int64_t channels,
                     std::mt19937& rng) {
  std::vector<ValueId> in = {x};
  for (ValueId p : AddBnParams(g, name + "_", channels, rng)) in.push_back(p);
  return AddOp(g, name, "BatchNormalization", in, {name + "_out"});
}

// Infers shapes, runs the pass and expects a single Conv named `name`
// producing "y", equal to the original graph numerically.
void ExpectOneConv(Graph& g, const std::string& name) {
  ASSERT_TRUE(InferShapes(g).ok());  // as in the pipeline (Add(x, 0) needs them)
  const Graph before = g;
  Status s = MergeParallelConvs(g);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(g.num_nodes(), 1);
  EXPECT_EQ(g.node(0).op_type, "Conv");
  EXPECT_EQ(g.node(0).name, name);
  EXPECT_EQ(g.value(g.outputs()[0]).name, "y");
  EXPECT_EQ(g.value(g.outputs()[0]).producer, 0);
  ExpectEquivalent(before, g, 5, kTolerance);
}

// FastViT's RepMixer / MobileOne's depthwise block: BN(x) + 1x1(x) + 3x3(x).
TEST(MergeParallelConvsTest, DepthwiseThreeBranchesBecomeOneConv) {
  std::mt19937 rng(1);
  Graph g;
  ValueId x = g.AddInput("x", DataType::kF32, {2, 4, 7, 6});
  ValueId kxk = AddOp(g, "kxk", "Conv",
                      {x, AddRandomF32(g, "wk", {4, 1, 3, 3}, rng), AddRandomF32(g, "bk", {4}, rng)},
                      {"kxk_out"}, ConvAttrs(4, {1, 1, 1, 1}));
  ValueId scale = AddOp(g, "scale", "Conv", {x, AddRandomF32(g, "ws", {4, 1, 1, 1}, rng)},
                        {"scale_out"}, ConvAttrs(4, {0, 0, 0, 0}));
  ValueId identity = AddBatchNorm(g, "identity", x, 4, rng);
  ValueId s1 = AddOp(g, "add0", "Add", {identity, scale}, {"s1"});
  g.outputs().push_back(AddOp(g, "add1", "Add", {s1, kxk}, {"y"}));
  ExpectOneConv(g, "kxk");
  EXPECT_EQ(g.node(0).attrs.GetInts("pads", {}), (std::vector<int64_t>{1, 1, 1, 1}));
}

// RepVGG's downsampling block: dense 3x3 + 1x1, stride 2, 3 -> 8 channels.
TEST(MergeParallelConvsTest, StridedDenseConvsMerge) {
  std::mt19937 rng(2);
  Graph g;
  ValueId x = g.AddInput("x", DataType::kF32, {1, 3, 9, 8});
  ValueId big = AddOp(g, "big", "Conv",
                      {x, AddRandomF32(g, "wb", {8, 3, 3, 3}, rng), AddRandomF32(g, "bb", {8}, rng)},
                      {"big_out"}, ConvAttrs(1, {1, 1, 1, 1}, {2, 2}));
  ValueId small = AddOp(g, "small", "Conv",
                        {x, AddRandomF32(g, "ws", {8, 3, 1, 1}, rng), AddRandomF32(g, "bs", {8}, rng)},
                        {"small_out"}, ConvAttrs(1, {0, 0, 0, 0}, {2, 2}));
  g.outputs().push_back(AddOp(g, "add", "Add", {small, big}, {"y"}));  // small first
  ExpectOneConv(g, "big");
}

// MobileOne's stem without a scale branch: Add(BN(x), 0) then + 3x3(x);
// grouped (2 groups of 3 channels).
TEST(MergeParallelConvsTest, ZeroBranchDropsAndBatchNormJoinsAGroupedConv) {
  std::mt19937 rng(3);
  Graph g;
  ValueId x = g.AddInput("x", DataType::kF32, {2, 6, 5, 5});
  ValueId identity = AddBatchNorm(g, "identity", x, 6, rng);
  ValueId zero = AddF32(g, "zero", {}, {0.0});
  ValueId s0 = AddOp(g, "add0", "Add", {zero, identity}, {"s0"});
  ValueId kxk = AddOp(g, "kxk", "Conv", {x, AddRandomF32(g, "wk", {6, 3, 3, 3}, rng)},
                      {"kxk_out"}, ConvAttrs(2, {1, 1, 1, 1}));
  g.outputs().push_back(AddOp(g, "add1", "Add", {s0, kxk}, {"y"}));
  ExpectOneConv(g, "kxk");
}

// FastViT's RepMixer: y = x + gamma * (mixer(x) - norm(x)) with mixer a
// depthwise block and norm a BN: the pipeline makes it one depthwise Conv.
TEST(MergeParallelConvsTest, PipelineMakesTheRepMixerOneConv) {
  std::mt19937 rng(7);
  Graph g;
  ValueId x = g.AddInput("x", DataType::kF32, {1, 4, 6, 6});
  ValueId kxk = AddOp(g, "kxk", "Conv",
                      {x, AddRandomF32(g, "wk", {4, 1, 3, 3}, rng), AddRandomF32(g, "bk", {4}, rng)},
                      {"kxk_out"}, ConvAttrs(4, {1, 1, 1, 1}));
  ValueId mixer_bn = AddBatchNorm(g, "mixer_identity", x, 4, rng);
  ValueId mixer = AddOp(g, "mixer_add", "Add", {mixer_bn, kxk}, {"mixer"});
  ValueId norm = AddBatchNorm(g, "norm", x, 4, rng);
  ValueId diff = AddOp(g, "sub", "Sub", {mixer, norm}, {"diff"});
  ValueId scaled = AddOp(g, "mul", "Mul", {diff, AddRandomF32(g, "gamma", {4, 1, 1}, rng)},
                         {"scaled"});
  g.outputs().push_back(AddOp(g, "residual", "Add", {x, scaled}, {"y"}));
  ASSERT_TRUE(InferShapes(g).ok());
  const Graph before = g;
  ASSERT_TRUE(RunDefaultPasses(g).ok());
  ASSERT_EQ(g.num_nodes(), 1);
  EXPECT_EQ(g.node(0).op_type, "Conv");
  EXPECT_EQ(g.value(g.outputs()[0]).name, "y");
  ExpectEquivalent(before, g, 8, kTolerance);
}

// Sub with the Conv second: the merged Conv is negated.
TEST(MergeParallelConvsTest, SubtractedConvMergesNegated) {
  std::mt19937 rng(8);
  Graph g;
  ValueId x = g.AddInput("x", DataType::kF32, {1, 3, 5, 5});
  ValueId bn = AddBatchNorm(g, "bn", x, 3, rng);
  ValueId conv = AddOp(g, "conv", "Conv",
                       {x, AddRandomF32(g, "w", {3, 3, 3, 3}, rng), AddRandomF32(g, "b", {3}, rng)},
                       {"conv_out"}, ConvAttrs(1, {1, 1, 1, 1}));
  g.outputs().push_back(AddOp(g, "sub", "Sub", {bn, conv}, {"y"}));
  ExpectOneConv(g, "conv");
}

TEST(MergeParallelConvsTest, LeavesBlocksItCannotMerge) {
  std::mt19937 rng(4);
  struct Variant {
    const char* why;
    std::vector<int64_t> small_pads;
    bool small_is_output = false;
    bool small_has_activation = false;
  };
  const Variant variants[] = {
      // Same output size but the 1x1 is not centred in the 3x3.
      {"off-centre", {0, 0, 0, 0}},
      {"branch read elsewhere", {0, 0, 0, 0}, true},
      {"branch with a fused activation", {0, 0, 0, 0}, false, true},
  };
  for (const Variant& v : variants) {
    Graph g;
    ValueId x = g.AddInput("x", DataType::kF32, {1, 2, 6, 6});
    const bool off_centre = std::string(v.why) == "off-centre";
    ValueId big = AddOp(g, "big", "Conv", {x, AddRandomF32(g, "wb", {2, 2, 3, 3}, rng)},
                        {"big_out"}, ConvAttrs(1, off_centre ? std::vector<int64_t>{0, 0, 2, 2}
                                                             : std::vector<int64_t>{1, 1, 1, 1}));
    Attributes small_attrs = ConvAttrs(1, v.small_pads);
    if (v.small_has_activation) small_attrs.Set("activation", std::string("Relu"));
    ValueId small = AddOp(g, "small", "Conv", {x, AddRandomF32(g, "ws", {2, 2, 1, 1}, rng)},
                          {"small_out"}, small_attrs);
    g.outputs().push_back(AddOp(g, "add", "Add", {big, small}, {"y"}));
    if (v.small_is_output) g.outputs().push_back(small);
    ASSERT_TRUE(MergeParallelConvs(g).ok()) << v.why;
    EXPECT_EQ(g.num_nodes(), 3) << v.why;
    EXPECT_EQ(CountOps(g, "Add"), 1) << v.why;
  }
}

// The default pipeline merges the block and then fuses its activation.
TEST(MergeParallelConvsTest, PipelineMergesThenFusesTheActivation) {
  std::mt19937 rng(5);
  Graph g;
  ValueId x = g.AddInput("x", DataType::kF32, {1, 4, 6, 6});
  ValueId big = AddOp(g, "big", "Conv", {x, AddRandomF32(g, "wb", {4, 4, 3, 3}, rng)},
                      {"big_out"}, ConvAttrs(1, {1, 1, 1, 1}));
  ValueId small = AddOp(g, "small", "Conv", {x, AddRandomF32(g, "ws", {4, 4, 1, 1}, rng)},
                        {"small_out"}, ConvAttrs(1, {0, 0, 0, 0}));
  ValueId sum = AddOp(g, "add", "Add", {big, small}, {"sum"});
  g.outputs().push_back(AddOp(g, "relu", "Relu", {sum}, {"y"}));
  const Graph before = g;
  ASSERT_TRUE(RunDefaultPasses(g).ok());
  ASSERT_EQ(g.num_nodes(), 1);
  EXPECT_EQ(g.node(0).attrs.GetString("activation", ""), "Relu");
  ExpectEquivalent(before, g, 6, kTolerance);
}

}  // namespace
}  // namespace braid
