// Graph rewrites whose ops the passes' fp64 interpreter does not know
// (tests/passes/reference_eval_test_util.h): the graph before and after the
// rewrite run through Sessions on braid's reference kernels, on the same
// random non-zero inputs, and must agree. LowerEinsum: the batched-matmul
// equations become Transpose + MatMul (+ Transpose); RemoveIdentities: a
// Slice that keeps its whole input (GhostNet) is dropped, others stay.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "graph/passes/passes.h"
#include "tests/passes/reference_eval_test_util.h"
#include "tests/runtime/reference_session_test_util.h"

namespace braid {
namespace {

using test::RunOnReference;
using test_eval::CountOps;

struct EinsumCase {
  std::string equation;
  std::vector<std::vector<int64_t>> shapes;
  bool lowered;  // expected to become a MatMul
};

Graph EinsumGraph(const EinsumCase& c) {
  Graph g;
  g.set_opset(17);
  Node node;
  node.name = "einsum";
  node.op_type = "Einsum";
  node.attrs.Set("equation", c.equation);
  for (size_t i = 0; i < c.shapes.size(); ++i) {
    Shape s;
    for (int64_t d : c.shapes[i]) s.push_back(Dim(d));
    std::string name = "x";  // not "x" + ...: GCC 12's -Wrestrict false positive
    name += std::to_string(i);
    node.inputs.push_back(g.AddInput(name, DataType::kF32, s));
  }
  node.outputs.push_back(g.AddValue("y"));
  g.outputs().push_back(node.outputs[0]);
  g.AddNode(std::move(node));
  EXPECT_TRUE(InferShapes(g).ok());
  return g;
}

TEST(LowerEinsumTest, BatchedMatMulEquationsBecomeMatMulAndAgree) {
  const std::vector<EinsumCase> cases = {
      {"BGHID,BGHJD->BGHIJ", {{1, 2, 3, 4, 5}, {1, 2, 3, 6, 5}}, true},  // MaxViT q k^T
      {"BGHIJ,BGHJD->BGHID", {{1, 2, 3, 4, 6}, {1, 2, 3, 6, 5}}, true},  // MaxViT attn v
      {"bhid,bhjd->bhji", {{2, 3, 4, 5}, {2, 3, 6, 5}}, true},          // output transposed
      {"ik,kj", {{3, 4}, {4, 5}}, true},                                 // implicit output
      {"kbi,jbk->bij", {{4, 2, 3}, {5, 2, 4}}, true},                    // batch in the middle
      {"ij,ij->ij", {{3, 4}, {3, 4}}, false},                            // no summed label
      {"ii->i", {{3, 3}}, false},                                        // one operand
      {"...ik,...kj->...ij", {{2, 3, 4}, {2, 4, 5}}, false},             // ellipsis
      {"ijk,kl->il", {{2, 3, 4}, {4, 5}}, false},                        // j summed in A alone
  };
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> magnitude(0.1f, 1.0f);
  for (const EinsumCase& c : cases) {
    const Graph before = EinsumGraph(c);
    Graph after = before;
    ASSERT_TRUE(LowerEinsum(after).ok()) << c.equation;
    EXPECT_EQ(CountOps(after, "Einsum"), c.lowered ? 0 : 1) << c.equation;
    EXPECT_EQ(CountOps(after, "MatMul"), c.lowered ? 1 : 0) << c.equation;
    EXPECT_EQ(after.value(after.outputs()[0]).name, "y") << c.equation;
    ASSERT_TRUE(InferShapes(after).ok()) << c.equation;
    std::vector<std::vector<float>> inputs;
    for (const std::vector<int64_t>& shape : c.shapes) {
      int64_t n = 1;
      for (int64_t d : shape) n *= d;
      std::vector<float> v(static_cast<size_t>(n));
      for (float& x : v) x = (rng() % 2 ? -1.0f : 1.0f) * magnitude(rng);
      inputs.push_back(std::move(v));
    }
    const std::vector<std::vector<float>> want = RunOnReference(before, inputs);
    const std::vector<std::vector<float>> got = RunOnReference(after, inputs);
    ASSERT_EQ(want.size(), 1u) << c.equation;
    ASSERT_EQ(got.size(), 1u) << c.equation;
    ASSERT_EQ(got[0].size(), want[0].size()) << c.equation;
    for (size_t i = 0; i < want[0].size(); ++i)
      ASSERT_NEAR(got[0][i], want[0][i], 1e-5 * (1 + std::fabs(want[0][i])))
          << c.equation << " element " << i;
  }
}

// Concat(Relu(x), Sigmoid(x)) on channels, then Slice(starts, ends, axes=[1],
// steps) -> Tanh: GhostNet's module with the Slice's parameters varied.
Graph GhostGraph(int64_t start, int64_t end, int64_t step) {
  Graph g;
  g.set_opset(17);
  const ValueId x = g.AddInput("x", DataType::kF32, {Dim(2), Dim(4), Dim(3), Dim(3)});
  auto add = [&](const std::string& op, std::vector<ValueId> inputs, const std::string& out,
                 Attributes attrs = {}) {
    Node n;
    n.name = out;
    n.op_type = op;
    n.inputs = std::move(inputs);
    n.attrs = std::move(attrs);
    n.outputs = {g.AddValue(out)};
    const ValueId v = n.outputs[0];
    g.AddNode(std::move(n));
    return v;
  };
  auto ints = [&](const std::string& name, int64_t v) {
    return g.AddConstant(name, DataType::kI64, {Dim(1)}, TensorData::Copy(&v, sizeof(v)));
  };
  Attributes axis1;
  axis1.Set("axis", int64_t{1});
  const ValueId cat = add("Concat", {add("Relu", {x}, "a"), add("Sigmoid", {x}, "b")}, "cat", axis1);
  const ValueId sliced = add(
      "Slice", {cat, ints("starts", start), ints("ends", end), ints("axes", 1), ints("steps", step)},
      "sliced");
  g.outputs().push_back(add("Tanh", {sliced}, "y"));
  EXPECT_TRUE(InferShapes(g).ok());
  return g;
}

TEST(RemoveIdentitiesTest, WholeInputSliceIsDroppedAndOthersAgree) {
  struct SliceCase {
    int64_t start, end, step;
    bool dropped;
  };
  const std::vector<SliceCase> cases = {
      {0, 8, 1, true},                       // GhostNet: every channel
      {0, INT64_MAX, 1, true},               // "to the end"
      {-8, 100, 1, true},                    // negative start, clamped end: still all
      {0, 7, 1, false},                      // one channel fewer
      {1, 8, 1, false},                      // shifted
      {0, 8, 2, false},                      // every other channel
      {-1, INT64_MIN, -1, false},            // reversed: same shape, not the identity
  };
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> magnitude(0.1f, 1.0f);
  std::vector<float> input(2 * 4 * 3 * 3);
  for (float& v : input) v = (rng() % 2 ? -1.0f : 1.0f) * magnitude(rng);
  for (const SliceCase& c : cases) {
    const std::string what = "slice [" + std::to_string(c.start) + ", " + std::to_string(c.end) +
                             ") step " + std::to_string(c.step);
    const Graph before = GhostGraph(c.start, c.end, c.step);
    Graph after = before;
    ASSERT_TRUE(RemoveIdentities(after, /*whole_input_slices=*/true).ok()) << what;
    EXPECT_EQ(CountOps(after, "Slice"), c.dropped ? 0 : 1) << what;
    ASSERT_TRUE(InferShapes(after).ok()) << what;
    const std::vector<std::vector<float>> want = RunOnReference(before, {input});
    const std::vector<std::vector<float>> got = RunOnReference(after, {input});
    ASSERT_EQ(want.size(), 1u) << what;
    ASSERT_EQ(got.size(), 1u) << what;
    EXPECT_EQ(got[0], want[0]) << what;  // no arithmetic changes
  }
}

TEST(RemoveIdentitiesTest, SliceIsKeptUntilShapesAreKnown) {
  Graph g = GhostGraph(0, 8, 1);
  for (ValueId v = 0; v < g.num_values(); ++v)
    if (!g.IsConstant(v) && g.value(v).name != "x") g.value(v).has_shape = false;
  ASSERT_TRUE(RemoveIdentities(g, /*whole_input_slices=*/true).ok());
  EXPECT_EQ(CountOps(g, "Slice"), 1);
}

// Before InferShapes a value's shape may be an imported value_info's: a
// Slice is not dropped on it unless asked.
TEST(RemoveIdentitiesTest, SlicesStayUnlessAsked) {
  Graph g = GhostGraph(0, 8, 1);
  ASSERT_TRUE(RemoveIdentities(g).ok());
  EXPECT_EQ(CountOps(g, "Slice"), 1);
}


// nn.GroupNorm(groups, C) as PyTorch exports it before opset 18: Reshape
// [0, G, -1], InstanceNormalization (ones, zeros), Reshape to Shape(x), Mul
// by gamma [C, 1, 1], Add beta [C, 1, 1] -- optionally without the affine.
Graph GroupNormExport(int64_t channels, int64_t groups, bool affine, bool output_after_mul) {
  Graph g;
  g.set_opset(17);
  std::mt19937 rng(static_cast<uint32_t>(channels * 7 + groups));
  std::uniform_real_distribution<float> u(0.5f, 1.5f);
  auto constant = [&](const std::string& name, Shape shape, std::vector<float> v) {
    return g.AddConstant(name, DataType::kF32, std::move(shape), TensorData::Copy(v.data(), v.size() * 4));
  };
  auto node = [&](const std::string& op, std::vector<ValueId> inputs, const std::string& out,
                  Attributes attrs = {}) {
    Node n;
    n.name = "/gn/" + op + "_" + out;
    n.op_type = op;
    n.inputs = std::move(inputs);
    n.attrs = std::move(attrs);
    n.outputs = {g.AddValue(out)};
    const ValueId id = n.outputs[0];
    g.AddNode(std::move(n));
    return id;
  };
  const ValueId x = g.AddInput("x", DataType::kF32, {Dim(2), Dim(channels), Dim(5), Dim(6)});
  const std::vector<int64_t> grouped = {0, groups, -1};
  const ValueId r = node("Reshape", {x, g.AddConstant("grouped", DataType::kI64, {Dim(3)},
                                                      TensorData::Copy(grouped.data(), 24))}, "r");
  Attributes eps;
  eps.Set("epsilon", 1e-3f);
  const ValueId n = node("InstanceNormalization",
                         {r, constant("ones", {Dim(groups)}, std::vector<float>(groups, 1.0f)),
                          constant("zeros", {Dim(groups)}, std::vector<float>(groups, 0.0f))},
                         "n", eps);
  ValueId y = node("Reshape", {n, node("Shape", {x}, "shape")}, "back");
  if (affine) {
    std::vector<float> gamma(channels), beta(channels);
    for (float& v : gamma) v = u(rng);
    for (float& v : beta) v = u(rng) - 1.0f;
    y = node("Mul", {y, constant("gamma", {Dim(channels), Dim(1), Dim(1)}, gamma)}, "scaled");
    if (output_after_mul) g.outputs().push_back(y);
    y = node("Add", {y, constant("beta", {Dim(1), Dim(channels), Dim(1), Dim(1)}, beta)}, "y");
  }
  g.outputs().push_back(node("Relu", {y}, "out"));
  EXPECT_TRUE(InferShapes(g).ok());
  return g;
}

TEST(FuseGroupNormTest, PyTorchExportBecomesOneNodeWithTheSameOutputs) {
  // output_after_mul: the scaled value is also a graph output, so the fused
  // node produces it and the Add of beta stays.
  struct Case {
    int64_t channels, groups;
    bool affine, output_after_mul;
  };
  for (const Case& c : {Case{12, 3, true, false}, Case{8, 1, false, false}, Case{6, 6, true, false},
                        Case{12, 4, true, true}}) {
    SCOPED_TRACE(std::to_string(c.channels) + " channels, " + std::to_string(c.groups) + " groups");
    const Graph before = GroupNormExport(c.channels, c.groups, c.affine, c.output_after_mul);
    Graph after = before;
    ASSERT_TRUE(FuseGroupNorm(after).ok());
    EXPECT_EQ(CountOps(after, "GroupNormalization"), 1);
    EXPECT_EQ(CountOps(after, "Reshape") + CountOps(after, "Mul") + CountOps(after, "Shape") +
                  CountOps(after, "InstanceNormalization"),
              0);
    EXPECT_EQ(CountOps(after, "Add"), c.output_after_mul ? 1 : 0);
    ASSERT_TRUE(InferShapes(after).ok());
    std::mt19937 rng(3);
    std::normal_distribution<float> normal(0.5f, 2.0f);
    std::vector<float> input(static_cast<size_t>(2 * c.channels * 30));
    for (float& v : input) v = normal(rng);
    const std::vector<std::vector<float>> want = RunOnReference(before, {input});
    const std::vector<std::vector<float>> got = RunOnReference(after, {input});
    ASSERT_EQ(want.size(), got.size());
    for (size_t o = 0; o < want.size(); ++o) {
      ASSERT_EQ(want[o].size(), got[o].size());
      for (size_t i = 0; i < want[o].size(); ++i)
        ASSERT_NEAR(got[o][i], want[o][i], 1e-5 * (1 + std::abs(want[o][i]))) << o << ", " << i;
    }
  }
}

}  // namespace
}  // namespace braid
