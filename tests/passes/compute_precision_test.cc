// MarkComputePrecision (`braid convert --precision bf16`): every f32 Conv,
// MatMul and Gemm gets precision = bf16 and nothing else changes; a node of
// those op types on another dtype is listed with the reason; "f32" takes the
// attribute off; another value is an error.
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

// x -> Conv -> Relu -> Flatten -> Gemm -> MatMul, and an f64 MatMul beside.
Graph Mixed() {
  Graph g;
  std::mt19937 rng(5);
  const ValueId x = g.AddInput("x", DataType::kF32, {1, 3, 6, 6});
  const ValueId w = AddRandomF32(g, "w", {4, 3, 3, 3}, rng);
  const ValueId conv = AddOp(g, "conv", "Conv", {x, w}, {"conv_out"});
  const ValueId relu = AddOp(g, "relu", "Relu", {conv}, {"relu_out"});
  const ValueId flat = AddOp(g, "flatten", "Flatten", {relu}, {"flat"});
  const ValueId b = AddRandomF32(g, "b", {64, 8}, rng);
  const ValueId gemm = AddOp(g, "gemm", "Gemm", {flat, b}, {"gemm_out"});
  const ValueId c = AddRandomF32(g, "c", {8, 2}, rng);
  g.outputs().push_back(AddOp(g, "matmul", "MatMul", {gemm, c}, {"y"}));
  const ValueId d = g.AddInput("d", DataType::kF64, {2, 2});
  g.outputs().push_back(AddOp(g, "matmul_f64", "MatMul", {d, d}, {"y64"}));
  return g;
}

TEST(MarkComputePrecisionTest, MarksEveryF32ConvMatMulAndGemm) {
  Graph g = Mixed();
  ASSERT_TRUE(InferShapes(g).ok());
  StatusOr<ComputePrecisionReport> report = MarkComputePrecision(g, "bf16");
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->marked, (std::vector<std::string>{"conv", "gemm", "matmul"}));
  ASSERT_EQ(report->kept.size(), 1u);
  EXPECT_EQ(report->kept[0].first, "matmul_f64");
  EXPECT_EQ(report->kept[0].second, "its input is f64, not f32");
  for (const Node& n : g.nodes()) {
    const bool marked = n.name == "conv" || n.name == "gemm" || n.name == "matmul";
    EXPECT_EQ(n.attrs.GetString("precision", "none"), marked ? "bf16" : "none") << n.name;
  }
  // Shape inference accepts the attribute (a string).
  EXPECT_TRUE(InferShapes(g).ok());

  ASSERT_TRUE(MarkComputePrecision(g, "f32").ok());
  for (const Node& n : g.nodes()) EXPECT_FALSE(n.attrs.Has("precision")) << n.name;
}

TEST(MarkComputePrecisionTest, UnknownPrecisionIsAnError) {
  Graph g = Mixed();
  StatusOr<ComputePrecisionReport> report = MarkComputePrecision(g, "fp8");
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(report.status().message().find("'fp8'"), std::string::npos);
  for (const Node& n : g.nodes()) EXPECT_FALSE(n.attrs.Has("precision")) << n.name;
}

TEST(MarkComputePrecisionTest, ShapeInferenceRejectsANonStringPrecision) {
  Graph g = Mixed();
  g.nodes()[0].attrs.Set("precision", int64_t{16});
  Status s = InferShapes(g);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("'precision' must be a string"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace braid
