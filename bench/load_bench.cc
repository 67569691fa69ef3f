// Load time and memory of a .braid file: LoadBraidFile (mmap, weights used in
// place) next to LoadBraidBytes (weights copied out of a buffer), on
// ResNet-50 (~25M f32 parameters, ~100 MB of weights).
//
//   braid_load_bench [--benchmark_filter=File]
//
// Counters: weights_MB (constant bytes in the model), rss_growth_MB (resident
// memory added by one load), rss_per_weight (growth / weights; near 0 when
// nothing is copied) and, for the mapped load, touched_rss_growth_MB (after
// reading every weight once, the pages do become resident).
#include <benchmark/benchmark.h>
#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "graph/braid_format.h"
#include "models/builtin.h"

namespace braid {
namespace {

// Resident set size in bytes, from /proc/self/statm (second field, pages).
double ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  long total_pages = 0, resident_pages = 0;
  statm >> total_pages >> resident_pages;
  return static_cast<double>(resident_pages) *
         static_cast<double>(sysconf(_SC_PAGESIZE));
}

// ~25M f32 parameters in ~160 constants, used if resnet50 is unavailable.
Graph SyntheticResNet50Sized() {
  Graph g;
  g.name() = "synthetic_25M";
  ValueId act = g.AddInput("x", DataType::kF32, {Dim::Symbol("N"), 256});
  for (int i = 0; i < 160; ++i) {
    const std::string name = std::string("w").append(std::to_string(i));
    ValueId w = g.AddConstant(name, DataType::kF32, {256, 610},
                              TensorData::Allocate(256 * 610 * 4));
    ValueId out = g.AddValue(name + ".out");
    Node n;
    n.name = name + "/MatMul";
    n.op_type = "MatMul";
    n.inputs = {act, w};
    n.outputs = {out};
    g.AddNode(std::move(n));
    act = out;
  }
  g.outputs() = {act};
  return g;
}

// The model file, written once per process and removed at exit.
class ModelFile {
 public:
  static const ModelFile& Get() {
    static const ModelFile file;
    return file;
  }
  const std::string& path() const { return path_; }
  const std::string& error() const { return error_; }
  double weight_bytes() const { return weight_bytes_; }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

  ~ModelFile() { std::filesystem::remove(path_); }

 private:
  ModelFile() {
    path_ = (std::filesystem::temp_directory_path() /
             std::string("braid_load_bench_")
                 .append(std::to_string(getpid()))
                 .append(".braid"))
                .string();
    StatusOr<Graph> model = BuildBuiltinModel("resnet50");
    Graph graph = model.ok() ? *std::move(model) : SyntheticResNet50Sized();
    for (const Value& v : graph.values())
      if (v.constant) weight_bytes_ += static_cast<double>(v.constant->size());
    Status saved = SaveBraidFile(graph, path_);
    if (!saved.ok()) {
      error_ = saved.ToString();
      return;
    }
    std::ifstream in(path_, std::ios::binary);
    bytes_.assign(std::istreambuf_iterator<char>(in),
                  std::istreambuf_iterator<char>());
  }

  std::string path_;
  std::string error_;
  double weight_bytes_ = 0;
  std::vector<uint8_t> bytes_;  // for the copying loader
};

// Reads one byte per page of every constant, as a first inference would.
uint64_t TouchWeights(const Graph& graph) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  uint64_t sum = 0;
  for (const Value& v : graph.values()) {
    if (!v.constant) continue;
    const auto* p = reinterpret_cast<const uint8_t*>(v.constant->data());
    for (size_t i = 0; i < v.constant->size(); i += page) sum += p[i];
  }
  return sum;
}

void SetMemoryCounters(benchmark::State& state, double growth_total,
                       const ModelFile& file) {
  const double iterations = static_cast<double>(state.iterations());
  const double growth = growth_total / iterations;
  state.counters["weights_MB"] = file.weight_bytes() / 1e6;
  state.counters["rss_growth_MB"] = growth / 1e6;
  state.counters["rss_per_weight"] = growth / file.weight_bytes();
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(file.bytes().size()));
}

void BM_LoadBraidFile(benchmark::State& state) {
  const ModelFile& file = ModelFile::Get();
  if (!file.error().empty()) return state.SkipWithError(file.error().c_str());
  double growth_total = 0;
  double touched_total = 0;
  for (auto _ : state) {
    const double before = ResidentBytes();
    auto graph = std::make_unique<StatusOr<Graph>>(LoadBraidFile(file.path()));
    const double after = ResidentBytes();
    if (!graph->ok())
      return state.SkipWithError(graph->status().ToString().c_str());
    benchmark::DoNotOptimize((*graph)->num_values());
    growth_total += after - before;
    state.PauseTiming();
    benchmark::DoNotOptimize(TouchWeights(**graph));
    touched_total += ResidentBytes() - before;
    graph.reset();  // unmap outside the timed region
    malloc_trim(0);
    state.ResumeTiming();
  }
  SetMemoryCounters(state, growth_total, file);
  state.counters["touched_rss_growth_MB"] =
      touched_total / static_cast<double>(state.iterations()) / 1e6;
  // The point of the format: loading maps, it does not copy. A load that
  // made a tenth of the weights resident copied them.
  if (growth_total / static_cast<double>(state.iterations()) >
      0.1 * file.weight_bytes())
    state.SkipWithError("LoadBraidFile made the weights resident: copied?");
}

void BM_LoadBraidBytes(benchmark::State& state) {
  const ModelFile& file = ModelFile::Get();
  if (!file.error().empty()) return state.SkipWithError(file.error().c_str());
  double growth_total = 0;
  for (auto _ : state) {
    const double before = ResidentBytes();
    auto graph = std::make_unique<StatusOr<Graph>>(
        LoadBraidBytes(file.bytes().data(), file.bytes().size()));
    const double after = ResidentBytes();
    if (!graph->ok())
      return state.SkipWithError(graph->status().ToString().c_str());
    benchmark::DoNotOptimize((*graph)->num_values());
    growth_total += after - before;
    state.PauseTiming();
    // Free outside the timed region, and hand the heap back to the OS so the
    // next iteration's copies show up in RSS again.
    graph.reset();
    malloc_trim(0);
    state.ResumeTiming();
  }
  SetMemoryCounters(state, growth_total, file);
}

BENCHMARK(BM_LoadBraidFile)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_LoadBraidBytes)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace braid

BENCHMARK_MAIN();
