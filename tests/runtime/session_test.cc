// Session behaviour on a two-node graph with test kernels: binding and its
// errors, re-planning on a new batch, outputs that alias inputs/constants,
// NaN/Inf, placements and fallbacks, kernel and allocation failures,
// options, and the one-Run-at-a-time contract.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <thread>
#include <vector>

#include "runtime/session_internal.h"
#include "tests/runtime/test_kernels.h"

namespace braid {
namespace {

using test::AddReluGraph;
using test::TestRegistry;

std::unique_ptr<Session> MakeSession(Graph graph,
                                     std::shared_ptr<KernelRegistry> registry = TestRegistry(),
                                     std::unique_ptr<Device> device = CreateCpuDevice()) {
  SessionOptions options;
  options.num_threads = 1;
  StatusOr<std::unique_ptr<Session>> s =
      CreateSession(std::move(graph), options, std::move(registry), std::move(device));
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::move(*s) : nullptr;
}

std::vector<float> RandomNonZero(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> magnitude(0.1f, 2.0f);
  std::bernoulli_distribution negative(0.5);
  std::vector<float> v(n);
  for (float& x : v) x = negative(rng) ? -magnitude(rng) : magnitude(rng);
  return v;
}

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Binds x and y of batch n, runs, and checks out = relu(x + y) elementwise.
void RunAndCheck(Session& session, int64_t n, uint32_t seed) {
  std::vector<float> x = RandomNonZero(static_cast<size_t>(n * 4), seed);
  std::vector<float> y = RandomNonZero(static_cast<size_t>(n * 4), seed + 1000);
  ASSERT_TRUE(session.SetInput("x", Tensor::Borrow(DataType::kF32, {n, 4}, x.data())).ok());
  ASSERT_TRUE(session.SetInput("y", Tensor::Borrow(DataType::kF32, {n, 4}, y.data())).ok());
  Status s = session.Run();
  ASSERT_TRUE(s.ok()) << s.ToString();
  StatusOr<Tensor> out = session.GetOutput("out");
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->dims(), (std::vector<int64_t>{n, 4}));
  for (size_t i = 0; i < x.size(); ++i)
    ASSERT_EQ(out->data<float>()[i], std::max(x[i] + y[i], 0.0f)) << "element " << i;
}

TEST(Session, InputsAndOutputsReportSymbols) {
  auto session = MakeSession(AddReluGraph(true));
  ASSERT_NE(session, nullptr);
  ASSERT_EQ(session->inputs().size(), 2u);
  const TensorInfo& x = session->inputs()[0];
  EXPECT_EQ(x.name, "x");
  EXPECT_EQ(x.dtype, DataType::kF32);
  EXPECT_EQ(x.dims, (std::vector<int64_t>{-1, 4}));
  EXPECT_EQ(x.symbols, (std::vector<std::string>{"N", ""}));
  EXPECT_EQ(x.ToString(), "x: f32[N,4]");
  ASSERT_EQ(session->outputs().size(), 3u);
  EXPECT_EQ(session->outputs()[0].ToString(), "out: f32[N,4]");
  EXPECT_EQ(session->outputs()[2].ToString(), "c: f32[2]");
  EXPECT_TRUE(session->placements().empty());  // nothing planned yet
  EXPECT_EQ(session->planned_peak_bytes(), 0u);
}

TEST(Session, RunsAndReplansOnNewBatch) {
  auto session = MakeSession(AddReluGraph());
  ASSERT_NE(session, nullptr);
  RunAndCheck(*session, 1, 1);
  const size_t peak1 = session->planned_peak_bytes();
  // sum (16 bytes) and out (16 bytes) are live together at step 1.
  EXPECT_EQ(peak1, 128u);
  RunAndCheck(*session, 3, 2);
  EXPECT_EQ(session->planned_peak_bytes(), 128u);  // 48 bytes each, aligned to 64
  RunAndCheck(*session, 40, 3);
  EXPECT_EQ(session->planned_peak_bytes(), 2u * 640);
  RunAndCheck(*session, 40, 4);  // same shapes: same plan
  RunAndCheck(*session, 1, 5);
  EXPECT_EQ(session->planned_peak_bytes(), peak1);
}

TEST(Session, UnknownInputListsTheModelsInputs) {
  auto session = MakeSession(AddReluGraph());
  std::vector<float> x(8, 1.0f);
  Status s = session->SetInput("image", Tensor::Borrow(DataType::kF32, {2, 4}, x.data()));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "'image'")) << s.message();
  EXPECT_TRUE(Contains(s.message(), "x: f32[N,4], y: f32[N,4]")) << s.message();
}

TEST(Session, WrongDtypeRankAndDimShowExpectedAndGiven) {
  auto session = MakeSession(AddReluGraph());
  std::vector<int64_t> ints(8, 1);
  Status s = session->SetInput("x", Tensor::Borrow(DataType::kI64, {2, 4}, ints.data()));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "expected x: f32[N,4], given i64[2,4]")) << s.message();

  std::vector<float> x(24, 1.0f);
  s = session->SetInput("x", Tensor::Borrow(DataType::kF32, {2, 3, 4}, x.data()));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "given f32[2,3,4]")) << s.message();
  EXPECT_TRUE(Contains(s.message(), "rank 3 instead of 2")) << s.message();

  s = session->SetInput("x", Tensor::Borrow(DataType::kF32, {2, 5}, x.data()));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "dim 1 must be 4")) << s.message();

  s = session->SetInput("x", Tensor::Borrow(DataType::kF32, {0, 4}, x.data()));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "at least 1")) << s.message();

  s = session->SetInput("x", Tensor::Borrow(DataType::kF32, {2, 4}, nullptr));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "null")) << s.message();
}

TEST(Session, SymbolsMustAgreeAcrossInputs) {
  auto session = MakeSession(AddReluGraph());
  std::vector<float> a(12, 1.0f);
  ASSERT_TRUE(session->SetInput("x", Tensor::Borrow(DataType::kF32, {2, 4}, a.data())).ok());
  Status s = session->SetInput("y", Tensor::Borrow(DataType::kF32, {3, 4}, a.data()));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "symbol N = 3 here, but input 'x' was set with N = 2"))
      << s.message();

  // After a Run, changing the batch starts a new round: x alone may take a
  // new N, but running before y follows is an error naming both.
  ASSERT_TRUE(session->SetInput("y", Tensor::Borrow(DataType::kF32, {2, 4}, a.data())).ok());
  ASSERT_TRUE(session->Run().ok());
  ASSERT_TRUE(session->SetInput("x", Tensor::Borrow(DataType::kF32, {3, 4}, a.data())).ok());
  s = session->Run();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "disagree on symbol N")) << s.message();
  EXPECT_TRUE(Contains(s.message(), "'x' has 3")) << s.message();
  EXPECT_TRUE(Contains(s.message(), "'y' has 2")) << s.message();
  ASSERT_TRUE(session->SetInput("y", Tensor::Borrow(DataType::kF32, {3, 4}, a.data())).ok());
  EXPECT_TRUE(session->Run().ok());
}

TEST(Session, MissingInputIsNamed) {
  auto session = MakeSession(AddReluGraph());
  std::vector<float> a(8, 1.0f);
  ASSERT_TRUE(session->SetInput("x", Tensor::Borrow(DataType::kF32, {2, 4}, a.data())).ok());
  Status s = session->Run();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "input 'y' was not set")) << s.message();
  EXPECT_TRUE(Contains(s.message(), "y: f32[N,4]")) << s.message();
}

TEST(Session, GetOutputErrors) {
  auto session = MakeSession(AddReluGraph());
  StatusOr<Tensor> out = session->GetOutput("out");
  EXPECT_EQ(out.status().code(), StatusCode::kFailedPrecondition);
  out = session->GetOutput("logits");
  EXPECT_EQ(out.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Contains(out.status().message(), "out: f32[N,4]")) << out.status().message();
}

TEST(Session, NanAndInfFlowThrough) {
  auto session = MakeSession(AddReluGraph());
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x = {nan, inf, -inf, inf, 1.0f, -1.0f, 0.5f, nan};
  std::vector<float> y = {1.0f, 1.0f, 1.0f, -inf, 2.0f, 3.0f, -inf, -1.0f};
  ASSERT_TRUE(session->SetInput("x", Tensor::Borrow(DataType::kF32, {2, 4}, x.data())).ok());
  ASSERT_TRUE(session->SetInput("y", Tensor::Borrow(DataType::kF32, {2, 4}, y.data())).ok());
  ASSERT_TRUE(session->Run().ok());
  StatusOr<Tensor> out = session->GetOutput("out");
  ASSERT_TRUE(out.ok());
  const float* o = out->data<float>();
  EXPECT_TRUE(std::isnan(o[0]));
  EXPECT_EQ(o[1], inf);
  EXPECT_EQ(o[2], 0.0f);
  EXPECT_TRUE(std::isnan(o[3]));  // inf + -inf
  EXPECT_EQ(o[4], 3.0f);
  EXPECT_EQ(o[5], 2.0f);
  EXPECT_EQ(o[6], 0.0f);
  EXPECT_TRUE(std::isnan(o[7]));
}

TEST(Session, OutputsAliasingInputsAndConstantsAreCopies) {
  auto session = MakeSession(AddReluGraph(true));
  std::vector<float> x = RandomNonZero(8, 7), y = RandomNonZero(8, 8);
  ASSERT_TRUE(session->SetInput("x", Tensor::Borrow(DataType::kF32, {2, 4}, x.data())).ok());
  ASSERT_TRUE(session->SetInput("y", Tensor::Borrow(DataType::kF32, {2, 4}, y.data())).ok());
  ASSERT_TRUE(session->Run().ok());
  StatusOr<Tensor> x_out = session->GetOutput("x");
  ASSERT_TRUE(x_out.ok());
  EXPECT_NE(x_out->raw_data(), x.data());  // session memory, not the caller's
  EXPECT_EQ(x_out->dims(), (std::vector<int64_t>{2, 4}));
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(x_out->data<float>()[i], x[i]);
  StatusOr<Tensor> c = session->GetOutput("c");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->dims(), (std::vector<int64_t>{2}));
  EXPECT_EQ(c->data<float>()[0], 1.5f);
  EXPECT_EQ(c->data<float>()[1], -2.5f);
  // The out values must not have been overwritten by the copies.
  StatusOr<Tensor> out = session->GetOutput("out");
  ASSERT_TRUE(out.ok());
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(out->data<float>()[i], std::max(x[i] + y[i], 0.0f));
}

TEST(Session, PlacementsListFallbacksWithReasons) {
  auto registry = TestRegistry();
  registry->Register(test::Entry<test::DecliningKernel>("Relu", "fast", 20));
  auto session = MakeSession(AddReluGraph(), registry);
  RunAndCheck(*session, 2, 11);
  std::vector<NodePlacement> placements = session->placements();
  ASSERT_EQ(placements.size(), 2u);
  EXPECT_EQ(placements[0].node, "add");
  EXPECT_EQ(placements[0].op_type, "Add");
  EXPECT_EQ(placements[0].device, "cpu");
  EXPECT_EQ(placements[0].implementation, "test");
  EXPECT_FALSE(placements[0].fallback);
  EXPECT_TRUE(placements[0].reason.empty());
  EXPECT_EQ(placements[1].node, "relu");
  EXPECT_EQ(placements[1].implementation, "test");
  EXPECT_TRUE(placements[1].fallback);
  EXPECT_EQ(placements[1].reason, "fast: node 'relu' (Relu): fast path needs 16 elements");
}

TEST(Session, MissingKernelFailsPlanningNamingTheNode) {
  auto registry = std::make_shared<KernelRegistry>();
  registry->Register(test::Entry<test::AddKernel>("Add", "test", 0));
  auto session = MakeSession(AddReluGraph(), registry);
  std::vector<float> a(8, 1.0f);
  ASSERT_TRUE(session->SetInput("x", Tensor::Borrow(DataType::kF32, {2, 4}, a.data())).ok());
  ASSERT_TRUE(session->SetInput("y", Tensor::Borrow(DataType::kF32, {2, 4}, a.data())).ok());
  Status s = session->Run();
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_TRUE(Contains(s.message(), "node 'relu' (Relu)")) << s.message();
  EXPECT_TRUE(Contains(s.message(), "x=f32[2,4]")) << s.message();
  EXPECT_EQ(session->GetOutput("out").status().code(), StatusCode::kFailedPrecondition);
}

TEST(Session, KernelRunErrorNamesTheNode) {
  auto registry = TestRegistry();
  registry->Register(test::Entry<test::FailingReluKernel>("Relu", "broken", 50));
  auto session = MakeSession(AddReluGraph(), registry);
  std::vector<float> a(8, 1.0f);
  ASSERT_TRUE(session->SetInput("x", Tensor::Borrow(DataType::kF32, {2, 4}, a.data())).ok());
  ASSERT_TRUE(session->SetInput("y", Tensor::Borrow(DataType::kF32, {2, 4}, a.data())).ok());
  Status s = session->Run();
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_EQ(s.message(), "node 'relu' (Relu): test kernel failure");
  EXPECT_EQ(session->GetOutput("out").status().code(), StatusCode::kFailedPrecondition);
}

TEST(Session, AllocationFailureIsResourceExhausted) {
  auto session =
      MakeSession(AddReluGraph(), TestRegistry(), std::make_unique<test::ExhaustedDevice>());
  std::vector<float> a(8, 1.0f);
  ASSERT_TRUE(session->SetInput("x", Tensor::Borrow(DataType::kF32, {2, 4}, a.data())).ok());
  ASSERT_TRUE(session->SetInput("y", Tensor::Borrow(DataType::kF32, {2, 4}, a.data())).ok());
  for (int attempt = 0; attempt < 2; ++attempt) {
    Status s = session->Run();
    EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
    EXPECT_TRUE(Contains(s.message(), "activation arena of 'add_relu'")) << s.message();
    EXPECT_TRUE(Contains(s.message(), "test device: out of memory")) << s.message();
  }
  EXPECT_EQ(session->GetOutput("out").status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(session->planned_peak_bytes(), 0u);
}

TEST(Session, OptionsRejectUnknownDevicesAndPolicies) {
  SessionOptions options;
  options.devices = {"cpu", "cuda"};
  StatusOr<std::unique_ptr<Session>> s =
      CreateSession(AddReluGraph(), options, TestRegistry(), CreateCpuDevice());
  EXPECT_EQ(s.status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(Contains(s.status().message(),
                       "device 'cuda' is not available in this build / on this machine"))
      << s.status().message();

  options = {};
  options.policy = "greedy";
  s = CreateSession(AddReluGraph(), options, TestRegistry(), CreateCpuDevice());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(s.status().message(), "'greedy'")) << s.status().message();
  EXPECT_TRUE(Contains(s.status().message(), "known policies: cpu-only")) << s.status().message();

  options = {};
  options.num_threads = -1;
  s = CreateSession(AddReluGraph(), options, TestRegistry(), CreateCpuDevice());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);

  // Session::Open checks options and opens devices before touching the model
  // (this build or machine has no CUDA device).
  options = {};
  options.devices = {"cpu", "cuda"};
  s = Session::Open("/nonexistent/model.onnx", options);
  EXPECT_EQ(s.status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(Contains(s.status().message(), "cuda")) << s.status().message();

  options = {};
  options.devices = {"tpu"};
  s = Session::Open("/nonexistent/model.onnx", options);
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
}

TEST(Session, OpenReportsMissingFileAndUnknownBuiltin) {
  StatusOr<std::unique_ptr<Session>> s = Session::Open("/nonexistent/model.onnx");
  EXPECT_EQ(s.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Contains(s.status().message(), "/nonexistent/model.onnx")) << s.status().message();
  s = Session::Open("builtin:no_such_model");
  EXPECT_EQ(s.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Contains(s.status().message(), "tiny_cnn")) << s.status().message();
}

TEST(Session, SecondConcurrentRunIsRejected) {
  test::Gate gate;
  auto registry = std::make_shared<KernelRegistry>();
  registry->Register(test::Entry<test::AddKernel>("Add", "test", 0));
  registry->Register(KernelEntry{"Relu", DeviceKind::kCpu, "blocking", 0, [&gate] {
                                   return std::unique_ptr<Kernel>(
                                       std::make_unique<test::BlockingReluKernel>(&gate));
                                 }});
  auto session = MakeSession(AddReluGraph(), registry);
  std::vector<float> x = RandomNonZero(8, 21), y = RandomNonZero(8, 22);
  ASSERT_TRUE(session->SetInput("x", Tensor::Borrow(DataType::kF32, {2, 4}, x.data())).ok());
  ASSERT_TRUE(session->SetInput("y", Tensor::Borrow(DataType::kF32, {2, 4}, y.data())).ok());

  Status first;
  std::thread runner([&] { first = session->Run(); });
  while (!gate.entered.load()) std::this_thread::yield();
  Status second = session->Run();
  Status set = session->SetInput("x", Tensor::Borrow(DataType::kF32, {2, 4}, y.data()));
  gate.release.store(true);
  runner.join();

  EXPECT_EQ(second.code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(second.message(), "in progress")) << second.message();
  EXPECT_EQ(set.code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(first.ok()) << first.ToString();
  // The first Run's results are intact.
  StatusOr<Tensor> out = session->GetOutput("out");
  ASSERT_TRUE(out.ok());
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(out->data<float>()[i], std::max(x[i] + y[i], 0.0f));
  // And the Session is usable afterwards.
  RunAndCheck(*session, 2, 23);
}

TEST(Session, SeparateSessionsRunInParallel) {
  auto a = MakeSession(AddReluGraph());
  auto b = MakeSession(AddReluGraph());
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  auto loop = [](Session* session, uint32_t seed) {
    for (int i = 0; i < 50; ++i) RunAndCheck(*session, 1 + i % 3, seed + static_cast<uint32_t>(i));
  };
  std::thread ta(loop, a.get(), 100u);
  std::thread tb(loop, b.get(), 200u);
  ta.join();
  tb.join();
}

}  // namespace
}  // namespace braid
