// Simulator semantics on tiny hand-built plans whose answers are worked out
// by hand (see sim_test_util.h for the round-number profile).
#include "scheduler/simulator.h"

#include <gtest/gtest.h>

#include <tuple>

#include "graph/passes/passes.h"
#include "graph/annotate.h"
#include "models/builtin.h"
#include "scheduler/cache_residency.h"
#include "tests/scheduler/sim_test_util.h"

namespace braid {
namespace {

using testing::TinyGraph;
using testing::TwoDeviceProfile;

constexpr double kTol = 1e-9;

Plan PlanOn(const Graph& g, const std::vector<std::string>& devices) {
  Plan plan = SingleDevicePlan(g, "cpu", "test");
  plan.devices = {"cpu", "gpu"};
  for (size_t i = 0; i < devices.size(); ++i) plan.nodes[i].device = devices[i];
  return plan;
}

SimResult Simulate(const Graph& g, const DeviceProfile& profile, const Plan& plan) {
  CostModel model(profile);
  StatusOr<SimGraph> sg = BuildSimGraph(g, model, {"cpu", "gpu"});
  EXPECT_TRUE(sg.ok()) << sg.status().ToString();
  StatusOr<SimResult> r = SimulatePlan(*sg, plan, /*timeline=*/true);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return *r;
}

TEST(SimulatorTest, SerialChainAddsUpAndChargesEnergy) {
  TinyGraph t;
  ValueId x = t.Input("x", 250);
  ValueId a = t.Op("a", {x}, 1);
  ValueId b = t.Op("b", {a}, 2);
  t.Output(t.Op("c", {b}, 3));
  const SimResult r = Simulate(t.graph(), TwoDeviceProfile(), PlanOn(t.graph(), {}));
  EXPECT_NEAR(r.latency_us, 6, kTol);
  EXPECT_NEAR(r.devices[0].busy_us, 6, kTol);
  EXPECT_NEAR(r.devices[1].busy_us, 0, kTol);
  EXPECT_EQ(r.devices[0].kernels, 3);
  EXPECT_EQ(r.copies, 0);
  EXPECT_NEAR(r.nodes[1].start_us, 1, kTol);
  EXPECT_NEAR(r.nodes[2].end_us, 6, kTol);
  // cpu 2 W x 6 us busy, gpu 0.5 W x 6 us idle, board 1 W x 6 us.
  EXPECT_NEAR(r.energy_j, (2 * 6 + 0.5 * 6 + 1 * 6) * 1e-6, 1e-15);
}

TEST(SimulatorTest, TwoDevicesOverlapOverMappedMemory) {
  TinyGraph t;
  ValueId x = t.Input("x", 250);
  ValueId a = t.Op("a", {x}, 4);       // cpu: 4 us
  ValueId b = t.Op("b", {x}, 16);      // gpu: 16 / 4 = 4 us
  t.Output(t.Op("c", {a, b}, 1));      // cpu: 1 us after both
  const SimResult r = Simulate(t.graph(), TwoDeviceProfile(10, /*mapped=*/true),
                               PlanOn(t.graph(), {"cpu", "gpu", "cpu"}));
  EXPECT_NEAR(r.latency_us, 5, kTol);
  EXPECT_NEAR(r.devices[0].busy_us, 5, kTol);
  EXPECT_NEAR(r.devices[1].busy_us, 4, kTol);
  EXPECT_NEAR(r.nodes[1].start_us, 0, kTol);  // b does not wait for a
  EXPECT_EQ(r.copies, 0);
  EXPECT_NEAR(r.bytes_moved, 0, kTol);
  EXPECT_NEAR(r.bytes_mapped, 2000, kTol);  // x to gpu, b's output to cpu
}

TEST(SimulatorTest, TransferOnTheCriticalPath) {
  TinyGraph t;
  ValueId x = t.Input("x", 250);
  ValueId a = t.Op("a", {x}, 1);            // cpu 0..1
  t.Output(t.Op("b", {a}, 8));              // gpu: 2 us
  const SimResult r =
      Simulate(t.graph(), TwoDeviceProfile(10), PlanOn(t.graph(), {"cpu", "gpu"}));
  // a_out (1000 B): 10 + 1 us -> b at 12..14; b_out back: 11 us -> 25.
  EXPECT_NEAR(r.nodes[1].start_us, 12, kTol);
  EXPECT_NEAR(r.nodes[1].end_us, 14, kTol);
  EXPECT_NEAR(r.latency_us, 25, kTol);
  EXPECT_EQ(r.copies, 2);
  EXPECT_NEAR(r.bytes_moved, 2000, kTol);
  ASSERT_EQ(r.copy_log.size(), 2u);
  EXPECT_EQ(r.copy_log[0].from, 0);
  EXPECT_EQ(r.copy_log[0].to, 1);
  EXPECT_NEAR(r.copy_log[1].start_us, 14, kTol);
  EXPECT_EQ(r.devices[1].idle_gaps, 0);
}

TEST(SimulatorTest, HandoffsPayTheWakeUpsOfTheCopyingAndReadingStreams) {
  TinyGraph t;
  ValueId x = t.Input("x", 250);
  ValueId a = t.Op("a", {x}, 1);            // cpu 0..1
  t.Output(t.Op("b", {a}, 8));              // gpu: 2 us
  DeviceProfile profile = TwoDeviceProfile(10);
  profile.devices[0].sync_us = 3;           // the cpu stream wakes 3 us after an event
  profile.devices[1].sync_us = 5;           // the gpu's streams (and its copy streams) 5 us
  const SimResult r = Simulate(t.graph(), profile, PlanOn(t.graph(), {"cpu", "gpu"}));
  // a_out: the copy stream wakes (5), copies (10 + 1), the gpu stream wakes
  // (5): b at 22..24. b_out back: 5 + 11 + 3 (the cpu wakes) -> 43.
  EXPECT_NEAR(r.nodes[1].start_us, 22, kTol);
  EXPECT_NEAR(r.nodes[1].end_us, 24, kTol);
  EXPECT_NEAR(r.latency_us, 43, kTol);
  // Over mapped memory nothing is copied, but the reader still wakes.
  const SimResult mapped =
      Simulate(t.graph(), [&] {
        DeviceProfile m = TwoDeviceProfile(10, /*mapped=*/true);
        m.devices[0].sync_us = 3;
        m.devices[1].sync_us = 5;
        return m;
      }(), PlanOn(t.graph(), {"cpu", "gpu"}));
  EXPECT_NEAR(mapped.nodes[1].start_us, 1 + 5, kTol);
  EXPECT_NEAR(mapped.latency_us, 1 + 5 + 2 + 3, kTol);
  EXPECT_EQ(mapped.copies, 0);
}

TEST(SimulatorTest, AnInputTheCacheNoLongerHoldsCostsMemoryTime) {
  // x -> a -> b -> c, then Add(a, c), values of 4096 bytes: a's bytes leave
  // an 8191-byte cache while b and c (8192 bytes) pass; an 8192-byte one
  // keeps them (scheduler/cache_residency.h).
  TinyGraph t;
  const ValueId x = t.Input("x", 1024);
  const ValueId a = t.Op("n0", {x}, 0.001, 1024);
  const ValueId c = t.Op("n2", {t.Op("n1", {a}, 0.001, 1024)}, 0.001, 1024);
  t.Output(t.Op("add", {a, c}, 0.001, 1024, "Add"));
  Graph& g = t.graph();
  g.node(3).annotation.bytes = 12288;
  auto add_work_us = [&](double cache_bytes) {
    DeviceProfile p = TwoDeviceProfile();
    p.devices[0].cache_bytes = cache_bytes;
    p.devices[0].cache_bandwidth_gbps = 10;
    const CostModel model(p);
    StatusOr<SimGraph> sg = BuildSimGraph(g, model, {"cpu", "gpu"});
    EXPECT_TRUE(sg.ok()) << sg.status().ToString();
    OpWork w = OpWorkOf(g.node(3), &g);
    w.cold_bytes = ColdBytesPerNode(g, cache_bytes, 0)[3].beyond_cache;
    const OpCost cost = model.Cost(w, 0);
    EXPECT_NEAR(sg->work_us[3 * 2], std::max(cost.compute_us, cost.memory_us), kTol);
    return sg->work_us[3 * 2];
  };
  // Cold: 4096 bytes at 1 GB/s + 8191 within the cache, 1 beyond it.
  EXPECT_NEAR(add_work_us(8191), 4096 / 1e3 + 8191 / 10e3 + 1 / 1e3, kTol);
  EXPECT_NEAR(add_work_us(8192), 8192 / 10e3 + 4096 / 1e3, kTol);
  EXPECT_NEAR(add_work_us(12288), 12288 / 10e3, kTol);
  // With a DRAM tier the cold bytes of a run beyond the last level come
  // from DRAM: at a 12287-byte last level, x for n0 (a whole run since the
  // previous one read it).
  DeviceProfile p = TwoDeviceProfile();
  p.devices[0].cache_bytes = 4096;
  p.devices[0].cache_bandwidth_gbps = 10;
  p.devices[0].llc_bytes = 12287;
  p.devices[0].dram_bandwidth_gbps = 0.5;
  g.node(0).op_type = "Add";  // a memory-bound class: cold bytes priced
  g.node(0).annotation.bytes = 8192;
  const CostModel model(p);
  StatusOr<SimGraph> sg = BuildSimGraph(g, model, {"cpu", "gpu"});
  ASSERT_TRUE(sg.ok()) << sg.status().ToString();
  EXPECT_EQ(ColdBytesPerNode(g, 4096, 12287)[0].beyond_llc, 4096);
  EXPECT_NEAR(sg->work_us[0], 4096 / 10e3 + 4096 / 0.5e3, kTol);
}

TEST(SimulatorTest, AViewOfACopiedValueIsReadAsCopied) {
  // a on the gpu; b on the cpu reads it, directly or through a cpu view (a
  // Reshape the engine runs in place: the bytes b reads are still the ones
  // the copy brought). Either way b pays the copied-input stall.
  auto b_us = [](bool through_view, bool a_on_gpu) {
    TinyGraph t;
    const ValueId x = t.Input("x", 1000);
    ValueId a = t.Op("a", {x}, 4, 1000);
    if (through_view) a = t.Op("view", {a}, 0, 1000, "Reshape");
    t.Output(t.Op("b", {a}, 0.001, 1000));
    Graph& g = t.graph();
    g.nodes().back().annotation.bytes = 8000;  // memory-bound: 8 us at 1 GB/s
    DeviceProfile p = TwoDeviceProfile();
    p.devices[0].cache_bytes = 1e6;
    p.devices[0].cache_bandwidth_gbps = 1;
    p.devices[0].copied_read_gbps = 0.25;  // its 4000 input bytes: 16 us, not 4
    std::vector<std::string> devices = {a_on_gpu ? "gpu" : "cpu"};
    if (through_view) devices.push_back("cpu");
    devices.push_back("cpu");
    const SimResult r = Simulate(g, p, PlanOn(g, devices));
    return r.nodes.back().end_us - r.nodes.back().start_us;
  };
  EXPECT_NEAR(b_us(false, false), 8, kTol);
  EXPECT_NEAR(b_us(false, true), 8 + 16 - 4, kTol);
  EXPECT_NEAR(b_us(true, true), 8 + 16 - 4, kTol);
  EXPECT_NEAR(b_us(true, false), 8, kTol);
}

TEST(SimulatorTest, SliceSplitsWorkAndCopiesThePartBack) {
  TinyGraph t;
  ValueId x = t.Input("x", 250);
  t.Output(t.Op("s", {x}, 8, 250, "MatMul"));  // cpu 8 us whole, gpu 2 us whole
  Plan plan = PlanOn(t.graph(), {"cpu"});
  plan.nodes[0].slice = SliceSpec{SliceAxis::kOutputChannels, "gpu", 0.5};
  const SimResult r = Simulate(t.graph(), TwoDeviceProfile(10), plan);
  // Half of 250 channels is 125: the engine splits at 128, a whole block of
  // 16 (SliceSplitIndex), and so does the simulator. cpu share: 0..4.096.
  // gpu: x copied 0..11, 122/250 of 2 us: 11..11.976, its 488 B back: 10 us +
  // 0.488 us, then the cpu joins the parts (a plain copy of the 1000 B
  // output in and out, as the engine's "#join" step).
  const double share = 128.0 / 250;
  OpWork join;
  join.op_class = OpClass::kDataMovement;
  join.op_type = "Reshape";
  join.bytes = 2 * 1000;
  const double join_us = CostModel(TwoDeviceProfile(10)).Cost(join, 0).TotalUs();
  EXPECT_GT(join_us, 0);
  EXPECT_NEAR(r.nodes[0].end_us, 8 * share, kTol);
  EXPECT_NEAR(r.nodes[0].other_start_us, 11, kTol);
  EXPECT_NEAR(r.nodes[0].other_end_us, 11 + 2 * (1 - share), kTol);
  EXPECT_NEAR(r.latency_us, 11 + 2 * (1 - share) + 10 + 1000 * (1 - share) * 1e-3 + join_us, kTol);
  EXPECT_NEAR(r.bytes_moved, 1000 + 1000 * (1 - share), kTol);
  EXPECT_EQ(r.copies, 2);
}

// The simulator prices the split the engine makes (runtime/slicing.cc:
// SliceSplitIndex of the plan's double ratio): whole 16-channel blocks along
// output channels, whole items along the batch, and the plan's ratio is not
// rounded through a float first.
TEST(SimulatorTest, SlicesRunTheEnginesSplit) {
  for (auto [extent, axis, ratio, split] :
       {std::tuple{64, SliceAxis::kOutputChannels, 0.6, 32},
        std::tuple{64, SliceAxis::kBatch, 0.6, 38},
        std::tuple{10, SliceAxis::kBatch, 0.35, 4},  // float(0.35) * 10 rounds to 3
        std::tuple{160, SliceAxis::kOutputChannels, 0.35, 64}}) {
    TinyGraph t;
    ValueId x = t.Input("x", 250);
    t.Output(t.Op("s", {x}, 8, extent, "Gemm"));  // a 1-D output: batch and columns alike
    Plan plan = PlanOn(t.graph(), {"cpu"});
    plan.nodes[0].slice = SliceSpec{axis, "gpu", ratio};
    const CostModel model(TwoDeviceProfile(10));
    StatusOr<SimGraph> sg = BuildSimGraph(t.graph(), model, {"cpu", "gpu"});
    ASSERT_TRUE(sg.ok()) << sg.status().ToString();
    StatusOr<std::vector<SimPlacement>> p = CompilePlacement(*sg, plan);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    const double share = static_cast<double>(split) / extent;
    EXPECT_EQ(SliceSplitIndex(extent, ratio, axis), split) << extent << " " << ratio;
    EXPECT_EQ((*p)[0].axis, axis);
    EXPECT_NEAR(SliceShare(*sg, 0, (*p)[0]), share, 1e-12) << extent << " " << ratio;
    // The cpu part: its share of the 8 us.
    EXPECT_NEAR(Simulate(t.graph(), TwoDeviceProfile(10), plan).nodes[0].end_us, 8 * share, 1e-9)
        << extent << " " << ratio;
  }
}

TEST(SimulatorTest, StreamsOverlapOnlyWithFreeKernelSlots) {
  TinyGraph t;
  ValueId x = t.Input("x", 250);
  ValueId a = t.Op("a", {x}, 16);  // gpu 4 us
  ValueId b = t.Op("b", {x}, 16);  // gpu 4 us
  t.Output(a);
  t.Output(b);
  Plan plan = PlanOn(t.graph(), {"gpu", "gpu"});
  plan.nodes[1].stream = 1;
  EXPECT_NEAR(Simulate(t.graph(), TwoDeviceProfile(0, true, 2), plan).latency_us, 4, kTol);
  EXPECT_NEAR(Simulate(t.graph(), TwoDeviceProfile(0, true, 1), plan).latency_us, 8, kTol);
  plan.nodes[1].stream = 0;
  EXPECT_NEAR(Simulate(t.graph(), TwoDeviceProfile(0, true, 2), plan).latency_us, 8, kTol);
}

TEST(SimulatorTest, CopiesOfOneDirectionShareTheCopyEngine) {
  TinyGraph t;
  ValueId x = t.Input("x", 250);
  ValueId a = t.Op("a", {x}, 1, 4000);  // 16000 B outputs: 16 us to copy
  ValueId b = t.Op("b", {x}, 1, 4000);
  t.Output(t.Op("c", {a, b}, 4));       // gpu: 1 us
  const Plan plan = PlanOn(t.graph(), {"cpu", "cpu", "gpu"});
  DeviceProfile one = TwoDeviceProfile(0);
  const SimResult r1 = Simulate(t.graph(), one, plan);
  // a_out 1..17, b_out waits for the engine: 17..33; c 33..34; c_out 1 us.
  EXPECT_NEAR(r1.nodes[2].start_us, 33, kTol);
  EXPECT_NEAR(r1.latency_us, 35, kTol);
  DeviceProfile two = one;
  for (LinkSpec& l : two.links) l.copy_engines = 2;
  const SimResult r2 = Simulate(t.graph(), two, plan);
  EXPECT_NEAR(r2.nodes[2].start_us, 18, kTol);  // b_out 2..18 on the second engine
}

TEST(SimulatorTest, ErrorsNameTheProblem) {
  TinyGraph t;
  t.Output(t.Op("a", {t.Input("x", 4)}, 1));
  CostModel model(TwoDeviceProfile());
  StatusOr<SimGraph> missing = BuildSimGraph(t.graph(), model, {"cpu", "tpu"});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("'tpu' is not in profile"), std::string::npos);
  DeviceProfile no_link = TwoDeviceProfile();
  no_link.links.clear();
  StatusOr<SimGraph> unlinked = BuildSimGraph(t.graph(), CostModel(no_link), {"cpu", "gpu"});
  ASSERT_FALSE(unlinked.ok());
  EXPECT_NE(unlinked.status().message().find("no link cpu -> gpu"), std::string::npos);
  StatusOr<SimGraph> sg = BuildSimGraph(t.graph(), model, {"cpu", "gpu"});
  ASSERT_TRUE(sg.ok());
  Plan plan = PlanOn(t.graph(), {"npu"});
  EXPECT_FALSE(SimulatePlan(*sg, plan).ok());
  plan.nodes.clear();
  EXPECT_FALSE(SimulatePlan(*sg, plan).ok());
}

TEST(SimulatorTest, ReusedSimulatorGivesTheSameAnswerOnResNet50) {
  StatusOr<Graph> g = BuildBuiltinModel("resnet50");
  ASSERT_TRUE(g.ok());
  ASSERT_TRUE(RunDefaultPasses(*g).ok());
  ASSERT_TRUE(Annotate(*g).ok());
  StatusOr<DeviceProfile> profile =
      LoadDeviceProfile(std::string(BRAID_SOURCE_DIR) + "/profiles/jetson-orin-nano-8gb.json");
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  CostModel model(*profile);
  StatusOr<SimGraph> sg = BuildSimGraph(*g, model, {"cpu", "cuda:0"});
  ASSERT_TRUE(sg.ok()) << sg.status().ToString();
  Simulator sim(*sg);
  std::vector<SimPlacement> cpu(static_cast<size_t>(sg->num_nodes));
  std::vector<SimPlacement> gpu = cpu;
  for (SimPlacement& p : gpu) p.device = 1;
  const double cpu_latency = sim.Run(cpu).latency_us;
  const double gpu_latency = sim.Run(gpu).latency_us;
  EXPECT_EQ(sim.Run(cpu).latency_us, cpu_latency);
  EXPECT_GT(cpu_latency, 0);
  // All on the cpu: latency is the sum of the cpu predictions (with the
  // graph: its Flatten runs as a view and costs nothing).
  double sum = 0;
  for (const Node& n : g->nodes()) sum += model.Cost(OpWorkOf(n, &*g), 0).TotalUs();
  EXPECT_NEAR(cpu_latency, sum, 1e-6 * sum);
  // The Orin GPU has ~9x the cpu's FP32 peak; ResNet-50 is conv-bound.
  EXPECT_LT(gpu_latency, cpu_latency);
  EXPECT_EQ(sim.Run(gpu).copies, 0);  // mapped memory
}

}  // namespace
}  // namespace braid
