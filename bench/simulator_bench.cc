// Simulator throughput: plans simulated per second on ResNet-50 (the RL
// policies train on the simulator, so this must stay in the thousands).
//
//   braid_simulator_bench --benchmark_filter=Simulate
// items_per_second is plans per second (simulated plans, not inferences).
#include <benchmark/benchmark.h>

#include <map>
#include <random>

#include "graph/annotate.h"
#include "graph/passes/passes.h"
#include "models/builtin.h"
#include "scheduler/cache_residency.h"
#include "scheduler/simulator.h"

namespace braid {
namespace {

struct Fixture {
  Graph graph;
  DeviceProfile profile;
};

const Fixture& ResNet50(const std::string& profile_name) {
  static std::map<std::string, Fixture> cache;
  auto it = cache.find(profile_name);
  if (it != cache.end()) return it->second;
  Fixture f;
  f.graph = *BuildBuiltinModel("resnet50");
  if (!RunDefaultPasses(f.graph).ok() || !Annotate(f.graph).ok()) std::abort();
  StatusOr<DeviceProfile> p = LoadDeviceProfile(profile_name);
  if (!p.ok()) std::abort();
  f.profile = *p;
  return cache.emplace(profile_name, std::move(f)).first->second;
}

// Random placements (each node on either device, 10% sliced): every
// iteration simulates one distinct plan.
void SimulateRandomPlans(benchmark::State& state, const std::string& profile_name) {
  const Fixture& f = ResNet50(profile_name);
  CostModel model(f.profile);
  SimGraph sg = *BuildSimGraph(f.graph, model,
                               {f.profile.devices[0].name, f.profile.devices[1].name});
  Simulator sim(sg);
  std::mt19937 rng(1);
  std::vector<std::vector<SimPlacement>> plans(64, std::vector<SimPlacement>(
                                                       static_cast<size_t>(sg.num_nodes)));
  for (auto& plan : plans) {
    for (SimPlacement& p : plan) {
      p.device = static_cast<int16_t>(rng() % 2);
      if (rng() % 10 == 0) {
        p.other_device = static_cast<int16_t>(1 - p.device);
        p.ratio = 0.5f;
      }
    }
  }
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(sim.Run(plans[i++ % plans.size()]).latency_us);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["nodes"] = sg.num_nodes;
}

void BM_SimulateResNet50OrinNano(benchmark::State& state) {
  SimulateRandomPlans(state, "jetson-orin-nano-8gb");
}
void BM_SimulateResNet50HostVgpu(benchmark::State& state) {
  SimulateRandomPlans(state, "host-vgpu");
}
BENCHMARK(BM_SimulateResNet50OrinNano);
BENCHMARK(BM_SimulateResNet50HostVgpu);

// One-time cost per (graph, profile, device list).
void BM_BuildSimGraphResNet50(benchmark::State& state) {
  const Fixture& f = ResNet50("jetson-orin-nano-8gb");
  CostModel model(f.profile);
  for (auto _ : state) benchmark::DoNotOptimize(BuildSimGraph(f.graph, model, {"cpu", "cuda:0"}));
}
BENCHMARK(BM_BuildSimGraphResNet50);

// Its share on a host with a cache tier and a DRAM tier (the arena mirror and
// the reuse walks of scheduler/cache_residency.h: once per graph and device).
void BM_ColdBytesResNet50(benchmark::State& state) {
  const Fixture& f = ResNet50("host-vgpu");
  for (auto _ : state)
    benchmark::DoNotOptimize(ColdBytesPerNode(f.graph, 1 << 20, 32 << 20).size());
  state.counters["nodes"] = f.graph.num_nodes();
}
BENCHMARK(BM_ColdBytesResNet50);

}  // namespace
}  // namespace braid

BENCHMARK_MAIN();
