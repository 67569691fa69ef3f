// The Session over the engine: device lists, policies, explicit plans and
// plan files, placements with slices, traces, and re-planning when a device
// is forced off.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "graph/json.h"
#include "runtime/session_internal.h"
#include "tests/engine/engine_test_util.h"

namespace braid {
namespace {

std::shared_ptr<const KernelRegistry> Registry() {
  auto r = std::make_shared<KernelRegistry>();
  RegisterCpuKernels(*r);
  RegisterVgpuKernels(*r);
  return r;
}

Graph TinyCnn() {
  StatusOr<Graph> g = LoadGraphForExecution("builtin:tiny_cnn");
  EXPECT_TRUE(g.ok());
  // Resize to 32x32 but keep the batch symbolic (the session binds it).
  for (ValueId in : g->inputs()) {
    g->value(in).shape[2] = Dim(32);
    g->value(in).shape[3] = Dim(32);
  }
  for (Value& v : g->values())
    if (!v.constant && v.producer != kNoNode) v.has_shape = false;
  EXPECT_TRUE(InferShapes(*g).ok());
  return std::move(*g);
}

struct Opened {
  std::unique_ptr<Session> session;
  VgpuDevice* vgpu = nullptr;  // owned by the session
};

Opened Open(const SessionOptions& options, SessionInternals internals = {}) {
  std::vector<SessionDevice> devices(2);
  devices[0].device = CreateCpuDevice();
  auto vgpu = test::SuiteVgpu();
  Opened o;
  o.vgpu = vgpu.get();
  devices[1].device = std::move(vgpu);
  auto s = CreateSession(TinyCnn(), options, Registry(), std::move(devices), std::move(internals));
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  if (s.ok()) o.session = std::move(*s);
  return o;
}

std::vector<float> RunOnce(Session& s, std::vector<float>& input) {
  EXPECT_TRUE(s.SetInput("input", Tensor::Borrow(DataType::kF32, {2, 3, 32, 32}, input.data())).ok());
  Status st = s.Run();
  EXPECT_TRUE(st.ok()) << st.ToString();
  if (!st.ok()) return {};
  StatusOr<Tensor> out = s.GetOutput("output");
  EXPECT_TRUE(out.ok());
  return std::vector<float>(out->data<float>(), out->data<float>() + out->elements());
}

std::vector<float> Input() {
  std::vector<float> x(2 * 3 * 32 * 32);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7919) % 200) / 100.0f - 1.0f;
  return x;
}

std::vector<float> CpuOnly() {
  SessionOptions options;
  options.num_threads = 1;
  Opened o = Open(options);
  std::vector<float> x = Input();
  return RunOnce(*o.session, x);
}

TEST(EngineSession, GpuOnlyPolicyRunsOnVgpuWithTheSameOutputs) {
  SessionOptions options;
  options.num_threads = 1;
  options.devices = {"cpu", "vgpu"};
  options.policy = "gpu-only";
  Opened o = Open(options);
  std::vector<float> x = Input();
  const std::vector<float> got = RunOnce(*o.session, x);
  EXPECT_EQ(test::Compare({got}, {CpuOnly()}, 1e-4, 1e-3), "");
  for (const NodePlacement& p : o.session->placements()) EXPECT_EQ(p.device, "vgpu") << p.node;
}

TEST(EngineSession, ExplicitPlanWithSlicesAndTraceFile) {
  SessionOptions options;
  options.num_threads = 1;
  options.devices = {"cpu", "vgpu"};
  options.trace = true;
  // A plan file, as `braid plan --save` writes it.
  StatusOr<Graph> g = test::StaticGraph(TinyCnn(), 2, 0);
  ASSERT_TRUE(g.ok());
  Plan plan = test::RandomPlan(*g, 9, false);
  for (size_t i = 0; i < g->nodes().size(); ++i)
    if (g->nodes()[i].op_type == "Gemm")
      plan.nodes[i].slice = SliceSpec{SliceAxis::kBatch, plan.nodes[i].device == "cpu" ? "vgpu" : "cpu", 0.5};
  const std::string plan_path = ::testing::TempDir() + "/engine_session_plan.json";
  {
    std::ofstream f(plan_path);
    f << PlanToJson(plan);
  }
  options.plan_file = plan_path;
  Opened o = Open(options);
  std::vector<float> x = Input();
  const std::vector<float> got = RunOnce(*o.session, x);
  EXPECT_EQ(test::Compare({got}, {CpuOnly()}, 1e-4, 1e-3), "");
  int gemm_parts = 0;
  for (const NodePlacement& p : o.session->placements())
    if (p.op_type == "Gemm") {
      EXPECT_FALSE(p.slice.empty()) << p.node;
      EXPECT_NE(p.slice.find("batch ["), std::string::npos) << p.slice;
      ++gemm_parts;
    }
  EXPECT_EQ(gemm_parts, 2);
  const std::string trace_path = ::testing::TempDir() + "/engine_session_trace.json";
  ASSERT_TRUE(o.session->WriteTrace(trace_path).ok());
  std::ifstream f(trace_path);
  std::stringstream text;
  text << f.rdbuf();
  StatusOr<JsonValue> doc = ParseJson(text.str());
  ASSERT_TRUE(doc.ok());
  EXPECT_GT(doc->Find("traceEvents")->array().size(), 10u);
  std::remove(plan_path.c_str());
  std::remove(trace_path.c_str());
}

TEST(EngineSession, PlanErrorsNameTheProblem) {
  SessionOptions options;
  options.plan_file = "/nonexistent/plan.json";
  std::vector<SessionDevice> devices(1);
  devices[0].device = CreateCpuDevice();
  auto s = CreateSession(TinyCnn(), options, Registry(), std::move(devices));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("/nonexistent/plan.json"), std::string::npos);

  // A plan naming a device the session did not open.
  StatusOr<Graph> g = test::StaticGraph(TinyCnn(), 2, 0);
  ASSERT_TRUE(g.ok());
  SessionInternals internals;
  internals.plan = test::RandomPlan(*g, 1);
  SessionOptions cpu_only;
  std::vector<SessionDevice> just_cpu(1);
  just_cpu[0].device = CreateCpuDevice();
  auto session = CreateSession(TinyCnn(), cpu_only, Registry(), std::move(just_cpu), internals);
  ASSERT_TRUE(session.ok());
  std::vector<float> x = Input();
  ASSERT_TRUE((*session)->SetInput("input", Tensor::Borrow(DataType::kF32, {2, 3, 32, 32}, x.data())).ok());
  Status st = (*session)->Run();
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find("'vgpu'"), std::string::npos) << st.message();
}

TEST(EngineSession, ForcedOffDeviceIsDroppedAndTheModelReplannedWithANotice) {
  SessionOptions options;
  options.num_threads = 1;
  options.devices = {"cpu", "vgpu"};
  options.policy = "gpu-only";
  Opened o = Open(options);
  std::vector<float> x = Input();
  const std::vector<float> first = RunOnce(*o.session, x);
  EXPECT_TRUE(o.session->notices().empty());
  o.vgpu->SetForcedOff(true);
  const std::vector<float> second = RunOnce(*o.session, x);
  EXPECT_EQ(test::Compare({second}, {first}, 1e-4, 1e-3), "");
  ASSERT_EQ(o.session->notices().size(), 1u);
  EXPECT_NE(o.session->notices()[0].find("device 'vgpu' became unavailable"), std::string::npos)
      << o.session->notices()[0];
  EXPECT_NE(o.session->notices()[0].find("re-planned onto cpu"), std::string::npos);
  for (const NodePlacement& p : o.session->placements()) EXPECT_EQ(p.device, "cpu");
  // And it keeps working.
  EXPECT_EQ(test::Compare({RunOnce(*o.session, x)}, {first}, 1e-4, 1e-3), "");
}

TEST(EngineSession, ExplicitPlanMovesWorkOffAForcedOffDevice) {
  StatusOr<Graph> g = test::StaticGraph(TinyCnn(), 2, 0);
  ASSERT_TRUE(g.ok());
  SessionInternals internals;
  internals.plan = test::RandomPlan(*g, 5);
  SessionOptions options;
  options.num_threads = 1;
  options.devices = {"cpu", "vgpu"};
  Opened o = Open(options, internals);
  o.vgpu->SetForcedOff(true);  // before the first Run: planning itself fails over
  std::vector<float> x = Input();
  const std::vector<float> got = RunOnce(*o.session, x);
  EXPECT_EQ(test::Compare({got}, {CpuOnly()}, 1e-4, 1e-3), "");
  EXPECT_EQ(o.session->notices().size(), 1u);
}

TEST(EngineSession, OptionsNameUnknownDevicesPoliciesAndDuplicates) {
  SessionOptions options;
  options.devices = {"cpu", "cpu"};
  EXPECT_EQ(ValidateSessionOptions(options).code(), StatusCode::kInvalidArgument);
  options.devices = {"cpu", "npu"};
  EXPECT_NE(ValidateSessionOptions(options).message().find("'npu'"), std::string::npos);
  options.devices = {"cpu", "cuda:1"};
  EXPECT_TRUE(ValidateSessionOptions(options).ok());
  options.policy = "nope";
  EXPECT_NE(ValidateSessionOptions(options).message().find("gpu-only"), std::string::npos);
}

}  // namespace
}  // namespace braid
