// The engine's dispatch cost per plan shape, and its overlap on two devices.
//
//   braid_engine_bench --benchmark_filter=Chain     # dispatch overhead per step
//   braid_engine_bench --benchmark_filter=Overlap   # overlap efficiency
//
// Chain: a chain of 200 Relu on a [1,16] f32 tensor, so the time per step is
// the cost of walking the plan and calling a kernel (CPU measurement):
// the sequential path untimed (Session's fast path: step_times off), the
// same all-CPU plan with step times (a trace's Run: two clock reads a step),
// the chain on a CPU worker stream (the issue loop and a cross-thread hand-off),
// and the chain alternating cpu / vgpu (a copy and an event wait per step).
// us_per_step is wall-clock microseconds per step (Google Benchmark prints the
// inverted rate with an "s" suffix; the number is microseconds).
//
// Overlap: two independent 3-conv branches joined by an Add, one on the CPU,
// one on the vgpu with timing shaping (a model, not a GPU measurement).
// overlap_efficiency = sum of step durations / wall time of the Run: above 1
// means steps ran at the same time (2 = two tracks always busy).
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "graph/ir.h"
#include "graph/passes/passes.h"
#include "kernels/backend_registry.h"
#include "kernels/cpu/cpu_device.h"
#include "kernels/vgpu/vgpu_device.h"
#include "models/graph_builder.h"
#include "runtime/engine.h"

namespace braid {
namespace {

constexpr int kChain = 200;

Graph Chain() {
  Graph g;
  g.name() = "relu_chain";
  ValueId x = g.AddInput("x", DataType::kF32, {1, 16});
  for (int i = 0; i < kChain; ++i) {
    Value v;
    v.name = std::string("v").append(std::to_string(i));
    v.dtype = DataType::kF32;
    v.shape = {1, 16};
    v.has_shape = true;
    const ValueId y = g.AddValue(std::move(v));
    Node n;
    n.name = std::string("relu").append(std::to_string(i));
    n.op_type = "Relu";
    n.inputs = {x};
    n.outputs = {y};
    g.AddNode(std::move(n));
    x = y;
  }
  g.outputs().push_back(x);
  return g;
}

const KernelRegistry& Registry() {
  static const KernelRegistry* r = [] {
    auto* reg = new KernelRegistry;
    RegisterCpuKernels(*reg);
    RegisterVgpuKernels(*reg);
    return reg;
  }();
  return *r;
}

void PerStep(benchmark::State& state, size_t steps) {
  state.counters["us_per_step"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * static_cast<double>(steps) / 1e6,
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_Chain_Sequential(benchmark::State& state) {
  std::unique_ptr<Device> cpu = CreateCpuDevice();
  EngineOptions options;
  options.step_times = false;
  auto exec = Engine::CreateSequential(Chain(), Registry(), *cpu, options);
  if (!exec.ok()) return state.SkipWithError(exec.status().message().c_str());
  std::vector<float> x(16, 0.5f);
  const void* in[] = {x.data()};
  for (auto _ : state)
    if (!(*exec)->Run(in).ok()) return state.SkipWithError("run failed");
  PerStep(state, kChain);
}
BENCHMARK(BM_Chain_Sequential)->UseRealTime();

void EngineChain(benchmark::State& state, const std::string& mode) {
  std::unique_ptr<Device> cpu = CreateCpuDevice();
  std::unique_ptr<VgpuDevice> vgpu = CreateVgpuDevice();
  const std::vector<EngineDevice> devices = {{cpu.get(), true, 1}, {vgpu.get(), false, 1}};
  Graph g = Chain();
  Plan plan = SingleDevicePlan(g, "cpu", "bench");
  plan.devices = {"cpu", "vgpu"};
  for (size_t i = 0; i < plan.nodes.size(); ++i) {
    if (mode == "worker") plan.nodes[i].stream = 1;
    if (mode == "alternating" && i % 2) plan.nodes[i].device = "vgpu";
  }
  auto engine = Engine::Create(std::move(g), plan, Registry(), devices, {1});
  if (!engine.ok()) return state.SkipWithError(engine.status().message().c_str());
  std::vector<float> x(16, 0.5f);
  const void* in[] = {x.data()};
  for (auto _ : state)
    if (!(*engine)->Run(in).ok()) return state.SkipWithError("run failed");
  PerStep(state, (*engine)->num_steps());
  state.counters["steps"] = static_cast<double>((*engine)->num_steps());
}
void BM_Chain_EngineAllCpu(benchmark::State& state) { EngineChain(state, "cpu"); }
void BM_Chain_EngineCpuWorkerStream(benchmark::State& state) { EngineChain(state, "worker"); }
void BM_Chain_EngineCpuVgpuAlternating(benchmark::State& state) { EngineChain(state, "alternating"); }
BENCHMARK(BM_Chain_EngineAllCpu)->UseRealTime();
BENCHMARK(BM_Chain_EngineCpuWorkerStream)->UseRealTime();
BENCHMARK(BM_Chain_EngineCpuVgpuAlternating)->UseRealTime();

void BM_Overlap_ShapedTwoDevicePlan(benchmark::State& state) {
  GraphBuilder b("two_branches", 3);
  const ValueId x = b.Input("input", {1, 64, 48, 48});
  ValueId left = x, right = x;
  for (int i = 0; i < 3; ++i) {
    left = b.Conv(left, "cpu" + std::to_string(i), {.out_channels = 64, .kernel = 3, .pad = 1});
    right = b.Conv(right, "vgpu" + std::to_string(i), {.out_channels = 64, .kernel = 3, .pad = 1});
  }
  b.Output(b.Add(left, right), "output", {1, 64, 48, 48});
  Graph g = std::move(b).Finish();
  if (!RunDefaultPasses(g).ok()) return state.SkipWithError("passes failed");
  Plan plan = SingleDevicePlan(g, "cpu", "bench");
  plan.devices = {"cpu", "vgpu"};
  for (size_t i = 0; i < g.nodes().size(); ++i)
    if (g.nodes()[i].name.find("vgpu") != std::string::npos) plan.nodes[i].device = "vgpu";
  VgpuOptions shaped;
  shaped.timing.enabled = true;
  shaped.timing.label = "bench model";
  shaped.timing.peak_gflops = 40;
  shaped.timing.copy_gbps = 0.5;
  shaped.timing.copy_latency_us = 200;
  shaped.timing.launch_us = 100;
  std::unique_ptr<Device> cpu = CreateCpuDevice();
  std::unique_ptr<VgpuDevice> vgpu = CreateVgpuDevice(shaped);
  // The shaping hook as Session::Open binds it (kernels/backend_registry.h).
  const std::vector<EngineDevice> devices = {
      {cpu.get(), true, 1},
      {vgpu.get(), false, 1, BindKernelTime(**BuiltinBackends().Find("vgpu"), *vgpu)}};
  auto engine = Engine::Create(std::move(g), plan, Registry(), devices, {1});
  if (!engine.ok()) return state.SkipWithError(engine.status().message().c_str());
  std::vector<float> input(64 * 48 * 48, 0.25f);
  const void* in[] = {input.data()};
  double busy = 0, wall = 0;
  for (auto _ : state) {
    if (!(*engine)->Run(in).ok()) return state.SkipWithError("run failed");
    double first = 1e300, last = 0;
    for (const StepTiming& t : (*engine)->timeline()) {
      busy += t.end_us - t.start_us;
      first = std::min(first, t.start_us);
      last = std::max(last, t.end_us);
    }
    wall += last - first;
  }
  state.counters["overlap_efficiency"] = busy / wall;
  state.SetLabel("vgpu timing is a model (not a GPU measurement)");
}
BENCHMARK(BM_Overlap_ShapedTwoDevicePlan)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace braid

BENCHMARK_MAIN();
