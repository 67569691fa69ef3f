// FoldPad: a zero constant Pad of the spatial axes in front of a Conv or an
// AveragePool becomes the reader's pads, checked against the fp64 reference
// interpreter on random non-zero inputs; Pads that change the result when
// folded (non-zero value, reflect mode, channel padding, a pool that does
// not count padding, a second reader) stay.
#include <gtest/gtest.h>

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

constexpr double kTolerance = 1e-12;  // fp64; the same sums either way

struct Case {
  std::string reader = "AveragePool";
  std::vector<int64_t> pads = {0, 0, 1, 2, 0, 0, 1, 0};
  double value = 0.0;
  std::string mode = "constant";
  std::vector<int64_t> own_pads = {0, 0, 0, 0};
  int64_t count_include_pad = 0;
  bool second_reader = false;
  bool pads_attribute = false;  // opset 2-10 form
};

// x[1,3,6,7] -> Relu -> Pad -> reader -> "y" (+ Sigmoid(pad) -> "z").
Graph Build(const Case& c) {
  Graph g;
  g.set_opset(c.pads_attribute ? 10 : 13);
  std::mt19937 rng(11);
  const ValueId x = g.AddInput("x", DataType::kF32, {Dim(1), Dim(3), Dim(6), Dim(7)});
  const ValueId r = AddOp(g, "act", "Relu", {x}, {"r"});
  Attributes pad_attrs;
  pad_attrs.Set("mode", c.mode);
  std::vector<ValueId> pad_inputs = {r};
  if (c.pads_attribute) {
    pad_attrs.Set("pads", c.pads);
    pad_attrs.Set("value", static_cast<float>(c.value));
  } else {
    pad_inputs.push_back(g.AddConstant("pads", DataType::kI64, {Dim(8)},
                                       TensorData::Copy(c.pads.data(), c.pads.size() * 8)));
    pad_inputs.push_back(AddF32(g, "value", {}, {c.value}));
  }
  const ValueId padded = AddOp(g, "pad", "Pad", pad_inputs, {"padded"}, pad_attrs);
  Attributes attrs;
  attrs.Set("pads", c.own_pads);
  ValueId y;
  if (c.reader == "Conv") {
    y = AddOp(g, "conv", "Conv", {padded, AddRandomF32(g, "w", {4, 3, 3, 2}, rng)}, {"y"}, attrs);
  } else {
    attrs.Set("kernel_shape", std::vector<int64_t>{3, 2});
    attrs.Set("count_include_pad", c.count_include_pad);
    y = AddOp(g, "pool", "AveragePool", {padded}, {"y"}, attrs);
  }
  g.outputs().push_back(y);
  if (c.second_reader) g.outputs().push_back(AddOp(g, "other", "Sigmoid", {padded}, {"z"}));
  const Status inferred = InferShapes(g);
  EXPECT_TRUE(inferred.ok()) << inferred.ToString();
  return g;
}

TEST(FoldPadTest, ZeroSpatialPadsBecomeTheReadersPads) {
  std::vector<Case> cases(6);
  cases[1].reader = "Conv";
  cases[2].reader = "Conv";
  cases[2].own_pads = {1, 0, 0, 1};
  cases[3].own_pads = {1, 1, 0, 1};
  cases[3].count_include_pad = 1;
  cases[4].pads_attribute = true;
  cases[5].pads = {0, 0, 0, 0, 0, 0, 0, 0};  // DenseNet's all-zero Pad
  for (const Case& c : cases) {
    const std::string label = c.reader + (c.pads_attribute ? " (pads attribute)" : "");
    const Graph before = Build(c);
    Graph after = before;
    ASSERT_TRUE(FoldPad(after).ok()) << label;
    EXPECT_EQ(CountOps(after, "Pad"), 0) << label;
    for (const Node& n : after.nodes())
      if (n.op_type == c.reader) {
        EXPECT_EQ(after.value(n.inputs[0]).name, "r") << label;
        const bool pads_something = c.pads != std::vector<int64_t>(8, 0);
        if (c.reader == "AveragePool" && pads_something) {
          EXPECT_EQ(n.attrs.GetInt("count_include_pad", 0), 1) << label;
        }
      }
    ExpectEquivalent(before, after, 3, kTolerance);
  }
}

TEST(FoldPadTest, AllZeroPadsDisappearWhateverReadsThem) {
  Case c;
  c.pads = {0, 0, 0, 0, 0, 0, 0, 0};
  c.second_reader = true;  // a Sigmoid reads the Pad's output too
  const Graph before = Build(c);
  Graph after = before;
  ASSERT_TRUE(FoldPad(after).ok());
  EXPECT_EQ(CountOps(after, "Pad"), 0);
  for (const Node& n : after.nodes())
    if (n.op_type == "Sigmoid" || n.op_type == "AveragePool") {
      EXPECT_EQ(after.value(n.inputs[0]).name, "r") << n.op_type;
    }
  ExpectEquivalent(before, after, 4, kTolerance);
}

TEST(FoldPadTest, PadsThatCannotFoldStay) {
  std::vector<Case> cases(6);
  cases[0].value = 0.5;                          // padding with a non-zero value
  cases[1].mode = "reflect";
  cases[2].pads = {0, 1, 0, 0, 0, 0, 1, 0};      // channel padding
  cases[3].own_pads = {1, 0, 0, 0};              // pool excluding its own padding
  cases[4].second_reader = true;
  cases[5].pads = {0, 0, -1, 0, 0, 0, 0, 0};     // a crop
  cases[5].reader = "Conv";
  for (size_t i = 0; i < cases.size(); ++i) {
    Graph g = Build(cases[i]);
    ASSERT_TRUE(FoldPad(g).ok()) << "case " << i;
    EXPECT_EQ(CountOps(g, "Pad"), 1) << "case " << i;
  }
}

}  // namespace
}  // namespace braid
