// torchvision ResNet-18 and ResNet-50 (v1.5), exported un-fused.
#include <string>

#include "models/architectures.h"
#include "models/graph_builder.h"

namespace braid {
namespace {

// The last BatchNormalization of each residual branch gets a small gamma, as
// in trained ResNets: with running statistics that do not track the random
// weights, a gamma near 1 would double the activation variance at every
// block (std ~3e3 at the end of resnet50); 0.2-0.4 keeps it near 1-5.
constexpr BatchNormInit kResidualBranchBn = {.gamma_lo = 0.2f,
                                             .gamma_hi = 0.4f};

ValueId Downsample(GraphBuilder& b, ValueId x, int64_t out_channels,
                   int64_t stride) {
  auto scope = b.Enter("downsample");
  ValueId y = b.Conv(x, "0", {.out_channels = out_channels, .stride = stride});
  return b.BatchNorm(y, "1");
}

ValueId BasicBlock(GraphBuilder& b, ValueId x, int64_t planes, int64_t stride) {
  const bool project = stride != 1 || b.channels(x) != planes;
  ValueId y =
      b.Conv(x, "conv1",
             {.out_channels = planes, .kernel = 3, .stride = stride, .pad = 1});
  y = b.Relu(b.BatchNorm(y, "bn1"), "relu");
  y = b.Conv(y, "conv2", {.out_channels = planes, .kernel = 3, .pad = 1});
  y = b.BatchNorm(y, "bn2", kResidualBranchBn);
  ValueId identity = project ? Downsample(b, x, planes, stride) : x;
  return b.Relu(b.Add(y, identity), "relu");
}

ValueId Bottleneck(GraphBuilder& b, ValueId x, int64_t planes, int64_t stride) {
  const int64_t out_channels = planes * 4;
  const bool project = stride != 1 || b.channels(x) != out_channels;
  ValueId y = b.Conv(x, "conv1", {.out_channels = planes});
  y = b.Relu(b.BatchNorm(y, "bn1"), "relu");
  y = b.Conv(y, "conv2",
             {.out_channels = planes, .kernel = 3, .stride = stride, .pad = 1});
  y = b.Relu(b.BatchNorm(y, "bn2"), "relu");
  y = b.Conv(y, "conv3", {.out_channels = out_channels});
  y = b.BatchNorm(y, "bn3", kResidualBranchBn);
  ValueId identity = project ? Downsample(b, x, out_channels, stride) : x;
  return b.Relu(b.Add(y, identity), "relu");
}

Graph BuildResNet(const std::string& name, bool bottleneck,
                  const int (&blocks)[4], uint64_t seed) {
  GraphBuilder b(name, seed);
  ValueId x = b.Input("input", {Dim::Symbol("N"), 3, 224, 224});
  x = b.Conv(x, "conv1",
             {.out_channels = 64, .kernel = 7, .stride = 2, .pad = 3});
  x = b.Relu(b.BatchNorm(x, "bn1"), "relu");
  x = b.MaxPool(x, "maxpool", 3, 2, 1, /*ceil_mode=*/false);
  const int64_t planes[4] = {64, 128, 256, 512};
  for (int layer = 0; layer < 4; ++layer) {
    auto layer_scope = b.Enter("layer" + std::to_string(layer + 1));
    for (int block = 0; block < blocks[layer]; ++block) {
      auto block_scope = b.Enter(std::to_string(block));
      const int64_t stride = layer > 0 && block == 0 ? 2 : 1;
      x = bottleneck ? Bottleneck(b, x, planes[layer], stride)
                     : BasicBlock(b, x, planes[layer], stride);
    }
  }
  x = b.Flatten(b.GlobalAveragePool(x, "avgpool"), 1);
  const int64_t features = bottleneck ? 2048 : 512;
  x = b.Linear(x, "fc", features, 1000);
  b.Output(x, "output", {Dim::Symbol("N"), 1000});
  return std::move(b).Finish();
}

}  // namespace

Graph BuildResNet18(uint64_t seed) {
  return BuildResNet("resnet18", /*bottleneck=*/false, {2, 2, 2, 2}, seed);
}

Graph BuildResNet50(uint64_t seed) {
  return BuildResNet("resnet50", /*bottleneck=*/true, {3, 4, 6, 3}, seed);
}

}  // namespace braid
