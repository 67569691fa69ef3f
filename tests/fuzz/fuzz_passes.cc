// The conversion passes on random valid CNN graphs built from the fuzzer's
// bytes (convolutions, BatchNorm, activations, residual and parallel branches,
// Concat -> Slice, Pad, pooling, spatial reductions, Identity / Dropout): the
// passes must succeed, keep the graph valid and keep every output's name and
// shape. Numerical equivalence of each rewrite is the passes' unit tests' job.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "graph/passes/passes.h"
#include "models/graph_builder.h"
#include "tests/fuzz/fuzz_util.h"

namespace braid {
namespace {

Graph RandomGraph(FuzzedDataProvider& in) {
  GraphBuilder b("fuzz", in.ConsumeIntegral<uint32_t>());
  int64_t channels = in.ConsumeIntegralInRange<int64_t>(1, 8);
  int64_t size = in.ConsumeIntegralInRange<int64_t>(1, 9);
  ValueId x = b.Input("input", {Dim::Symbol("N"), Dim(channels), Dim(size), Dim(size)});
  const int steps = in.ConsumeIntegralInRange<int>(1, 12);
  for (int step = 0; step < steps && in.remaining_bytes() > 0; ++step) {
    const std::string module = "m" + std::to_string(step);
    auto conv = [&](ValueId v, int64_t out, int64_t kernel, int64_t groups) {
      ConvSpec spec;
      spec.out_channels = out;
      spec.kernel = kernel;
      spec.pad = kernel / 2;
      spec.groups = groups;
      spec.bias = in.ConsumeBool();
      return b.Conv(v, module, spec);
    };
    switch (in.ConsumeIntegralInRange<int>(0, 13)) {
      case 0: {  // conv, maybe strided or depthwise
        const int64_t out = in.ConsumeBool() ? channels : in.ConsumeIntegralInRange<int64_t>(1, 8);
        const bool depthwise = out == channels && in.ConsumeBool();
        x = conv(x, out, in.ConsumeBool() ? 3 : 1, depthwise ? channels : 1);
        channels = out;
        break;
      }
      case 1: x = b.BatchNorm(x, module); break;
      case 2: x = b.Relu(x); break;
      case 3: x = b.Relu6(x); break;
      case 4: x = b.Add(x, conv(x, channels, 1, 1)); break;  // residual branch
      case 5: x = b.Add(conv(x, channels, 3, 1), b.BatchNorm(x, module + "bn")); break;
      case 6: {  // GhostNet: Concat(a, dw(a)) -> Slice of the leading channels
        const ValueId a = conv(x, channels, 1, 1);
        const ValueId cat = b.Concat({a, conv(a, channels, 3, channels)}, 1);
        const int64_t keep = in.ConsumeIntegralInRange<int64_t>(1, 2 * channels);
        x = b.Op("Slice", {cat, b.ConstantI64(module + "s", {1}, {0}),
                           b.ConstantI64(module + "e", {1}, {keep}),
                           b.ConstantI64(module + "a", {1}, {1})});
        channels = keep;
        break;
      }
      case 7: {  // zero Pad then a 3x3 conv without padding
        const ValueId pads = b.ConstantI64(module + "p", {8}, {0, 0, 1, 1, 0, 0, 1, 1});
        ConvSpec spec;
        spec.out_channels = channels;
        spec.kernel = 3;
        x = b.Conv(b.Op("Pad", {x, pads}), module, spec);
        break;
      }
      case 8:
        if (size >= 2) {
          x = b.MaxPool(x, module, 2, 2, 0, in.ConsumeBool());
          size = size / 2;  // floor without ceil_mode; ceil may give one more
        }
        break;
      case 9: {  // spatial mean kept as [N, C, 1, 1], then broadcast back
        Attributes attrs;
        attrs.Set("axes", std::vector<int64_t>{2, 3});
        attrs.Set("keepdims", int64_t{1});
        x = b.Mul(x, b.Op("ReduceMean", {x}, attrs));
        break;
      }
      case 10: x = b.Op("Identity", {x}); break;
      case 11: x = b.Op("Dropout", {x}); break;
      case 12: x = b.Mul(x, b.RandomUniform(module + "scale", {1, channels, 1, 1}, 0.5f, 1.5f)); break;
      case 13: x = b.Gelu(x); break;
    }
    b.set_channels(x, channels);  // generic Ops (Slice, Pad, Mul) leave it unknown
  }
  if (in.ConsumeBool()) x = b.Linear(b.Flatten(b.GlobalAveragePool(x)), "fc", channels, 4);
  b.Output(x, "output", {});
  return std::move(b).Finish();
}

}  // namespace
}  // namespace braid

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  braid::Graph graph = braid::RandomGraph(in);
  graph.value(graph.outputs()[0]).has_shape = false;  // declared by inference below
  // The builder leaves shapes to inference; a graph it builds is valid.
  braid::fuzz::Require(braid::InferShapes(graph), "a built graph infers");
  const braid::Graph before = graph;
  braid::PassOptions options;
  options.fuse = in.ConsumeIntegralInRange<int>(0, 3) != 0;  // mostly on
  braid::fuzz::Require(braid::RunDefaultPasses(graph, options), "the default passes succeed");
  braid::fuzz::Require(graph.Validate(), "the converted graph validates");
  braid::fuzz::Require(graph.outputs().size() == before.outputs().size(), "outputs kept");
  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    const braid::Value& got = graph.value(graph.outputs()[i]);
    const braid::Value& want = before.value(before.outputs()[i]);
    braid::fuzz::Require(got.name == want.name, "output names kept");
    braid::fuzz::Require(got.shape == want.shape && got.dtype == want.dtype,
                         "output shapes and dtypes kept");
  }
  return 0;
}
