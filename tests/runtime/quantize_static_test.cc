// Static int8 quantization end to end (`braid convert --precision int8`):
// the default passes without activation fusion, MeasureActivationRanges on
// random calibration inputs, QuantizeStatic, the default passes again. Every
// Conv of the built-in models becomes a QLinearConv (Relu / Relu6 folded
// into the output's saturation), the residual Add / fire Concat / Gemm run
// in int8, HardSwish / SiLU / GELU between convs become table lookups, and
// the outputs stay close to f32 on an input the calibration
// never saw (random weights: max error <= 5% of max |f32|, cosine >= 0.999).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "graph/passes/passes.h"
#include "kernels/cpu/cpu_device.h"
#include "models/builtin.h"
#include "models/graph_builder.h"
#include "runtime/activation_sparsity.h"
#include "tests/passes/reference_eval_test_util.h"
#include "tests/runtime/reference_session_test_util.h"

namespace braid {
namespace {

using test_eval::CountOps;

struct Quantized {
  Graph f32, int8;
  StaticQuantizationReport report;
};

// fused: calibrate the graph after the default passes as they are (fused
// Relu / Relu6 on the convs: a .braid converted before), not unfused.
Quantized QuantizeGraph(const Graph& g, bool fused = false) {
  Quantized q;
  q.f32 = g;
  EXPECT_TRUE(RunDefaultPasses(q.f32).ok());
  q.int8 = g;
  PassOptions first;
  first.fuse_activations = fused;
  EXPECT_TRUE(RunDefaultPasses(q.int8, first).ok());
  ActivationSparsityOptions calibration;
  calibration.samples = 3;
  calibration.seed = 7;
  StatusOr<ActivationRangeReport> ranges = MeasureActivationRanges(q.int8, calibration);
  EXPECT_TRUE(ranges.ok()) << ranges.status().ToString();
  EXPECT_EQ(ranges->runs, 3);
  StatusOr<StaticQuantizationReport> report = QuantizeStatic(q.int8, ranges->ranges);
  EXPECT_TRUE(report.ok()) << report.status().ToString();
  q.report = *report;
  const Status passes = RunDefaultPasses(q.int8);
  EXPECT_TRUE(passes.ok()) << passes.ToString();
  return q;
}

Quantized QuantizeBuiltin(const std::string& name, bool fused = false) {
  StatusOr<Graph> g = BuildBuiltinModel(name);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return QuantizeGraph(g.ok() ? *g : Graph(), fused);
}

// Not the calibration's inputs: N(0, 1) as they are, another seed.
std::vector<float> TestInput(const Graph& g) {
  const Shape& shape = g.value(g.inputs()[0]).shape;
  int64_t n = 1;
  for (const Dim& d : shape) n *= d.is_static() ? d.extent() : 1;
  std::mt19937 rng(1234);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) v = dist(rng);
  return x;
}

void ExpectCloseToFloat(const Quantized& q, double max_error_share = 0.05) {
  auto cpu = std::make_shared<KernelRegistry>();
  RegisterCpuKernels(*cpu);
  const std::vector<float> x = TestInput(q.f32);
  const auto want = test::RunOnReference(q.f32, {x}, cpu);
  const auto got = test::RunOnReference(q.int8, {x}, cpu);
  ASSERT_EQ(want.size(), 1u);
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(got[0].size(), want[0].size());
  double max_ref = 0, max_err = 0, dot = 0, nw = 0, ng = 0;
  for (size_t i = 0; i < want[0].size(); ++i) {
    max_ref = std::max(max_ref, std::fabs(static_cast<double>(want[0][i])));
    max_err = std::max(max_err, std::fabs(static_cast<double>(got[0][i]) - want[0][i]));
    dot += static_cast<double>(got[0][i]) * want[0][i];
    nw += static_cast<double>(want[0][i]) * want[0][i];
    ng += static_cast<double>(got[0][i]) * got[0][i];
  }
  ASSERT_GT(max_ref, 0.0);
  EXPECT_LE(max_err, max_error_share * max_ref);
  EXPECT_GE(dot / std::sqrt(nw * ng), 0.999);
  EXPECT_GT(max_err, 0.0);  // it did run in int8
}

TEST(QuantizeStatic, SqueezeNetRunsItsConvsAndConcatsInInt8) {
  const Quantized q = QuantizeBuiltin("squeezenet1_1");
  const int convs = CountOps(q.f32, "Conv");
  ASSERT_GT(convs, 20);
  EXPECT_EQ(CountOps(q.int8, "QLinearConv"), convs);
  EXPECT_EQ(CountOps(q.int8, "Conv"), 0);
  EXPECT_EQ(CountOps(q.int8, "Relu"), 0);  // every one the output's saturation
  EXPECT_EQ(CountOps(q.int8, "Concat"), 0);
  EXPECT_EQ(CountOps(q.int8, "com.microsoft.QLinearConcat"), CountOps(q.f32, "Concat"));
  EXPECT_TRUE(q.report.kept_float.empty());
  ExpectCloseToFloat(q);
}

// tiny_cnn's residual merges into its conv (MergeParallelConvs): its Add
// is resnet18's test below.
TEST(QuantizeStatic, TinyCnnFoldsRelu6AndGemm) {
  const Quantized q = QuantizeBuiltin("tiny_cnn");
  EXPECT_EQ(CountOps(q.int8, "QLinearConv"),
            CountOps(q.f32, "Conv") + CountOps(q.f32, "Gemm"));  // the Gemm as a 1x1 conv
  EXPECT_EQ(CountOps(q.int8, "Conv"), 0);
  EXPECT_EQ(CountOps(q.int8, "Gemm"), 0);
  EXPECT_EQ(CountOps(q.int8, "Clip"), 0);  // Relu6: within the output's range
  ExpectCloseToFloat(q);
}

// Fused Relu / Relu6 activations fold into the output's saturation as the
// separate nodes do.
TEST(QuantizeStatic, AGraphWithFusedActivationsQuantizesToo) {
  const Quantized q = QuantizeBuiltin("tiny_cnn", /*fused=*/true);
  EXPECT_TRUE(q.report.kept_float.empty());
  EXPECT_EQ(CountOps(q.int8, "QLinearConv"), CountOps(q.f32, "Conv") + CountOps(q.f32, "Gemm"));
  EXPECT_EQ(CountOps(q.int8, "Conv"), 0);
  for (const Node& n : q.int8.nodes()) EXPECT_FALSE(n.attrs.Has("activation")) << n.name;
  ExpectCloseToFloat(q);
}

TEST(QuantizeStatic, ResNetRunsItsResidualAddsInInt8) {
  const Quantized q = QuantizeBuiltin("resnet18");
  const int adds = CountOps(q.f32, "Add");
  ASSERT_EQ(adds, 8);
  EXPECT_EQ(CountOps(q.int8, "com.microsoft.QLinearAdd"), adds);
  EXPECT_EQ(CountOps(q.int8, "QLinearConv"), CountOps(q.f32, "Conv") + 1);  // + the fc Gemm
  EXPECT_EQ(CountOps(q.int8, "Conv"), 0);
  ExpectCloseToFloat(q);
}

// Convs with HardSwish, SiLU (x * Sigmoid(x)) and GELU (erf form) between
// them, as exporters write them: each activation between a quantized conv's
// output and the next conv's quantized input becomes one 256-byte table
// lookup (FoldQdqLookups), so the chain runs in uint8 end to end.
TEST(QuantizeStatic, ActivationsBetweenConvsBecomeTableLookups) {
  GraphBuilder b("activations", 11);
  ValueId x = b.Input("input", {1, 3, 16, 16});
  x = b.Conv(x, "conv1", {.out_channels = 16, .kernel = 3, .pad = 1});
  x = b.Op("HardSwish", {x});
  x = b.Conv(x, "conv2", {.out_channels = 16, .kernel = 3, .pad = 1});
  x = b.Mul(x, b.Op("Sigmoid", {x}));
  x = b.Conv(x, "conv3", {.out_channels = 16, .kernel = 3, .pad = 1});
  x = b.Gelu(x);
  x = b.Conv(x, "conv4", {.out_channels = 4, .kernel = 1});
  b.Output(x, "output", {1, 4, 16, 16});
  const Quantized q = QuantizeGraph(std::move(b).Finish());
  EXPECT_EQ(CountOps(q.int8, "QLinearConv"), 4);
  EXPECT_EQ(CountOps(q.int8, "braid.TableLookup"), 3);
  for (const char* op : {"HardSwish", "Sigmoid", "Mul", "Erf", "Gelu"})
    EXPECT_EQ(CountOps(q.int8, op), 0) << op;
  EXPECT_EQ(CountOps(q.int8, "QuantizeLinear"), 1);    // the input's
  EXPECT_EQ(CountOps(q.int8, "DequantizeLinear"), 1);  // the output's
  // The worst element is 9% of max |f32| off (cosine 0.9991) with or without
  // the tables (the QDQ graph's error: four random 16-channel convs
  // calibrated on 3 samples), so 10% here.
  ExpectCloseToFloat(q, 0.10);
}

// A squeeze-excitation block (EfficientNet's): the SiLU's output is read by
// the f32 pooling and the f32 gate Mul, yet its output is quantized too, so
// the SiLU and the gate's Sigmoid run as table lookups; the gate Mul (a
// per-channel product of two activations) stays f32.
TEST(QuantizeStatic, SqueezeExcitationActivationsBecomeTableLookups) {
  GraphBuilder b("se", 13);
  ValueId x = b.Input("input", {1, 3, 16, 16});
  x = b.Conv(x, "conv1", {.out_channels = 16, .kernel = 3, .pad = 1});
  const ValueId s = b.Mul(x, b.Op("Sigmoid", {x}));
  ValueId g = b.GlobalAveragePool(s);
  g = b.Relu(b.Conv(g, "se1", {.out_channels = 4, .kernel = 1}));
  g = b.Op("Sigmoid", {b.Conv(g, "se2", {.out_channels = 16, .kernel = 1})});
  x = b.Conv(b.Mul(s, g), "conv2", {.out_channels = 8, .kernel = 1});
  b.Output(x, "output", {1, 8, 16, 16});
  const Quantized q = QuantizeGraph(std::move(b).Finish());
  EXPECT_EQ(CountOps(q.int8, "QLinearConv"), 4);
  EXPECT_EQ(CountOps(q.int8, "braid.TableLookup"), 2);  // the SiLU, the gate's Sigmoid
  EXPECT_EQ(CountOps(q.int8, "Sigmoid"), 0);
  EXPECT_EQ(CountOps(q.int8, "Mul"), 1);  // the gate
  EXPECT_EQ(q.report.activations.size(), 2u);
  // Worst element 12% of max |f32| off, the same with the two activations
  // left f32 (the QDQ graph's error; checked), cosine >= 0.999.
  ExpectCloseToFloat(q, 0.15);
}

// A transformer's Linear layers (MatMul + bias, which FuseMatMulBias makes
// a Gemm with transB=0 between two Reshape views) quantize with their
// weights stored transposed and run as 1x1 QLinearConvs: an MLP block on
// [1, 50, 32] tokens stays close to f32.
TEST(QuantizeStatic, TransformerLinearLayersRunInInt8) {
  GraphBuilder b("mlp", 5);
  ValueId x = b.Input("input", {1, 50, 32});
  x = b.LinearMatMul(x, "fc1", 32, 64);
  x = b.Gelu(x);
  x = b.LinearMatMul(x, "fc2", 64, 16);
  b.Output(x, "output", {1, 50, 16});
  const Quantized q = QuantizeGraph(std::move(b).Finish());
  ASSERT_EQ(CountOps(q.f32, "Gemm"), 2);
  EXPECT_EQ(CountOps(q.int8, "QLinearConv"), 2);
  EXPECT_EQ(CountOps(q.int8, "braid.TableLookup"), 1);  // the GELU
  EXPECT_EQ(CountOps(q.int8, "Gemm") + CountOps(q.int8, "MatMul"), 0);
  EXPECT_TRUE(q.report.kept_float.empty());
  ExpectCloseToFloat(q);
  // vit_tiny: every Linear quantized; its attention MatMuls of two
  // activations stay f32 (listed).
  const Quantized vit = QuantizeBuiltin("vit_tiny");
  const int linears = CountOps(vit.f32, "Gemm");
  ASSERT_GT(linears, 10);
  EXPECT_EQ(CountOps(vit.int8, "QLinearConv"), linears + CountOps(vit.f32, "Conv"));
  for (const auto& [node, why] : vit.report.kept_float)
    EXPECT_EQ(why.find("fully connected"), std::string::npos) << node << ": " << why;
}

// A node whose tensors were not measured stays f32 and is listed with the
// reason; nothing else changes.
TEST(QuantizeStatic, UnmeasuredTensorsKeepTheirNodeFloat) {
  StatusOr<Graph> g = BuildBuiltinModel("tiny_cnn");
  ASSERT_TRUE(g.ok());
  PassOptions unfused;
  unfused.fuse_activations = false;
  ASSERT_TRUE(RunDefaultPasses(*g, unfused).ok());
  const int nodes = g->num_nodes();
  StatusOr<StaticQuantizationReport> report = QuantizeStatic(*g, {});
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->quantized.empty());
  EXPECT_EQ(report->tensors, 0);
  ASSERT_FALSE(report->kept_float.empty());
  EXPECT_NE(report->kept_float[0].second.find("has no calibrated range"), std::string::npos)
      << report->kept_float[0].second;
  EXPECT_EQ(g->num_nodes(), nodes);
}

// A Clip whose lower bound is above 0 is not the output's saturation: the Q
// stays on the conv's output (which folds) and the Clip runs in f32.
TEST(QuantizeStatic, ClipAwayFromZeroStaysAfterTheQuantizedConv) {
  Graph g;
  g.set_opset(13);
  const ValueId x = g.AddInput("x", DataType::kF32, StaticShape(std::vector<int64_t>{1, 4, 6, 6}));
  std::vector<float> w(8 * 4 * 3 * 3);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>((i * 7) % 11) / 11.0f - 0.45f;
  auto constant = [&](const std::string& name, std::vector<int64_t> dims, const std::vector<float>& v) {
    return g.AddConstant(name, DataType::kF32, StaticShape(dims),
                         TensorData::Copy(v.data(), v.size() * sizeof(float)));
  };
  Node conv;
  conv.name = "conv";
  conv.op_type = "Conv";
  conv.attrs.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
  conv.inputs = {x, constant("w", {8, 4, 3, 3}, w)};
  conv.outputs = {g.AddValue("conv_out")};
  const ValueId conv_out = conv.outputs[0];
  g.AddNode(std::move(conv));
  Node clip;
  clip.name = "clip";
  clip.op_type = "Clip";
  clip.inputs = {conv_out, constant("lo", {}, {1.0f}), constant("hi", {}, {6.0f})};
  clip.outputs = {g.AddValue("y")};
  const ValueId y = clip.outputs[0];
  g.AddNode(std::move(clip));
  g.outputs().push_back(y);
  ASSERT_TRUE(InferShapes(g).ok());
  const std::map<ValueId, ActivationRange> ranges = {
      {x, {-1.0f, 1.0f}}, {conv_out, {-4.0f, 5.0f}}, {y, {1.0f, 5.0f}}};
  StatusOr<StaticQuantizationReport> report = QuantizeStatic(g, ranges);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ASSERT_TRUE(RunDefaultPasses(g).ok());
  EXPECT_EQ(CountOps(g, "QLinearConv"), 1);
  EXPECT_EQ(CountOps(g, "Clip"), 1);
}

}  // namespace
}  // namespace braid
