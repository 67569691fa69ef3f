// Online adaptation (runtime/adaptation.h and the Session's use of it):
// profile scaling, drift detection with a window median, hysteresis (warm-up,
// runs between decisions, gain margin), re-planning through the Session with
// deterministic fake measurements, and one run under a real background CPU
// load started by the test (assertions on the mechanism, never on timings).
#include "runtime/adaptation.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <cmath>
#include <iostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "api/model_loader.h"
#include "graph/annotate.h"
#include "graph/passes/passes.h"
#include "graph/passes/specialize.h"
#include "kernels/backend_registry.h"
#include "kernels/cpu/cpu_device.h"
#include "kernels/vgpu/vgpu_device.h"
#include "runtime/session_internal.h"
#include "scheduler/policy.h"

namespace braid {
namespace {

constexpr int64_t kBatch = 2;
constexpr int64_t kImage = 32;

// Two devices whose op times are FLOPs / peak (+ a small launch): efficiency
// 1 for every class and a bandwidth high enough never to bind.
DeviceProfile TwoDeviceProfile(double cpu_gflops, double vgpu_gflops) {
  DeviceProfile p;
  p.name = "adaptation-test";
  p.origin = "builtin";
  for (auto [name, kind, gflops] :
       {std::tuple{"cpu", "cpu", cpu_gflops}, std::tuple{"vgpu", "vgpu", vgpu_gflops}}) {
    DeviceSpec d;
    d.name = name;
    d.kind = kind;
    d.peak_gflops = gflops;
    d.memory_bandwidth_gbps = 1000;
    d.launch_overhead_us = 2;
    for (int c = 0; c < kNumOpClasses; ++c) {
      OpClassEfficiency e;
      e.op_class = OpClassName(static_cast<OpClass>(c));
      e.compute = 1;
      e.memory = 1;
      d.efficiency.push_back(e);
    }
    p.devices.push_back(d);
  }
  for (auto [from, to] : {std::pair{"cpu", "vgpu"}, std::pair{"vgpu", "cpu"}}) {
    LinkSpec l;
    l.from = from;
    l.to = to;
    l.latency_us = 5;
    l.bandwidth_gbps = 10;
    p.links.push_back(l);
  }
  return p;
}

Graph TinyCnn(int64_t image = kImage) {
  StatusOr<Graph> g = LoadGraphForExecution("builtin:tiny_cnn");
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  for (ValueId in : g->inputs()) {
    g->value(in).shape[2] = Dim(image);
    g->value(in).shape[3] = Dim(image);
  }
  for (Value& v : g->values())
    if (!v.constant && v.producer != kNoNode) v.has_shape = false;
  EXPECT_TRUE(InferShapes(*g).ok());
  return std::move(*g);
}

Graph StaticTinyCnn() {
  Graph g = TinyCnn();
  EXPECT_TRUE(SpecializeSymbols(g, {{"N", kBatch}}).ok());
  EXPECT_TRUE(Annotate(g).ok());
  return g;
}

std::shared_ptr<const KernelRegistry> Registry() {
  auto r = std::make_shared<KernelRegistry>();
  RegisterCpuKernels(*r);
  RegisterVgpuKernels(*r);
  return r;
}

std::vector<float> Input(int64_t image = kImage) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(kBatch * 3 * image * image));
  for (float& v : x) {
    v = u(rng);
    if (v == 0.0f) v = 0.5f;
  }
  return x;
}

std::vector<float> RunOnce(Session& s, std::vector<float>& input, int64_t image = kImage) {
  Status st =
      s.SetInput("input", Tensor::Borrow(DataType::kF32, {kBatch, 3, image, image}, input.data()));
  if (st.ok()) st = s.Run();
  EXPECT_TRUE(st.ok()) << st.ToString();
  if (!st.ok()) return {};
  StatusOr<Tensor> out = s.GetOutput("output");
  EXPECT_TRUE(out.ok());
  return std::vector<float>(out->data<float>(), out->data<float>() + out->elements());
}

std::unique_ptr<Session> OpenSession(const SessionOptions& options, SessionInternals internals,
                                     const VgpuTiming& timing = {}, int64_t image = kImage) {
  std::vector<SessionDevice> devices(2);
  devices[0].device = CreateCpuDevice();
  VgpuOptions vgpu;
  vgpu.timing = timing;
  devices[1].device = CreateVgpuDevice(vgpu);
  // Its timing shaping, as Session::Open binds it (OpenBackendDevices).
  devices[1].kernel_time = BindKernelTime(**BuiltinBackends().Find("vgpu"), *devices[1].device);
  auto s =
      CreateSession(TinyCnn(image), options, Registry(), std::move(devices), std::move(internals));
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::move(*s) : nullptr;
}

std::vector<float> CpuOnlyOutput(int64_t image = kImage) {
  SessionOptions options;
  options.num_threads = 1;
  std::unique_ptr<Session> s = OpenSession(options, {}, {}, image);
  std::vector<float> x = Input(image);
  return RunOnce(*s, x, image);
}

void ExpectClose(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  ASSERT_FALSE(want.empty());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-4 + 1e-3 * std::fabs(want[i])) << "element " << i;
}

int NodesOn(const Session& s, const std::string& device) {
  int n = 0;
  for (const NodePlacement& p : s.placements()) n += p.device == device;
  return n;
}

std::string Last(const std::vector<std::string>& notices) {
  return notices.empty() ? "(no notice)" : notices.back();
}

int CountContaining(const std::vector<std::string>& notices, const std::string& text) {
  int n = 0;
  for (const std::string& s : notices) n += s.find(text) != std::string::npos;
  return n;
}

// A fake world: each device's measured kernel time is `factor[device]` times
// what the running plan predicts on the uncorrected profile.
struct FakeWorld {
  double cpu = 1.0, vgpu = 1.0;
  int runs = 0;
  void Measure(std::span<const std::string> devices, std::span<const double> base,
               std::span<double> measured) {
    ++runs;
    for (size_t d = 0; d < devices.size(); ++d)
      measured[d] = base[d] * (devices[d] == "cpu" ? cpu : vgpu);
  }
};

AdaptationOptions FastOptions() {
  AdaptationOptions o;
  o.window = 5;
  o.warmup_runs = 2;
  o.min_runs_between = 10;
  o.min_device_us = 1;
  o.min_window_us = 0;
  return o;
}

// --- PlanAdapter and profile scaling -------------------------------------

TEST(Adaptation, ScalingADeviceScalesEveryOpTimeExactly) {
  const Graph g = StaticTinyCnn();
  DeviceProfile p = TwoDeviceProfile(20, 10);
  p.devices[0].efficiency[0].overhead_us = 3;  // a fitted overhead scales too
  // So do the cache tier and the copied-input reads (the stall on a copied
  // op is a difference of two of these rates).
  p.devices[0].cache_bytes = 64 << 10;
  p.devices[0].cache_bandwidth_gbps = 100;
  p.devices[0].copied_read_gbps = 8;
  p.devices[0].copied_window_read_gbps = 5;
  p.devices[0].copied_depthwise_read_gbps = 4;
  const CostModel base(p);
  const CostModel scaled(ScaleDeviceSpeed(p, "cpu", 2.5));
  for (const Node& n : g.nodes()) {
    EXPECT_NEAR(scaled.OpTimeUs(n, 0), 2.5 * base.OpTimeUs(n, 0), 1e-9 * base.OpTimeUs(n, 0))
        << n.name;
    EXPECT_EQ(scaled.OpTimeUs(n, 1), base.OpTimeUs(n, 1)) << n.name;  // other device untouched
    OpWork copied = OpWorkOf(n, &g);
    copied.copied_bytes = copied.bytes / 2;
    const double want = 2.5 * base.Cost(copied, 0).TotalUs();
    EXPECT_NEAR(scaled.Cost(copied, 0).TotalUs(), want, 1e-9 * want) << n.name;
  }
  EXPECT_EQ(scaled.TransferUs(0, 1, 1e6), base.TransferUs(0, 1, 1e6));
}

TEST(Adaptation, OptionsAreValidated) {
  EXPECT_TRUE(ValidateAdaptationOptions({}).ok());
  AdaptationOptions o;
  o.drift_threshold = 1.0;
  EXPECT_FALSE(ValidateAdaptationOptions(o).ok());
  o = {};
  o.window = 0;
  EXPECT_FALSE(ValidateAdaptationOptions(o).ok());
  o = {};
  o.min_gain = 1.5;
  EXPECT_FALSE(ValidateAdaptationOptions(o).ok());
}

// Measured = predicted x factor, per run.
class AdapterHarness {
 public:
  AdapterHarness() : graph_(StaticTinyCnn()), adapter_(TwoDeviceProfile(20, 10), FastOptions()) {
    plan_ = SingleDevicePlan(graph_, "cpu", "test");
    plan_.devices = {"cpu", "vgpu"};
    // Half the nodes on the vgpu so both devices have predicted work.
    for (size_t i = plan_.nodes.size() / 2; i < plan_.nodes.size(); ++i)
      plan_.nodes[i].device = "vgpu";
    EXPECT_TRUE(adapter_.Track(graph_, plan_, {"cpu", "vgpu"}).ok());
  }
  // One run where device d took factor[d] x its base-profile prediction.
  bool Run(double cpu_factor, double vgpu_factor) {
    const auto base = adapter_.base_predicted_busy_us();
    const double measured[2] = {base[0] * cpu_factor, base[1] * vgpu_factor};
    return adapter_.Observe(measured);
  }
  PlanAdapter& adapter() { return adapter_; }
  void Retrack() { ASSERT_TRUE(adapter_.Track(graph_, plan_, {"cpu", "vgpu"}).ok()); }

 private:
  Graph graph_;
  Plan plan_;
  PlanAdapter adapter_;
};

TEST(Adaptation, NoDecisionWithoutDriftOrOnSpikes) {
  AdapterHarness h;
  ASSERT_GT(h.adapter().predicted_busy_us()[0], 0);
  ASSERT_GT(h.adapter().predicted_busy_us()[1], 0);
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> noise(0.75, 1.3);  // within the 1.5x threshold
  for (int run = 0; run < 200; ++run) {
    // Every 7th run a 10x spike on the CPU (at most one per window): the
    // window leaves its slowest run out.
    const double cpu = run % 7 == 6 ? 10.0 : noise(rng);
    EXPECT_FALSE(h.Run(cpu, noise(rng))) << "run " << run;
  }
  EXPECT_EQ(h.adapter().decisions(), 0);
}

TEST(Adaptation, SustainedDriftDecidesOnceThenTheCorrectedModelMatches) {
  AdapterHarness h;
  int first = -1;
  for (int run = 0; run < 40 && first < 0; ++run)
    if (h.Run(2.0, 1.0)) first = run;
  // Not before min_runs_between (10) runs, and then at once.
  EXPECT_EQ(first, 9);
  ASSERT_EQ(h.adapter().drift().size(), 1u);
  EXPECT_EQ(h.adapter().drift()[0].first, "cpu");
  EXPECT_NEAR(h.adapter().drift()[0].second, 2.0, 1e-9);
  // The proposal doubles the CPU's op times; accepting makes it the model.
  EXPECT_NEAR(h.adapter().ProposedProfile().devices[0].peak_gflops, 10.0, 1e-9);
  h.adapter().Accept();
  EXPECT_NEAR(h.adapter().correction("cpu"), 2.0, 1e-12);
  EXPECT_EQ(h.adapter().correction("vgpu"), 1.0);
  h.Retrack();
  EXPECT_NEAR(h.adapter().predicted_busy_us()[0], 2 * h.adapter().base_predicted_busy_us()[0],
              1e-6);
  // The world stays 2x slower: now predicted, so no more decisions.
  for (int run = 0; run < 100; ++run) EXPECT_FALSE(h.Run(2.0, 1.0)) << "run " << run;
  // A device that becomes faster than predicted is drift too.
  bool decided = false;
  for (int run = 0; run < 20 && !decided; ++run) decided = h.Run(2.0, 0.4);
  ASSERT_TRUE(decided);
  ASSERT_EQ(h.adapter().drift().size(), 1u);
  EXPECT_EQ(h.adapter().drift()[0].first, "vgpu");
  // The window may still hold runs from before the change.
  EXPECT_GE(h.adapter().drift()[0].second, 0.4 - 1e-9);
  EXPECT_LT(h.adapter().drift()[0].second, 1 / 1.5);
}

// --- Through the Session, with deterministic fake measurements -------------

SessionOptions AdaptiveOptions(const std::string& policy) {
  SessionOptions options;
  options.num_threads = 1;
  options.devices = {"cpu", "vgpu"};
  options.policy = policy;
  options.adapt = true;
  return options;
}

TEST(AdaptationSession, ReplansWhenTheCpuSlowsDownAndOutputsStayEqual) {
  const std::vector<float> reference = CpuOnlyOutput();
  for (const std::string policy : {"heft", "partition"}) {
    SCOPED_TRACE(policy);
    auto world = std::make_shared<FakeWorld>();
    SessionInternals internals;
    internals.profile = TwoDeviceProfile(20, 10);  // vgpu half the CPU's speed
    internals.adaptation = FastOptions();
    internals.measure = [world](auto devices, auto base, auto measured) {
      world->Measure(devices, base, measured);
    };
    std::unique_ptr<Session> s = OpenSession(AdaptiveOptions(policy), std::move(internals));
    ASSERT_NE(s, nullptr);
    std::vector<float> x = Input();
    for (int run = 0; run < 15; ++run) ExpectClose(RunOnce(*s, x), reference);
    EXPECT_TRUE(s->notices().empty()) << Last(s->notices());
    const int cpu_before = NodesOn(*s, "cpu");
    ASSERT_GT(cpu_before, 0);

    world->cpu = 4.0;  // another process takes the CPU: its ops now take 4x
    for (int run = 0; run < 60; ++run) ExpectClose(RunOnce(*s, x), reference);
    ASSERT_EQ(CountContaining(s->notices(), "re-planned"), 1) << Last(s->notices());
    const std::string notice = s->notices()[0];
    EXPECT_NE(notice.find("re-planned (" + policy + ") after "), std::string::npos) << notice;
    EXPECT_NE(notice.find("cpu ran 4x slower than predicted"), std::string::npos) << notice;
    EXPECT_NE(notice.find("moved cpu->vgpu"), std::string::npos) << notice;
    EXPECT_NE(notice.find("predicted "), std::string::npos) << notice;
    EXPECT_EQ(s->notices().size(), 1u) << "no flapping: " << Last(s->notices());
    std::cout << "notice: " << notice << "\n";
    EXPECT_LT(NodesOn(*s, "cpu"), cpu_before);
  }
}

TEST(AdaptationSession, NoDriftNoReplan) {
  auto world = std::make_shared<FakeWorld>();
  SessionInternals internals;
  internals.profile = TwoDeviceProfile(20, 10);
  internals.adaptation = FastOptions();
  internals.measure = [world](auto d, auto b, auto m) { world->Measure(d, b, m); };
  std::unique_ptr<Session> s = OpenSession(AdaptiveOptions("heft"), std::move(internals));
  ASSERT_NE(s, nullptr);
  std::vector<float> x = Input();
  RunOnce(*s, x);
  const std::vector<NodePlacement> before = s->placements();
  for (int run = 0; run < 80; ++run) RunOnce(*s, x);
  EXPECT_EQ(world->runs, 81);
  EXPECT_TRUE(s->notices().empty()) << Last(s->notices());
  ASSERT_EQ(s->placements().size(), before.size());
  for (size_t i = 0; i < before.size(); ++i) EXPECT_EQ(s->placements()[i].device, before[i].device);
}

TEST(AdaptationSession, SmallPredictedGainKeepsThePlanAndDoesNotFlap) {
  auto world = std::make_shared<FakeWorld>();
  SessionInternals internals;
  internals.profile = TwoDeviceProfile(20, 10);
  internals.adaptation = FastOptions();
  internals.adaptation.min_gain = 0.5;  // only a 2x better plan is worth a switch
  internals.measure = [world](auto d, auto b, auto m) { world->Measure(d, b, m); };
  std::unique_ptr<Session> s = OpenSession(AdaptiveOptions("heft"), std::move(internals));
  ASSERT_NE(s, nullptr);
  std::vector<float> x = Input();
  // 2 warm-up runs, then a check at run 10 (no drift); the next window
  // starts with the change.
  for (int run = 0; run < 10; ++run) RunOnce(*s, x);
  const int cpu_before = NodesOn(*s, "cpu");
  world->cpu = 2.2;  // vgpu then ~1.1x faster per op: far below a 2x gain
  for (int run = 0; run < 60; ++run) RunOnce(*s, x);
  ASSERT_EQ(s->notices().size(), 1u);
  EXPECT_NE(s->notices()[0].find("cpu ran 2.2x slower"), std::string::npos) << s->notices()[0];
  EXPECT_NE(s->notices()[0].find("kept the plan"), std::string::npos) << s->notices()[0];
  EXPECT_NE(s->notices()[0].find("below the 50% margin"), std::string::npos) << s->notices()[0];
  EXPECT_EQ(NodesOn(*s, "cpu"), cpu_before);
  std::cout << "notice: " << s->notices()[0] << "\n";
}

TEST(AdaptationSession, NeedsAProfileWithEveryDevice) {
  SessionInternals internals;  // no profile
  std::vector<SessionDevice> devices(2);
  devices[0].device = CreateCpuDevice();
  devices[1].device = CreateVgpuDevice();
  auto s = CreateSession(TinyCnn(), AdaptiveOptions("heft"), Registry(), std::move(devices),
                         std::move(internals));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("adapt needs a device profile"), std::string::npos);

  SessionInternals cpu_only_profile;
  cpu_only_profile.profile = BuiltinHostProfile();
  std::vector<SessionDevice> devices2(2);
  devices2[0].device = CreateCpuDevice();
  devices2[1].device = CreateVgpuDevice();
  s = CreateSession(TinyCnn(), AdaptiveOptions("heft"), Registry(), std::move(devices2),
                    std::move(cpu_only_profile));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("has no device 'vgpu'"), std::string::npos)
      << s.status().message();
}

// --- A real background CPU load --------------------------------------------

// Pins the calling thread to one core for the test's lifetime.
class PinnedToOneCore {
 public:
  PinnedToOneCore() {
    pthread_getaffinity_np(pthread_self(), sizeof(original_), &original_);
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &original_)) {
        if (core_ < 0) core_ = c;
        ++available_;
      }
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(core_, &one);
    pinned_ = available_ >= 2 && pthread_setaffinity_np(pthread_self(), sizeof(one), &one) == 0;
  }
  ~PinnedToOneCore() {
    if (pinned_) pthread_setaffinity_np(pthread_self(), sizeof(original_), &original_);
  }
  bool pinned() const { return pinned_; }
  int core() const { return core_; }

 private:
  cpu_set_t original_{};
  int core_ = -1;
  int available_ = 0;
  bool pinned_ = false;
};

// Threads spinning on one core: "another process loads the CPU".
class BackgroundLoad {
 public:
  BackgroundLoad(int threads, int core) {
    for (int i = 0; i < threads; ++i)
      threads_.emplace_back([this, core] {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(core, &one);
        pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
        volatile double sink = 1;
        while (!stop_.load(std::memory_order_relaxed)) sink = sink * 1.0000001 + 1e-9;
      });
  }
  ~BackgroundLoad() {
    stop_ = true;
    for (std::thread& t : threads_) t.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

TEST(AdaptationSession, RealBackgroundLoadOnTheCpuMovesWorkToTheVgpu) {
  PinnedToOneCore pin;
  if (!pin.pinned()) GTEST_SKIP() << "needs two cores to load one and leave the vgpu the other";
  // Runs of several milliseconds: a load on the core shows in every run, not
  // only as the occasional preemption a window median ignores.
  constexpr int64_t kLoadImage = 128;
  const std::vector<float> reference = CpuOnlyOutput(kLoadImage);
  std::vector<float> x = Input(kLoadImage);

  // 1. This machine's CPU speed on the model (1 thread, pinned): run the
  //    all-CPU plan with real measurements and scale the profile's CPU peak.
  const double probe_gflops = 20;
  double cpu_us = 0, predicted_us = 0;
  {
    SessionInternals internals;
    internals.profile = TwoDeviceProfile(probe_gflops, probe_gflops / 100);
    internals.adaptation = FastOptions();
    internals.adaptation.min_runs_between = 1000;  // measure only
    std::vector<double> samples;
    internals.measure = [&](auto, auto base, auto measured) {
      samples.push_back(measured[0]);
      predicted_us = base[0];
    };
    std::unique_ptr<Session> s =
        OpenSession(AdaptiveOptions("cpu-only"), std::move(internals), {}, kLoadImage);
    ASSERT_NE(s, nullptr);
    for (int run = 0; run < 9; ++run) RunOnce(*s, x, kLoadImage);
    std::nth_element(samples.begin() + 2, samples.begin() + 5, samples.end());
    cpu_us = samples[5];
  }
  ASSERT_GT(cpu_us, 0);
  const double cpu_gflops = probe_gflops * predicted_us / cpu_us;

  // 2. A vgpu shaped to 1/1.5 of that speed (its kernels padded to 1.5x the
  //    CPU's time, so on the free core its own compute stays hidden), and a
  //    profile that says so: the plan starts on the CPU.
  VgpuTiming shaped;
  shaped.label = "test";
  shaped.enabled = true;
  shaped.peak_gflops = cpu_gflops / 1.5;
  shaped.mem_gbps = 1000;
  shaped.launch_us = 2;
  shaped.copy_gbps = 10;
  shaped.copy_latency_us = 5;
  SessionInternals internals;
  internals.profile = TwoDeviceProfile(cpu_gflops, cpu_gflops / 1.5);
  internals.adaptation = FastOptions();
  internals.adaptation.min_runs_between = 8;
  // Windows of >= 30 ms of measured kernel time: no check during the quiet
  // runs below, and each check sees many scheduler time slices.
  internals.adaptation.min_window_us = 30000;
  std::unique_ptr<Session> s =
      OpenSession(AdaptiveOptions("heft"), std::move(internals), shaped, kLoadImage);
  ASSERT_NE(s, nullptr);
  for (int run = 0; run < 10; ++run) ExpectClose(RunOnce(*s, x, kLoadImage), reference);
  const size_t quiet_notices = s->notices().size();
  const int cpu_before = NodesOn(*s, "cpu");
  ASSERT_GT(cpu_before, 0) << "the unloaded plan should use the CPU";

  // 3. Six threads spin on the CPU's core: its kernels get a seventh of it
  //    nominally, though a thread that keeps sleeping on the vgpu gets more
  //    (with two, a run now and then saw only 1.7x, and the re-plan, whose
  //    slices pay for their join, stayed below the 10% margin; with three,
  //    once in CI under ASan next to another test, 1.7x again).
  {
    BackgroundLoad load(6, pin.core());
    bool replanned = false;
    for (int run = 0; run < 400 && !replanned; ++run) {
      ExpectClose(RunOnce(*s, x, kLoadImage), reference);
      for (size_t i = quiet_notices; i < s->notices().size(); ++i)
        replanned = replanned || (s->notices()[i].find("re-planned") != std::string::npos &&
                                  s->notices()[i].find("cpu ran") != std::string::npos &&
                                  s->notices()[i].find("slower") != std::string::npos);
    }
    ASSERT_TRUE(replanned) << Last(s->notices());
    for (const std::string& n : s->notices()) std::cout << "notice: " << n << "\n";
    ExpectClose(RunOnce(*s, x, kLoadImage), reference);  // the new plan runs
    EXPECT_LT(NodesOn(*s, "cpu"), cpu_before);
  }
}

}  // namespace
}  // namespace braid
