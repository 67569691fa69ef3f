// The channels-last pass (runtime/layout.h) on built-in models, and the
// executor with it on and off: same outputs, fewer plain activations.
#include "runtime/layout.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "api/model_loader.h"
#include "graph/passes/passes.h"
#include "graph/passes/specialize.h"
#include "kernels/cpu/cpu_device.h"
#include "runtime/engine.h"

namespace braid {
namespace {

Graph StaticModel(const std::string& name) {
  StatusOr<Graph> g = LoadGraphForExecution("builtin:" + name);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_TRUE(SpecializeSymbols(*g, {{"N", 1}}).ok());
  return std::move(*g);
}

bool Spatial(const Graph& g, ValueId id) {
  const Value& v = g.value(id);
  return v.shape.size() == 4 && !g.IsConstant(id) &&
         v.shape[2].extent() * v.shape[3].extent() > 1;
}

TEST(LayoutTest, ResNetKeepsConvChainsNhwcAndEdgesPlain) {
  Graph g = StaticModel("resnet18");
  const std::vector<TensorLayout> layout =
      AssignChannelsLast(g, std::vector<bool>(g.nodes().size(), true));
  auto of = [&](ValueId id) { return layout[static_cast<size_t>(id)]; };
  for (ValueId id : g.inputs()) EXPECT_EQ(of(id), TensorLayout::kPlain);
  for (ValueId id : g.outputs()) EXPECT_EQ(of(id), TensorLayout::kPlain);
  int nhwc = 0;
  for (size_t v = 0; v < layout.size(); ++v) {
    if (layout[v] != TensorLayout::kChannelsLast) continue;
    ++nhwc;
    EXPECT_TRUE(Spatial(g, static_cast<ValueId>(v))) << g.value(static_cast<ValueId>(v)).name;
  }
  EXPECT_GE(nhwc, 20);
  // Every non-conv node sees one layout on its spatial operands.
  for (const Node& n : g.nodes()) {
    if (n.op_type == "Conv") continue;
    std::vector<TensorLayout> seen;
    for (const std::vector<ValueId>* ids : {&n.inputs, &n.outputs})
      for (ValueId id : *ids)
        if (id != kNoValue && Spatial(g, id)) seen.push_back(of(id));
    for (TensorLayout l : seen) EXPECT_EQ(l, seen.front()) << n.name;
  }
}

TEST(LayoutTest, ANodeThatCannotTakeNhwcKeepsItsGroupPlain) {
  Graph g = StaticModel("resnet18");
  std::vector<bool> handles(g.nodes().size(), true);
  int add = -1;
  for (int i = 0; i < g.num_nodes() && add < 0; ++i)
    if (g.node(i).op_type == "Add") add = i;
  ASSERT_GE(add, 0);
  handles[static_cast<size_t>(add)] = false;
  const std::vector<TensorLayout> layout = AssignChannelsLast(g, handles);
  for (ValueId id : g.node(add).inputs)
    EXPECT_EQ(layout[static_cast<size_t>(id)], TensorLayout::kPlain) << g.value(id).name;
  for (ValueId id : g.node(add).outputs)
    EXPECT_EQ(layout[static_cast<size_t>(id)], TensorLayout::kPlain) << g.value(id).name;
  const std::vector<TensorLayout> none =
      AssignChannelsLast(g, std::vector<bool>(g.nodes().size(), false));
  for (TensorLayout l : none) EXPECT_EQ(l, TensorLayout::kPlain);
}

std::vector<float> RunSequential(Engine& exec, const std::vector<float>& input) {
  const void* inputs[] = {input.data()};
  Status s = exec.Run(inputs);
  EXPECT_TRUE(s.ok()) << s.ToString();
  const float* out = static_cast<const float*>(exec.output(0));
  return std::vector<float>(out, out + exec.output_desc(0).elements());
}

TEST(LayoutTest, SequentialEngineGivesTheSameOutputsWithAndWithoutNhwc) {
  KernelRegistry registry;
  RegisterCpuKernels(registry);
  std::unique_ptr<Device> cpu = CreateCpuDevice();
  for (const char* model : {"mobilenet_v2", "squeezenet1_1"}) {
    std::vector<std::unique_ptr<Engine>> execs;
    for (bool nhwc : {true, false}) {
      EngineOptions options;
      options.channels_last = nhwc;
      StatusOr<std::unique_ptr<Engine>> e =
          Engine::CreateSequential(StaticModel(model), registry, *cpu, options);
      ASSERT_TRUE(e.ok()) << e.status().ToString();
      EXPECT_EQ((*e)->layout_note(), "");
      execs.push_back(std::move(*e));
    }
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> input(static_cast<size_t>(execs[0]->input_desc(0).elements()));
    for (float& x : input) x = dist(rng);
    const std::vector<float> a = RunSequential(*execs[0], input);
    const std::vector<float> b = RunSequential(*execs[1], input);
    ASSERT_EQ(a.size(), b.size());
    double max_ref = 0, max_diff = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      max_ref = std::max(max_ref, std::fabs(double{b[i]}));
      max_diff = std::max(max_diff, std::fabs(double{a[i]} - b[i]));
    }
    // Same kernels, other memory order: only summation order differs.
    EXPECT_LE(max_diff, 1e-4 * max_ref) << model;
    EXPECT_GT(max_ref, 0) << model;
  }
}

// Conv -> Pad(mode) -> Conv, as CycleGAN-style generators pad between convs.
// braid's Pad kernel takes channels-last only in constant mode: a reflect or
// edge Pad must keep its own chain plain (the reference Pad cannot take
// nhwc) rather than force the engine's whole-graph plain retry; the
// constant one may go nhwc. Outputs agree either way.
TEST(LayoutTest, PadsBetweenConvsLoadInEveryModeAndMatch) {
  KernelRegistry registry;
  RegisterCpuKernels(registry);
  std::unique_ptr<Device> cpu = CreateCpuDevice();
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  auto constant = [&](Graph& g, const std::string& name, std::vector<int64_t> dims) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = dist(rng);
    return g.AddConstant(name, DataType::kF32, StaticShape(dims),
                         TensorData::Copy(v.data(), v.size() * sizeof(float)));
  };
  for (const char* mode : {"reflect", "edge", "constant"}) {
    Graph g;
    g.set_opset(17);
    const ValueId x = g.AddInput("x", DataType::kF32, {Dim(1), Dim(3), Dim(8), Dim(8)});
    auto node = [&](const std::string& op, const std::string& name, std::vector<ValueId> in,
                    Attributes attrs = {}) {
      Node n;
      n.name = name;
      n.op_type = op;
      n.inputs = std::move(in);
      n.attrs = std::move(attrs);
      n.outputs = {g.AddValue(name + "_out")};
      const ValueId out = n.outputs[0];
      g.AddNode(std::move(n));
      return out;
    };
    Attributes conv_attrs;
    conv_attrs.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
    const ValueId c1 = node("Conv", "conv1", {x, constant(g, "w1", {4, 3, 3, 3})}, conv_attrs);
    const std::vector<int64_t> pad_amounts = {0, 0, 1, 2, 0, 0, 1, 2};
    Attributes pad_attrs;
    pad_attrs.Set("mode", std::string(mode));
    const ValueId padded =
        node("Pad", "pad", {c1, g.AddConstant("pads", DataType::kI64, {Dim(8)},
                                              TensorData::Copy(pad_amounts.data(), 64))},
             pad_attrs);
    const ValueId y = node("Conv", "conv2", {padded, constant(g, "w2", {2, 4, 3, 3})});
    g.outputs().push_back(y);
    ASSERT_TRUE(InferShapes(g).ok()) << mode;
    std::vector<float> input(3 * 8 * 8);
    for (float& v : input) v = dist(rng);
    std::vector<std::vector<float>> outputs;
    for (bool nhwc : {true, false}) {
      EngineOptions options;
      options.channels_last = nhwc;
      StatusOr<std::unique_ptr<Engine>> e = Engine::CreateSequential(g, registry, *cpu, options);
      ASSERT_TRUE(e.ok()) << mode << (nhwc ? " nhwc: " : " plain: ") << e.status().ToString();
      // No retry of the whole graph in the plain layout was needed.
      EXPECT_EQ((*e)->layout_note(), "") << mode;
      outputs.push_back(RunSequential(**e, input));
    }
    ASSERT_EQ(outputs[0].size(), outputs[1].size()) << mode;
    for (size_t i = 0; i < outputs[0].size(); ++i)
      ASSERT_NEAR(outputs[0][i], outputs[1][i], 1e-4 * (1 + std::fabs(outputs[1][i]))) << mode;
  }
}

TEST(LayoutTest, DenseConvsStayNhwcAndSparseDeclinesAreNotFallbacks) {
  KernelRegistry registry;
  RegisterCpuKernels(registry, CpuKernelOptions());  // sparse kernels first
  std::unique_ptr<Device> cpu = CreateCpuDevice();
  StatusOr<std::unique_ptr<Engine>> e =
      Engine::CreateSequential(StaticModel("tiny_cnn"), registry, *cpu, EngineOptions());
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  int convs = 0;
  for (const NodePlacement& p : (*e)->placements()) {
    if (p.op_type != "Conv") continue;
    ++convs;
    EXPECT_EQ(p.implementation, "onednn") << p.node;
    EXPECT_FALSE(p.fallback) << p.node << ": " << p.reason;
    // The reason is the sparse kernel's own (its crossover), not the layout.
    EXPECT_NE(p.reason.find("sparse: "), std::string::npos) << p.reason;
    EXPECT_EQ(p.reason.find("channels-last"), std::string::npos) << p.reason;
  }
  EXPECT_GE(convs, 3);
}

}  // namespace
}  // namespace braid
