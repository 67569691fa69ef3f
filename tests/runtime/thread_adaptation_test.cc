// Thread adaptation: the controller's rules on made-up latencies, and a
// Session on builtin:tiny_cnn (oneDNN) that probes one thread, goes to one
// thread when its 2-thread runs are made to look contended, gives the same
// outputs, says so, and comes back when the load "ends".
#include "runtime/thread_adaptation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "api/model_loader.h"
#include "kernels/cpu/cpu_device.h"
#include "runtime/session_internal.h"

namespace braid {
namespace {

// Runs `runs` Runs where a Run on `threads` takes ms_for(threads).
template <typename F>
std::vector<int> Drive(ThreadAdaptation& adapt, int runs, F ms_for) {
  std::vector<int> used;
  for (int i = 0; i < runs; ++i) {
    const int threads = adapt.ThreadsForNextRun();
    used.push_back(threads);
    adapt.Observe(threads, ms_for(threads));
  }
  return used;
}

int Count(const std::vector<int>& v, int value) {
  return static_cast<int>(std::count(v.begin(), v.end(), value));
}

// Probes' share of the total time over runs 1.. of `used`.
template <typename F>
double ProbeShare(const std::vector<int>& used, int probe_threads, F ms_for) {
  double total = 0, probes = 0;
  for (size_t i = 1; i < used.size(); ++i) {
    total += ms_for(used[i]);
    if (used[i] == probe_threads) probes += ms_for(used[i]);
  }
  return probes / total;
}

TEST(ThreadAdaptation, IdleStaysWideAndProbesOneThreadRarely) {
  ThreadAdaptation adapt(4);
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> jitter(1.0, 1.6);  // noise below 2x
  const auto idle = [&](int threads) { return (threads == 4 ? 10.0 : 30.0) * jitter(rng); };
  const std::vector<int> used = Drive(adapt, 2000, idle);
  // Runs 4-6 try one thread, which loses; later probes back off.
  EXPECT_EQ(std::vector<int>(used.begin(), used.begin() + 7),
            (std::vector<int>{4, 4, 4, 1, 1, 1, 4}));
  EXPECT_FALSE(adapt.narrow());
  EXPECT_EQ(adapt.narrow_switches(), 0);
  EXPECT_LE(ProbeShare(used, 1, [](int t) { return t == 4 ? 13.0 : 39.0; }), 0.1);
}

TEST(ThreadAdaptation, LoadedFromTheStartSettlesOnOneThread) {
  ThreadAdaptation adapt(2);
  // Every 2-thread Run stalls at barriers (100 ms); 1 thread takes 2 ms.
  const auto loaded = [](int threads) { return threads == 2 ? 100.0 : 2.0; };
  const std::vector<int> used = Drive(adapt, 2000, loaded);
  EXPECT_EQ(std::vector<int>(used.begin(), used.begin() + 8),
            (std::vector<int>{2, 2, 2, 1, 1, 1, 1, 1}));
  EXPECT_TRUE(adapt.narrow());
  EXPECT_EQ(adapt.narrow_switches(), 1);
  EXPECT_EQ(adapt.wide_returns(), 0);
  // Probes of 2 threads back off to about a tenth of the time.
  EXPECT_GE(Count(used, 2), 6);
  EXPECT_LE(ProbeShare(std::vector<int>(used.begin() + 6, used.end()), 2, loaded), 0.1);
}

TEST(ThreadAdaptation, GoesNarrowAtOnceWhenTheLoadArrives) {
  ThreadAdaptation adapt(2);
  Drive(adapt, 100, [](int threads) { return threads == 2 ? 1.0 : 1.8; });  // idle
  ASSERT_FALSE(adapt.narrow());
  const std::vector<int> used = Drive(adapt, 3, [](int threads) {
    return threads == 2 ? 100.0 : 2.0;
  });
  EXPECT_EQ(used, (std::vector<int>{2, 1, 1}));  // one slow Run is enough
  EXPECT_TRUE(adapt.narrow());
}

TEST(ThreadAdaptation, ComesBackWideWhenTheLoadEnds) {
  ThreadAdaptation adapt(2);
  Drive(adapt, 10, [](int threads) { return threads == 2 ? 1.0 : 1.8; });
  Drive(adapt, 1, [](int) { return 3.0; });  // the load arrives: 3 ms counts as a probe
  ASSERT_TRUE(adapt.narrow());
  // The load is gone. The first probe of 2 threads comes once the narrow Runs
  // add up to 10x the 3 ms (17 Runs of 1.8 ms), lasts 3 Runs and wins.
  const std::vector<int> used = Drive(adapt, 30, [](int t) { return t == 2 ? 1.0 : 1.8; });
  EXPECT_EQ(Count(used, 1), 17);
  EXPECT_EQ(used[16], 1);
  EXPECT_EQ(used[17], 2);
  EXPECT_EQ(used.back(), 2);
  EXPECT_FALSE(adapt.narrow());
  EXPECT_EQ(adapt.wide_returns(), 1);
}

TEST(ThreadAdaptation, AProbeMustWinByTheMargin) {
  ThreadAdaptation adapt(2);
  // One thread only 5% faster than two: not worth switching.
  const std::vector<int> used = Drive(adapt, 100, [](int t) { return t == 2 ? 2.0 : 1.9; });
  EXPECT_FALSE(adapt.narrow());
  EXPECT_GE(Count(used, 1), 3);
}

TEST(ThreadAdaptation, OneThreadSessionsNeverChange) {
  ThreadAdaptation adapt(1);
  const std::vector<int> used = Drive(adapt, 20, [](int) { return 1000.0; });
  EXPECT_EQ(Count(used, 1), 20);
  EXPECT_FALSE(adapt.narrow());
}

// The host CPU, whose allocations fail once `exhausted` is set.
class ExhaustibleDevice : public Device {
 public:
  explicit ExhaustibleDevice(const bool* exhausted)
      : cpu_(CreateCpuDevice()), exhausted_(exhausted) {}
  const DeviceInfo& info() const override { return cpu_->info(); }
  StatusOr<std::unique_ptr<Buffer>> Allocate(size_t bytes, MemoryKind kind) override {
    if (*exhausted_) return ResourceExhausted("test device: out of memory");
    return cpu_->Allocate(bytes, kind);
  }
  StatusOr<std::unique_ptr<Stream>> CreateStream() override { return cpu_->CreateStream(); }

 private:
  std::unique_ptr<Device> cpu_;
  const bool* exhausted_;
};

// A Session on the real CPU kernels with 2 threads. The latencies thread
// adaptation sees are made up (the real ones are noise on a shared machine):
// 2 ms on one thread, 1 ms on two, or 1000 ms on two while `loaded`.
struct ContendedSession {
  bool loaded = false;
  bool exhausted = false;  // the device's allocations fail
  std::vector<int> threads_seen;
  std::unique_ptr<Session> session;

  explicit ContendedSession(bool adapt_threads) {
    StatusOr<Graph> g = LoadGraphForExecution("builtin:tiny_cnn");
    EXPECT_TRUE(g.ok()) << g.status().ToString();
    auto registry = std::make_shared<KernelRegistry>();
    RegisterReferenceKernels(*registry);
    RegisterCpuKernels(*registry);
    SessionOptions options;
    options.num_threads = 2;
    options.adapt_threads = adapt_threads;
    SessionInternals internals;
    internals.run_ms = [this](int threads, double) {
      threads_seen.push_back(threads);
      if (threads == 1) return 2.0;
      return loaded ? 1000.0 : 1.0;
    };
    internals.thread_adaptation.probe_cost_ratio = 0;  // probe after 3 Runs
    std::vector<SessionDevice> devices(1);
    devices[0].device = std::make_unique<ExhaustibleDevice>(&exhausted);
    auto s = CreateSession(std::move(*g), options, registry, std::move(devices),
                           std::move(internals));
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    if (s.ok()) session = std::move(*s);
  }

  std::vector<float> Run(const std::vector<float>& x, const TensorInfo& in) {
    std::vector<int64_t> dims = in.dims;
    for (int64_t& d : dims) d = d < 0 ? 1 : d;
    EXPECT_TRUE(session->SetInput(in.name, Tensor::Borrow(DataType::kF32, dims,
                                                          const_cast<float*>(x.data())))
                    .ok());
    Status st = session->Run();
    EXPECT_TRUE(st.ok()) << st.ToString();
    StatusOr<Tensor> out = session->GetOutput(session->outputs()[0].name);
    EXPECT_TRUE(out.ok());
    if (!out.ok()) return {};
    return std::vector<float>(out->data<float>(), out->data<float>() + out->elements());
  }
};

std::vector<float> RandomInput(const TensorInfo& in, uint32_t seed = 7) {
  int64_t n = 1;
  for (int64_t d : in.dims) n *= d < 0 ? 1 : d;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) v = u(rng);
  return x;
}

bool HasContentionNotice(const Session& s) {
  for (const std::string& n : s.notices())
    if (n.find("contended") != std::string::npos) return true;
  return false;
}

TEST(SessionThreadAdaptation, RunsOneThreadUnderContentionWithTheSameOutputs) {
  ContendedSession c(/*adapt_threads=*/true);
  ContendedSession fixed(/*adapt_threads=*/false);  // every Run on 2 threads
  ASSERT_NE(c.session, nullptr);
  ASSERT_NE(fixed.session, nullptr);
  const TensorInfo in = c.session->inputs()[0];
  // Another input every Run, so an output read from the executor that did
  // not run (it still holds an older Run's result) cannot match.
  uint32_t seed = 100;
  auto run_and_compare = [&] {
    const std::vector<float> x = RandomInput(in, ++seed);
    const std::vector<float> got = c.Run(x, in);
    const std::vector<float> want = fixed.Run(x, in);
    ASSERT_FALSE(want.empty());
    ASSERT_EQ(got.size(), want.size());
    // oneDNN may order sums differently with another thread count.
    for (size_t k = 0; k < want.size(); ++k)
      ASSERT_NEAR(got[k], want[k], 1e-5f * (1 + std::fabs(want[k]))) << "element " << k;
  };
  // Idle: 3 Runs on 2 threads, a 3-Run probe of 1 thread that loses, 2 threads.
  for (int i = 0; i < 8; ++i) run_and_compare();
  EXPECT_EQ(c.threads_seen, (std::vector<int>{2, 2, 2, 1, 1, 1, 2, 2}));
  EXPECT_FALSE(HasContentionNotice(*c.session));
  c.loaded = true;
  for (int i = 0; i < 4; ++i) run_and_compare();
  EXPECT_EQ(std::vector<int>(c.threads_seen.end() - 4, c.threads_seen.end()),
            (std::vector<int>{2, 1, 1, 1}));
  EXPECT_TRUE(HasContentionNotice(*c.session));
  // The load ends: the next probe (3 Runs on 2 threads) wins.
  c.loaded = false;
  for (int i = 0; i < 5; ++i) run_and_compare();
  EXPECT_EQ(std::vector<int>(c.threads_seen.end() - 5, c.threads_seen.end()),
            (std::vector<int>{2, 2, 2, 2, 2}));
}

TEST(SessionThreadAdaptation, KeepsEveryThreadWhenTheOneThreadTwinCannotBePrepared) {
  ContendedSession c(/*adapt_threads=*/true);
  ASSERT_NE(c.session, nullptr);
  const TensorInfo in = c.session->inputs()[0];
  const std::vector<float> x = RandomInput(in);
  const std::vector<float> wide = c.Run(x, in);
  c.exhausted = true;  // the twin's arena cannot be allocated at the first probe
  for (int i = 0; i < 5; ++i) EXPECT_EQ(c.Run(x, in), wide);
  std::string notice;
  for (const std::string& n : c.session->notices())
    if (n.rfind("thread adaptation off", 0) == 0) notice = n;
  EXPECT_NE(notice.find("out of memory"), std::string::npos) << notice;
  // Every Run timed ran on 2 threads; after the failure none is timed.
  EXPECT_EQ(c.threads_seen, (std::vector<int>{2, 2, 2}));
  EXPECT_FALSE(HasContentionNotice(*c.session));
}

TEST(SessionThreadAdaptation, FixedThreadsIgnoresContention) {
  ContendedSession c(/*adapt_threads=*/false);
  ASSERT_NE(c.session, nullptr);
  const TensorInfo in = c.session->inputs()[0];
  const std::vector<float> x = RandomInput(in);
  for (int i = 0; i < 8; ++i) c.Run(x, in);
  c.loaded = true;
  for (int i = 0; i < 4; ++i) c.Run(x, in);
  // Without adaptation the hook is never asked: no run is even timed.
  EXPECT_TRUE(c.threads_seen.empty());
  EXPECT_FALSE(HasContentionNotice(*c.session));
}

}  // namespace
}  // namespace braid
