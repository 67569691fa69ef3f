// Thread adaptation: the controller's rules on made-up latencies, and a
// Session on builtin:tiny_cnn (oneDNN) that goes to one thread when its
// 2-thread runs are made to look contended, gives the same outputs, says so,
// and comes back when the load "ends".
#include "runtime/thread_adaptation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/cpu/cpu_device.h"
#include "runtime/model_loader.h"
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

TEST(ThreadAdaptation, StaysWideWhileRunsAreSteady) {
  ThreadAdaptation adapt(4);
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> jitter(1.0, 1.6);  // noise below 2x
  const std::vector<int> used = Drive(adapt, 200, [&](int) { return 10.0 * jitter(rng); });
  EXPECT_EQ(Count(used, 4), 200);
  EXPECT_FALSE(adapt.narrow());
  EXPECT_EQ(adapt.narrow_switches(), 0);
}

TEST(ThreadAdaptation, GoesNarrowOnASlowWideRunAndStaysWhileLoaded) {
  ThreadAdaptation adapt(2);
  Drive(adapt, 5, [](int) { return 1.0; });  // idle: best wide 1 ms
  // Loaded: 2 threads stall at barriers (100 ms), 1 thread runs in 2 ms.
  const auto loaded = [](int threads) { return threads == 2 ? 100.0 : 2.0; };
  const std::vector<int> used = Drive(adapt, 2000, loaded);
  EXPECT_EQ(used[0], 2);  // the Run that shows the load
  EXPECT_EQ(used[1], 1);
  EXPECT_TRUE(adapt.narrow());
  EXPECT_EQ(adapt.narrow_switches(), 1);
  EXPECT_EQ(adapt.wide_returns(), 0);
  // Probes back off: each failed one (the switching Run counts as one) waits
  // twice the runs and ten times its own cost in narrow time, so probes cost
  // under 10% of the time.
  const int probes = Count(used, 2) - 1;
  EXPECT_GE(probes, 2);
  double total = 0, probe_time = 0;
  for (size_t i = 1; i < used.size(); ++i) {
    total += loaded(used[i]);
    if (used[i] == 2) probe_time += loaded(used[i]);
  }
  EXPECT_LE(probe_time / total, 0.1) << probes << " probes";
}

TEST(ThreadAdaptation, ComesBackWideWhenAProbeWins) {
  ThreadAdaptation adapt(2);
  Drive(adapt, 3, [](int) { return 1.0; });
  Drive(adapt, 1, [](int) { return 3.0; });  // the load arrives
  ASSERT_TRUE(adapt.narrow());
  // The load is gone: one thread takes 1.8 ms, two take 1 ms. The first
  // probe comes once the narrow Runs add up to 10x the 3 ms switching Run
  // (17 Runs), then the session stays wide.
  const std::vector<int> used = Drive(adapt, 25, [](int t) { return t == 2 ? 1.0 : 1.8; });
  EXPECT_EQ(Count(used, 1), 17);
  EXPECT_EQ(used[16], 1);
  EXPECT_EQ(used[17], 2);
  EXPECT_EQ(used.back(), 2);
  EXPECT_FALSE(adapt.narrow());
  EXPECT_EQ(adapt.wide_returns(), 1);
}

TEST(ThreadAdaptation, AProbeMustBeatOneThreadByTheMargin) {
  ThreadAdaptation adapt(2);
  Drive(adapt, 3, [](int) { return 1.0; });
  Drive(adapt, 1, [](int) { return 5.0; });
  ASSERT_TRUE(adapt.narrow());
  // Two threads only 5% faster than one: not worth the risk, stay narrow.
  const std::vector<int> used = Drive(adapt, 30, [](int t) { return t == 2 ? 1.9 : 2.0; });
  EXPECT_TRUE(adapt.narrow());
  EXPECT_GE(Count(used, 2), 1);
}

TEST(ThreadAdaptation, OneThreadSessionsNeverChange) {
  ThreadAdaptation adapt(1);
  const std::vector<int> used = Drive(adapt, 20, [](int) { return 1000.0; });
  EXPECT_EQ(Count(used, 1), 20);
  EXPECT_FALSE(adapt.narrow());
}

// A Session on the real CPU kernels with 2 threads. The latencies thread
// adaptation sees are made up (the real ones are noise on a shared machine):
// 2 ms on one thread, 1 ms on two, or 1000 ms on two while `loaded`.
struct ContendedSession {
  bool loaded = false;
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
    internals.thread_adaptation.probe_cost_ratio = 0;  // probe after 4 narrow Runs
    std::vector<SessionDevice> devices(1);
    devices[0].device = CreateCpuDevice();
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

std::vector<float> RandomInput(const TensorInfo& in) {
  int64_t n = 1;
  for (int64_t d : in.dims) n *= d < 0 ? 1 : d;
  std::mt19937 rng(7);
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
  ASSERT_NE(c.session, nullptr);
  const TensorInfo in = c.session->inputs()[0];
  const std::vector<float> x = RandomInput(in);
  std::vector<float> wide;
  for (int i = 0; i < 3; ++i) wide = c.Run(x, in);
  ASSERT_FALSE(wide.empty());
  EXPECT_FALSE(HasContentionNotice(*c.session));
  c.loaded = true;
  c.Run(x, in);  // the 2-thread Run that shows the load
  for (int i = 0; i < 3; ++i) {
    const std::vector<float> narrow = c.Run(x, in);
    ASSERT_EQ(narrow.size(), wide.size());
    for (size_t k = 0; k < wide.size(); ++k)
      ASSERT_NEAR(narrow[k], wide[k], 1e-5f * (1 + std::fabs(wide[k]))) << "element " << k;
  }
  ASSERT_GE(c.threads_seen.size(), 7u);
  EXPECT_EQ(std::vector<int>(c.threads_seen.end() - 4, c.threads_seen.end()),
            (std::vector<int>{2, 1, 1, 1}));
  EXPECT_TRUE(HasContentionNotice(*c.session));
  // The load ends: after the first probe the session is back on 2 threads.
  c.loaded = false;
  for (int i = 0; i < 6; ++i) c.Run(x, in);
  EXPECT_EQ(c.threads_seen.back(), 2);
  EXPECT_EQ(c.threads_seen[c.threads_seen.size() - 2], 2);
}

TEST(SessionThreadAdaptation, FixedThreadsIgnoresContention) {
  ContendedSession c(/*adapt_threads=*/false);
  ASSERT_NE(c.session, nullptr);
  const TensorInfo in = c.session->inputs()[0];
  const std::vector<float> x = RandomInput(in);
  c.Run(x, in);
  c.loaded = true;
  for (int i = 0; i < 4; ++i) c.Run(x, in);
  // Without adaptation the hook is never asked: no run is even timed.
  EXPECT_TRUE(c.threads_seen.empty());
  EXPECT_FALSE(HasContentionNotice(*c.session));
}

}  // namespace
}  // namespace braid
