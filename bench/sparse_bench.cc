// Sparse vs dense per op class: braid's weight-sparse kernels
// (kernels/cpu/sparse/) against oneDNN on resnet50 / mobilenet_v2 layer
// shapes, at weight sparsity 0, 50, 70, 80, 90, 95 and 99% (unstructured,
// random positions), batch 1, with 1 and 2 intra-op threads. After the runs
// it prints, per shape and thread count, the crossover: the sparsity where
// the sparse kernel's time meets oneDNN's (linear between measured levels).
// Conv shapes also run "sparse90zero20": 90% sparse weights on an input
// whose channels are 20% all-zero (dead ReLUs), the per-channel activation
// sparsity the sparse conv skips.
// Gemm shapes also run "fc_input<P>": dense weights with P% of the input
// zero, through the input-sparse kernel (skips the weight rows of zero
// inputs), printed as oneDNN / input-sparse ratios after the crossovers.
// Those numbers are what kernels/cpu/sparse/crossover.h holds.
//
//   braid_sparse_bench                              # everything + crossover table
//   braid_sparse_bench --benchmark_filter=conv1x1   # one op class
//
// Every case is prepared once outside the timed loop (weights packed /
// reordered); the loop is Kernel::Run only, as the runtime calls it.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "graph/passes/passes.h"
#include "kernels/cpu/onednn_kernels.h"
#include "kernels/cpu/sparse/sparse_kernels.h"

namespace braid {
namespace {

constexpr int kSparsityPercents[] = {0, 50, 70, 80, 90, 95, 99};
// Input zeros for the input-sparse fully connected kernel (post-ReLU hidden
// layers sit around 50%).
constexpr int kInputZeroPercents[] = {0, 30, 50, 70, 90};

struct Shape {
  std::string name;  // "conv1x1_256x64_56"
  std::string op;    // Conv / Gemm
  int64_t c_in, c_out, hw, k, stride;
};

const std::vector<Shape>& Shapes() {
  static const std::vector<Shape> shapes = {
      {"conv1x1_256to64_56", "Conv", 256, 64, 56, 1, 1},    // resnet50 layer1
      {"conv1x1_1024to256_14", "Conv", 1024, 256, 14, 1, 1},  // resnet50 layer3
      {"conv1x1_96to576_14", "Conv", 96, 576, 14, 1, 1},    // mobilenet_v2 expand
      {"conv3x3_64to64_56", "Conv", 64, 64, 56, 3, 1},      // resnet50 layer1
      {"conv3x3_256to256_14", "Conv", 256, 256, 14, 3, 1},  // resnet50 layer3
      {"conv3x3_512to512_7", "Conv", 512, 512, 7, 3, 1},    // resnet50 layer4
      {"conv3x3s2_128to128_56", "Conv", 128, 128, 56, 3, 2},  // resnet50 layer2.0
      {"conv1x1s2_256to512_56", "Conv", 256, 512, 56, 1, 2},  // layer2 downsample
      {"fc_2048to1000", "Gemm", 2048, 1000, 1, 1, 1},       // resnet50 head
      {"fc_1280to1000", "Gemm", 1280, 1000, 1, 1, 1},       // mobilenet_v2 head
      {"fc_4096to4096", "Gemm", 4096, 4096, 1, 1, 1},       // VGG-style hidden layer
  };
  return shapes;
}

// One node with a random weight of the given sparsity, ready to prepare.
class Instance {
 public:
  // zero_channels: the fraction of input channels that are all zeros (dead
  // ReLUs; the sparse conv drops the weight blocks that read them); for a
  // Gemm, the fraction of input values that are zero (random positions),
  // recorded as the node's measured activation sparsity.
  Instance(const Shape& s, double sparsity, double zero_channels = 0.0) {
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    auto random = [&](int64_t n) {
      std::vector<float> v(static_cast<size_t>(n));
      for (float& x : v) x = u(rng);
      return v;
    };
    std::vector<int64_t> x_dims, w_dims;
    if (s.op == "Conv") {
      x_dims = {1, s.c_in, s.hw, s.hw};
      w_dims = {s.c_out, s.c_in, s.k, s.k};
      node_.attrs.Set("kernel_shape", std::vector<int64_t>{s.k, s.k});
      const int64_t pad = s.k / 2;
      node_.attrs.Set("pads", std::vector<int64_t>{pad, pad, pad, pad});
      node_.attrs.Set("strides", std::vector<int64_t>{s.stride, s.stride});
      node_.attrs.Set("activation", std::string("Relu"));
    } else {
      x_dims = {1, s.c_in};
      w_dims = {s.c_out, s.c_in};
      node_.attrs.Set("transB", int64_t{1});
    }
    const int64_t w_count = std::accumulate(w_dims.begin(), w_dims.end(), int64_t{1},
                                            std::multiplies<>());
    std::vector<float> w = random(w_count);
    std::vector<size_t> order(w.size());
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    const size_t zeros = static_cast<size_t>(sparsity * static_cast<double>(w.size()));
    for (size_t i = 0; i < zeros; ++i) w[order[i]] = 0.0f;
    x_ = random(std::accumulate(x_dims.begin(), x_dims.end(), int64_t{1}, std::multiplies<>()));
    if (s.op == "Conv") {
      const int64_t plane = s.hw * s.hw;
      const int64_t dead = static_cast<int64_t>(zero_channels * static_cast<double>(s.c_in));
      for (int64_t c = 0; c < dead; ++c)  // spread over the channels
        std::fill_n(x_.begin() + c * s.c_in / std::max<int64_t>(dead, 1) * plane, plane, 0.0f);
    }
    if (s.op == "Gemm") {
      std::vector<size_t> positions(x_.size());
      std::iota(positions.begin(), positions.end(), 0);
      std::shuffle(positions.begin(), positions.end(), rng);
      const size_t dead = static_cast<size_t>(zero_channels * static_cast<double>(x_.size()));
      for (size_t i = 0; i < dead; ++i) x_[positions[i]] = 0.0f;
      node_.annotation.activation_sparsity = zero_channels;
    }
    bias_ = random(s.c_out);
    const ValueId x = graph_.AddInput("x", DataType::kF32, StaticShape(x_dims));
    const ValueId wv = graph_.AddConstant("w", DataType::kF32, StaticShape(w_dims),
                                          TensorData::Copy(w.data(), w.size() * 4));
    const ValueId b = graph_.AddConstant("b", DataType::kF32, StaticShape(std::vector<int64_t>{s.c_out}),
                                         TensorData::Copy(bias_.data(), bias_.size() * 4));
    node_.name = s.name;
    node_.op_type = s.op;
    node_.inputs = {x, wv, b};
    node_.outputs = {graph_.AddValue("y")};
    graph_.AddNode(node_);
    graph_.outputs().push_back(graph_.node(0).outputs[0]);
    if (!InferShapes(graph_).ok()) std::abort();
    args_.node = &graph_.node(0);
    args_.opset = 17;
    args_.inputs = {{DataType::kF32, x_dims}, {DataType::kF32, w_dims},
                    {DataType::kF32, {s.c_out}}};
    args_.outputs = {{DataType::kF32, *StaticExtents(graph_.value(graph_.node(0).outputs[0]).shape)}};
    args_.constants = {nullptr, &*graph_.value(wv).constant, &*graph_.value(b).constant};
    y_.resize(static_cast<size_t>(args_.outputs[0].elements()));
  }

  void Bench(benchmark::State& state, Kernel& kernel, int threads) {
    args_.num_threads = threads;
    Status s = kernel.Prepare(args_);
    if (!s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      return;
    }
    std::vector<std::byte> workspace(kernel.workspace_bytes() + 64);
    const void* src[] = {x_.data(), graph_.value(1).constant->data(), bias_.data()};
    void* dst[] = {y_.data()};
    RunArgs r;
    r.src = src;
    r.dst = dst;
    r.workspace = workspace.data();
    for (auto _ : state) {
      if (!kernel.Run(r).ok()) state.SkipWithError("Run failed");
      benchmark::ClobberMemory();
    }
  }

 private:
  Graph graph_;
  Node node_;
  PrepareArgs args_;
  std::vector<float> x_, bias_, y_;
};

void RegisterAll() {
  for (const Shape& s : Shapes()) {
    for (int threads : {1, 2}) {
      const std::string suffix = "/threads:" + std::to_string(threads);
      benchmark::RegisterBenchmark(
          (s.name + "/onednn" + suffix).c_str(), [s, threads](benchmark::State& st) {
            Instance inst(s, 0.0);
            std::unique_ptr<Kernel> k = s.op == "Conv" ? CreateConvOnednn() : CreateGemmOnednn();
            inst.Bench(st, *k, threads);
          })->Unit(benchmark::kMicrosecond);
      if (s.op == "Conv") {
        // 90% sparse weights with 20% of the input channels all zero.
        benchmark::RegisterBenchmark(
            (s.name + "/sparse90zero20" + suffix).c_str(), [s, threads](benchmark::State& st) {
              Instance inst(s, 0.9, 0.2);
              SparseKernelOptions o;
              o.crossover = {0.0, 0.0, 0.0};
              std::unique_ptr<Kernel> k = CreateConvSparse(o);
              inst.Bench(st, *k, threads);
            })->Unit(benchmark::kMicrosecond);
      }
      if (s.op == "Gemm") {
        // Dense weights, pct% of the input zero: the input-sparse kernel.
        for (int pct : kInputZeroPercents) {
          benchmark::RegisterBenchmark(
              (s.name + "/fc_input" + std::to_string(pct) + suffix).c_str(),
              [s, threads, pct](benchmark::State& st) {
                Instance inst(s, 0.0, pct / 100.0);
                SparseKernelOptions o;
                o.crossover.gemm_input = 0.0;
                std::unique_ptr<Kernel> k = CreateGemmInputSparse(o);
                inst.Bench(st, *k, threads);
              })->Unit(benchmark::kMicrosecond);
        }
      }
      for (int pct : kSparsityPercents) {
        benchmark::RegisterBenchmark(
            (s.name + "/sparse" + std::to_string(pct) + suffix).c_str(),
            [s, threads, pct](benchmark::State& st) {
              Instance inst(s, pct / 100.0);
              SparseKernelOptions o;
              o.crossover = {0.0, 0.0, 0.0};
              std::unique_ptr<Kernel> k =
                  s.op == "Conv" ? CreateConvSparse(o) : CreateGemmSparse(o);
              inst.Bench(st, *k, threads);
            })->Unit(benchmark::kMicrosecond);
      }
    }
  }
}

// Collects real times per "shape/threads" so main can print the crossover.
class CrossoverReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      if (r.error_occurred) continue;
      const std::string name = r.benchmark_name();  // shape/impl/threads:T
      const size_t a = name.find('/'), b = name.rfind('/');
      if (a == std::string::npos || b == a) continue;
      const std::string key = name.substr(0, a) + name.substr(b);
      times_[key][name.substr(a + 1, b - a - 1)] = r.GetAdjustedRealTime();
    }
  }

  void PrintInputSparse() const {
    std::printf("\nInput-sparse Gemm (dense weight, zero inputs skipped) vs oneDNN, "
                "oneDNN time / input-sparse time at each input-zero fraction; "
                "CPU measurements on this machine:\n");
    for (const auto& [key, impls] : times_) {
      auto dense = impls.find("onednn");
      if (dense == impls.end() || impls.find("fc_input0") == impls.end()) continue;
      std::printf("  %-28s", key.c_str());
      for (int pct : kInputZeroPercents)
        if (auto it = impls.find("fc_input" + std::to_string(pct)); it != impls.end())
          std::printf("  %d%%: x%.2f", pct, dense->second / it->second);
      std::printf("  (oneDNN %.1f us)\n", dense->second);
    }
  }

  void PrintCrossovers() const {
    std::printf("\nCrossover (sparse time = oneDNN time), weight sparsity; "
                "CPU measurements on this machine:\n");
    for (const auto& [key, impls] : times_) {
      auto dense = impls.find("onednn");
      if (dense == impls.end()) continue;
      double prev_s = -1, prev_t = 0, crossover = -1;
      for (int pct : kSparsityPercents) {
        auto it = impls.find("sparse" + std::to_string(pct));
        if (it == impls.end()) continue;
        const double s = pct / 100.0, t = it->second;
        if (t <= dense->second) {
          crossover = prev_s < 0 ? s
                                 : prev_s + (s - prev_s) * (prev_t - dense->second) /
                                                (prev_t - t);
          break;
        }
        prev_s = s;
        prev_t = t;
      }
      auto s90 = impls.find("sparse90");
      const double speedup90 = s90 != impls.end() ? dense->second / s90->second : 0;
      if (crossover < 0)
        std::printf("  %-34s never (dense %.1f us, sparse@90%% x%.2f)\n", key.c_str(),
                    dense->second, speedup90);
      else
        std::printf("  %-34s %.2f (dense %.1f us, sparse@90%% x%.2f faster)\n", key.c_str(),
                    crossover, dense->second, speedup90);
    }
  }

 private:
  std::map<std::string, std::map<std::string, double>> times_;
};

}  // namespace
}  // namespace braid

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  braid::RegisterAll();
  braid::CrossoverReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.PrintCrossovers();
  reporter.PrintInputSparse();
  benchmark::Shutdown();
  return 0;
}
