// FuseMatMulBias: MatMul + constant last-axis bias Add becomes one Gemm
// (reshaped to rows and back for an A of rank > 2), checked against the fp64
// reference interpreter on random non-zero inputs; near misses stay.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "graph/passes/passes.h"
#include "tests/passes/reference_eval_test_util.h"

namespace braid {
namespace {

using test_eval::AddOp;
using test_eval::AddRandomF32;
using test_eval::CountOps;
using test_eval::ExpectEquivalent;

// Rounding: the fused and unfused sums differ in order only (fp64 here).
constexpr double kTolerance = 1e-9;

struct Linear {
  Graph g;
  ValueId y = kNoValue;  // the MatMul's output
  std::mt19937 rng{3};
};

// Relu(x) (so A is computed) -> MatMul by a constant [6, 4] (Relu(constant)
// when `computed_b`) -> "mm_out".
Linear StartLinear(Shape x_shape, bool computed_b = false) {
  Linear l;
  const ValueId x = l.g.AddInput("x", DataType::kF32, std::move(x_shape));
  const ValueId a = AddOp(l.g, "act", "Relu", {x}, {"a"});
  ValueId w = AddRandomF32(l.g, "w", {6, 4}, l.rng);
  if (computed_b) w = AddOp(l.g, "act_w", "Relu", {w}, {"w_act"});
  l.y = AddOp(l.g, "mm", "MatMul", {a, w}, {"mm_out"});
  return l;
}

std::vector<std::string> OpTypes(const Graph& g) {
  std::vector<std::string> out;
  for (const Node& n : g.nodes()) out.push_back(n.op_type);
  return out;
}

TEST(FuseMatMulBiasTest, ThreeDimensionalLinearBecomesRowsGemmUnrows) {
  Linear l = StartLinear({2, 5, 6});
  const ValueId bias = AddRandomF32(l.g, "b", {4}, l.rng);
  l.g.outputs().push_back(AddOp(l.g, "add", "Add", {l.y, bias}, {"z"}));
  ASSERT_TRUE(InferShapes(l.g).ok());
  const Graph before = l.g;
  ASSERT_TRUE(FuseMatMulBias(l.g).ok());
  ASSERT_TRUE(InferShapes(l.g).ok());
  EXPECT_EQ(OpTypes(l.g), (std::vector<std::string>{"Relu", "Reshape", "Gemm", "Reshape"}));
  const Node& gemm = l.g.node(2);
  EXPECT_EQ(gemm.name, "mm");  // the MatMul's name stays
  EXPECT_EQ(l.g.node(1).name, "mm/rows");
  EXPECT_EQ(l.g.node(3).name, "mm/unrows");
  EXPECT_EQ(l.g.value(gemm.inputs[0]).shape, (Shape{10, 6}));
  EXPECT_EQ(l.g.value(gemm.outputs[0]).shape, (Shape{10, 4}));
  EXPECT_EQ(l.g.value(l.g.outputs()[0]).name, "z");  // the Add's output stays
  EXPECT_EQ(l.g.value(l.g.outputs()[0]).shape, (Shape{2, 5, 4}));
  ExpectEquivalent(before, l.g, 5, kTolerance);
}

TEST(FuseMatMulBiasTest, TwoDimensionalLinearIsOneGemmBiasFirstOrRowShaped) {
  for (std::vector<int64_t> bias_dims : {std::vector<int64_t>{1, 4}, std::vector<int64_t>{1}}) {
    Linear l = StartLinear({3, 6});
    const ValueId bias = AddRandomF32(l.g, "b", bias_dims, l.rng);
    l.g.outputs().push_back(AddOp(l.g, "add", "Add", {bias, l.y}, {"z"}));  // bias first
    ASSERT_TRUE(InferShapes(l.g).ok());
    const Graph before = l.g;
    ASSERT_TRUE(FuseMatMulBias(l.g).ok());
    EXPECT_EQ(OpTypes(l.g), (std::vector<std::string>{"Relu", "Gemm"}));
    EXPECT_EQ(l.g.value(l.g.node(1).inputs[2]).shape, (Shape{4}));  // a scalar is spread
    ExpectEquivalent(before, l.g, 7, kTolerance);
  }
}

TEST(FuseMatMulBiasTest, SymbolicBatchStaysSymbolic) {
  Linear l = StartLinear({Dim::Symbol("N"), 5, 6});
  const ValueId bias = AddRandomF32(l.g, "b", {1, 1, 4}, l.rng);
  l.g.outputs().push_back(AddOp(l.g, "add", "Add", {l.y, bias}, {"z"}));
  ASSERT_TRUE(InferShapes(l.g).ok());
  ASSERT_TRUE(FuseMatMulBias(l.g).ok());
  Status s = InferShapes(l.g);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(CountOps(l.g, "Gemm"), 1);
  EXPECT_EQ(l.g.value(l.g.outputs()[0]).shape, (Shape{Dim::Symbol("N"), 5, 4}));
  // The rows of a symbolic batch: N * 5, 5 per unit of batch.
  const Node& gemm = l.g.node(2);
  EXPECT_EQ(ElementCount(l.g.value(gemm.inputs[0]).shape), 5 * 6);
}

TEST(FuseMatMulBiasTest, NearMissesStay) {
  // Variant 0 is the positive control (fused); then a bias along another
  // axis, a bias of higher rank than the output, a second reader of the
  // MatMul's output, the MatMul's output a graph output, a computed B, a
  // MatMul with a fused activation, an empty leading dim, and Add and MatMul
  // pinned to different devices.
  for (int variant = 0; variant < 9; ++variant) {
    Linear l = StartLinear(variant == 7 ? Shape{2, 0, 6} : Shape{2, 5, 6},
                           /*computed_b=*/variant == 5);
    ValueId y = l.y, bias;
    switch (variant) {
      case 1: bias = AddRandomF32(l.g, "b", {5, 1}, l.rng); break;
      case 2: bias = AddRandomF32(l.g, "b", {1, 1, 1, 4}, l.rng); break;
      default: bias = AddRandomF32(l.g, "b", {4}, l.rng); break;
    }
    if (variant == 6) l.g.node(1).attrs.Set("activation", std::string("Relu"));
    l.g.outputs().push_back(AddOp(l.g, "add", "Add", {y, bias}, {"z"}));
    if (variant == 3) l.g.outputs().push_back(AddOp(l.g, "other", "Relu", {y}, {"o"}));
    if (variant == 4) l.g.outputs().push_back(y);
    if (variant == 8) l.g.node(l.g.num_nodes() - 1).device_pin = "cpu";
    Status shapes = InferShapes(l.g);
    ASSERT_TRUE(shapes.ok()) << variant << ": " << shapes.ToString();
    const int nodes = l.g.num_nodes();
    Status s = FuseMatMulBias(l.g);
    ASSERT_TRUE(s.ok()) << variant << ": " << s.ToString();
    EXPECT_EQ(CountOps(l.g, "Gemm"), variant == 0 ? 1 : 0) << variant;
    EXPECT_EQ(l.g.num_nodes(), variant == 0 ? nodes + 1 : nodes) << variant;  // + 2 Reshapes - Add
    EXPECT_TRUE(InferShapes(l.g).ok()) << variant;
  }
}

}  // namespace
}  // namespace braid
