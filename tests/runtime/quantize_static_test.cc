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

// An MLP on [1, 50, 32] tokens whose first Linear has, per output channel,
// one weight 400x the others, for the one input feature the calibration
// data makes 400x smaller: the output is ordinary, but per-channel int8
// rounds the other weights to 0, so that layer alone ruins the outputs; the
// second Linear is ordinary.
Graph MlpWithAnOutlierLayer() {
  GraphBuilder b("mlp", 5);
  ValueId x = b.Input("input", {1, 50, 32});
  x = b.LinearMatMul(x, "fc1", 32, 64);
  x = b.Relu(x);
  x = b.LinearMatMul(x, "fc2", 64, 16);
  b.Output(x, "output", {1, 50, 16});
  Graph g = std::move(b).Finish();
  PassOptions unfused;
  unfused.fuse_activations = false;
  EXPECT_TRUE(RunDefaultPasses(g, unfused).ok());
  for (const Node& n : g.nodes()) {
    if (n.op_type != "Gemm") continue;
    Value& w = g.value(n.inputs[1]);  // [32, 64], transB = 0
    std::vector<float> values(w.constant->as<float>().begin(), w.constant->as<float>().end());
    for (size_t c = 0; c < 64; ++c) values[c] *= 400.0f;  // row 0: one per output channel
    w.constant = TensorData::Copy(values.data(), values.size() * sizeof(float));
    break;
  }
  return g;
}

ActivationSparsityOptions Calibration() {
  static std::vector<std::vector<float>> samples = [] {
    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<std::vector<float>> x(3, std::vector<float>(50 * 32));
    for (std::vector<float>& sample : x)
      for (size_t i = 0; i < sample.size(); ++i) sample[i] = normal(rng) / (i % 32 == 0 ? 400.0f : 1.0f);
    return x;
  }();
  ActivationSparsityOptions options;
  for (std::vector<float>& x : samples)
    options.inputs["input"].push_back(Tensor::Borrow(DataType::kF32, {1, 50, 32}, x.data()));
  return options;
}

TEST(QuantizeStatic, NodesNamedToKeepStayFloatWithTheirReason) {
  Graph g = MlpWithAnOutlierLayer();
  StatusOr<ActivationRangeReport> ranges = MeasureActivationRanges(g, Calibration());
  ASSERT_TRUE(ranges.ok()) << ranges.status().ToString();
  std::string first;
  for (const Node& n : g.nodes())
    if (n.op_type == "Gemm" && first.empty()) first = n.name;
  StaticQuantizationOptions options;
  options.keep_float[first] = "asked";
  StatusOr<StaticQuantizationReport> report = QuantizeStatic(g, ranges->ranges, options);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ASSERT_EQ(report->quantized.size(), 1u);
  EXPECT_NE(report->quantized[0], first);
  ASSERT_EQ(report->kept_float.size(), 1u);
  EXPECT_EQ(report->kept_float[0], std::make_pair(first, std::string("asked")));
  ASSERT_TRUE(RunDefaultPasses(g).ok());
  EXPECT_EQ(CountOps(g, "QLinearConv"), 1);
  EXPECT_EQ(CountOps(g, "Gemm"), 1);
  EXPECT_TRUE(report->twins.empty());

  Graph h = MlpWithAnOutlierLayer();
  StaticQuantizationOptions unknown;
  unknown.keep_float["no_such_node"] = "asked";
  StatusOr<StaticQuantizationReport> refused = QuantizeStatic(h, ranges->ranges, unknown);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("no_such_node"), std::string::npos);
}

// Each twin is its node as it was: the Gemm with transB = 0 and the f32
// weight and bias, reading the value its node's Q reads, never a DQ.
TEST(QuantizeStatic, FloatTwinsReadTheUnquantizedValues) {
  Graph g = MlpWithAnOutlierLayer();
  const Graph before = g;
  StatusOr<ActivationRangeReport> ranges = MeasureActivationRanges(g, Calibration());
  ASSERT_TRUE(ranges.ok()) << ranges.status().ToString();
  StaticQuantizationOptions options;
  options.float_twins = true;
  StatusOr<StaticQuantizationReport> report = QuantizeStatic(g, ranges->ranges, options);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ASSERT_TRUE(InferShapes(g).ok());
  ASSERT_EQ(report->twins.size(), 2u);
  auto producer_of = [&](ValueId v) -> const Node& { return g.node(g.value(v).producer); };
  for (const StaticQuantizationTwin& twin : report->twins) {
    EXPECT_EQ(twin.op_type, "Gemm");
    const Node& node = producer_of(twin.reference);
    const Node* original = nullptr;
    for (const Node& n : before.nodes())
      if (n.name == twin.node) original = &n;
    ASSERT_NE(original, nullptr);
    EXPECT_EQ(node.attrs.GetInt("transB", 0), 0);
    EXPECT_EQ(original->attrs.GetInt("transB", 0), 0);
    ASSERT_EQ(node.inputs.size(), original->inputs.size());
    for (size_t i = 1; i < node.inputs.size(); ++i) EXPECT_EQ(node.inputs[i], original->inputs[i]);
    // The quantized node reads DQ(Q(s)) and DQ(int8 weights); the twin s.
    const Node& quantized = producer_of(twin.quantized);
    EXPECT_EQ(quantized.attrs.GetInt("transB", 0), 1);
    const Node& dq = producer_of(quantized.inputs[0]);
    ASSERT_EQ(dq.op_type, "DequantizeLinear");
    const Node& q = producer_of(dq.inputs[0]);
    ASSERT_EQ(q.op_type, "QuantizeLinear");
    EXPECT_EQ(node.inputs[0], q.inputs[0]);
    EXPECT_EQ(g.value(node.inputs[0]).dtype, DataType::kF32);
    EXPECT_EQ(producer_of(quantized.inputs[1]).op_type, "DequantizeLinear");
  }
}

// The sensitivity figures find the outlier layer: by its own error (SQNR of
// its output against an f32 twin at the same inputs) and by what it does to
// the model's outputs alone; the ordinary layer is near 8-bit precision.
TEST(QuantizeStatic, SensitivityFindsTheLayerThatLosesMost) {
  Graph g = MlpWithAnOutlierLayer();
  StatusOr<ActivationRangeReport> ranges = MeasureActivationRanges(g, Calibration());
  ASSERT_TRUE(ranges.ok()) << ranges.status().ToString();
  std::vector<std::string> gemms;
  for (const Node& n : g.nodes())
    if (n.op_type == "Gemm") gemms.push_back(n.name);
  ASSERT_EQ(gemms.size(), 2u);
  int progress = 0;
  StatusOr<ReferenceOutputs> f32 = ReferenceOutputs::Capture(g, Calibration());
  ASSERT_TRUE(f32.ok()) << f32.status().ToString();
  EXPECT_EQ(f32->outputs(), 1);
  StatusOr<std::vector<LayerQuantizationError>> layers = MeasureQuantizationSensitivity(
      g, ranges->ranges, Calibration(), *f32, [&](int done, int total) {
        EXPECT_EQ(done, progress + 1);
        EXPECT_EQ(total, 2);
        progress = done;
      });
  ASSERT_TRUE(layers.ok()) << layers.status().ToString();
  ASSERT_EQ(layers->size(), 2u);
  EXPECT_EQ(progress, 2);
  const LayerQuantizationError& worst = (*layers)[0];
  const LayerQuantizationError& other = (*layers)[1];
  EXPECT_EQ(worst.node, gemms[0]);
  EXPECT_EQ(other.node, gemms[1]);
  EXPECT_EQ(worst.op_type, "Gemm");
  EXPECT_LT(worst.sqnr_db, 10.0);
  EXPECT_GT(other.sqnr_db, 25.0);
  EXPECT_LT(other.sqnr_db, 60.0);  // 8-bit inputs and weights: not exact
  EXPECT_LT(worst.cosine, other.cosine);
  EXPECT_LT(worst.output_cosine, 0.95);
  EXPECT_GT(other.output_cosine, 0.999);

  // The figure "alone" is the model quantized with the other layer kept f32.
  Graph alone = g;
  StaticQuantizationOptions keep;
  keep.keep_float[gemms[1]] = "";
  ASSERT_TRUE(QuantizeStatic(alone, ranges->ranges, keep).ok());
  ASSERT_TRUE(RunDefaultPasses(alone).ok());
  StatusOr<double> cosine = f32->Cosine(alone);
  ASSERT_TRUE(cosine.ok());
  EXPECT_NEAR(*cosine, worst.output_cosine, 1e-9);
}

// ReferenceOutputs compares by output name on the same inputs: a graph
// against itself is 1, its negation -1; a graph sharing no output is an
// error, not a pass.
TEST(QuantizeStatic, ReferenceOutputsCompareOnTheSameInputs) {
  Graph g = MlpWithAnOutlierLayer();
  StatusOr<ReferenceOutputs> f32 = ReferenceOutputs::Capture(g, Calibration());
  ASSERT_TRUE(f32.ok()) << f32.status().ToString();
  StatusOr<double> same = f32->Cosine(g);
  ASSERT_TRUE(same.ok());
  EXPECT_NEAR(*same, 1.0, 1e-12);

  Graph negated = g;
  const ValueId out = negated.outputs()[0];
  const ValueId raw = negated.AddValue("raw");
  const NodeId producer = negated.value(out).producer;
  negated.node(producer).outputs[0] = raw;
  negated.value(raw).producer = producer;
  Node neg;
  neg.name = "negate";
  neg.op_type = "Neg";
  neg.inputs = {raw};
  neg.outputs = {out};
  negated.AddNode(std::move(neg));
  ASSERT_TRUE(negated.TopologicalSort().ok());
  ASSERT_TRUE(InferShapes(negated).ok());
  StatusOr<double> opposite = f32->Cosine(negated);
  ASSERT_TRUE(opposite.ok()) << opposite.status().ToString();
  EXPECT_NEAR(*opposite, -1.0, 1e-12);

  Graph renamed = g;
  renamed.value(renamed.outputs()[0]).name = "elsewhere";
  StatusOr<double> none = f32->Cosine(renamed);
  EXPECT_EQ(none.status().code(), StatusCode::kFailedPrecondition);
}

// Percentile calibration: three outliers of 1000 among 10000 values in
// [-1, 1) stretch the min-max range to 1000; at the 99.9th percentile the
// range ends within a 2048th of [-1, 1000] above 1 (bin edges, outward).
TEST(QuantizeStatic, PercentileCalibrationClipsOutliers) {
  Graph g;
  g.set_opset(13);
  const ValueId x = g.AddInput("x", DataType::kF32, StaticShape(std::vector<int64_t>{1, 10000}));
  Node relu;
  relu.name = "relu";
  relu.op_type = "Relu";
  relu.inputs = {x};
  relu.outputs = {g.AddValue("y")};
  const ValueId y = relu.outputs[0];
  g.AddNode(std::move(relu));
  g.outputs().push_back(y);
  ASSERT_TRUE(InferShapes(g).ok());
  std::vector<float> data(10000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i) / 5000.0f - 1.0f;
  data[17] = data[4242] = data[9001] = 1000.0f;
  ActivationSparsityOptions options;
  options.inputs["x"] = {Tensor::Borrow(DataType::kF32, {1, 10000}, data.data())};

  StatusOr<ActivationRangeReport> minmax = MeasureActivationRanges(g, options);
  ASSERT_TRUE(minmax.ok()) << minmax.status().ToString();
  EXPECT_FLOAT_EQ(minmax->ranges.at(x).min, -1.0f);
  EXPECT_FLOAT_EQ(minmax->ranges.at(x).max, 1000.0f);
  EXPECT_FLOAT_EQ(minmax->ranges.at(y).max, 1000.0f);

  StatusOr<ActivationRangeReport> clipped = MeasureActivationRanges(g, options, 99.9);
  ASSERT_TRUE(clipped.ok()) << clipped.status().ToString();
  const double bin = 1001.0 / 2048;
  EXPECT_NEAR(clipped->ranges.at(x).min, -1.0f, 1e-6);  // the low tail is 10 values of -1..-0.998
  EXPECT_GE(clipped->ranges.at(x).max, 0.9998f);
  EXPECT_LE(clipped->ranges.at(x).max, 1.0 + bin);
  EXPECT_EQ(clipped->ranges.at(y).min, 0.0f);
  EXPECT_GE(clipped->ranges.at(y).max, 0.9998f);
  EXPECT_LE(clipped->ranges.at(y).max, 1.0 + 1000.0 / 2048);

  EXPECT_EQ(MeasureActivationRanges(g, options, 50).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(MeasureActivationRanges(g, options, 100.5).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace braid
