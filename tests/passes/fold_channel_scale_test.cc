// FoldChannelScale: per-output-channel Mul / Div after Conv and Gemm folds
// into the weights (checked against the fp64 reference interpreter on random
// inputs); scales that are not per channel, zero divisors and shared outputs
// stay.
#include <gtest/gtest.h>

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

constexpr double kTolerance = 1e-5;  // products rounded to f32 once

// x[2,3,5,4] -> Conv(4 out, 3x3, pads 1, bias) -> "conv_out" [2,4,5,4]: as
// wide as it has channels, so a [4] operand is shaped like a channel scale
// but aligns with the width.
ValueId AddConv(Graph& g, std::mt19937& rng) {
  ValueId x = g.AddInput("x", DataType::kF32, {2, 3, 5, 4});
  Attributes attrs;
  attrs.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
  return AddOp(g, "conv", "Conv",
               {x, AddRandomF32(g, "w", {4, 3, 3, 3}, rng), AddRandomF32(g, "b", {4}, rng)},
               {"conv_out"}, attrs);
}

void ExpectFolded(Graph& g, const std::string& op, uint32_t seed) {
  const Graph before = g;
  ASSERT_TRUE(FoldChannelScale(g).ok());
  ASSERT_EQ(g.num_nodes(), 1);
  EXPECT_EQ(g.node(0).op_type, op);
  EXPECT_EQ(g.value(g.outputs()[0]).name, "y");
  ExpectEquivalent(before, g, seed, kTolerance);
}

TEST(FoldChannelScaleTest, ConvTimesLayerScale) {
  std::mt19937 rng(1);
  Graph g;
  ValueId conv = AddConv(g, rng);
  ValueId gamma = AddRandomF32(g, "gamma", {1, 4, 1, 1}, rng);
  g.outputs().push_back(AddOp(g, "mul", "Mul", {gamma, conv}, {"y"}));  // constant first
  ExpectFolded(g, "Conv", 2);
}

TEST(FoldChannelScaleTest, ConvDividedByChannelConstant) {
  std::mt19937 rng(2);
  Graph g;
  ValueId conv = AddConv(g, rng);
  ValueId d = AddF32(g, "d", {4, 1, 1}, {2.0, -0.5, 4.0, 1.5});
  g.outputs().push_back(AddOp(g, "div", "Div", {conv, d}, {"y"}));
  ExpectFolded(g, "Conv", 3);
}

TEST(FoldChannelScaleTest, GemmTimesRowScale) {
  std::mt19937 rng(3);
  Graph g;
  ValueId a = g.AddInput("a", DataType::kF32, {3, 5});
  Attributes trans;
  trans.Set("transB", int64_t{1});
  ValueId mm = AddOp(g, "fc", "Gemm",
                     {a, AddRandomF32(g, "bw", {6, 5}, rng), AddRandomF32(g, "c", {6}, rng)},
                     {"mm"}, trans);
  g.outputs().push_back(AddOp(g, "mul", "Mul", {mm, AddRandomF32(g, "s", {6}, rng)}, {"y"}));
  ExpectFolded(g, "Gemm", 4);
}

TEST(FoldChannelScaleTest, LeavesWhatIsNotAChannelScale) {
  for (int variant = 0; variant < 4; ++variant) {
    std::mt19937 rng(10 + static_cast<uint32_t>(variant));
    Graph g;
    ValueId conv = AddConv(g, rng);
    ValueId y;
    if (variant == 0) {  // [C] aligns with the width axis of NCHW
      y = AddOp(g, "mul", "Mul", {conv, AddRandomF32(g, "s", {4}, rng)}, {"y"});
    } else if (variant == 1) {  // a zero divisor
      y = AddOp(g, "div", "Div", {conv, AddF32(g, "d", {1, 4, 1, 1}, {1, 0, 2, 3})}, {"y"});
    } else if (variant == 2) {  // the constant is the dividend
      y = AddOp(g, "div", "Div", {AddRandomF32(g, "d", {1, 4, 1, 1}, rng), conv}, {"y"});
    } else {  // the Conv output is read elsewhere too
      y = AddOp(g, "mul", "Mul", {conv, AddRandomF32(g, "s", {1, 4, 1, 1}, rng)}, {"y"});
      g.outputs().push_back(conv);
    }
    g.outputs().insert(g.outputs().begin(), y);
    ASSERT_TRUE(FoldChannelScale(g).ok()) << variant;
    EXPECT_EQ(g.num_nodes(), 2) << variant;
    EXPECT_EQ(CountOps(g, "Conv"), 1) << variant;
  }
}

}  // namespace
}  // namespace braid
