// The sequential executor runs views (RunsAsView) in place: their output is
// their input's arena slot and no kernel runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "graph/op_schema.h"
#include "graph/passes/passes.h"
#include "kernels/cpu/cpu_device.h"
#include "models/graph_builder.h"
#include "runtime/executor.h"

namespace braid {
namespace {

std::vector<float> RandomVector(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

TEST(ExecutorViews, AChainOfViewsKeepsOneBuffer) {
  // relu(x) through Reshape, Flatten and Unsqueeze to the output: one 1 KB
  // slot in all (a copy per view would need at least two).
  GraphBuilder b("view_chain", 3);
  const ValueId x = b.Input("x", {1, 4, 8, 8});
  const ValueId flat = b.Flatten(b.Reshape(b.Relu(x), {1, 4, 64}), 1);
  const ValueId out = b.Op("Unsqueeze", {flat, b.ConstantI64("axes", {1}, {0})});
  b.Output(out, "y", {1, 1, 256});
  Graph g = std::move(b).Finish();
  ASSERT_TRUE(InferShapes(g).ok());
  for (const Node& n : g.nodes()) EXPECT_EQ(RunsAsView(g, n), n.op_type != "Relu") << n.name;
  KernelRegistry registry;
  RegisterCpuKernels(registry);
  std::unique_ptr<Device> cpu = CreateCpuDevice();
  StatusOr<std::unique_ptr<Executor>> e = Executor::Create(std::move(g), registry, *cpu, {});
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ((*e)->arena_bytes(), 256 * sizeof(float));
  const std::vector<float> in = RandomVector(256, 3);
  const void* inputs[] = {in.data()};
  for (int run = 0; run < 2; ++run) {
    ASSERT_TRUE((*e)->Run(inputs).ok());
    const auto* y = static_cast<const float*>((*e)->output(0));
    for (size_t i = 0; i < in.size(); ++i) ASSERT_EQ(y[i], std::max(in[i], 0.0f)) << i;
  }
}

TEST(ExecutorViews, AViewsInputReadAfterItAndAGraphInputViewStayCorrect) {
  // relu(x) viewed, then relu(x)^2 read after the view, and a Flatten of
  // the graph input (copied: not a view).
  GraphBuilder b("views", 5);
  const ValueId x = b.Input("x", {1, 4, 8, 8});
  const ValueId a = b.Relu(x);
  b.Output(b.Relu(b.Reshape(a, {1, 256})), "c", {1, 256});
  b.Output(b.Mul(a, a), "e", {1, 4, 8, 8});
  b.Output(b.Flatten(x), "f", {1, 256});
  Graph g = std::move(b).Finish();
  ASSERT_TRUE(InferShapes(g).ok());
  KernelRegistry registry;
  RegisterCpuKernels(registry);
  std::unique_ptr<Device> cpu = CreateCpuDevice();
  StatusOr<std::unique_ptr<Executor>> e = Executor::Create(std::move(g), registry, *cpu, {});
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  const std::vector<float> in = RandomVector(256, 5);
  const void* inputs[] = {in.data()};
  ASSERT_TRUE((*e)->Run(inputs).ok());
  const auto* c = static_cast<const float*>((*e)->output(0));
  const auto* sq = static_cast<const float*>((*e)->output(1));
  const auto* f = static_cast<const float*>((*e)->output(2));
  for (size_t i = 0; i < in.size(); ++i) {
    const float relu = std::max(in[i], 0.0f);
    ASSERT_EQ(c[i], relu) << i;
    ASSERT_EQ(sq[i], relu * relu) << i;
    ASSERT_EQ(f[i], in[i]) << i;
  }
}

}  // namespace
}  // namespace braid
