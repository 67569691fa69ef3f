// SlimResNet: the segmented, slimmable backbone of the Slim Scheduler paper
// (arXiv 2510.09018): four sequential segments whose convolutions run at a
// width from {1, 0.75, 0.5, 0.25}, GroupNorm instead of BatchNorm so that
// statistics do not drift across widths, CIFAR-100's 32x32 inputs and 100
// classes. Each segment is one basic block (two 3x3 convolutions and a
// residual, projected when the shape changes); segment 0 has the stem. The
// segment boundaries and widths are recorded in the graph's metadata, so
// the .braid file carries them (docs/slimmable.md).
#include <string>

#include "graph/slimmable.h"
#include "models/architectures.h"
#include "models/graph_builder.h"

namespace braid {
namespace {

// 8 groups divide every width's channel count (8 .. 256).
constexpr int64_t kGroups = 8;

ValueId SlimBlock(GraphBuilder& b, ValueId x, int64_t planes, int64_t stride) {
  const bool project = stride != 1 || b.channels(x) != planes;
  ValueId y = b.Conv(x, "conv1", {.out_channels = planes, .kernel = 3, .stride = stride, .pad = 1});
  y = b.Relu(b.GroupNorm(y, "gn1", kGroups), "relu1");
  y = b.Conv(y, "conv2", {.out_channels = planes, .kernel = 3, .pad = 1});
  y = b.GroupNorm(y, "gn2", kGroups);
  ValueId identity = x;
  if (project) {
    auto scope = b.Enter("shortcut");
    identity = b.GroupNorm(b.Conv(x, "0", {.out_channels = planes, .stride = stride}), "1", kGroups);
  }
  return b.Relu(b.Add(y, identity), "relu");
}

}  // namespace

Graph BuildSlimResNet(uint64_t seed) {
  GraphBuilder b("slim_resnet", seed);
  ValueId x = b.Input("input", {Dim::Symbol("N"), 3, 32, 32});
  std::vector<ValueId> boundaries;
  const int64_t planes[4] = {32, 64, 128, 256};
  for (int segment = 0; segment < 4; ++segment) {
    auto scope = b.Enter("segment" + std::to_string(segment));
    if (segment == 0) {
      x = b.Conv(x, "stem", {.out_channels = planes[0], .kernel = 3, .pad = 1});
      x = b.Relu(b.GroupNorm(x, "stem_gn", kGroups), "stem_relu");
    }
    x = SlimBlock(b, x, planes[segment], segment == 0 ? 1 : 2);
    if (segment < 3) boundaries.push_back(x);
  }
  x = b.Flatten(b.GlobalAveragePool(x, "pool"));
  x = b.Linear(x, "fc", planes[3], 100);
  b.Output(x, "output", {Dim::Symbol("N"), 100});
  Graph g = std::move(b).Finish();
  g.set_opset(21);  // GroupNormalization with per-channel parameters
  SlimSpec spec;
  spec.widths = {1.0, 0.75, 0.5, 0.25};
  for (ValueId v : boundaries) spec.boundaries.push_back(g.value(v).name);
  // The builder's names are unique values of the graph: cannot fail.
  (void)WriteSlimSpec(spec, g);
  return g;
}

}  // namespace braid
