// The built-in models: structure, parameter counts against the published
// torchvision / timm numbers, deterministic seeded weights, and that they go
// through the default passes to a [N, 1000] output.
#include "models/builtin.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "graph/passes/passes.h"
#include "models/architectures.h"

namespace braid {
namespace {

const std::vector<std::string> kModels = {"resnet18",     "resnet50",
                                          "mobilenet_v2", "squeezenet1_1",
                                          "vit_tiny",     "tiny_cnn",
                                          "slim_resnet"};

// slim_resnet is CIFAR-100 shaped and uses GroupNormalization (opset 18+);
// the others are ImageNet classifiers exported at opset 17.
bool IsCifar(const std::string& name) { return name == "slim_resnet"; }

Graph Build(const std::string& name, uint64_t seed = 1) {
  StatusOr<Graph> g = BuildBuiltinModel(name, seed);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return g.ok() ? std::move(g).value() : Graph();
}

// What torch's sum(p.numel() for p in model.parameters()) counts: every f32
// constant of rank >= 1 except BatchNormalization's running mean and variance
// (buffers, not parameters). Rank-0 constants are export artefacts (Clip
// bounds, GELU's 0.5, the attention scale).
int64_t TorchParameterCount(const Graph& g) {
  std::vector<bool> buffer(g.num_values(), false);
  for (const Node& n : g.nodes())
    if (n.op_type == "BatchNormalization")
      for (size_t i = 3; i < n.inputs.size(); ++i) buffer[n.inputs[i]] = true;
  int64_t count = 0;
  for (ValueId v = 0; v < g.num_values(); ++v) {
    const Value& value = g.value(v);
    if (!value.constant || buffer[v] || value.dtype != DataType::kF32 ||
        value.shape.empty())
      continue;
    count += ElementCount(value.shape);
  }
  return count;
}

std::map<std::string, int> CountOps(const Graph& g) {
  std::map<std::string, int> ops;
  for (const Node& n : g.nodes()) ++ops[n.op_type];
  return ops;
}

TEST(BuiltinModelsTest, ListsEveryModelWithADescription) {
  std::vector<BuiltinModelInfo> list = ListBuiltinModels();
  ASSERT_EQ(list.size(), kModels.size());
  for (size_t i = 0; i < list.size(); ++i) {
    EXPECT_EQ(list[i].name, kModels[i]);
    EXPECT_FALSE(list[i].description.empty());
    EXPECT_EQ(list[i].description.find('\n'), std::string::npos);
  }
}

TEST(BuiltinModelsTest, UnknownNameIsNotFoundListingKnownNames) {
  StatusOr<Graph> g = BuildBuiltinModel("resnet1000");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kNotFound);
  EXPECT_NE(g.status().message().find("resnet1000"), std::string::npos);
  for (const std::string& name : kModels)
    EXPECT_NE(g.status().message().find(name), std::string::npos) << name;
}

TEST(BuiltinModelsTest, EachModelIsAValidExportLikeGraph) {
  for (const std::string& name : kModels) {
    SCOPED_TRACE(name);
    Graph g = Build(name);
    ASSERT_TRUE(g.Validate().ok()) << g.Validate().ToString();
    EXPECT_EQ(g.name(), name);
    EXPECT_EQ(g.opset(), IsCifar(name) ? 21 : 17);
    ASSERT_EQ(g.inputs().size(), 1u);
    const Value& in = g.value(g.inputs()[0]);
    EXPECT_EQ(in.name, "input");
    EXPECT_EQ(in.dtype, DataType::kF32);
    EXPECT_EQ(ShapeToString(in.shape), IsCifar(name) ? "[N,3,32,32]" : "[N,3,224,224]");
    ASSERT_EQ(g.outputs().size(), 1u);
    EXPECT_EQ(g.value(g.outputs()[0]).name, "output");
    // Un-fused, like a raw export: no node carries a fused activation.
    for (const Node& n : g.nodes()) EXPECT_FALSE(n.attrs.Has("activation"));
  }
}

TEST(BuiltinModelsTest, ParameterCountsMatchTorchvision) {
  // torchvision: sum(p.numel() for p in m.parameters())
  EXPECT_EQ(TorchParameterCount(Build("resnet18")), 11689512);
  EXPECT_EQ(TorchParameterCount(Build("resnet50")), 25557032);
  EXPECT_EQ(TorchParameterCount(Build("mobilenet_v2")), 3504872);
  EXPECT_EQ(TorchParameterCount(Build("squeezenet1_1")), 1235496);
}

TEST(BuiltinModelsTest, VitParameterCounts) {
  // Per block: 2 LayerNorms 4*192 + q,k,v,proj 4*(192*192+192) + fc1
  // 192*768+768 + fc2 768*192+192 = 768 + 148224 + 148224 + 147648 = 444,864.
  // Outside the blocks: patch conv 3*16*16*192+192 = 147,648, cls 192, pos
  // 197*192 = 37,824, final norm 384, head 192*1000+1000 = 193,000 (379,048).
  // Depth 4: 379,048 + 4 * 444,864 = 2,158,504.
  EXPECT_EQ(TorchParameterCount(Build("vit_tiny")), 2158504);
  // Depth 12 is timm's vit_tiny_patch16_224: 5,717,416 parameters.
  EXPECT_EQ(TorchParameterCount(BuildVit({.depth = 12}, 1)), 5717416);
}

TEST(BuiltinModelsTest, OpCountsMatchTheArchitectures) {
  std::map<std::string, int> r18 = CountOps(Build("resnet18"));
  EXPECT_EQ(r18["Conv"], 20);  // 1 + 8 blocks * 2 + 3 downsamples
  EXPECT_EQ(r18["BatchNormalization"], 20);
  EXPECT_EQ(r18["Add"], 8);
  EXPECT_EQ(r18["Gemm"], 1);
  std::map<std::string, int> r50 = CountOps(Build("resnet50"));
  EXPECT_EQ(r50["Conv"], 53);  // 1 + 16 blocks * 3 + 4 downsamples
  EXPECT_EQ(r50["Add"], 16);
  EXPECT_EQ(r50["Relu"], 49);  // stem + 16 * 3
  std::map<std::string, int> mv2 = CountOps(Build("mobilenet_v2"));
  EXPECT_EQ(mv2["Conv"], 52);  // stem + 1*2 + 16*3 + last 1x1
  EXPECT_EQ(mv2["Clip"], 35);  // stem + 1 + 16*2 + last
  EXPECT_EQ(mv2["Add"], 10);   // residual blocks (stride 1, same width)
  std::map<std::string, int> sq = CountOps(Build("squeezenet1_1"));
  EXPECT_EQ(sq["Conv"], 26);  // stem + 8 fires * 3 + classifier
  EXPECT_EQ(sq["Concat"], 8);
  EXPECT_EQ(sq["MaxPool"], 3);
  EXPECT_EQ(sq.count("BatchNormalization"), 0u);
  std::map<std::string, int> vit = CountOps(Build("vit_tiny"));
  EXPECT_EQ(vit["LayerNormalization"], 9);  // 2 per block + final
  EXPECT_EQ(vit["Softmax"], 4);
  EXPECT_EQ(vit["Erf"], 4);
  EXPECT_EQ(vit["MatMul"], 4 * 8);  // q, k, v, scores, context, proj, fc1, fc2
}

TEST(BuiltinModelsTest, NamesFollowThePyTorchExport) {
  Graph r50 = Build("resnet50");
  EXPECT_NE(r50.FindValue("layer1.0.conv1.weight"), kNoValue);
  EXPECT_NE(r50.FindValue("layer4.2.bn3.running_var"), kNoValue);
  EXPECT_NE(r50.FindValue("layer2.0.downsample.0.weight"), kNoValue);
  EXPECT_NE(r50.FindValue("fc.bias"), kNoValue);
  bool found = false;
  for (const Node& n : r50.nodes())
    found = found || n.name == "/layer1/layer1.0/conv1/Conv";
  EXPECT_TRUE(found);
  Graph mv2 = Build("mobilenet_v2");
  EXPECT_NE(mv2.FindValue("features.0.0.weight"), kNoValue);
  EXPECT_NE(mv2.FindValue("features.2.conv.1.0.weight"), kNoValue);  // dw
  EXPECT_NE(mv2.FindValue("classifier.1.weight"), kNoValue);
}

TEST(BuiltinModelsTest, WeightsAreDeterministicPerSeed) {
  for (const char* name : {"resnet18", "vit_tiny", "squeezenet1_1"}) {
    SCOPED_TRACE(name);
    Graph a = Build(name, 7);
    Graph b = Build(name, 7);
    Graph c = Build(name, 8);
    ASSERT_EQ(a.num_values(), b.num_values());
    ASSERT_EQ(a.num_values(), c.num_values());
    int random_tensors = 0;
    for (ValueId v = 0; v < a.num_values(); ++v) {
      const Value& va = a.value(v);
      ASSERT_EQ(va.name, b.value(v).name);
      ASSERT_EQ(va.constant.has_value(), b.value(v).constant.has_value());
      if (!va.constant) continue;
      EXPECT_TRUE(va.constant->ContentEquals(*b.value(v).constant)) << va.name;
      // Every random tensor (f32, rank >= 1) changes with the seed.
      if (va.dtype == DataType::kF32 && !va.shape.empty()) {
        ++random_tensors;
        EXPECT_FALSE(va.constant->ContentEquals(*c.value(v).constant))
            << va.name;
      }
    }
    EXPECT_GT(random_tensors, 10);
  }
}

TEST(BuiltinModelsTest, WeightsAreNonZeroAndInSaneRanges) {
  for (const std::string& name : kModels) {
    SCOPED_TRACE(name);
    Graph g = Build(name, 3);
    std::map<ValueId, std::string> bn_role;
    for (const Node& n : g.nodes()) {
      if (n.op_type == "BatchNormalization") {
        bn_role[n.inputs[1]] = "gamma";
        bn_role[n.inputs[2]] = "beta";
        bn_role[n.inputs[3]] = "mean";
        bn_role[n.inputs[4]] = "var";
      }
      if (n.op_type == "Conv") {
        // Kaiming-uniform: |w| <= sqrt(6 / fan_in).
        const Value& w = g.value(n.inputs[1]);
        const double fan_in = static_cast<double>(ElementCount(w.shape)) /
                              static_cast<double>(w.shape[0].extent());
        for (float x : w.constant->as<float>())
          ASSERT_LE(std::fabs(x), std::sqrt(6.0 / fan_in)) << w.name;
      }
    }
    for (ValueId v = 0; v < g.num_values(); ++v) {
      const Value& value = g.value(v);
      if (!value.constant || value.dtype != DataType::kF32 ||
          value.shape.empty())
        continue;
      std::span<const float> data = value.constant->as<float>();
      ASSERT_EQ(static_cast<int64_t>(data.size()), ElementCount(value.shape));
      const std::string role = bn_role.count(v) ? bn_role[v] : "";
      for (float x : data) {
        ASSERT_NE(x, 0.0f) << value.name;
        ASSERT_TRUE(std::isfinite(x)) << value.name;
        if (role == "gamma") {
          ASSERT_TRUE(x >= 0.2f && x <= 1.2f) << value.name;
        } else if (role == "beta" || role == "mean") {
          ASSERT_LE(std::fabs(x), 0.1f) << value.name;
        } else if (role == "var") {
          ASSERT_TRUE(x >= 0.5f && x <= 1.5f) << value.name;
        }
      }
    }
  }
}

TEST(BuiltinModelsTest, DefaultPassesGiveABatchByClassesOutput) {
  for (const std::string& name : kModels) {
    SCOPED_TRACE(name);
    Graph g = Build(name);
    Status s = RunDefaultPasses(g);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_TRUE(g.Validate().ok());
    const Value& out = g.value(g.outputs()[0]);
    EXPECT_EQ(out.name, "output");
    EXPECT_TRUE(out.has_shape);
    EXPECT_EQ(ShapeToString(out.shape), IsCifar(name) ? "[N,100]" : "[N,1000]");
    EXPECT_EQ(out.dtype, DataType::kF32);
    for (const Node& n : g.nodes())
      EXPECT_NE(n.op_type, "BatchNormalization") << n.name;
  }
}

TEST(BuiltinModelsTest, PassesWithoutFusionKeepBatchNorm) {
  Graph g = Build("tiny_cnn");
  ASSERT_TRUE(RunDefaultPasses(g, {.fuse = false}).ok());
  EXPECT_EQ(CountOps(g)["BatchNormalization"], 4);
  EXPECT_EQ(ShapeToString(g.value(g.outputs()[0]).shape), "[N,1000]");
}

}  // namespace
}  // namespace braid
