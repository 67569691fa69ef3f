// The engine's sequential path (Engine::RunSequential): a plan whose every
// step runs on the calling thread. It is the Session's CPU fast path, so it
// must give the outputs of the general path, time steps only when asked,
// report failures like any Run and start the next Run clean.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <span>

#include "graph/op_schema.h"
#include "graph/passes/shape_inference.h"
#include "models/graph_builder.h"
#include "tests/engine/engine_test_util.h"

namespace braid {
namespace {

using test::Devices;
using test::EngineRegistry;

Graph TinyCnn() {
  StatusOr<Graph> g = test::StaticModel("tiny_cnn", 2, 32);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return g.ok() ? std::move(*g) : Graph();
}

EngineOptions Options(bool step_times) {
  EngineOptions options;
  options.step_times = step_times;
  return options;
}

TEST(SequentialPath, OnlyPlansOnTheCallingThreadRunSequentiallyAndAllGiveTheSameOutputs) {
  const Graph g = TinyCnn();
  const test::Inputs in = test::RandomInputs(g, 7);
  Devices devices;
  // All on CPU stream 0, with a vgpu open but unused: sequential.
  Plan cpu = SingleDevicePlan(g, "cpu", "test");
  cpu.devices = {"cpu", "vgpu"};
  auto seq = Engine::Create(g, cpu, EngineRegistry(), devices.list, {1});
  ASSERT_TRUE(seq.ok()) << seq.status().ToString();
  EXPECT_TRUE((*seq)->sequential());
  // The same nodes on a CPU worker stream: the general path (a worker thread).
  Plan worker = cpu;
  for (NodePlan& p : worker.nodes) p.stream = 1;
  auto general = Engine::Create(g, worker, EngineRegistry(), devices.list, {1});
  ASSERT_TRUE(general.ok()) << general.status().ToString();
  EXPECT_FALSE((*general)->sequential());
  auto created = Engine::CreateSequential(g, EngineRegistry(), *devices.cpu, {1});
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_TRUE((*created)->sequential());
  ASSERT_TRUE((*general)->Run(in.pointers).ok());
  const auto want = test::Outputs(**general);
  double magnitude = 0;
  for (const auto& o : want)
    for (float v : o) magnitude += std::abs(v);
  ASSERT_GT(magnitude, 0);
  for (int run = 0; run < 2; ++run) {
    ASSERT_TRUE((*seq)->Run(in.pointers).ok());
    EXPECT_EQ(test::Compare(test::Outputs(**seq), want, 0, 0), "") << "run " << run;
    ASSERT_TRUE((*created)->Run(in.pointers).ok());
    EXPECT_EQ(test::Compare(test::Outputs(**created), want, 0, 0), "") << "run " << run;
  }
  EXPECT_EQ((*created)->placements().size(), g.nodes().size());
  for (const NodePlacement& p : (*created)->placements()) EXPECT_EQ(p.device, "cpu") << p.node;
}

TEST(SequentialPath, StepsAreTimedOnlyWithStepTimes) {
  const Graph g = TinyCnn();
  const test::Inputs in = test::RandomInputs(g, 3);
  std::unique_ptr<Device> cpu = CreateCpuDevice();
  for (bool step_times : {true, false}) {
    auto e = Engine::CreateSequential(g, EngineRegistry(), *cpu, Options(step_times));
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    ASSERT_TRUE((*e)->Run(in.pointers).ok());
    const std::vector<StepTiming> steps = (*e)->timeline();
    ASSERT_EQ(steps.size(), g.nodes().size());
    double busy = -1;
    (*e)->DeviceBusyUs(std::span<double>(&busy, 1));
    if (!step_times) {
      for (const StepTiming& t : steps) EXPECT_FALSE(t.ran) << t.name;
      EXPECT_EQ(busy, 0);
      continue;
    }
    // In order, one after another, on the calling thread's track.
    double previous_end = 0;
    double sum = 0;
    for (const StepTiming& t : steps) {
      EXPECT_TRUE(t.ran) << t.name;
      EXPECT_EQ(t.track, "cpu/stream0") << t.name;
      EXPECT_GE(t.start_us, previous_end) << t.name;
      EXPECT_GE(t.end_us, t.start_us) << t.name;
      previous_end = t.end_us;
      sum += t.end_us - t.start_us;
    }
    EXPECT_GT(busy, 0);
    EXPECT_NEAR(busy, sum, 1e-6 * sum + 1e-9);
  }
}

// FailOnDemandRelu (engine_test_util.h) fails while this is set.
std::atomic<bool> g_fail{false};

TEST(SequentialPath, AFailedStepNamesTheNodeStopsTheRunAndTheNextRunIsClean) {
  // Unfused, so Relu nodes exist.
  StatusOr<Graph> raw = LoadGraphForExecution("builtin:tiny_cnn", /*fuse=*/false);
  ASSERT_TRUE(raw.ok()) << raw.status().ToString();
  StatusOr<Graph> g = test::StaticGraph(std::move(*raw), 1, 32);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  size_t relu = g->nodes().size();
  for (size_t i = 0; i < g->nodes().size() && relu == g->nodes().size(); ++i)
    if (g->nodes()[i].op_type == "Relu") relu = i;
  ASSERT_LT(relu, g->nodes().size());
  ASSERT_LT(relu + 1, g->nodes().size()) << "the failing Relu should not be the last step";
  KernelRegistry registry;
  RegisterCpuKernels(registry);
  registry.Register({"Relu", DeviceKind::kCpu, "fail-on-demand", 100,
                     [] { return std::make_unique<test::FailOnDemandRelu>(&g_fail); }});
  std::unique_ptr<Device> cpu = CreateCpuDevice();
  const test::Inputs in = test::RandomInputs(*g, 5);
  for (bool step_times : {true, false}) {
    auto e = Engine::CreateSequential(*g, registry, *cpu, Options(step_times));
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    ASSERT_TRUE((*e)->sequential());
    ASSERT_TRUE((*e)->Run(in.pointers).ok());
    const auto good = test::Outputs(**e);
    for (int round = 0; round < 2; ++round) {
      g_fail = true;
      Status s = (*e)->Run(in.pointers);
      g_fail = false;
      EXPECT_EQ(s.code(), StatusCode::kInternal);
      // One device: the node alone names the step (the Session's message).
      EXPECT_EQ(s.message(), "node '" + g->nodes()[relu].name + "' (Relu): injected failure");
      EXPECT_EQ((*e)->failed_device(), "cpu");
      if (step_times) {
        const std::vector<StepTiming> steps = (*e)->timeline();
        for (size_t i = 0; i < steps.size(); ++i)
          EXPECT_EQ(steps[i].ran, i <= relu) << steps[i].name;
      }
      ASSERT_TRUE((*e)->Run(in.pointers).ok());
      EXPECT_EQ((*e)->failed_device(), "");
      EXPECT_EQ(test::Compare(test::Outputs(**e), good, 0, 0), "");
    }
  }
}

TEST(SequentialPath, ViewsRunInPlaceUnlessAskedToCopy) {
  // relu(x) through Reshape, Flatten and Unsqueeze (views) to the output.
  GraphBuilder b("view_chain", 3);
  const ValueId x = b.Input("x", {1, 4, 8, 8});
  const ValueId flat = b.Flatten(b.Reshape(b.Relu(x), {1, 4, 64}), 1);
  b.Output(b.Op("Unsqueeze", {flat, b.ConstantI64("axes", {1}, {0})}), "y", {1, 1, 256});
  Graph g = std::move(b).Finish();
  ASSERT_TRUE(InferShapes(g).ok());
  const test::Inputs in = test::RandomInputs(g, 9);
  std::unique_ptr<Device> cpu = CreateCpuDevice();
  std::vector<std::vector<std::vector<float>>> outputs;
  std::vector<size_t> arena;
  for (bool in_place : {true, false}) {
    EngineOptions options;
    options.views_in_place = in_place;
    auto e = Engine::CreateSequential(g, EngineRegistry(), *cpu, options);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    int views = 0;
    for (const NodePlacement& p : (*e)->placements()) views += p.implementation == "view";
    if (in_place) {
      EXPECT_GT(views, 0);
    } else {
      EXPECT_EQ(views, 0);
    }
    ASSERT_TRUE((*e)->Run(in.pointers).ok());
    outputs.push_back(test::Outputs(**e));
    arena.push_back((*e)->arena_bytes());
  }
  EXPECT_EQ(test::Compare(outputs[0], outputs[1], 0, 0), "");
  EXPECT_EQ(arena[0], 256 * sizeof(float)) << "views in place share relu's buffer";
  EXPECT_GT(arena[1], arena[0]) << "copied views need buffers of their own";
}

TEST(SequentialPath, CreateSequentialNeedsTheHostCpu) {
  const Graph g = TinyCnn();
  std::unique_ptr<VgpuDevice> vgpu = CreateVgpuDevice();
  auto e = Engine::CreateSequential(g, EngineRegistry(), *vgpu, {1});
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(e.status().message().find("the first device must be the host CPU"), std::string::npos)
      << e.status().message();
  std::unique_ptr<Device> cpu = CreateCpuDevice();
  auto zero = Engine::CreateSequential(g, EngineRegistry(), *cpu, {0});
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace braid
