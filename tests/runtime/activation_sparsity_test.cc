// MeasureActivationSparsity (runtime/activation_sparsity.h) on a small
// x -> Conv -> Relu -> Conv -> Relu -> Flatten -> {Gemm, MatMul} graph: the
// zero fractions it stores are checked against a naive convolution computed
// here, on given and on random inputs, plus caller-provided zeros, integer
// inputs, errors and the .braid round trip.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "graph/braid_format.h"
#include "graph/passes/passes.h"
#include "kernels/cpu/cpu_device.h"
#include "runtime/activation_sparsity.h"
#include "runtime/session_internal.h"
#include "tests/scoped_temp_dir.h"

namespace braid {
namespace {

constexpr int64_t kCin = 3, kC1 = 4, kC2 = 5, kH = 6, kW = 6, kOut = 7;

std::vector<float> RandomNonZero(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> magnitude(0.1f, 1.0f);
  std::bernoulli_distribution negative(0.5);
  std::vector<float> v(n);
  for (float& x : v) x = negative(rng) ? -magnitude(rng) : magnitude(rng);
  return v;
}

struct Weights {
  std::vector<float> w1 = RandomNonZero(kC1 * kCin * 9, 11);
  std::vector<float> w2 = RandomNonZero(kC2 * kC1 * 9, 12);
  std::vector<float> gemm_w = RandomNonZero(kC2 * kH * kW * kOut, 13);
  std::vector<float> gemm_b = RandomNonZero(kOut, 14);
  std::vector<float> matmul_w = RandomNonZero(kC2 * kH * kW * kOut, 15);
};

ValueId Constant(Graph& g, const std::string& name, Shape shape, const std::vector<float>& v) {
  return g.AddConstant(name, DataType::kF32, std::move(shape),
                       TensorData::Copy(v.data(), v.size() * sizeof(float)));
}

NodeId AddNode(Graph& g, const std::string& name, const std::string& op,
               std::vector<ValueId> inputs, ValueId output) {
  Node n;
  n.name = name;
  n.op_type = op;
  n.inputs = std::move(inputs);
  n.outputs = {output};
  if (op == "Conv") n.attrs.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
  return g.AddNode(std::move(n));
}

// Unfused on purpose, so every Relu is its own node.
Graph TestGraph(const Weights& w) {
  Graph g;
  const ValueId x = g.AddInput("x", DataType::kF32, {Dim::Symbol("N"), kCin, kH, kW});
  const ValueId w1 = Constant(g, "w1", {kC1, kCin, 3, 3}, w.w1);
  const ValueId w2 = Constant(g, "w2", {kC2, kC1, 3, 3}, w.w2);
  const ValueId gw = Constant(g, "gemm_w", {kC2 * kH * kW, kOut}, w.gemm_w);
  const ValueId gb = Constant(g, "gemm_b", {kOut}, w.gemm_b);
  const ValueId mw = Constant(g, "matmul_w", {kC2 * kH * kW, kOut}, w.matmul_w);
  std::vector<ValueId> v;
  for (const char* name : {"c1", "r1", "c2", "r2", "flat", "gemm_out", "matmul_out"})
    v.push_back(g.AddValue(name));
  AddNode(g, "conv1", "Conv", {x, w1}, v[0]);
  AddNode(g, "relu1", "Relu", {v[0]}, v[1]);
  AddNode(g, "conv2", "Conv", {v[1], w2}, v[2]);
  AddNode(g, "relu2", "Relu", {v[2]}, v[3]);
  AddNode(g, "flatten", "Flatten", {v[3]}, v[4]);
  AddNode(g, "gemm", "Gemm", {v[4], gw, gb}, v[5]);
  AddNode(g, "matmul", "MatMul", {v[4], mw}, v[6]);
  g.outputs() = {v[5], v[6]};
  EXPECT_TRUE(g.Validate().ok());
  Status s = InferShapes(g);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return g;
}

// Naive 3x3 conv, stride 1, pad 1, batch 1, then ReLU.
std::vector<float> ConvRelu(const std::vector<float>& src, const std::vector<float>& w,
                            int64_t cin, int64_t cout) {
  std::vector<float> dst(static_cast<size_t>(cout * kH * kW));
  for (int64_t oc = 0; oc < cout; ++oc)
    for (int64_t y = 0; y < kH; ++y)
      for (int64_t x = 0; x < kW; ++x) {
        double acc = 0;
        for (int64_t ic = 0; ic < cin; ++ic)
          for (int64_t ky = 0; ky < 3; ++ky)
            for (int64_t kx = 0; kx < 3; ++kx) {
              const int64_t iy = y + ky - 1, ix = x + kx - 1;
              if (iy < 0 || iy >= kH || ix < 0 || ix >= kW) continue;
              acc += static_cast<double>(src[static_cast<size_t>((ic * kH + iy) * kW + ix)]) *
                     w[static_cast<size_t>(((oc * cin + ic) * 3 + ky) * 3 + kx)];
            }
        dst[static_cast<size_t>((oc * kH + y) * kW + x)] = std::max(static_cast<float>(acc), 0.0f);
      }
  return dst;
}

int64_t Zeros(const std::vector<float>& v) {
  return std::count(v.begin(), v.end(), 0.0f);
}

double SparsityOf(const Graph& g, const std::string& node) {
  for (const Node& n : g.nodes())
    if (n.name == node) return n.annotation.activation_sparsity;
  ADD_FAILURE() << "no node " << node;
  return -2;
}

// A near-zero pre-activation may round to the other side of 0 in the
// optimized kernels than in the double-precision naive conv: allow one
// element per run either way.
constexpr double kElementSlack = 1.0;

TEST(ActivationSparsity, MatchesNaiveConvOnGivenInputs) {
  const Weights w;
  Graph g = TestGraph(w);
  constexpr int kRuns = 3;
  std::vector<std::vector<float>> xs;
  ActivationSparsityOptions options;
  options.num_threads = 1;
  for (int r = 0; r < kRuns; ++r) {
    xs.push_back(RandomNonZero(kCin * kH * kW, 100 + r));
    options.inputs["x"].push_back(
        Tensor::Borrow(DataType::kF32, {1, kCin, kH, kW}, xs.back().data()));
  }
  StatusOr<ActivationSparsityReport> report = MeasureActivationSparsity(g, options);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->runs, kRuns);  // every input given: one run per tensor
  EXPECT_TRUE(report->random_inputs.empty());
  EXPECT_EQ(report->nodes.size(), 7u);
  EXPECT_EQ(report->unmeasured_nodes, 0);

  int64_t zeros1 = 0, zeros2 = 0;
  for (const std::vector<float>& x : xs) {
    const std::vector<float> r1 = ConvRelu(x, w.w1, kCin, kC1);
    const std::vector<float> r2 = ConvRelu(r1, w.w2, kC1, kC2);
    zeros1 += Zeros(r1);
    zeros2 += Zeros(r2);
  }
  const double n1 = static_cast<double>(kRuns * kC1 * kH * kW);
  const double n2 = static_cast<double>(kRuns * kC2 * kH * kW);
  const double expected1 = static_cast<double>(zeros1) / n1;
  const double expected2 = static_cast<double>(zeros2) / n2;
  ASSERT_GT(expected1, 0.1);  // the ReLUs really do zero something
  ASSERT_GT(expected2, 0.1);
  EXPECT_DOUBLE_EQ(SparsityOf(g, "conv1"), 0.0);  // non-zero inputs
  EXPECT_DOUBLE_EQ(SparsityOf(g, "relu1"), 0.0);  // conv output before ReLU
  EXPECT_NEAR(SparsityOf(g, "conv2"), expected1, kRuns * kElementSlack / n1);
  EXPECT_NEAR(SparsityOf(g, "flatten"), expected2, kRuns * kElementSlack / n2);
  EXPECT_NEAR(SparsityOf(g, "gemm"), expected2, kRuns * kElementSlack / n2);
  EXPECT_NEAR(SparsityOf(g, "matmul"), expected2, kRuns * kElementSlack / n2);
  // The report carries the same figures in graph order.
  for (const NodeActivationSparsity& n : report->nodes) {
    EXPECT_EQ(n.name, g.node(n.node).name);
    EXPECT_EQ(n.sparsity, g.node(n.node).annotation.activation_sparsity);
  }
  // Gemm: only the activation counts, not its weight or bias.
  for (const NodeActivationSparsity& n : report->nodes)
    if (n.name == "gemm") {
      EXPECT_EQ(n.elements, kC2 * kH * kW);
    }
}

TEST(ActivationSparsity, RandomInputsLeaveTheFirstConvDense) {
  const Weights w;
  Graph g = TestGraph(w);
  ActivationSparsityOptions options;
  options.samples = 4;
  options.batch = 2;
  options.num_threads = 1;
  int calls = 0;
  options.on_run = [&](int done, int total) {
    EXPECT_EQ(total, 4);
    EXPECT_EQ(done, ++calls);
  };
  StatusOr<ActivationSparsityReport> report = MeasureActivationSparsity(g, options);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->runs, 4);
  EXPECT_EQ(calls, 4);
  EXPECT_EQ(report->random_inputs, std::vector<std::string>{"x"});
  EXPECT_LT(SparsityOf(g, "conv1"), 1e-3);  // N(0,1) data has no exact zeros
  const double after_relu = SparsityOf(g, "conv2");
  EXPECT_GT(after_relu, 0.05);
  EXPECT_LT(after_relu, 0.95);
  // Flatten, Gemm and MatMul read the same bytes.
  EXPECT_EQ(SparsityOf(g, "gemm"), SparsityOf(g, "flatten"));
  EXPECT_EQ(SparsityOf(g, "matmul"), SparsityOf(g, "flatten"));
  for (const Node& n : g.nodes()) {
    EXPECT_GE(n.annotation.activation_sparsity, 0.0) << n.name;
    EXPECT_LE(n.annotation.activation_sparsity, 1.0) << n.name;
  }
}

TEST(ActivationSparsity, GivenZerosAreCountedExactlyAtTheFirstOp) {
  const Weights w;
  Graph g = TestGraph(w);
  std::vector<float> x = RandomNonZero(kCin * kH * kW, 7);
  // Exactly a quarter zeros (27 of 108), including a -0.0.
  for (size_t i = 0; i < x.size(); i += 4) x[i] = 0.0f;
  x[4] = -0.0f;
  ActivationSparsityOptions options;
  options.num_threads = 1;
  options.inputs["x"] = {Tensor::Borrow(DataType::kF32, {1, kCin, kH, kW}, x.data())};
  StatusOr<ActivationSparsityReport> report = MeasureActivationSparsity(g, options);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->runs, 1);
  EXPECT_DOUBLE_EQ(SparsityOf(g, "conv1"), 0.25);
}

TEST(ActivationSparsity, SurvivesBraidRoundTrip) {
  const Weights w;
  Graph g = TestGraph(w);
  ActivationSparsityOptions options;
  options.samples = 2;
  options.num_threads = 1;
  ASSERT_TRUE(MeasureActivationSparsity(g, options).ok());
  testing::ScopedTempDir dir("braid_activation_sparsity_test");
  const std::string path = (dir.path() / "m.braid").string();
  ASSERT_TRUE(SaveBraidFile(g, path).ok());
  StatusOr<Graph> loaded = LoadBraidFile(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ASSERT_EQ(loaded->num_nodes(), g.num_nodes());
  for (NodeId i = 0; i < g.num_nodes(); ++i) {
    EXPECT_GE(loaded->node(i).annotation.activation_sparsity, 0.0);
    EXPECT_EQ(loaded->node(i).annotation.activation_sparsity,
              g.node(i).annotation.activation_sparsity);
  }
}

// Gather(table, ids) -> Relu: Gather reads only a constant and an integer,
// so it stays unmeasured; the integer input must be given.
Graph GatherGraph() {
  Graph g;
  const std::vector<float> table = RandomNonZero(4 * 3, 21);
  const ValueId t = Constant(g, "table", {4, 3}, table);
  const ValueId ids = g.AddInput("ids", DataType::kI64, {2});
  const ValueId gathered = g.AddValue("gathered");
  const ValueId out = g.AddValue("out");
  AddNode(g, "gather", "Gather", {t, ids}, gathered);
  AddNode(g, "relu", "Relu", {gathered}, out);
  g.outputs() = {out};
  Status s = InferShapes(g);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return g;
}

TEST(ActivationSparsity, IntegerInputsMustBeGiven) {
  Graph g = GatherGraph();
  StatusOr<ActivationSparsityReport> random = MeasureActivationSparsity(g, {});
  ASSERT_FALSE(random.ok());
  EXPECT_EQ(random.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(random.status().message().find("ids: i64[2]"), std::string::npos)
      << random.status().message();
  EXPECT_NE(random.status().message().find("give real data"), std::string::npos);

  std::vector<int64_t> ids = {1, 3};
  ActivationSparsityOptions options;
  options.num_threads = 1;
  options.inputs["ids"] = {Tensor::Borrow(DataType::kI64, {2}, ids.data())};
  StatusOr<ActivationSparsityReport> given = MeasureActivationSparsity(g, options);
  ASSERT_TRUE(given.ok()) << given.status().ToString();
  EXPECT_EQ(given->unmeasured_nodes, 1);
  EXPECT_EQ(SparsityOf(g, "gather"), -1.0);
  EXPECT_GE(SparsityOf(g, "relu"), 0.0);
}

// The measured value is what the input-sparse fully connected kernel
// (kernels/cpu/sparse/gemm_input_sparse.cc) needs: with it the Gemm and
// MatMul reading the ReLU'd features take that kernel, without it oneDNN's,
// and both give the same outputs.
TEST(ActivationSparsity, MeasuredSparsityPicksTheInputSparseFullyConnectedKernel) {
  const Weights w;
  Graph measured = TestGraph(w);
  const Graph unmeasured = measured;
  ActivationSparsityOptions options;
  options.samples = 4;
  options.num_threads = 1;
  ASSERT_TRUE(MeasureActivationSparsity(measured, options).ok());
  ASSERT_GE(SparsityOf(measured, "gemm"), 0.3);  // the kernel's default crossover
  const std::vector<float> x = RandomNonZero(kCin * kH * kW, 21);
  auto run = [&](const Graph& g, std::vector<std::string>* gemm_impls) {
    auto registry = std::make_shared<KernelRegistry>();
    RegisterCpuKernels(*registry);
    SessionOptions session_options;
    session_options.num_threads = 1;
    StatusOr<std::unique_ptr<Session>> s =
        CreateSession(g, session_options, registry, CreateCpuDevice());
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    std::vector<float> out;
    if (!s.ok()) return out;
    EXPECT_TRUE((*s)->SetInput("x", Tensor::Borrow(DataType::kF32, {1, kCin, kH, kW},
                                                  const_cast<float*>(x.data())))
                    .ok());
    EXPECT_TRUE((*s)->Run().ok());
    for (const char* name : {"gemm_out", "matmul_out"}) {
      StatusOr<Tensor> t = (*s)->GetOutput(name);
      EXPECT_TRUE(t.ok()) << t.status().ToString();
      if (t.ok()) out.insert(out.end(), t->data<float>(), t->data<float>() + t->elements());
    }
    for (const NodePlacement& p : (*s)->placements())
      if (p.node == "gemm" || p.node == "matmul") gemm_impls->push_back(p.implementation);
    return out;
  };
  std::vector<std::string> with, without;
  const std::vector<float> sparse_out = run(measured, &with);
  const std::vector<float> dense_out = run(unmeasured, &without);
  EXPECT_EQ(with, (std::vector<std::string>{"input-sparse", "input-sparse"}));
  ASSERT_EQ(without.size(), 2u);
  for (const std::string& impl : without) EXPECT_NE(impl, "input-sparse");
  ASSERT_EQ(sparse_out.size(), dense_out.size());
  ASSERT_EQ(sparse_out.size(), static_cast<size_t>(2 * kOut));
  // Float sums in another order; 180 products of magnitude <= 1 per output.
  for (size_t i = 0; i < sparse_out.size(); ++i)
    EXPECT_NEAR(sparse_out[i], dense_out[i], 1e-4 + 1e-4 * std::abs(dense_out[i])) << i;
}

TEST(ActivationSparsity, BadOptionsAreErrorsAndLeaveTheGraphAlone) {
  const Weights w;
  Graph g = TestGraph(w);
  auto expect_error = [&](const ActivationSparsityOptions& options, const std::string& text) {
    StatusOr<ActivationSparsityReport> r = MeasureActivationSparsity(g, options);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_NE(r.status().message().find(text), std::string::npos) << r.status().message();
    for (const Node& n : g.nodes()) EXPECT_EQ(n.annotation.activation_sparsity, -1.0);
  };
  ActivationSparsityOptions zero;
  zero.samples = 0;
  expect_error(zero, "samples must be >= 1");
  ActivationSparsityOptions batch;
  batch.batch = 0;
  expect_error(batch, "batch must be >= 1");
  std::vector<float> x(kCin * kH * kW, 1.0f);
  ActivationSparsityOptions unknown;
  unknown.inputs["image"] = {Tensor::Borrow(DataType::kF32, {1, kCin, kH, kW}, x.data())};
  expect_error(unknown, "no input 'image'; its inputs are: x: f32[N,3,6,6]");
  ActivationSparsityOptions empty;
  empty.inputs["x"] = {};
  expect_error(empty, "no tensor given for input 'x'");
  ActivationSparsityOptions shape;
  shape.inputs["x"] = {Tensor::Borrow(DataType::kF32, {1, kCin, kH * kW}, x.data())};
  expect_error(shape, "activation sparsity: ");
}

}  // namespace
}  // namespace braid
