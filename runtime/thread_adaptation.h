// Chooses, Run by Run, between a session's full intra-op thread count and a
// single thread, from the latencies it observes.
//
//   braid::ThreadAdaptation adapt(/*wide_threads=*/4);
//   for (...) {
//     const int threads = adapt.ThreadsForNextRun();   // 4, or 1 under contention
//     const double ms = RunWith(threads);
//     adapt.Observe(threads, ms);
//   }
//
// Why: braid's CPU kernels and oneDNN 2.6 run on OpenMP teams that split the
// work statically and meet at barriers. When another process keeps the cores
// busy, one descheduled team member stalls the whole team at every barrier
// (measured on 2 cores with 2 busy processes: mobilenet_v3_small 0.5 ms idle,
// 5-600 ms loaded at 2 threads, 1.5 ms at 1 thread). The wait policy cannot
// be changed from a library (libgomp reads it from the environment at load),
// so the session runs one thread while a wide Run is clearly slower than its
// best, and probes the full count now and then to come back when the load
// is gone.
//
// The rules (all times are the caller's measured Run latencies):
// - wide: a Run slower than `slow_factor` x the best wide Run since the
//   session went wide switches to one thread.
// - narrow: after `first_probe_runs` narrow Runs, one Run probes the full
//   count; it wins back the wide mode when it beats the best narrow Run by
//   `probe_margin`. A failed probe doubles the runs to the next probe (up to
//   `max_probe_runs`) and, since a probe under load can be very slow, the
//   next probe also waits until the narrow Runs since this one add up to
//   `probe_cost_ratio` x its time (probes cost at most ~1/ratio of the time;
//   the slow Run that switched counts as the first failed probe).
#ifndef BRAID_RUNTIME_THREAD_ADAPTATION_H_
#define BRAID_RUNTIME_THREAD_ADAPTATION_H_

#include <cstdint>
#include <limits>

namespace braid {

struct ThreadAdaptationOptions {
  double slow_factor = 2.0;
  int first_probe_runs = 4;
  int max_probe_runs = 1024;
  double probe_margin = 1.1;
  double probe_cost_ratio = 10.0;
};

class ThreadAdaptation {
 public:
  explicit ThreadAdaptation(int wide_threads, ThreadAdaptationOptions options = {});

  int ThreadsForNextRun() const;
  // A finished Run's latency with the thread count it ran with.
  void Observe(int threads, double ms);

  bool narrow() const { return narrow_; }
  int64_t narrow_switches() const { return narrow_switches_; }  // wide -> one thread
  int64_t wide_returns() const { return wide_returns_; }        // probes that won

 private:
  static constexpr double kNone = std::numeric_limits<double>::infinity();

  const int wide_threads_;
  const ThreadAdaptationOptions options_;
  bool narrow_ = false;
  double best_wide_ms_ = kNone;    // since the session last went wide
  double best_narrow_ms_ = kNone;  // since the session last went narrow
  int probe_interval_runs_;        // narrow Runs between probes
  int narrow_runs_since_probe_ = 0;
  double narrow_ms_since_probe_ = 0;
  double last_failed_probe_ms_ = 0;
  int64_t narrow_switches_ = 0;
  int64_t wide_returns_ = 0;
};

}  // namespace braid

#endif  // BRAID_RUNTIME_THREAD_ADAPTATION_H_
