// The built-in architectures, one builder function each (models/<name>.cc).
// Most callers want BuildBuiltinModel (models/builtin.h); these are here for
// tests that need a variant, such as a ViT of a different depth.
#ifndef BRAID_MODELS_ARCHITECTURES_H_
#define BRAID_MODELS_ARCHITECTURES_H_

#include <cstdint>

#include "graph/ir.h"

namespace braid {

// torchvision resnet18 / resnet50 (v1.5: stride on the bottleneck's 3x3).
Graph BuildResNet18(uint64_t seed);
Graph BuildResNet50(uint64_t seed);

// torchvision mobilenet_v2, width 1.0.
Graph BuildMobileNetV2(uint64_t seed);

// torchvision squeezenet1_1.
Graph BuildSqueezeNet11(uint64_t seed);

// A ViT with patch 16 on 224x224 (196 patches + class token). depth 12 has
// the same parameters as timm's vit_tiny_patch16_224; the built-in "vit_tiny"
// uses depth 4.
struct VitConfig {
  int depth = 4;
  int64_t dim = 192;
  int64_t heads = 3;
  int64_t mlp_dim = 768;
  int64_t patch = 16;
  int64_t image = 224;
  int64_t classes = 1000;
};
Graph BuildVit(const VitConfig& config, uint64_t seed);

// A few convolutions (stem, depthwise + Relu6, pointwise, residual), for
// fast tests.
Graph BuildTinyCnn(uint64_t seed);

// SlimResNet (the Slim Scheduler paper's backbone, CIFAR-100 shape): four
// segments of one basic block each (32, 64, 128, 256 channels; GroupNorm with
// 8 groups), slimmable to widths 1, 0.75, 0.5, 0.25 (graph/slimmable.h).
Graph BuildSlimResNet(uint64_t seed);

}  // namespace braid

#endif  // BRAID_MODELS_ARCHITECTURES_H_
