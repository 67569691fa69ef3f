#include "profiling/calibration_suite.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "graph/annotate.h"
#include "graph/passes/passes.h"
#include "kernels/cpu/cpu_device.h"
#include "models/graph_builder.h"
#include "profiling/cache_info.h"
#include "profiling/plan_timer.h"
#include "scheduler/cost_model.h"

namespace braid::profiling {

namespace {

// Reorders the nodes depth first from the graph outputs: every node right
// after its producers, so each timed op runs just after the op that wrote
// its input, as in a model's chain. (The passes' sort keeps an already
// sorted order since it became a min-heap Kahn sort, graph/ir.cc; its FIFO
// version was breadth first and ran every enter conv first, so each timed op
// read its input back from memory: a depthwise conv or a pooling at half its
// in-model speed. This keeps the order explicit whatever the builder does.)
Status OrderDepthFirst(Graph& g) {
  const std::vector<Node>& nodes = g.nodes();
  std::vector<int> state(nodes.size(), 0);  // 0 new, 1 open, 2 emitted
  std::vector<NodeId> order;
  order.reserve(nodes.size());
  // Iterative post-order: (node, next input to visit).
  std::vector<std::pair<NodeId, size_t>> stack;
  auto visit = [&](NodeId root) -> Status {
    if (root == kNoNode || state[static_cast<size_t>(root)] != 0) return Status::Ok();
    stack.push_back({root, 0});
    state[static_cast<size_t>(root)] = 1;
    while (!stack.empty()) {
      auto& [id, next] = stack.back();
      const Node& node = nodes[static_cast<size_t>(id)];
      if (next < node.inputs.size()) {
        const ValueId in = node.inputs[next++];
        if (in == kNoValue) continue;
        const NodeId producer = g.value(in).producer;
        if (producer == kNoNode) continue;
        if (state[static_cast<size_t>(producer)] == 1)
          return Internal("calibration suite: cycle at " + node.name);
        if (state[static_cast<size_t>(producer)] == 0) {
          state[static_cast<size_t>(producer)] = 1;
          stack.push_back({producer, 0});
        }
        continue;
      }
      state[static_cast<size_t>(id)] = 2;
      order.push_back(id);
      stack.pop_back();
    }
    return Status::Ok();
  };
  for (ValueId out : g.outputs()) RETURN_IF_ERROR(visit(g.value(out).producer));
  for (size_t n = 0; n < nodes.size(); ++n) RETURN_IF_ERROR(visit(static_cast<NodeId>(n)));
  std::vector<Node> sorted;
  sorted.reserve(order.size());
  for (NodeId id : order) sorted.push_back(std::move(g.nodes()[static_cast<size_t>(id)]));
  g.nodes() = std::move(sorted);
  g.Compact();  // re-derives every value's producer from the new order
  return g.Validate();
}

StatusOr<Graph> FinishSuite(GraphBuilder& b) {
  Graph g = std::move(b).Finish();
  for (ValueId id : g.outputs()) g.value(id).has_shape = false;  // inferred below
  RETURN_IF_ERROR(RunDefaultPasses(g).WithPrefix("calibration suite"));
  RETURN_IF_ERROR(OrderDepthFirst(g));
  RETURN_IF_ERROR(Annotate(g).WithPrefix("calibration suite"));
  return g;
}

}  // namespace

StatusOr<Graph> CalibrationSuiteGraph(bool maps, int only_section) {
  if (!maps && only_section >= 0)
    return InvalidArgument("calibration suite: sections are map sections");
  if (only_section >= kCalibrationMapSections)
    return InvalidArgument("calibration suite: no map section " + std::to_string(only_section));
  GraphBuilder b(maps ? "calibration_suite_maps" : "calibration_suite_tokens", 7);
  // No timed op is fused into a neighbour. Feature maps from ~25 KB to
  // ~5 MB (around the L2 cache), token matrices like a small ViT's. Softmax and Transpose
  // only in the shapes inference graphs use them (last axis; attention
  // heads): a channel-axis Softmax is ~50x slower per byte and would set
  // the op type's factor for the common case.
  const std::vector<std::vector<int64_t>> map_dims = {
      {1, 16, 28, 28}, {1, 32, 56, 56}, {1, 64, 56, 56}, {1, 128, 56, 56}, {1, 256, 28, 28}};
  int k = 0;
  auto out = [&](ValueId v) { b.Output(v, "out" + std::to_string(k++), {}); };
  // 4-D ops sit in a chain of 1x1 convs, as inside a CNN: the engine's
  // channels-last pass then gives them the layout they have in a real graph
  // (graph inputs and outputs stay plain; convs reorder whatever they get),
  // and each timed op reads what the conv just before it wrote. (An op
  // reading the first conv after a graph input ran up to 2-3x slower than
  // the same op further down the chain or inside a model, so the chain
  // starts with two convs.) Chain convs ("in<k>") and exit convs ("out<k>")
  // are not samples.
  int conv_id = 0;
  // With a ReLU (fused into the conv): ops in a CNN read activated values
  // (in one experiment a depthwise conv on ReLU'd values ran up to 2x
  // faster than on signed ones; not reproduced in every run).
  auto conv1x1 = [&](ValueId x, int64_t c) {
    return b.Relu(b.Conv(x, "in" + std::to_string(conv_id++), {.out_channels = c, .kernel = 1}));
  };
  auto exit_conv = [&](ValueId v, int64_t c) {
    out(b.Conv(v, "out" + std::to_string(conv_id++), {.out_channels = c, .kernel = 1}));
  };
  // A depthwise conv reads what an expansion conv wrote from a narrow value
  // (c / 6 channels, at least 8), as in an inverted residual block
  // (MobileNetV2/V3, EfficientNet): just before it, the expansion reads a
  // sixth of a map and a small weight. After a c -> c or 2c -> c conv
  // instead (one or two maps and a c x c or 2c x c weight read, a map
  // written), a 256-channel 28x28 depthwise conv ran 1.3x slower per byte
  // than a 64-channel 56x56 one and than mobilenet_v2's.
  auto dw = [&](ValueId x, int64_t c, int64_t stride, const char* name) {
    const ValueId expanded = conv1x1(conv1x1(x, std::max<int64_t>(8, c / 6)), c);
    return b.Conv(expanded, name,
                  {.out_channels = c, .kernel = 3, .stride = stride, .pad = 1, .groups = c});
  };
  // Every map section: its own input, two chain convs, then a residual Add
  // and its Relu, as in a ResNet block (the passes fuse the Relu into the
  // Add, as they do in the models); `body(v, c)` adds the section's ops on v.
  int next_section = 0;
  auto section = [&](const std::vector<int64_t>& dims, const auto& body) {
    if (const int index = next_section++; only_section >= 0 && index != only_section) return;
    const std::string tag = std::to_string(dims[1]) + "x" + std::to_string(dims[2]);
    const int64_t c = dims[1];
    ValueId in = b.Input("map" + tag, {dims[0], dims[1], dims[2], dims[3]});
    b.set_channels(in, c);
    auto scope = b.Enter("s" + tag);
    ValueId v = conv1x1(conv1x1(in, c), c);
    v = conv1x1(b.Relu(b.Add(conv1x1(v, c), v)), c);
    body(v, c);
  };
  for (const std::vector<int64_t>& dims : maps ? map_dims : std::vector<std::vector<int64_t>>{}) {
    section(dims, [&](ValueId v, int64_t c) {
      // A Relu no pass fuses (only Conv, Gemm and Add take one): a sample of
      // the standalone Relu that some graphs keep.
      v = conv1x1(b.Relu(b.Mul(conv1x1(v, c), v)), c);
      v = conv1x1(b.Concat({conv1x1(v, c), v}, 1), c);
      v = conv1x1(dw(v, c, 1, "dw"), c);
      if (dims[1] * dims[2] * dims[3] <= 200000)
        v = conv1x1(b.Conv(v, "c3", {.out_channels = c, .kernel = 3, .pad = 1}), c);
      // Shape-changing ops end a branch, each on a fresh conv output.
      exit_conv(b.MaxPool(conv1x1(v, c), "pool", 3, 2, 1, false), c);
      exit_conv(dw(v, c, 2, "dw2"), c);
      exit_conv(b.GlobalAveragePool(conv1x1(v, c)), c);
      out(b.Linear(b.Flatten(b.GlobalAveragePool(conv1x1(v, c))),
                   "out" + std::to_string(conv_id++), c, 8));
      // Its own producer: a Reshape takes no part in channels-last, so
      // reading v would keep v, and every op above, plain.
      out(b.LinearMatMul(b.Reshape(conv1x1(v, c), {1, dims[1], dims[2] * dims[3]}),
                         "out" + std::to_string(conv_id++), dims[2] * dims[3], 8));
      exit_conv(v, c);
    });
  }
  // Early-layer maps beyond the cache (a stem's output): streaming ops,
  // pooling and depthwise only.
  for (const std::vector<int64_t>& dims :
       maps ? std::vector<std::vector<int64_t>>{{1, 64, 112, 112}, {1, 96, 112, 112}}
            : std::vector<std::vector<int64_t>>{}) {
    section(dims, [&](ValueId v, int64_t c) {
      v = conv1x1(dw(v, c, 1, "dw"), c);
      exit_conv(b.MaxPool(conv1x1(v, c), "pool", 3, 2, 1, false), c);
      exit_conv(dw(v, c, 2, "dw2"), c);
      exit_conv(v, c);
    });
  }
  // Late-layer maps with many channels and a classifier head: residual
  // Add / Relu, GlobalAveragePool -> Flatten -> Gemm (a GEMV), as at the end
  // of a CNN (a 7x7 GlobalAveragePool costs more per byte than a 56x56 one).
  for (const std::vector<int64_t>& dims :
       maps ? std::vector<std::vector<int64_t>>{{1, 640, 7, 7}, {1, 1024, 7, 7}, {1, 384, 13, 13}}
            : std::vector<std::vector<int64_t>>{}) {
    section(dims, [&](ValueId v, int64_t c) {
      out(b.Linear(b.Flatten(b.GlobalAveragePool(v), 1), "fc", c, 1000));
    });
  }
  if (maps) return FinishSuite(b);
  const std::vector<std::vector<int64_t>> tokens = {{1, 50, 192}, {1, 197, 192}, {1, 197, 384}};
  for (const std::vector<int64_t>& dims : tokens) {
    const std::string tag = std::to_string(dims[1]) + "x" + std::to_string(dims[2]);
    ValueId x = b.Input("tok" + tag, {dims[0], dims[1], dims[2]});
    ValueId y = b.Input("tok" + tag + "b", {dims[0], dims[1], dims[2]});
    auto scope = b.Enter("t" + tag);
    out(b.LayerNorm(x, "ln", dims[2], 1e-6f));
    out(b.Softmax(x, -1));
    const ValueId scores = b.Input("att" + tag, {1, 3, dims[1], dims[1]});
    out(b.Softmax(scores, -1));
    out(b.Erf(x));
    // The exported GELU, one Gelu node after the passes (FuseGelu).
    out(b.Gelu(x, "gelu"));
    out(b.Add(x, y));
    out(b.Transpose(x, {0, 2, 1}));
    out(b.Reshape(x, {1, dims[1], 3, dims[2] / 3}));
    // Attention's head split: [1, N, H, D] -> [1, H, N, D] and [1, H, D, N].
    const ValueId heads = b.Reshape(y, {1, dims[1], 3, dims[2] / 3});
    out(b.Transpose(heads, {0, 2, 1, 3}));
    out(b.Transpose(heads, {0, 2, 3, 1}));
    out(b.Concat({x, y}, 1));
    out(b.Gather(x, 0, {}, 1));
    out(b.MatMul(x, b.Transpose(y, {0, 2, 1})));
    out(b.LinearMatMul(x, "fc", dims[2], dims[2]));
  }
  {
    // A transformer MLP's hidden activations (4x the width).
    ValueId h = b.Input("hidden", {1, 197, 768});
    ValueId h2 = b.Input("hidden_b", {1, 197, 768});
    auto scope = b.Enter("mlp");
    out(b.Erf(h));
    out(b.Gelu(h, "gelu"));
    out(b.Mul(h, h2));
    out(b.Add(h, h2));
    out(b.LayerNorm(h, "ln", 768, 1e-6f));
  }
  return FinishSuite(b);
}

StatusOr<std::vector<ModelTimings>> MeasureCalibrationSuite(const OpTimerOptions& options) {
  OpTimerOptions suite_options = options;
  suite_options.measure_energy = false;
  suite_options.end_to_end = false;
  std::vector<ModelTimings> out;
  // The chain convs / projections ("in<k>") and exit convs ("out<k>") only
  // set up layouts and fresh inputs: not samples.
  auto drop_setup = [](ModelTimings& t) {
    for (OpTiming& op : t.ops)
      if (op.node.find("/in") != std::string::npos || op.node.find("/out") != std::string::npos) {
        op.median_us = 0;
        op.min_us = 0;
      }
  };
  // 4-D ops inside engine runs (their real layouts), one run per map
  // section: in one run of all of them (~60 MB of buffers) the ops of the
  // later sections ran up to 25-30% slower than the same ops in an earlier
  // section (moving a section first sped it up), and slower than inside the
  // models, whose runs touch a few MB.
  for (int k = 0; k < kCalibrationMapSections; ++k) {
    ASSIGN_OR_RETURN(Graph maps, CalibrationSuiteGraph(true, k));
    ASSIGN_OR_RETURN(ModelTimings m, MeasureGraphInEngine(std::move(maps),
                                                          "calibration_suite_maps", suite_options));
    drop_setup(m);
    out.push_back(std::move(m));
  }
  // Token ops one at a time, each run after a walk of twice the per-core
  // cache and a read of its inputs: inputs warm as if just produced, the
  // destination evicted, as inside vit_tiny. Warm on their own repeats
  // (destination in L1/L2), vit_tiny's Transposes ran 1.2-1.5x their
  // samples and the check's all-CPU data movement missed by 17-25% (11-15%
  // with the walk, 4 alternating runs; docs/profiling.md round 14, in its git history); timed in
  // one engine run, each after its own projection and read by another, they
  // came out slower than the same ops inside vit_tiny (LayerNorm ~1.3x, Erf,
  // Transpose).
  ASSIGN_OR_RETURN(Graph tokens, CalibrationSuiteGraph(false));
  OpTimerOptions token_options = suite_options;
  token_options.evict_bytes = static_cast<size_t>(2 * std::max(CacheBytesPerCore(), 0.0));
  if (token_options.evict_bytes == 0)
    std::fprintf(stderr,
                 "calibration: the per-core cache size is unknown; token ops are timed warm\n");
  ASSIGN_OR_RETURN(ModelTimings t,
                   MeasureGraph(std::move(tokens), "calibration_suite_tokens", token_options));
  out.push_back(std::move(t));
  return out;
}

namespace {

// One op with a weight of `sparsity` exact zeros (a random mask), shapes as
// the zoo's mid-network layers.
StatusOr<Graph> SparseProbeGraph(std::string_view sparse_class, double sparsity) {
  Graph g;
  g.name() = "sparse_probe";
  std::vector<int64_t> x_dims, w_dims;
  Node node;
  node.name = "probe";
  if (sparse_class == "gemm") {
    x_dims = {1, 1024};
    w_dims = {1024, 1024};
    node.op_type = "Gemm";
    node.attrs.Set("transB", int64_t{1});
  } else {
    const bool one = sparse_class == "conv1x1";
    x_dims = one ? std::vector<int64_t>{1, 128, 28, 28} : std::vector<int64_t>{1, 64, 28, 28};
    w_dims = one ? std::vector<int64_t>{128, 128, 1, 1} : std::vector<int64_t>{64, 64, 3, 3};
    const int64_t k = one ? 1 : 3, pad = one ? 0 : 1;
    node.op_type = "Conv";
    node.attrs.Set("kernel_shape", std::vector<int64_t>{k, k});
    node.attrs.Set("pads", std::vector<int64_t>{pad, pad, pad, pad});
    node.attrs.Set("strides", std::vector<int64_t>{1, 1});
  }
  int64_t n = 1;
  for (int64_t d : w_dims) n *= d;
  std::vector<float> w(static_cast<size_t>(n));
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<float> u(0.05f, 1.0f);
  for (float& v : w) v = (rng() & 1) ? u(rng) : -u(rng);
  std::vector<size_t> order(w.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  const size_t zeros = static_cast<size_t>(std::llround(sparsity * static_cast<double>(n)));
  for (size_t i = 0; i < zeros; ++i) w[order[i]] = 0;
  Shape xs, ws;
  for (int64_t d : x_dims) xs.push_back(d);
  for (int64_t d : w_dims) ws.push_back(d);
  const ValueId x = g.AddInput("x", DataType::kF32, xs);
  const ValueId wv =
      g.AddConstant("w", DataType::kF32, ws, TensorData::Copy(w.data(), w.size() * sizeof(float)));
  const ValueId y = g.AddValue("y");
  node.inputs = {x, wv};
  node.outputs = {y};
  g.AddNode(std::move(node));
  g.outputs().push_back(y);
  RETURN_IF_ERROR(InferShapes(g));
  RETURN_IF_ERROR(Annotate(g));
  return g;
}

// Median time of the probe with the given kernels; `impl` gets the kernel
// that ran.
StatusOr<double> TimeProbe(Graph g, const CpuKernelOptions& kernels,
                           const OpTimerOptions& options, std::string* impl) {
  ASSIGN_OR_RETURN(ModelTimings t, MeasureGraph(std::move(g), "sparse probe", options, &kernels));
  if (t.ops.empty()) return Internal("sparse probe: no op timed");
  *impl = t.ops[0].implementation;
  return t.ops[0].median_us;
}

}  // namespace

StatusOr<std::vector<SparseKernelSpeed>> MeasureSparseSpeeds(const OpTimerOptions& given,
                                                             std::vector<std::string>* notes) {
  OpTimerOptions options = given;
  options.warmup = std::min(options.warmup, 1);  // 18 probes, each a fresh kernel
  std::vector<SparseKernelSpeed> out;
  CpuKernelOptions dense;
  dense.sparse = false;
  CpuKernelOptions sparse;
  sparse.sparse = true;
  sparse.sparse_options.crossover.conv1x1 = 0;  // always the sparse kernel
  sparse.sparse_options.crossover.conv3x3 = 0;
  sparse.sparse_options.crossover.gemm = 0;
  for (const char* cls : {"conv1x1", "conv3x3", "gemm"}) {
    ASSIGN_OR_RETURN(Graph dense_graph, SparseProbeGraph(cls, 0.0));
    std::string impl;
    ASSIGN_OR_RETURN(double dense_us, TimeProbe(std::move(dense_graph), dense, options, &impl));
    std::vector<std::pair<double, double>> points;
    for (double s : {0.5, 0.7, 0.8, 0.9, 0.95}) {
      ASSIGN_OR_RETURN(Graph g, SparseProbeGraph(cls, s));
      ASSIGN_OR_RETURN(double sparse_us, TimeProbe(std::move(g), sparse, options, &impl));
      if (impl != "sparse") {
        if (notes) notes->push_back(std::string(cls) + ": the sparse kernel did not run (" + impl +
                                    " did); no crossover measured");
        points.clear();
        break;
      }
      points.push_back({s, sparse_us / dense_us});
      if (notes) {
        char line[160];
        std::snprintf(line, sizeof(line), "%s sparsity %.2f: sparse %.1f us, dense %.1f us",
                      cls, s, sparse_us, dense_us);
        notes->push_back(line);
      }
    }
    if (points.empty()) continue;
    out.push_back(FitSparseKernelSpeed(cls, points));
  }
  return out;
}

SparseCrossover CrossoverOf(const std::vector<SparseKernelSpeed>& speeds) {
  SparseCrossover table;
  for (const SparseKernelSpeed& s : speeds) {
    if (s.op_class == "conv1x1") table.conv1x1 = s.crossover;
    if (s.op_class == "conv3x3") table.conv3x3 = s.crossover;
    if (s.op_class == "gemm") table.gemm = s.crossover;
  }
  return table;
}

}  // namespace braid::profiling
