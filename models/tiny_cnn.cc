// A few convolutions covering the op kinds the bigger models use (stride-2
// stem, depthwise conv + Relu6, pointwise conv, max pool, residual Add,
// global pool, Gemm), small enough for fast end-to-end tests.
#include "models/architectures.h"
#include "models/graph_builder.h"

namespace braid {

Graph BuildTinyCnn(uint64_t seed) {
  GraphBuilder b("tiny_cnn", seed);
  ValueId x = b.Input("input", {Dim::Symbol("N"), 3, 224, 224});
  x = b.Conv(x, "stem",
             {.out_channels = 16, .kernel = 3, .stride = 2, .pad = 1});
  x = b.Relu(b.BatchNorm(x, "stem_bn"), "stem_relu");
  x = b.Conv(x, "dw",
             {.out_channels = 16, .kernel = 3, .pad = 1, .groups = 16});
  x = b.Relu6(b.BatchNorm(x, "dw_bn"), "dw_relu6");
  x = b.Conv(x, "pw", {.out_channels = 32});
  x = b.Relu(b.BatchNorm(x, "pw_bn"), "pw_relu");
  x = b.MaxPool(x, "pool", 3, 2, 1, /*ceil_mode=*/false);
  ValueId y = b.Conv(x, "res", {.out_channels = 32, .kernel = 3, .pad = 1});
  y = b.BatchNorm(y, "res_bn", {.gamma_lo = 0.2f, .gamma_hi = 0.4f});
  x = b.Relu(b.Add(x, y), "res_relu");
  x = b.Flatten(b.GlobalAveragePool(x, "avgpool"), 1);
  x = b.Linear(x, "fc", 32, 1000);
  b.Output(x, "output", {Dim::Symbol("N"), 1000});
  return std::move(b).Finish();
}

}  // namespace braid
