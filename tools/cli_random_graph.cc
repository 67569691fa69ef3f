// The random CNN-like graphs `braid train` learns on (and the league table
// evaluates on, with disjoint seeds).
#include "tools/cli_random_graph.h"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "graph/annotate.h"
#include "graph/passes/passes.h"
#include "models/graph_builder.h"

namespace braid::cli {
namespace {

// prefix + n, built by append (GCC 12's -Wrestrict misfires on "x" + to_string).
std::string Numbered(const char* prefix, uint64_t n) {
  std::string s = prefix;
  s += std::to_string(n);
  return s;
}

}  // namespace

StatusOr<Graph> RandomTrainingGraph(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](int lo, int hi) {
    return lo + static_cast<int>(rng() % static_cast<uint64_t>(hi - lo + 1));
  };
  auto unit = [&] { return static_cast<double>(rng() >> 11) * 0x1.0p-53; };
  GraphBuilder b(Numbered("random_", seed), seed);
  const int64_t size = std::vector<int64_t>{32, 64, 96, 128}[static_cast<size_t>(uniform(0, 3))];
  ValueId x = b.Input("input", {1, 3, size, size});
  int64_t width = 8 << uniform(0, 3);
  x = b.Relu(b.BatchNorm(
      b.Conv(x, "stem", {.out_channels = width, .kernel = 3, .stride = 2, .pad = 1}), "stem_bn"));
  const int stages = uniform(1, 4);
  int block_id = 0;
  for (int s = 0; s < stages; ++s) {
    const int blocks = uniform(1, 3);
    for (int k = 0; k < blocks; ++k) {
      const std::string m = Numbered("b", static_cast<uint64_t>(block_id++));
      const bool down = k == 0 && s > 0;
      const int64_t out = down ? std::min<int64_t>(width * 2, 512) : width;
      ValueId y;
      const int kind = uniform(0, 2);
      if (kind == 0) {
        y = b.Conv(x, m + ".c",
                   {.out_channels = out, .kernel = 3, .stride = down ? 2 : 1, .pad = 1});
      } else if (kind == 1) {
        y = b.Conv(x, m + ".c", {.out_channels = out, .kernel = 1, .stride = down ? 2 : 1});
      } else {
        y = b.Conv(x, m + ".dw",
                   {.out_channels = width,
                    .kernel = 3,
                    .stride = down ? 2 : 1,
                    .pad = 1,
                    .groups = width});
        y = b.Conv(b.Relu(y), m + ".pw", {.out_channels = out, .kernel = 1});
      }
      y = b.BatchNorm(y, m + ".bn");
      if (!down && unit() < 0.5) y = b.Add(y, x);  // a residual branch: a DAG
      x = b.Relu(y);
      width = out;
    }
  }
  x = b.Flatten(b.GlobalAveragePool(x));
  const int64_t classes = std::vector<int64_t>{10, 100, 1000}[static_cast<size_t>(uniform(0, 2))];
  x = b.Linear(x, "fc", width, classes);
  b.Output(x, "output", {1, classes});
  Graph g = std::move(b).Finish();
  // Pruning: zero a random fraction of some convolutions' weights.
  const double prune_probability = unit() * 0.6;
  for (Node& node : g.nodes()) {
    if (node.op_type != "Conv" || node.inputs.size() < 2 || unit() >= prune_probability) continue;
    Value& w = g.value(node.inputs[1]);
    if (!w.constant) continue;
    std::span<const float> src = w.constant->as<float>();
    std::vector<float> pruned(src.begin(), src.end());
    const double fraction = 0.3 + 0.65 * unit();
    for (float& v : pruned)
      if (unit() < fraction) v = 0;
    w.constant = TensorData::Copy(pruned.data(), pruned.size() * sizeof(float));
  }
  RETURN_IF_ERROR(RunDefaultPasses(g));
  RETURN_IF_ERROR(Annotate(g));
  return g;
}

uint64_t TrainingGraphSeed(uint64_t seed, uint64_t index) { return seed * 1000003ULL + index; }

uint64_t HeldOutGraphSeed(uint64_t index) { return kHeldOutGraphSeedBase + index; }

}  // namespace braid::cli
