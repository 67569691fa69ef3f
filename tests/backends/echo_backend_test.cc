// The backend registry (kernels/backend_registry.h) and its proof: the
// test-only backend "echo" (tests/backends/echo/, one folder) added with one
// registration line runs the op harness's cases for its ops and a mixed
// cpu + echo plan through Session, with the cpu-only run's outputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>

#include "api/model_loader.h"
#include "api/session_open.h"
#include "kernels/backend_registry.h"
#include "tests/backends/echo/echo_backend.h"
#include "tests/kernels/op_harness.h"

namespace braid {
namespace {

BackendRegistry BackendsWithEcho() {
  BackendRegistry backends = BuiltinBackends();
  EXPECT_TRUE(backends.Add(testing::EchoBackend()).ok());  // the one registration line
  return backends;
}

TEST(BackendRegistryTest, FindsBackendsByDeviceName) {
  const BackendRegistry backends = BackendsWithEcho();
  int index = -1;
  StatusOr<const Backend*> cuda = backends.Find("cuda:3", &index);
  ASSERT_TRUE(cuda.ok()) << cuda.status().ToString();
  EXPECT_EQ((*cuda)->name, "cuda");
  EXPECT_EQ(index, 3);
  ASSERT_TRUE(backends.Find("echo").ok());
  EXPECT_EQ((*backends.Find("echo"))->kind, DeviceKind::kFirstCustom);
  ASSERT_NE(backends.host(), nullptr);
  EXPECT_EQ(backends.host()->name, "cpu");
  EXPECT_EQ(backends.KnownNames(), "cpu, cuda, cuda:K, echo, vgpu");
  for (const char* bad : {"tpu", "vgpu:1", "cuda:", "cuda:x", "echo:0"}) {
    StatusOr<const Backend*> b = backends.Find(bad);
    ASSERT_FALSE(b.ok()) << bad;
    EXPECT_NE(b.status().message().find(std::string("unknown device '") + bad + "'"),
              std::string::npos)
        << b.status().message();
    EXPECT_NE(b.status().message().find("known: cpu, cuda, cuda:K, echo, vgpu"),
              std::string::npos);
  }
  // Each trait as the backends declare them.
  EXPECT_TRUE((*backends.Find("vgpu"))->traits.virtual_device);
  EXPECT_FALSE((*backends.Find("vgpu"))->traits.real_device_times);
  EXPECT_TRUE((*backends.Find("cuda"))->traits.async_streams);
  EXPECT_TRUE((*backends.Find("echo"))->traits.host_addressable);
}

TEST(BackendRegistryTest, RefusesBadBackends) {
  BackendRegistry backends = BackendsWithEcho();
  EXPECT_FALSE(backends.Add(testing::EchoBackend()).ok());  // twice
  Backend host = testing::EchoBackend();
  host.name = "host2";
  host.traits.host = true;
  StatusOr<const Backend*> none = backends.Find("host2");
  EXPECT_FALSE(none.ok());
  const Status second_host = backends.Add(host);
  EXPECT_FALSE(second_host.ok());
  EXPECT_NE(second_host.message().find("already the host"), std::string::npos);
  Backend bad = testing::EchoBackend();
  bad.name = "Echo!";
  EXPECT_FALSE(backends.Add(bad).ok());
  Backend no_open = testing::EchoBackend();
  no_open.name = "no_open";
  no_open.open = nullptr;
  EXPECT_FALSE(backends.Add(no_open).ok());
}

TEST(BackendRegistryTest, OpensEachDeviceOnceAndRegistersKernelsOnce) {
  const BackendRegistry backends = BackendsWithEcho();
  KernelRegistry kernels;
  const std::vector<std::string> names = {"cpu", "echo", "vgpu"};
  StatusOr<std::vector<OpenedDevice>> devices =
      OpenBackendDevices(backends, names, BackendOptions{}, kernels);
  ASSERT_TRUE(devices.ok()) << devices.status().ToString();
  ASSERT_EQ(devices->size(), 3u);
  EXPECT_EQ((*devices)[0].device->name(), "cpu");
  EXPECT_EQ((*devices)[1].device->name(), "echo");
  EXPECT_TRUE((*devices)[1].host_addressable);
  EXPECT_EQ((*devices)[2].device->name(), "vgpu");
  EXPECT_TRUE((*devices)[2].kernel_time);  // the vgpu's timing-shaping hook
  EXPECT_FALSE((*devices)[1].kernel_time);
  EXPECT_EQ(kernels.OpTypes(DeviceKind::kFirstCustom), testing::EchoOpTypes());
  EXPECT_EQ(kernels.Candidates("Relu", DeviceKind::kFirstCustom).size(), 1u);

  KernelRegistry again;
  const std::vector<std::string> twice = {"echo", "echo"};
  StatusOr<std::vector<OpenedDevice>> dup = OpenBackendDevices(backends, twice, {}, again);
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.status().message().find("device 'echo' named twice"), std::string::npos);
}

TEST(EchoBackendTest, OpHarnessCasesMatchTheReference) {
  StatusOr<std::unique_ptr<Harness>> harness = MakeHarness(BackendsWithEcho());
  ASSERT_TRUE(harness.ok()) << harness.status().ToString();
  std::vector<std::string> device_names;
  for (const auto& d : (*harness)->devices) device_names.push_back(d->name());
  EXPECT_EQ(device_names, (std::vector<std::string>{"cpu", "vgpu", "echo"}));  // added order
  const std::vector<std::string>& ops = testing::EchoOpTypes();
  std::map<std::string, int> matched;  // op -> cases echo matched
  for (const OpCase& c : ComputeOpCases()) {
    if (std::find(ops.begin(), ops.end(), c.op_type) == ops.end()) continue;
    const CaseReport report = RunOpCase(c, **harness);
    EXPECT_TRUE(report.ok()) << report.ToString();
    for (const ImplReport& r : report.impls)
      if (r.device == "echo" && r.impl == "echo" &&
          r.outcome == ImplReport::Outcome::kMatched)
        ++matched[c.op_type];
  }
  // The harness's compute cases cover these of echo's ops.
  for (const char* op : {"AveragePool", "Gemm", "GlobalAveragePool", "MaxPool"})
    EXPECT_GT(matched[op], 0) << op;
}

// tiny_cnn's output on `devices` under `policy`, with the placements.
struct RunResult {
  std::vector<float> output;
  std::vector<NodePlacement> placements;
};

RunResult RunTinyCnn(const BackendRegistry& backends, std::vector<std::string> devices,
                     const std::string& policy) {
  SessionOptions options;
  options.num_threads = 2;
  options.devices = std::move(devices);
  options.policy = policy;
  StatusOr<std::unique_ptr<Session>> session = OpenSessionWithBackends(
      backends, options, [] { return LoadGraphForExecution("builtin:tiny_cnn"); });
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  if (!session.ok()) return {};
  const TensorInfo& in = (*session)->inputs().front();
  std::vector<int64_t> dims = in.dims;
  for (int64_t& d : dims) d = d < 0 ? 2 : d;  // batch 2
  Tensor x = Tensor::Allocate(DataType::kF32, dims);
  std::mt19937 rng(26);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int64_t i = 0; i < x.elements(); ++i) x.data<float>()[i] = u(rng);
  EXPECT_TRUE((*session)->SetInput(in.name, x).ok());
  const Status run = (*session)->Run();
  EXPECT_TRUE(run.ok()) << run.ToString();
  StatusOr<Tensor> y = (*session)->GetOutput((*session)->outputs().front().name);
  EXPECT_TRUE(y.ok());
  if (!y.ok()) return {};
  RunResult r;
  r.output.assign(y->data<float>(), y->data<float>() + y->elements());
  r.placements = (*session)->placements();
  return r;
}

TEST(EchoBackendTest, MixedPlanThroughSessionMatchesCpuOnly) {
  const BackendRegistry backends = BackendsWithEcho();
  const RunResult cpu = RunTinyCnn(backends, {"cpu"}, "cpu-only");
  // gpu-only puts each node on echo where echo has a kernel, else on the cpu.
  const RunResult mixed = RunTinyCnn(backends, {"cpu", "echo"}, "gpu-only");
  ASSERT_FALSE(cpu.output.empty());
  ASSERT_EQ(mixed.output.size(), cpu.output.size());
  std::set<std::string> used;
  int echo_kernels = 0;
  for (const NodePlacement& p : mixed.placements) {
    used.insert(p.device);
    // Echo's kernels, or a view (a Flatten needs no kernel: RunsAsView).
    if (p.device == "echo") {
      EXPECT_TRUE(p.implementation == "echo" || p.implementation == "view") << p.node;
      echo_kernels += p.implementation == "echo";
    }
  }
  EXPECT_EQ(used, (std::set<std::string>{"cpu", "echo"}));
  EXPECT_GT(echo_kernels, 0);
  // The reference kernels sum in another order than oneDNN: 1e-4 abs + rel.
  for (size_t i = 0; i < cpu.output.size(); ++i)
    EXPECT_NEAR(mixed.output[i], cpu.output[i], 1e-4 + 1e-4 * std::fabs(cpu.output[i])) << i;
}

TEST(EchoBackendTest, SessionRejectsUnknownDeviceNamingTheBackends) {
  SessionOptions options;
  options.devices = {"cpu", "tpu"};
  StatusOr<std::unique_ptr<Session>> session = OpenSessionWithBackends(
      BackendsWithEcho(), options, [] { return LoadGraphForExecution("builtin:tiny_cnn"); });
  ASSERT_FALSE(session.ok());
  EXPECT_NE(session.status().message().find("unknown device 'tpu' (known: cpu, cuda, cuda:K, "
                                            "echo, vgpu)"),
            std::string::npos)
      << session.status().message();
}

}  // namespace
}  // namespace braid
