// Per-op dispatch overhead of a Session: a chain of tiny ops (Relu or Add on
// a [1,16] f32 tensor) built in code, saved as .braid and run end to end.
// The kernels do almost nothing, so time per op is the engine's cost of
// walking the plan and calling a kernel. CPU measurement.
//
//   braid_dispatch_bench --benchmark_filter=Relu
//
// us_per_op is wall-clock microseconds per op (Google Benchmark prints the
// inverted rate with an "s" suffix; the number is microseconds).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "braid/braid.h"
#include "graph/braid_format.h"
#include "graph/ir.h"

namespace braid {
namespace {

constexpr int kWidth = 16;

// x -> op -> op -> ... (`length` nodes) -> y. Add reads the previous value
// and a [1,16] constant, so no pass can fold or fuse the chain away.
Graph BuildChain(const std::string& op, int length) {
  Graph g;
  g.name() = "dispatch_chain_" + op;
  ValueId x = g.AddInput("x", DataType::kF32, {1, kWidth});
  ValueId bias = kNoValue;
  if (op == "Add") {
    std::vector<float> b(kWidth, 1e-3f);
    bias = g.AddConstant("bias", DataType::kF32, {1, kWidth},
                         TensorData::Copy(b.data(), b.size() * sizeof(float)));
  }
  for (int i = 0; i < length; ++i) {
    Value v;
    v.name = std::string("v").append(std::to_string(i));
    v.dtype = DataType::kF32;
    v.shape = {1, kWidth};
    v.has_shape = true;
    ValueId out = g.AddValue(std::move(v));
    Node n;
    n.name = std::string(op).append("_").append(std::to_string(i));
    n.op_type = op;
    n.inputs = {x};
    if (bias != kNoValue) n.inputs.push_back(bias);
    n.outputs = {out};
    g.AddNode(std::move(n));
    x = out;
  }
  g.outputs().push_back(x);
  return g;
}

void BM_DispatchChain(benchmark::State& state, const std::string& op) {
  const int length = static_cast<int>(state.range(0));
  const std::string path =
      (std::filesystem::temp_directory_path() /
       ("braid_dispatch_" + op + "_" + std::to_string(::getpid()) + ".braid"))
          .string();
  if (Status s = SaveBraidFile(BuildChain(op, length), path); !s.ok()) {
    state.SkipWithError(s.ToString().c_str());
    return;
  }
  SessionOptions options;
  options.num_threads = 1;
  StatusOr<std::unique_ptr<Session>> session = Session::Open(path, options);
  std::filesystem::remove(path);
  if (!session.ok()) {
    state.SkipWithError(session.status().ToString().c_str());
    return;
  }
  std::vector<float> input(kWidth, 0.25f);
  if (Status s = (*session)->SetInput(
          "x", Tensor::Borrow(DataType::kF32, {1, kWidth}, input.data()));
      !s.ok()) {
    state.SkipWithError(s.ToString().c_str());
    return;
  }
  if (Status s = (*session)->Run(); !s.ok()) {  // plans and allocates
    state.SkipWithError(s.ToString().c_str());
    return;
  }
  for (auto _ : state) {
    Status s = (*session)->Run();
    if (!s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      break;
    }
  }
  state.counters["us_per_op"] = benchmark::Counter(
      static_cast<double>(length) * static_cast<double>(state.iterations()) / 1e6,
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["ops"] = length;
}

BENCHMARK_CAPTURE(BM_DispatchChain, Relu, std::string("Relu"))
    ->Arg(1000)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_DispatchChain, Add, std::string("Add"))
    ->Arg(1000)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace braid

BENCHMARK_MAIN();
