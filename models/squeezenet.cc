// torchvision SqueezeNet 1.1: Fire modules (squeeze 1x1, expand 1x1 and 3x3
// concatenated on channels), convolutions with bias, no BatchNormalization.
#include <string>

#include "models/architectures.h"
#include "models/graph_builder.h"

namespace braid {
namespace {

ValueId Fire(GraphBuilder& b, ValueId x, int64_t squeeze, int64_t expand1x1,
             int64_t expand3x3) {
  ValueId s = b.Conv(x, "squeeze", {.out_channels = squeeze, .bias = true});
  s = b.Relu(s, "squeeze_activation");
  ValueId e1 =
      b.Conv(s, "expand1x1", {.out_channels = expand1x1, .bias = true});
  e1 = b.Relu(e1, "expand1x1_activation");
  ValueId e3 =
      b.Conv(s, "expand3x3",
             {.out_channels = expand3x3, .kernel = 3, .pad = 1, .bias = true});
  e3 = b.Relu(e3, "expand3x3_activation");
  return b.Concat({e1, e3}, 1);
}

}  // namespace

Graph BuildSqueezeNet11(uint64_t seed) {
  GraphBuilder b("squeezenet1_1", seed);
  ValueId x = b.Input("input", {Dim::Symbol("N"), 3, 224, 224});
  {
    auto features = b.Enter("features");
    x = b.Conv(x, "0",
               {.out_channels = 64, .kernel = 3, .stride = 2, .bias = true});
    x = b.Relu(x, "1");
    // torchvision's pools use ceil_mode=True (at 224x224 every window fits
    // exactly, so floor and ceil agree).
    x = b.MaxPool(x, "2", 3, 2, 0, /*ceil_mode=*/true);
    // {module index, squeeze, expand1x1, expand3x3}; 5 and 8 are pools.
    const int64_t fires[8][4] = {{3, 16, 64, 64},    {4, 16, 64, 64},
                                 {6, 32, 128, 128},  {7, 32, 128, 128},
                                 {9, 48, 192, 192},  {10, 48, 192, 192},
                                 {11, 64, 256, 256}, {12, 64, 256, 256}};
    for (const auto& [index, squeeze, e1, e3] : fires) {
      if (index == 6 || index == 9)
        x = b.MaxPool(x, std::to_string(index - 1), 3, 2, 0, true);
      auto fire = b.Enter(std::to_string(index));
      x = Fire(b, x, squeeze, e1, e3);
    }
  }
  {
    // Dropout (index 0) is absent from an inference export.
    auto classifier = b.Enter("classifier");
    x = b.Conv(x, "1", {.out_channels = 1000, .bias = true});
    x = b.Relu(x, "2");
    x = b.GlobalAveragePool(x, "3");
  }
  x = b.Flatten(x, 1);
  b.Output(x, "output", {Dim::Symbol("N"), 1000});
  return std::move(b).Finish();
}

}  // namespace braid
