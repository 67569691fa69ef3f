// Dense or sparse per op: below the crossover of its op class a sparse
// kernel declines with the reason and the CPU backend runs oneDNN; at or
// above it the sparse kernel is chosen. Also the crossover table's parsing.
#include <gtest/gtest.h>

#include <random>

#include "kernels/cpu/cpu_device.h"
#include "kernels/cpu/sparse/sparse_kernels.h"
#include "tests/sparse/sparse_test_util.h"

namespace braid {
namespace {

using sparse_test::Input;
using sparse_test::OneNode;

std::unique_ptr<OneNode> Conv1x1(double sparsity) {
  std::mt19937 rng(3);
  std::vector<float> w = sparse_test::RandomNonZero(10 * 10, rng);
  sparse_test::Sparsify(w, 10, 10, sparsity, 1, 1, rng);
  return OneNode::Build("Conv", {{"kernel_shape", std::vector<int64_t>{1, 1}}},
                        {{{1, 10, 4, 4}, sparse_test::RandomNonZero(160, rng)},
                         {{10, 10, 1, 1}, w, true}});
}

TEST(SparseFallback, BelowCrossoverDeclinesWithTheReason) {
  auto node = Conv1x1(0.42);
  SparseKernelOptions options;
  options.crossover.conv1x1 = 0.70;
  std::unique_ptr<Kernel> k = CreateConvSparse(options);
  Status s = k->Prepare(node->Args());
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_NE(s.message().find("weight sparsity 0.42 below the 0.70 crossover for 1x1 Conv"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("node 'op' (Conv)"), std::string::npos) << s.message();
}

TEST(SparseFallback, CpuBackendPicksOnednnBelowAndSparseAbove) {
  CpuKernelOptions options;
  options.sparse_options.crossover = {0.70, 0.75, 0.50};
  KernelRegistry registry;
  RegisterCpuKernels(registry, options);
  ASSERT_EQ(registry.Candidates("Conv", DeviceKind::kCpu).front()->impl, "sparse");

  auto dense = Conv1x1(0.42);
  StatusOr<PreparedKernel> below = PrepareFirstAccepting(registry, DeviceKind::kCpu, dense->Args());
  ASSERT_TRUE(below.ok()) << below.status().ToString();
  EXPECT_EQ(below->entry->impl, "onednn");
  ASSERT_EQ(below->declined.size(), 1u);
  EXPECT_EQ(below->declined[0].impl, "sparse");
  EXPECT_NE(below->declined[0].reason.find("below the 0.70 crossover"), std::string::npos);
  // A sparse kernel declining a dense layer is routine, not a fallback.
  EXPECT_TRUE(below->declined[0].routine);
  EXPECT_FALSE(below->fell_back());

  auto sparse = Conv1x1(0.9);
  StatusOr<PreparedKernel> above = PrepareFirstAccepting(registry, DeviceKind::kCpu, sparse->Args());
  ASSERT_TRUE(above.ok()) << above.status().ToString();
  EXPECT_EQ(above->entry->impl, "sparse");
  EXPECT_TRUE(above->declined.empty());
  // And it computes what the reference does.
  std::vector<float> got;
  std::unique_ptr<Kernel> k = above->entry->create();
  ASSERT_TRUE(sparse->Run(*k, 1, &got).ok());
  EXPECT_LE(sparse_test::WorstError(got, sparse->Reference(), 1e-4, 1e-4), 1.0);

  // Raising the crossover above 0.9 sends it back to oneDNN.
  options.sparse_options.crossover.conv1x1 = 0.95;
  KernelRegistry strict;
  RegisterCpuKernels(strict, options);
  StatusOr<PreparedKernel> raised = PrepareFirstAccepting(strict, DeviceKind::kCpu, sparse->Args());
  ASSERT_TRUE(raised.ok());
  EXPECT_EQ(raised->entry->impl, "onednn");

  // Without the sparse kernels, oneDNN runs with no fallback.
  options.sparse = false;
  KernelRegistry off;
  RegisterCpuKernels(off, options);
  StatusOr<PreparedKernel> plain = PrepareFirstAccepting(off, DeviceKind::kCpu, sparse->Args());
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->entry->impl, "onednn");
  EXPECT_TRUE(plain->declined.empty());
}

TEST(SparseFallback, OpClassesUseTheirOwnCrossover) {
  std::mt19937 rng(5);
  std::vector<float> w = sparse_test::RandomNonZero(8 * 4 * 9, rng);
  sparse_test::Sparsify(w, 8, 36, 0.6, 1, 1, rng);
  auto conv3 = OneNode::Build("Conv", {{"kernel_shape", std::vector<int64_t>{3, 3}}},
                              {{{1, 4, 6, 6}, sparse_test::RandomNonZero(144, rng)},
                               {{8, 4, 3, 3}, w, true}});
  std::vector<float> b = sparse_test::RandomNonZero(30 * 20, rng);
  sparse_test::Sparsify(b, 30, 20, 0.6, 1, 1, rng);
  auto gemm = OneNode::Build("Gemm", {},
                             {{{1, 30}, sparse_test::RandomNonZero(30, rng)}, {{30, 20}, b, true}});
  SparseKernelOptions options;
  options.crossover = {0.9, 0.5, 0.7};
  EXPECT_TRUE(CreateConvSparse(options)->Prepare(conv3->Args()).ok());
  Status s = CreateGemmSparse(options)->Prepare(gemm->Args());
  EXPECT_NE(s.message().find("0.60 below the 0.70 crossover for Gemm/MatMul"),
            std::string::npos) << s.message();
  options.crossover.gemm = 0.5;
  EXPECT_TRUE(CreateGemmSparse(options)->Prepare(gemm->Args()).ok());
}

TEST(SparseFallback, UnsupportedShapesDeclineWithReasons) {
  std::mt19937 rng(9);
  SparseKernelOptions options;
  options.crossover = {0, 0, 0};
  auto depthwise = OneNode::Build(
      "Conv", {{"kernel_shape", std::vector<int64_t>{3, 3}}, {"group", int64_t{4}}},
      {{{1, 4, 6, 6}, sparse_test::RandomNonZero(144, rng)},
       {{4, 1, 3, 3}, std::vector<float>(36, 0.0f), true}});
  Status s = CreateConvSparse(options)->Prepare(depthwise->Args());
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_NE(s.message().find("groups = 1"), std::string::npos) << s.message();

  auto runtime_weight = OneNode::Build(
      "MatMul", {}, {{{2, 6}, sparse_test::RandomNonZero(12, rng)},
                     {{6, 3}, sparse_test::RandomNonZero(18, rng)}});
  s = CreateMatMulSparse(options)->Prepare(runtime_weight->Args());
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_NE(s.message().find("constant B"), std::string::npos) << s.message();

  auto full_c = OneNode::Build("Gemm", {},
                               {{{2, 6}, sparse_test::RandomNonZero(12, rng)},
                                {{6, 3}, std::vector<float>(18, 0.0f), true},
                                {{2, 3}, sparse_test::RandomNonZero(6, rng), true}});
  s = CreateGemmSparse(options)->Prepare(full_c->Args());
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_NE(s.message().find("[N] row"), std::string::npos) << s.message();
}

TEST(SparseCrossover, ParsesOverridesAndRejectsBadValues) {
  const SparseCrossover base{0.70, 0.75, 0.50, 0.30};
  StatusOr<SparseCrossover> t =
      ParseSparseCrossover("conv3x3=0.8,gemm=0.25,gemm_input=0.4", base);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->conv1x1, base.conv1x1);
  EXPECT_EQ(t->conv3x3, 0.8);
  EXPECT_EQ(t->gemm, 0.25);
  EXPECT_EQ(t->gemm_input, 0.4);
  EXPECT_EQ(t->Threshold(SparseOpClass::kConv3x3), 0.8);
  EXPECT_EQ(SparseCrossoverToString(*t), "conv1x1=0.70,conv3x3=0.80,gemm=0.25,gemm_input=0.40");
  for (const char* bad : {"conv1x1", "conv1x1=2", "conv1x1=abc", "depthwise=0.5", "gemm=-0.1"}) {
    StatusOr<SparseCrossover> r = ParseSparseCrossover(bad, base);
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

}  // namespace
}  // namespace braid
