// The sparse kernels (kernels/cpu/sparse/) against kernels/reference: every
// case at 0%, 50%, 90% and 99% weight sparsity, unstructured and with
// block:1x4, block:4x1 and block:4x4 zeros, on every instruction set this
// CPU runs (portable always; AVX2 and AVX-512 when present), with 1 thread
// and, at 90%, also 2 threads (kept to one level: OpenMP barriers on a busy
// CI machine cost more than the kernels here). Tolerance per element: |got - want| <= 1e-4 + 1e-4 * |want|
// (float accumulation in a different order than the reference's double; at
// most a few hundred products of magnitude <= 1 per output).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "kernels/cpu/sparse/sparse_kernels.h"
#include "tests/sparse/sparse_test_util.h"

namespace braid {
namespace {

using sparse_test::Input;
using sparse_test::OneNode;

constexpr double kAbsTol = 1e-4;
constexpr double kRelTol = 1e-4;

struct Structure {
  const char* name;
  int64_t rows, cols;
};
constexpr Structure kStructures[] = {
    {"unstructured", 1, 1}, {"block:1x4", 1, 4}, {"block:4x1", 4, 1}, {"block:4x4", 4, 4}};
constexpr double kSparsities[] = {0.0, 0.5, 0.9, 0.99};

struct KernelCase {
  std::string name;
  std::string op_type;
  std::vector<std::pair<std::string, AttributeValue>> attrs;
  std::vector<Input> inputs;  // data left empty: random; input 1 is the weight
  int64_t weight_rows;        // the weight as [outputs, reduction], row-major
  int64_t weight_cols;
  bool weight_transposed = false;  // stored [reduction, outputs] (Gemm transB=0, MatMul)
  // > 0: input channel c of image n is all zeros when (c + n) % this == 0
  // (the conv then drops the weight blocks that read it).
  int zero_channel_every = 0;
};

void PrintTo(const KernelCase& c, std::ostream* os) { *os << c.name; }

using Attrs = std::vector<std::pair<std::string, AttributeValue>>;
using V = std::vector<int64_t>;

Attrs Conv(V kernel, V strides, V pads, V dilations, Attrs extra = {}) {
  Attrs a = {{"kernel_shape", kernel}, {"strides", strides}, {"pads", pads},
             {"dilations", dilations}};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}
Input In(V dims, bool constant = false) { return {dims, {}, constant}; }

std::vector<KernelCase> Cases() {
  const Attrs relu = {{"activation", std::string("Relu")}};
  const Attrs relu6 = {{"activation", std::string("Clip")},
                       {"activation_min", 0.0f}, {"activation_max", 6.0f}};
  const Attrs hswish = {{"activation", std::string("HardSwish")}};
  const Attrs leaky = {{"activation", std::string("LeakyRelu")}, {"activation_alpha", 0.1f}};
  const Attrs sigmoid = {{"activation", std::string("Sigmoid")}};
  std::vector<KernelCase> c;
  c.push_back({"conv1x1_odd_relu", "Conv", Conv({1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, relu),
               {In({1, 13, 7, 9}), In({17, 13, 1, 1}, true), In({17}, true)}, 17, 13});
  c.push_back({"conv1x1_wide_nobias", "Conv", Conv({1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}),
               {In({1, 24, 16, 17}), In({20, 24, 1, 1}, true)}, 20, 24});
  c.push_back({"conv1x1_stride2_batch2", "Conv", Conv({1, 1}, {2, 2}, {0, 0, 0, 0}, {1, 1}),
               {In({2, 8, 10, 11}), In({12, 8, 1, 1}, true), In({12}, true)}, 12, 8});
  c.push_back({"conv3x3_pad1_relu6", "Conv", Conv({3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, relu6),
               {In({1, 5, 11, 13}), In({9, 5, 3, 3}, true), In({9}, true)}, 9, 45});
  c.push_back({"conv3x3_stride2_asym_hswish", "Conv",
               Conv({3, 3}, {2, 2}, {0, 1, 1, 0}, {1, 1}, hswish),
               {In({1, 6, 12, 9}), In({10, 6, 3, 3}, true), In({10}, true)}, 10, 54});
  c.push_back({"conv3x3_dil2_batch2_leaky", "Conv",
               Conv({3, 3}, {1, 1}, {2, 2, 2, 2}, {2, 2}, leaky),
               {In({2, 4, 9, 10}), In({7, 4, 3, 3}, true), In({7}, true)}, 7, 36});
  c.push_back({"conv5x5_stem_sigmoid", "Conv", Conv({5, 5}, {2, 2}, {2, 2, 2, 2}, {1, 1}, sigmoid),
               {In({1, 3, 17, 15}), In({8, 3, 5, 5}, true), In({8}, true)}, 8, 75});
  c.push_back({"conv3x3_wide", "Conv", Conv({3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}),
               {In({1, 8, 12, 12}), In({16, 8, 3, 3}, true), In({16}, true)}, 16, 72});
  // Phase-split convs (every stride): mixed strides and dilations put the
  // taps in 6 phase images; a 1x1 stride 2 with pads and a 2x2 stride 2
  // without (its phase grid is exactly Y); pads wider than the kernel.
  c.push_back({"conv3x3_stride3x2_dil2x1_asym", "Conv",
               Conv({3, 3}, {3, 2}, {2, 0, 1, 3}, {2, 1}, relu),
               {In({1, 5, 19, 14}), In({11, 5, 3, 3}, true), In({11}, true)}, 11, 45});
  c.push_back({"conv1x1_stride2_pad1", "Conv", Conv({1, 1}, {2, 2}, {1, 1, 1, 1}, {1, 1}),
               {In({1, 9, 11, 10}), In({7, 9, 1, 1}, true), In({7}, true)}, 7, 9});
  c.push_back({"conv2x2_stride2_batch2", "Conv", Conv({2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}, relu6),
               {In({2, 6, 14, 18}), In({13, 6, 2, 2}, true), In({13}, true)}, 13, 24});
  c.push_back({"conv3x3_pads_wider_than_kernel", "Conv",
               Conv({3, 3}, {2, 2}, {4, 3, 2, 5}, {1, 1}),
               {In({1, 3, 6, 7}), In({5, 3, 3, 3}, true), In({5}, true)}, 5, 27});
  // Output rows shorter than a full column tile (7x7 = 49, a 61-wide grid)
  // and odd output-channel counts (the CSR kernel walks rows in pairs).
  c.push_back({"conv1x1_7x7_odd_rows", "Conv", Conv({1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, relu),
               {In({1, 21, 7, 7}), In({35, 21, 1, 1}, true), In({35}, true)}, 35, 21});
  c.push_back({"conv3x3_7x7_odd_rows", "Conv", Conv({3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, relu),
               {In({1, 19, 7, 7}), In({33, 19, 3, 3}, true), In({33}, true)}, 33, 171});
  c.push_back({"conv3x3_long_rows_sigmoid", "Conv",
               Conv({3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, sigmoid),
               {In({1, 4, 5, 83}), In({3, 4, 3, 3}, true), In({3}, true)}, 3, 36});
  // All-zero input channels (dead ReLUs): a third of them, different per
  // image of the batch.
  KernelCase dead1x1{"conv1x1_zero_channels_batch2", "Conv",
                     Conv({1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, relu),
                     {In({2, 12, 6, 9}), In({10, 12, 1, 1}, true), In({10}, true)}, 10, 12};
  dead1x1.zero_channel_every = 3;
  c.push_back(dead1x1);
  KernelCase dead3x3{"conv3x3_zero_channels_stride2", "Conv",
                     Conv({3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, hswish),
                     {In({1, 9, 11, 12}), In({8, 9, 3, 3}, true), In({8}, true)}, 8, 81};
  dead3x3.zero_channel_every = 3;
  c.push_back(dead3x3);
  KernelCase deadpad{"conv3x3_zero_channels_pad1", "Conv",
                     Conv({3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}),
                     {In({2, 7, 8, 13}), In({9, 7, 3, 3}, true), In({9}, true)}, 9, 63};
  deadpad.zero_channel_every = 2;
  c.push_back(deadpad);
  Attrs gemm_tb = {{"transB", int64_t{1}}};
  gemm_tb.insert(gemm_tb.end(), relu.begin(), relu.end());
  c.push_back({"gemm_m1_transb_bias_relu", "Gemm", gemm_tb,
               {In({1, 67}), In({45, 67}, true), In({45}, true)}, 45, 67});
  c.push_back({"gemm_m5_alpha_beta_scalar_c", "Gemm",
               {{"alpha", 0.5f}, {"beta", 2.0f}},
               {In({5, 33}), In({33, 21}, true), In({1}, true)}, 21, 33, true});
  c.push_back({"gemm_transa_no_c", "Gemm", {{"transA", int64_t{1}}},
               {In({40, 3}), In({40, 37}, true)}, 37, 40, true});
  Attrs gemm_wide = {{"transB", int64_t{1}}};
  gemm_wide.insert(gemm_wide.end(), relu6.begin(), relu6.end());
  c.push_back({"gemm_m70_relu6", "Gemm", gemm_wide,
               {In({70, 20}), In({9, 20}, true), In({9}, true)}, 9, 20});
  c.push_back({"matmul_batched", "MatMul", {}, {In({2, 3, 31}), In({31, 19}, true)}, 19, 31, true});
  c.push_back({"matmul_m1_relu", "MatMul", relu, {In({1, 50}), In({50, 64}, true)}, 64, 50, true});
  c.push_back({"matmul_vector_a", "MatMul", {}, {In({17}), In({17, 10}, true)}, 10, 17, true});
  return c;
}

std::vector<SimdIsa> Isas() {
  std::vector<SimdIsa> isas;
  for (SimdIsa isa : {SimdIsa::kPortable, SimdIsa::kAvx2, SimdIsa::kAvx512})
    if (SimdIsaSupported(isa)) isas.push_back(isa);
  return isas;
}

std::unique_ptr<Kernel> Create(const std::string& op, const SparseKernelOptions& o) {
  if (op == "Conv") return CreateConvSparse(o);
  if (op == "Gemm") return CreateGemmSparse(o);
  return CreateMatMulSparse(o);
}

class SparseKernel : public ::testing::TestWithParam<KernelCase> {};

TEST_P(SparseKernel, MatchesReference) {
  const KernelCase& kc = GetParam();
  std::mt19937 rng(1234);
  SparseKernelOptions options;
  options.crossover = {0.0, 0.0, 0.0};  // always run sparse here
  int checked = 0;
  for (const Structure& st : kStructures) {
    for (double sparsity : kSparsities) {
      std::vector<Input> inputs = kc.inputs;
      for (Input& in : inputs) {
        int64_t n = 1;
        for (int64_t d : in.dims) n *= d;
        in.data = sparse_test::RandomNonZero(n, rng);
      }
      if (kc.zero_channel_every > 0) {
        const V& d = inputs[0].dims;  // [N, C, H, W]
        const int64_t plane = d[2] * d[3];
        for (int64_t n = 0; n < d[0]; ++n)
          for (int64_t ch = 0; ch < d[1]; ++ch)
            if ((ch + n) % kc.zero_channel_every == 0)
              std::fill_n(inputs[0].data.begin() + (n * d[1] + ch) * plane, plane, 0.0f);
      }
      // Sparsify the weight as [outputs, reduction]; stored transposed for
      // Gemm (transB = 0) and MatMul.
      std::vector<float> w(static_cast<size_t>(kc.weight_rows * kc.weight_cols));
      w = sparse_test::RandomNonZero(kc.weight_rows * kc.weight_cols, rng);
      sparse_test::Sparsify(w, kc.weight_rows, kc.weight_cols, sparsity, st.rows,
                            st.cols, rng);
      std::vector<float>& stored = inputs[1].data;
      for (int64_t r = 0; r < kc.weight_rows; ++r)
        for (int64_t k = 0; k < kc.weight_cols; ++k)
          stored[static_cast<size_t>(kc.weight_transposed ? k * kc.weight_rows + r
                                                          : r * kc.weight_cols + k)] =
              w[static_cast<size_t>(r * kc.weight_cols + k)];
      auto node = OneNode::Build(kc.op_type, kc.attrs, inputs);
      const std::vector<float> want = node->Reference();
      for (SimdIsa isa : Isas()) {
        for (int threads : {1, 2}) {
          if (threads == 2 && sparsity != 0.9) continue;
          SCOPED_TRACE(std::string(st.name) + " sparsity " + std::to_string(sparsity) +
                       " isa " + SimdIsaName(isa) + " threads " + std::to_string(threads));
          options.isa = isa;
          std::unique_ptr<Kernel> k = Create(kc.op_type, options);
          std::vector<float> got;
          Status s = node->Run(*k, threads, &got);
          ASSERT_TRUE(s.ok()) << s.ToString();
          EXPECT_LE(sparse_test::WorstError(got, want, kAbsTol, kRelTol), 1.0);
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, 4 * (4 + 1) * static_cast<int>(Isas().size()));
}

INSTANTIATE_TEST_SUITE_P(Cases, SparseKernel, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return info.param.name; });

// The input-sparse Gemm / MatMul (dense weight, zero inputs skipped): the
// fully connected cases above with at most 4 rows, at 0%, 50%, 90% and 99%
// zeros in A (random positions), every instruction set, 1 and 2 threads.
TEST(InputSparseKernel, MatchesReferenceAtEveryInputSparsity) {
  std::mt19937 rng(99);
  SparseKernelOptions options;
  options.crossover.gemm_input = 0.3;
  int checked = 0;
  for (const KernelCase& kc : Cases()) {
    if (kc.op_type == "Conv") continue;
    int64_t rows = 1;
    for (size_t d = 0; d + 1 < kc.inputs[0].dims.size(); ++d) rows *= kc.inputs[0].dims[d];
    if (kc.name == "gemm_transa_no_c") rows = kc.inputs[0].dims[1];
    if (rows > 4) continue;
    for (double zeros : kSparsities) {
      std::vector<Input> inputs = kc.inputs;
      for (Input& in : inputs) {
        int64_t n = 1;
        for (int64_t d : in.dims) n *= d;
        in.data = sparse_test::RandomNonZero(n, rng);
      }
      std::vector<float>& a = inputs[0].data;
      std::vector<size_t> order(a.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::shuffle(order.begin(), order.end(), rng);
      for (size_t i = 0; i < static_cast<size_t>(zeros * static_cast<double>(a.size())); ++i)
        a[order[i]] = 0.0f;
      auto node = OneNode::Build(kc.op_type, kc.attrs, inputs);
      node->set_activation_sparsity(0.5);
      const std::vector<float> want = node->Reference();
      for (SimdIsa isa : Isas()) {
        for (int threads : {1, 2}) {
          SCOPED_TRACE(kc.name + " input zeros " + std::to_string(zeros) + " isa " +
                       SimdIsaName(isa) + " threads " + std::to_string(threads));
          options.isa = isa;
          std::unique_ptr<Kernel> k = kc.op_type == "Gemm" ? CreateGemmInputSparse(options)
                                                           : CreateMatMulInputSparse(options);
          std::vector<float> got;
          Status s = node->Run(*k, threads, &got);
          ASSERT_TRUE(s.ok()) << s.ToString();
          EXPECT_LE(sparse_test::WorstError(got, want, kAbsTol, kRelTol), 1.0);
          ++checked;
        }
      }
    }
  }
  // gemm_m1_transb_bias_relu, gemm_transa_no_c, matmul_m1_relu, matmul_vector_a.
  EXPECT_EQ(checked, 4 * 4 * 2 * static_cast<int>(Isas().size()));
}

TEST(InputSparseKernel, WideLayerAcrossThreadsMatchesReference) {
  // 1300 outputs: several 256-column chunks per thread, a masked tail.
  std::mt19937 rng(5);
  Input a{{1, 70}, sparse_test::RandomNonZero(70, rng)};
  for (size_t i = 0; i < a.data.size(); i += 2) a.data[i] = 0.0f;
  Input w{{1300, 70}, sparse_test::RandomNonZero(1300 * 70, rng), true};
  Input b{{1300}, sparse_test::RandomNonZero(1300, rng), true};
  auto node = OneNode::Build("Gemm", {{"transB", int64_t{1}}}, {a, w, b});
  node->set_activation_sparsity(0.5);
  const std::vector<float> want = node->Reference();
  for (SimdIsa isa : Isas()) {
    SparseKernelOptions options;
    options.isa = isa;
    std::unique_ptr<Kernel> k = CreateGemmInputSparse(options);
    std::vector<float> got;
    ASSERT_TRUE(node->Run(*k, 2, &got).ok()) << SimdIsaName(isa);
    EXPECT_LE(sparse_test::WorstError(got, want, kAbsTol, kRelTol), 1.0) << SimdIsaName(isa);
  }
}

TEST(InputSparseKernel, DeclinesWithTheReasonUnlessMeasuredSparseAndSmallBatch) {
  std::mt19937 rng(7);
  auto gemm = [&](int64_t m) {
    return OneNode::Build("Gemm", {{"transB", int64_t{1}}},
                          {Input{{m, 16}, sparse_test::RandomNonZero(m * 16, rng)},
                           Input{{8, 16}, sparse_test::RandomNonZero(128, rng), true}});
  };
  SparseKernelOptions options;  // default crossover 0.30
  std::vector<float> out;
  auto node = gemm(1);
  Status s = node->Run(*CreateGemmInputSparse(options), 1, &out);  // never measured
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_NE(s.message().find("activation sparsity not measured"), std::string::npos) << s.ToString();
  node->set_activation_sparsity(0.2);
  s = node->Run(*CreateGemmInputSparse(options), 1, &out);
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_NE(s.message().find("0.20 below the 0.30 crossover"), std::string::npos) << s.ToString();
  node->set_activation_sparsity(0.3);
  EXPECT_TRUE(node->Run(*CreateGemmInputSparse(options), 1, &out).ok());
  auto wide = gemm(5);
  wide->set_activation_sparsity(0.9);
  s = wide->Run(*CreateGemmInputSparse(options), 1, &out);
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_NE(s.message().find("at most 4 rows"), std::string::npos) << s.ToString();
  // A computed weight is not this kernel's.
  auto computed = OneNode::Build("MatMul", {},
                                 {Input{{1, 16}, sparse_test::RandomNonZero(16, rng)},
                                  Input{{16, 8}, sparse_test::RandomNonZero(128, rng)}});
  computed->set_activation_sparsity(0.9);
  s = computed->Run(*CreateMatMulInputSparse(options), 1, &out);
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_NE(s.message().find("needs a constant B"), std::string::npos) << s.ToString();
}

TEST(SparseMatrix, BlockStructuredWeightsUseFourRowBlocks) {
  std::mt19937 rng(7);
  std::vector<float> w = sparse_test::RandomNonZero(32 * 40, rng);
  std::vector<float> unstructured = w;
  sparse_test::Sparsify(w, 32, 40, 0.9, 4, 4, rng);
  sparse_test::Sparsify(unstructured, 32, 40, 0.9, 1, 1, rng);
  EXPECT_EQ(ChooseRowBlock({w.data(), 32, 40, 40, 1}), 4);
  EXPECT_EQ(ChooseRowBlock({unstructured.data(), 32, 40, 40, 1}), 1);
  StatusOr<SparseMatrix> m = PackSparse({w.data(), 32, 40, 40, 1}, 2.0f, 4);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->block_rows(), 8);
  EXPECT_EQ(m->values.size(), m->col.size() * 4);
  // Every stored value is twice a weight at its (row, column).
  for (int64_t b = 0; b < m->block_rows(); ++b)
    for (int32_t j = m->block_row_ptr[static_cast<size_t>(b)];
         j < m->block_row_ptr[static_cast<size_t>(b + 1)]; ++j)
      for (int r = 0; r < 4; ++r)
        EXPECT_EQ(m->values[static_cast<size_t>(j * 4 + r)],
                  2.0f * w[static_cast<size_t>((b * 4 + r) * 40 + m->col[static_cast<size_t>(j)])]);
  EXPECT_NEAR(WeightSparsity({w.data(), 32, 40, 40, 1}), 0.9, 1e-9);
}

}  // namespace
}  // namespace braid
