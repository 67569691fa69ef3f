// Engine behaviour: transfers, overlap from recorded timestamps, faults,
// memory stability over many runs, the Chrome trace, fallbacks.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#if defined(__SANITIZE_ADDRESS__)
#define BRAID_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BRAID_ASAN 1
#endif
#endif
#ifdef BRAID_ASAN
// The sanitizer runtime's counter (GCC does not install its header).
extern "C" size_t __sanitizer_get_current_allocated_bytes();
#else
#include <malloc.h>
#endif
#include <pthread.h>

#include "graph/annotate.h"
#include "graph/json.h"
#include "graph/op_schema.h"
#include "graph/passes/passes.h"
#include "graph/passes/shape_inference.h"
#include "models/graph_builder.h"
#include "tests/engine/engine_test_util.h"

namespace braid {
namespace {

using test::Devices;
using test::EngineRegistry;

size_t LiveHeapBytes() {
#ifdef BRAID_ASAN
  return __sanitizer_get_current_allocated_bytes();
#else
  return mallinfo2().uordblks;
#endif
}

Graph TinyCnn(int64_t batch = 1, int64_t hw = 32) {
  StatusOr<Graph> g = test::StaticModel("tiny_cnn", batch, hw);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return g.ok() ? std::move(*g) : Graph();
}

size_t NodeIndex(const Graph& g, const std::string& op, int nth = 0) {
  for (size_t i = 0; i < g.nodes().size(); ++i)
    if (g.nodes()[i].op_type == op && nth-- == 0) return i;
  ADD_FAILURE() << "no " << op;
  return 0;
}

TEST(Engine, EachValueIsCopiedAtMostOncePerDestination) {
  Graph g = TinyCnn();
  Plan plan = SingleDevicePlan(g, "cpu", "test");
  plan.devices = {"cpu", "vgpu"};
  // The residual: the pool output is read by two vgpu nodes (conv "res" and
  // the Add), so one copy must serve both.
  for (size_t i = 0; i < g.nodes().size(); ++i)
    if (g.nodes()[i].op_type != "MaxPool" && i > NodeIndex(g, "MaxPool")) plan.nodes[i].device = "vgpu";
  Devices devices;
  auto engine = Engine::Create(g, plan, EngineRegistry(), devices.list, {1});
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  std::set<std::string> copies;
  for (const StepTiming& t : (*engine)->timeline()) {
    if (t.category == "copy") {
      EXPECT_TRUE(copies.insert(t.name).second) << t.name;
    }
  }
  // Pool output to vgpu, the result back to the host.
  EXPECT_EQ(copies.size(), 2u);
  const test::Inputs in = test::RandomInputs(g, 1);
  ASSERT_TRUE((*engine)->Run(in.pointers).ok());
}

TEST(Engine, HostAddressableDeviceNeedsNoCopies) {
  Graph g = TinyCnn();
  const Plan plan = test::RandomPlan(g, 3);
  Devices devices;
  devices.list[1].host_addressable = true;  // as an integrated GPU with mapped memory
  auto engine = Engine::Create(g, plan, EngineRegistry(), devices.list, {1});
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  EXPECT_EQ((*engine)->num_copy_steps(), 0u);
  const test::Inputs in = test::RandomInputs(g, 1);
  ASSERT_TRUE((*engine)->Run(in.pointers).ok());
}

TEST(Engine, PlacementsReportSlicesAndDevices) {
  Graph g = TinyCnn();
  Plan plan = SingleDevicePlan(g, "cpu", "test");
  plan.devices = {"cpu", "vgpu"};
  const size_t fc = NodeIndex(g, "Gemm");
  plan.nodes[fc].slice = SliceSpec{SliceAxis::kOutputChannels, "vgpu", 0.25};
  Devices devices;
  auto engine = Engine::Create(g, plan, EngineRegistry(), devices.list, {1});
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  std::map<std::string, NodePlacement> by_name;
  for (const NodePlacement& p : (*engine)->placements()) by_name[p.node] = p;
  const std::string name = g.nodes()[fc].name;
  ASSERT_TRUE(by_name.count(name + "#0") && by_name.count(name + "#1") && by_name.count(name + "#join"));
  EXPECT_EQ(by_name[name + "#0"].device, "cpu");
  EXPECT_EQ(by_name[name + "#1"].device, "vgpu");
  // 250 channels asked for: the split is a whole block of 16 (256).
  EXPECT_EQ(by_name[name + "#0"].slice, "channels [0,256) of 1000");
  EXPECT_EQ(by_name[name + "#1"].slice, "channels [256,1000) of 1000");
  EXPECT_EQ(by_name[name + "#join"].op_type, "Concat");
}

TEST(Engine, BadPlansAreRejectedNamingTheNode) {
  Graph g = TinyCnn();
  Devices devices;
  Plan plan = SingleDevicePlan(g, "cpu", "test");
  plan.devices = {"cpu", "tpu"};
  plan.nodes[2].device = "tpu";
  auto engine = Engine::Create(g, plan, EngineRegistry(), devices.list, {1});
  ASSERT_FALSE(engine.ok());
  EXPECT_NE(engine.status().message().find(g.nodes()[2].name), std::string::npos);
  EXPECT_NE(engine.status().message().find("'tpu'"), std::string::npos);
  Plan relu_slice = SingleDevicePlan(g, "cpu", "test");
  relu_slice.devices = {"cpu", "vgpu"};
  const size_t pool = NodeIndex(g, "MaxPool");
  relu_slice.nodes[pool].slice = SliceSpec{SliceAxis::kOutputChannels, "vgpu", 0.5};
  engine = Engine::Create(g, relu_slice, EngineRegistry(), devices.list, {1});
  ASSERT_FALSE(engine.ok());
  EXPECT_NE(engine.status().message().find(g.nodes()[pool].name), std::string::npos);
}

TEST(Engine, NodeWithoutAKernelOnItsDeviceFallsBackToCpuReported) {
  KernelRegistry registry;
  RegisterCpuKernels(registry);
  RegisterVgpuKernels(registry);
  Graph g = TinyCnn();
  Plan plan = SingleDevicePlan(g, "vgpu", "test");
  plan.devices = {"cpu", "vgpu"};
  // A vgpu "kernel" for MaxPool that declines everything.
  struct Declines : Kernel {
    Status Prepare(const PrepareArgs& a) override { return Unimplemented(a.Where() + ": not on this device"); }
    Status Run(const RunArgs&) override { return Internal("unreachable"); }
  };
  KernelRegistry declining;
  RegisterCpuKernels(declining);
  for (const std::string& op : registry.OpTypes(DeviceKind::kVirtualGpu))
    if (op != "MaxPool")
      for (const KernelEntry* e : registry.Candidates(op, DeviceKind::kVirtualGpu)) declining.Register(*e);
  declining.Register({"MaxPool", DeviceKind::kVirtualGpu, "declines", 5, [] { return std::make_unique<Declines>(); }});
  Devices devices;
  auto engine = Engine::Create(g, plan, declining, devices.list, {1});
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  int fallbacks = 0;
  for (const NodePlacement& p : (*engine)->placements()) {
    if (p.op_type != "MaxPool") continue;
    EXPECT_EQ(p.device, "cpu");
    EXPECT_TRUE(p.fallback);
    EXPECT_NE(p.reason.find("fell back to cpu"), std::string::npos) << p.reason;
    ++fallbacks;
  }
  EXPECT_EQ(fallbacks, 1);
  const test::Inputs in = test::RandomInputs(g, 1);
  ASSERT_TRUE((*engine)->Run(in.pointers).ok());
}

// Precision bf16 (docs/ir.md) on a device whose kernels compute in f32 only
// (as CUDA's): each such node is declined there with the reason and runs on
// the CPU in bf16, reported; the outputs equal the all-CPU bf16 run, and
// differ from f32 by bf16's rounding. On the vgpu (the CPU's kernels) they
// stay put.
TEST(Engine, Bf16NodesLeaveADeviceWithoutBf16KernelsReported) {
  Graph g = TinyCnn();
  Graph f32 = g;
  ASSERT_TRUE(MarkComputePrecision(g, "bf16").ok());
  KernelRegistry f32_only_vgpu;
  RegisterCpuKernels(f32_only_vgpu);
  for (const std::string& op : EngineRegistry().OpTypes(DeviceKind::kVirtualGpu))
    for (const KernelEntry* e : EngineRegistry().Candidates(op, DeviceKind::kVirtualGpu)) {
      KernelEntry copy = *e;
      copy.precisions = PrecisionBit(ComputePrecision::kF32);
      f32_only_vgpu.Register(std::move(copy));
    }
  Plan plan = SingleDevicePlan(g, "vgpu", "test");
  plan.devices = {"cpu", "vgpu"};
  Devices devices;
  auto engine = Engine::Create(g, plan, f32_only_vgpu, devices.list, {1});
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  int moved = 0;
  for (const NodePlacement& p : (*engine)->placements()) {
    if (p.op_type != "Conv" && p.op_type != "Gemm") {
      EXPECT_EQ(p.device, "vgpu") << p.node;
      continue;
    }
    EXPECT_EQ(p.device, "cpu") << p.node;
    EXPECT_TRUE(p.fallback) << p.node;
    EXPECT_NE(p.reason.find("no bf16 arithmetic"), std::string::npos) << p.reason;
    ++moved;
  }
  EXPECT_GE(moved, 3);
  const test::Inputs in = test::RandomInputs(g, 2);
  ASSERT_TRUE((*engine)->Run(in.pointers).ok());
  auto cpu = Engine::Create(g, SingleDevicePlan(g, "cpu", "ref"), EngineRegistry(), devices.list, {1});
  auto cpu_f32 =
      Engine::Create(f32, SingleDevicePlan(f32, "cpu", "ref"), EngineRegistry(), devices.list, {1});
  auto vgpu = Engine::Create(g, plan, EngineRegistry(), devices.list, {1});
  ASSERT_TRUE(cpu.ok() && cpu_f32.ok() && vgpu.ok());
  for (const NodePlacement& p : (*vgpu)->placements()) EXPECT_EQ(p.device, "vgpu") << p.node;
  for (Engine* e : {cpu->get(), cpu_f32->get(), vgpu->get()}) ASSERT_TRUE(e->Run(in.pointers).ok());
  EXPECT_EQ(test::Compare(test::Outputs(**engine), test::Outputs(**cpu), 1e-5, 1e-4), "");
  EXPECT_EQ(test::Compare(test::Outputs(**vgpu), test::Outputs(**cpu), 1e-5, 1e-4), "");
  EXPECT_NE(test::Compare(test::Outputs(**cpu), test::Outputs(**cpu_f32), 1e-5, 1e-4), "");
}

// FailOnDemandRelu (engine_test_util.h) fails while this is set.
std::atomic<bool> g_fail{false};

// Unfused tiny_cnn (so Relu nodes exist) with nodes alternating cpu / vgpu,
// so a failure sits between CPU and vgpu work; its first Relu on `device`,
// whose kernel there fails on demand. Holds what the engine refers to.
struct FailingReluEngine {
  Graph graph;
  size_t relu = 0;
  KernelRegistry registry;
  Devices devices;
  std::unique_ptr<Engine> engine;
};

void BuildFailingReluEngine(DeviceKind kind, const std::string& device, FailingReluEngine& f) {
  StatusOr<Graph> raw = LoadGraphForExecution("builtin:tiny_cnn", /*fuse=*/false);
  ASSERT_TRUE(raw.ok());
  StatusOr<Graph> g = test::StaticGraph(std::move(*raw), 1, 32);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  f.graph = std::move(*g);
  RegisterCpuKernels(f.registry);
  RegisterVgpuKernels(f.registry);
  f.registry.Register({"Relu", kind, "fail-on-demand", 100,
                       [] { return std::make_unique<test::FailOnDemandRelu>(&g_fail); }});
  Plan plan = SingleDevicePlan(f.graph, "cpu", "test");
  plan.devices = {"cpu", "vgpu"};
  for (size_t i = 0; i < plan.nodes.size(); ++i) plan.nodes[i].device = i % 2 ? "vgpu" : "cpu";
  f.relu = NodeIndex(f.graph, "Relu");
  plan.nodes[f.relu].device = device;
  auto engine = Engine::Create(f.graph, plan, f.registry, f.devices.list, {1});
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  f.engine = std::move(*engine);
}

// Runs `f` once with its Relu failing; the error must name the node and
// `device`, and the engine the failed device.
Status RunWithFailingRelu(FailingReluEngine& f, const test::Inputs& in,
                          const std::string& device) {
  g_fail = true;
  Status s = f.engine->Run(in.pointers);
  g_fail = false;
  EXPECT_NE(s.message().find("node '" + f.graph.nodes()[f.relu].name + "' (Relu) on " + device),
            std::string::npos)
      << s.message();
  EXPECT_EQ(f.engine->failed_device(), device);
  return s;
}

TEST(Engine, PlanThatDoesNotFitInDeviceMemoryIsRefusedBeforeAnyAllocation) {
  Graph g = TinyCnn();
  const Plan plan = SingleDevicePlan(g, "vgpu", "gpu-only");
  VgpuOptions small;
  small.memory_bytes = 64 << 10;  // tiny_cnn's weights alone are larger
  Devices devices(small);
  ASSERT_EQ(devices.vgpu->FreeMemory().value(), small.memory_bytes);
  auto engine = Engine::Create(g, plan, EngineRegistry(), devices.list, {1});
  ASSERT_FALSE(engine.ok());
  EXPECT_EQ(engine.status().code(), StatusCode::kResourceExhausted);
  const std::string& m = engine.status().message();
  EXPECT_NE(m.find("does not fit on vgpu: the plan needs "), std::string::npos) << m;
  EXPECT_NE(m.find(" are free; nothing was allocated"), std::string::npos) << m;
  EXPECT_EQ(devices.vgpu->FreeMemory().value(), small.memory_bytes) << "something was allocated";
  // With room, the same plan compiles, runs, and gives its memory back.
  VgpuOptions roomy;
  roomy.memory_bytes = 64 << 20;
  Devices enough(roomy);
  {
    auto fits = Engine::Create(g, plan, EngineRegistry(), enough.list, {1});
    ASSERT_TRUE(fits.ok()) << fits.status().ToString();
    EXPECT_LT(enough.vgpu->FreeMemory().value(), roomy.memory_bytes);
    const test::Inputs in = test::RandomInputs(g, 2);
    EXPECT_TRUE((*fits)->Run(in.pointers).ok());
  }
  EXPECT_EQ(enough.vgpu->FreeMemory().value(), roomy.memory_bytes);
}

TEST(Engine, KernelFailureMidRunNamesNodeAndDeviceAndNextRunWorks) {
  FailingReluEngine f;
  ASSERT_NO_FATAL_FAILURE(BuildFailingReluEngine(DeviceKind::kVirtualGpu, "vgpu", f));
  const test::Inputs in = test::RandomInputs(f.graph, 1);
  ASSERT_TRUE(f.engine->Run(in.pointers).ok());
  const auto good = test::Outputs(*f.engine);
  for (int round = 0; round < 3; ++round) {
    Status s = RunWithFailingRelu(f, in, "vgpu");
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("injected failure"), std::string::npos) << s.message();
    // Dependent work was skipped, not run on garbage.
    int skipped = 0;
    for (const StepTiming& t : f.engine->timeline()) skipped += !t.ran;
    EXPECT_GT(skipped, 0);
    // Nothing after the failing step on its stream ran, whether the timeline
    // is timed on the worker or by events (the cuda_semantics pass).
    const std::vector<StepTiming> steps = f.engine->timeline();
    const std::string& relu = f.graph.nodes()[f.relu].name;
    auto failing = std::find_if(steps.begin(), steps.end(),
                                [&](const StepTiming& t) { return t.name == relu; });
    ASSERT_NE(failing, steps.end());
    for (auto t = failing + 1; t != steps.end(); ++t) {
      if (t->track != failing->track) continue;
      EXPECT_FALSE(t->ran) << t->name << " ran after " << relu;
    }
    ASSERT_TRUE(f.engine->Run(in.pointers).ok());
    EXPECT_EQ(test::Compare(test::Outputs(*f.engine), good, 0, 0), "");
  }
}

TEST(Engine, CpuStreamFailureSkipsItsLaterStepsAndTheStreamsWaitingOnThem) {
  // A failing CPU step: the calling thread's stream is sticky-failed like a
  // worker stream, so a vgpu step waiting only on a later CPU step (waits are
  // reduced to the newest step per stream) still sees the failure.
  FailingReluEngine f;
  ASSERT_NO_FATAL_FAILURE(BuildFailingReluEngine(DeviceKind::kCpu, "cpu", f));
  const test::Inputs in = test::RandomInputs(f.graph, 1);
  ASSERT_TRUE(f.engine->Run(in.pointers).ok());
  const auto good = test::Outputs(*f.engine);
  Status s = RunWithFailingRelu(f, in, "cpu");
  ASSERT_FALSE(s.ok());
  // Every CPU step after the failing one was skipped, and so was every step
  // of another stream that waits on a CPU step at or after it.
  const std::vector<StepTiming> steps = f.engine->timeline();
  size_t failed = steps.size();
  for (size_t i = 0; i < steps.size(); ++i)
    if (steps[i].name == f.graph.nodes()[f.relu].name) failed = i;
  ASSERT_LT(failed, steps.size());
  int skipped_waiters = 0;
  for (size_t i = failed + 1; i < steps.size(); ++i) {
    if (steps[i].track == steps[failed].track) {
      EXPECT_FALSE(steps[i].ran) << steps[i].name;
    }
    for (int d : f.engine->step_waits(i)) {
      const auto waited = static_cast<size_t>(d);
      if (waited < failed || steps[waited].track != steps[failed].track) continue;
      EXPECT_FALSE(steps[i].ran) << steps[i].name << " ran after a failed wait";
      ++skipped_waiters;
    }
  }
  EXPECT_GT(skipped_waiters, 0);
  ASSERT_TRUE(f.engine->Run(in.pointers).ok());
  EXPECT_EQ(test::Compare(test::Outputs(*f.engine), good, 0, 0), "");
}

TEST(Engine, ForcedOffDeviceFailsTheRunWithUnavailable) {
  Graph g = TinyCnn();
  const Plan plan = test::RandomPlan(g, 11);
  Devices devices;
  auto engine = Engine::Create(g, plan, EngineRegistry(), devices.list, {1});
  ASSERT_TRUE(engine.ok());
  const test::Inputs in = test::RandomInputs(g, 1);
  devices.vgpu->SetForcedOff(true);
  Status s = (*engine)->Run(in.pointers);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
  EXPECT_NE(s.message().find("vgpu"), std::string::npos);
  devices.vgpu->SetForcedOff(false);
  EXPECT_TRUE((*engine)->Run(in.pointers).ok());
}


bool Overlap(const StepTiming& a, const StepTiming& b) {
  return a.ran && b.ran && a.start_us < b.end_us && b.start_us < a.end_us;
}

// Two independent branches from one input, joined by an Add: three 64-channel
// convs on the CPU, three on the (shaped) vgpu.
Graph TwoBranches() {
  GraphBuilder b("two_branches", 3);
  const ValueId x = b.Input("input", {1, 64, 48, 48});
  ValueId cpu = x, vgpu = x;
  for (int i = 0; i < 3; ++i) {
    cpu = b.Conv(cpu, "cpu" + std::to_string(i), {.out_channels = 64, .kernel = 3, .pad = 1});
    vgpu = b.Conv(vgpu, "vgpu" + std::to_string(i), {.out_channels = 64, .kernel = 3, .pad = 1});
  }
  b.Output(b.Add(cpu, vgpu), "output", {1, 64, 48, 48});
  Graph g = std::move(b).Finish();
  EXPECT_TRUE(RunDefaultPasses(g).ok());
  return g;
}

// TwoBranches' "vgpu" convs on the vgpu, the rest on the CPU.
Plan TwoBranchesPlan(const Graph& g) {
  Plan plan = SingleDevicePlan(g, "cpu", "test");
  plan.devices = {"cpu", "vgpu"};
  for (size_t i = 0; i < g.nodes().size(); ++i)
    if (g.nodes()[i].name.find("vgpu") != std::string::npos) plan.nodes[i].device = "vgpu";
  return plan;
}

TEST(Engine, ShapedTimelineShowsCopiesOverlappingComputeAndCpuWithVgpu) {
  Graph g = TwoBranches();
  const Plan plan = TwoBranchesPlan(g);
  VgpuOptions shaped;
  shaped.timing.enabled = true;
  shaped.timing.label = "test (model)";
  shaped.timing.peak_gflops = 40;  // each 170-MFLOP conv >= 4.2 ms
  shaped.timing.copy_gbps = 0.5;   // the 590 KB input >= 1.2 ms
  shaped.timing.copy_latency_us = 200;
  shaped.timing.launch_us = 100;
  Devices devices(shaped);
  auto engine = Engine::Create(g, plan, EngineRegistry(), devices.list, {1});
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  const test::Inputs in = test::RandomInputs(g, 1);
  ASSERT_TRUE((*engine)->Run(in.pointers).ok());  // warm-up
  // The machine is shared and noisy: a worker thread may be descheduled for
  // longer than a whole branch. Overlap must show in one of a few runs.
  bool copy_overlaps_compute = false, cpu_with_vgpu = false;
  std::vector<StepTiming> t;
  for (int attempt = 0; attempt < 8 && !(copy_overlaps_compute && cpu_with_vgpu); ++attempt) {
    ASSERT_TRUE((*engine)->Run(in.pointers).ok());
    t = (*engine)->timeline();
    for (const StepTiming& a : t)
      for (const StepTiming& b : t) {
        if (a.category == "copy" && b.category == "kernel" && Overlap(a, b))
          copy_overlaps_compute = true;
        if (a.category == "kernel" && b.category == "kernel" && a.device == "cpu" &&
            b.device == "vgpu" && Overlap(a, b))
          cpu_with_vgpu = true;
      }
  }
  std::string timeline;
  for (const StepTiming& s : t)
    timeline += s.track + " " + s.name + " " + std::to_string(s.start_us) + ".." +
                std::to_string(s.end_us) + "\n";
  EXPECT_TRUE(copy_overlaps_compute) << timeline;
  EXPECT_TRUE(cpu_with_vgpu) << timeline;
  // Same outputs as the all-CPU run.
  auto ref = Engine::Create(g, SingleDevicePlan(g, "cpu", "ref"), EngineRegistry(), devices.list, {1});
  ASSERT_TRUE(ref.ok());
  ASSERT_TRUE((*ref)->Run(in.pointers).ok());
  EXPECT_EQ(test::Compare(test::Outputs(**engine), test::Outputs(**ref), 1e-4, 1e-3), "");
}

TEST(Engine, PinnedThreadsGiveTheSameOutputsAndTheCallerBackItsCores) {
  Graph g = TwoBranches();
  const Plan plan = TwoBranchesPlan(g);
  Devices devices;
  EngineOptions pinned;
  pinned.pin_threads = true;
  auto engine = Engine::Create(g, plan, EngineRegistry(), devices.list, pinned);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  const CoreSplit split = SplitAllowedCores(1);
  EXPECT_EQ((*engine)->thread_note(), split.usable ? "threads pinned: " + split.description
                                                   : "threads not pinned: fewer than two "
                                                     "cores to split");
  const test::Inputs in = test::RandomInputs(g, 1);
  cpu_set_t before, after;
  ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof before, &before), 0);
  ASSERT_TRUE((*engine)->Run(in.pointers).ok());
  ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof after, &after), 0);
  EXPECT_TRUE(CPU_EQUAL(&before, &after));
  auto ref = Engine::Create(g, SingleDevicePlan(g, "cpu", "ref"), EngineRegistry(), devices.list, {1});
  ASSERT_TRUE(ref.ok());
  EXPECT_EQ((*ref)->thread_note(), "");  // not asked to pin
  // Asked, but an all-CPU plan has no worker thread to keep apart.
  auto alone = Engine::Create(g, SingleDevicePlan(g, "cpu", "ref"), EngineRegistry(),
                              devices.list, pinned);
  ASSERT_TRUE(alone.ok());
  EXPECT_EQ((*alone)->thread_note(),
            "threads not pinned: the plan has no worker thread");
  ASSERT_TRUE((*ref)->Run(in.pointers).ok());
  EXPECT_EQ(test::Compare(test::Outputs(**engine), test::Outputs(**ref), 1e-4, 1e-3), "");
}

TEST(Engine, ChromeTraceHasOneTrackPerStreamAndCopyDirection) {
  Graph g = TinyCnn(2, 32);
  Plan plan = test::RandomPlan(g, 4);
  Devices devices;
  auto engine = Engine::Create(g, plan, EngineRegistry(), devices.list, {1});
  ASSERT_TRUE(engine.ok());
  const test::Inputs in = test::RandomInputs(g, 1);
  ASSERT_TRUE((*engine)->Run(in.pointers).ok());
  TraceWriter trace;
  (*engine)->AppendTrace(trace);
  StatusOr<JsonValue> doc = ParseJson(trace.ToJson());
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  const JsonValue* events = doc->Find("traceEvents");
  ASSERT_TRUE(events != nullptr && events->is_array());
  std::map<double, std::string> track_names;
  int complete = 0;
  std::set<std::string> categories;
  for (const JsonValue& e : events->array()) {
    ASSERT_TRUE(e.is_object());
    const std::string ph = *e.GetString("ph", "");
    ASSERT_TRUE(e.Find("pid") && e.Find("tid") && e.Find("name"));
    if (ph == "M") {
      if (*e.GetString("name", "") == "thread_name")
        track_names[e.Find("tid")->number()] = e.Find("args")->Find("name")->string();
      continue;
    }
    ASSERT_EQ(ph, "X");
    ASSERT_TRUE(e.Find("ts")->is_number() && e.Find("dur")->is_number());
    EXPECT_GE(e.Find("dur")->number(), 0);
    ASSERT_TRUE(e.Find("args") && e.Find("args")->Find("device"));
    categories.insert(*e.GetString("cat", ""));
    EXPECT_TRUE(track_names.count(e.Find("tid")->number()));
    ++complete;
  }
  EXPECT_EQ(static_cast<size_t>(complete), (*engine)->num_steps());
  EXPECT_EQ(categories, (std::set<std::string>{"copy", "kernel"}));
  std::set<std::string> tracks;
  for (const auto& [tid, name] : track_names) tracks.insert(name);
  EXPECT_TRUE(tracks.count("cpu/stream0"));
  EXPECT_TRUE(tracks.count("vgpu/stream0"));
  EXPECT_TRUE(tracks.count("vgpu/h2d"));
  EXPECT_TRUE(tracks.count("vgpu/d2h"));
  // And the writer on its own: file output and escaping.
  TraceWriter w;
  w.Add({"a\"b", "kernel", "t", 1.5, 2.0, {}}).Arg("n", 3.0).Arg("s", "x");
  const std::string path = ::testing::TempDir() + "/braid_trace_test.json";
  ASSERT_TRUE(w.WriteFile(path).ok());
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  StatusOr<JsonValue> parsed = ParseJson(text.str());
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->Find("traceEvents")->array().back().Find("name")->string(), "a\"b");
  std::remove(path.c_str());
  EXPECT_FALSE(w.WriteFile("/nonexistent-dir/x.json").ok());
}

TEST(Engine, OutputsCopiedBackFromADeviceKeepTheirOwnHostBytes) {
  // Three outputs made in the vgpu's own memory space (not host-addressable,
  // as a discrete GPU's): each copy back needs host bytes of its own until
  // the caller reads them. The buffer of the last one copied used to end
  // before it began, and it overwrote the first.
  GraphBuilder b("three_outputs", 5);
  const ValueId x = b.Input("x", {1, 4, 8, 8});
  b.Output(b.Relu(x), "relu", {1, 4, 8, 8});
  b.Output(b.Mul(x, x), "square", {1, 4, 8, 8});
  b.Output(b.Add(x, x), "twice", {1, 4, 8, 8});
  Graph g = std::move(b).Finish();
  ASSERT_TRUE(InferShapes(g).ok());
  Plan plan = SingleDevicePlan(g, "vgpu", "test");
  plan.devices = {"cpu", "vgpu"};
  Devices devices;
  ASSERT_FALSE(devices.list[1].host_addressable);
  auto engine = Engine::Create(g, plan, EngineRegistry(), devices.list, {1});
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  const test::Inputs in = test::RandomInputs(g, 4);
  std::vector<float> relu, square, twice;
  for (float v : in.data[0]) {
    relu.push_back(std::max(v, 0.0f));
    square.push_back(v * v);
    twice.push_back(v + v);
  }
  ASSERT_TRUE((*engine)->Run(in.pointers).ok());
  EXPECT_EQ(test::Compare(test::Outputs(**engine), {relu, square, twice}, 0, 0), "");
}

TEST(Engine, ViewsShareTheirInputsBufferAndMoveNothing) {
  const Graph g = test::ViewsGraph();
  const size_t reshape = NodeIndex(g, "Reshape"), flatten = NodeIndex(g, "Flatten");
  EXPECT_TRUE(RunsAsView(g, g.nodes()[reshape]));
  EXPECT_FALSE(RunsAsView(g, g.nodes()[flatten]));  // reads a graph input
  const test::Inputs in = test::RandomInputs(g, 9);
  const std::vector<float>& x = in.data[0];
  std::vector<float> relu(x.size()), square(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    relu[i] = std::max(x[i], 0.0f);
    square[i] = relu[i] * relu[i];
  }
  // All on the CPU; all on the vgpu (its own memory space: copies in and
  // out); the view on the vgpu and its producer and readers on the CPU.
  for (int layout = 0; layout < 3; ++layout) {
    SCOPED_TRACE("layout " + std::to_string(layout));
    Plan plan = SingleDevicePlan(g, layout == 1 ? "vgpu" : "cpu", "test");
    plan.devices = {"cpu", "vgpu"};
    if (layout == 2) plan.nodes[reshape].device = "vgpu";
    Devices devices;
    auto engine = Engine::Create(g, plan, EngineRegistry(), devices.list, {1});
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    for (const StepTiming& t : (*engine)->timeline()) {
      if (t.category != "kernel") continue;
      const bool is_reshape = t.name == g.nodes()[reshape].name;
      EXPECT_EQ(t.view, is_reshape) << t.name;
      if (is_reshape) {
        EXPECT_EQ(t.bytes, 0u);  // it writes nothing
      }
    }
    for (const NodePlacement& p : (*engine)->placements())
      EXPECT_EQ(p.implementation == "view", p.node == g.nodes()[reshape].name) << p.node;
    for (int run = 0; run < 2; ++run) {
      ASSERT_TRUE((*engine)->Run(in.pointers).ok());
      const std::vector<std::vector<float>> got = test::Outputs(**engine);
      EXPECT_EQ(test::Compare(got, {relu, square, x}, 0, 0), "");
    }
  }
}

TEST(Engine, ThousandMixedRunsWithoutMemoryGrowth) {
  Graph g = TinyCnn(1, 16);
  const Plan plan = test::RandomPlan(g, 21);
  Devices devices;
  auto engine = Engine::Create(g, plan, EngineRegistry(), devices.list, {1});
  ASSERT_TRUE(engine.ok());
  ASSERT_GT((*engine)->num_copy_steps(), 0u);
  const test::Inputs in = test::RandomInputs(g, 1);
  for (int i = 0; i < 50; ++i) ASSERT_TRUE((*engine)->Run(in.pointers).ok());
  const size_t before = LiveHeapBytes();
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE((*engine)->Run(in.pointers).ok());
  const size_t after = LiveHeapBytes();
  // Live heap, not RSS: a leak of even a few bytes per run would show.
  EXPECT_LT(after, before + 16 * 1024) << before << " -> " << after;
}

}  // namespace
}  // namespace braid
