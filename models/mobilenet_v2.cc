// torchvision MobileNetV2 (width 1.0), exported un-fused: ReLU6 is Clip with
// constant min/max inputs.
#include <string>

#include "models/architectures.h"
#include "models/graph_builder.h"

namespace braid {
namespace {

// torchvision's Conv2dNormActivation: "<module>.0" Conv, ".1" BN, ".2" ReLU6.
ValueId ConvBnRelu6(GraphBuilder& b, ValueId x, const std::string& module,
                    const ConvSpec& spec) {
  auto scope = b.Enter(module);
  ValueId y = b.Conv(x, "0", spec);
  return b.Relu6(b.BatchNorm(y, "1"), "2");
}

ValueId InvertedResidual(GraphBuilder& b, ValueId x, int64_t out_channels,
                         int64_t stride, int64_t expand_ratio) {
  const int64_t in_channels = b.channels(x);
  const int64_t hidden = in_channels * expand_ratio;
  ValueId y = x;
  {
    auto scope = b.Enter("conv");
    int index = 0;
    if (expand_ratio != 1)
      y = ConvBnRelu6(b, y, std::to_string(index++), {.out_channels = hidden});
    y = ConvBnRelu6(b, y, std::to_string(index++),
                    {.out_channels = hidden,
                     .kernel = 3,
                     .stride = stride,
                     .pad = 1,
                     .groups = hidden});
    y = b.Conv(y, std::to_string(index++), {.out_channels = out_channels});
    y = b.BatchNorm(y, std::to_string(index++));
  }
  if (stride == 1 && in_channels == out_channels) y = b.Add(x, y);
  return y;
}

}  // namespace

Graph BuildMobileNetV2(uint64_t seed) {
  GraphBuilder b("mobilenet_v2", seed);
  ValueId x = b.Input("input", {Dim::Symbol("N"), 3, 224, 224});
  {
    auto features = b.Enter("features");
    x = ConvBnRelu6(b, x, "0",
                    {.out_channels = 32, .kernel = 3, .stride = 2, .pad = 1});
    // {expand ratio t, channels c, repeats n, first stride s}
    const int64_t settings[7][4] = {
        {1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
        {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
    int index = 1;
    for (const auto& [t, c, n, s] : settings) {
      for (int64_t i = 0; i < n; ++i) {
        auto block = b.Enter(std::to_string(index++));
        x = InvertedResidual(b, x, c, i == 0 ? s : 1, t);
      }
    }
    x = ConvBnRelu6(b, x, std::to_string(index), {.out_channels = 1280});
  }
  x = b.Flatten(b.GlobalAveragePool(x), 1);
  {
    auto classifier = b.Enter("classifier");
    x = b.Linear(x, "1", 1280, 1000);
  }
  b.Output(x, "output", {Dim::Symbol("N"), 1000});
  return std::move(b).Finish();
}

}  // namespace braid
