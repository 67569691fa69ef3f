#include "models/builtin.h"

#include <functional>

#include "models/architectures.h"

namespace braid {
namespace {

struct BuiltinModel {
  const char* name;
  const char* description;
  std::function<Graph(uint64_t)> build;
};

const std::vector<BuiltinModel>& Registry() {
  static const std::vector<BuiltinModel> models = {
      {"resnet18", "torchvision ResNet-18, 11.7M params, 3.6 GFLOPs/image",
       BuildResNet18},
      {"resnet50",
       "torchvision ResNet-50 v1.5 (bottleneck), 25.6M params, 8.2 "
       "GFLOPs/image",
       BuildResNet50},
      {"mobilenet_v2",
       "torchvision MobileNetV2 1.0 (inverted residuals, ReLU6), 3.5M params",
       BuildMobileNetV2},
      {"squeezenet1_1",
       "torchvision SqueezeNet 1.1 (fire modules, Concat), 1.2M params",
       BuildSqueezeNet11},
      {"vit_tiny",
       "ViT patch 16, dim 192, 3 heads, MLP 768, 4 blocks (LayerNorm, "
       "attention, GELU), 2.2M params",
       [](uint64_t seed) { return BuildVit(VitConfig{}, seed); }},
      {"tiny_cnn",
       "5 convolutions (depthwise, Relu6, residual) + Gemm, for fast tests",
       BuildTinyCnn},
      {"slim_resnet",
       "SlimResNet for 32x32 inputs, 4 segments slimmable to widths 1/0.75/0.5/0.25 "
       "(GroupNorm), 100 classes, 1.2M params",
       BuildSlimResNet},
  };
  return models;
}

}  // namespace

std::vector<BuiltinModelInfo> ListBuiltinModels() {
  std::vector<BuiltinModelInfo> out;
  for (const BuiltinModel& m : Registry())
    out.push_back({m.name, m.description});
  return out;
}

StatusOr<Graph> BuildBuiltinModel(const std::string& name, uint64_t seed) {
  std::string known;
  for (const BuiltinModel& m : Registry()) {
    if (name == m.name) return m.build(seed);
    known += known.empty() ? m.name : std::string(", ") + m.name;
  }
  return NotFound("no built-in model '" + name + "'; known: " + known);
}

}  // namespace braid
