// Chooses, Run by Run, between a session's full intra-op thread count
// ("wide") and a single thread ("narrow"), from the latencies it observes.
//
//   braid::ThreadAdaptation adapt(/*wide_threads=*/4);
//   for (...) {
//     const int threads = adapt.ThreadsForNextRun();   // 4, or 1 when that is faster
//     const double ms = RunWith(threads);
//     adapt.Observe(threads, ms);
//   }
//
// Why: braid's CPU kernels and oneDNN 2.6 run on OpenMP teams that split the
// work statically and meet at barriers. When other processes keep the cores
// busy, one descheduled team member stalls the whole team at every barrier
// (measured on 2 cores with 2 busy processes: mobilenet_v3_small 0.5 ms idle,
// 5-600 ms loaded at 2 threads, 1.5 ms at 1 thread). libgomp's wait policy
// cannot be changed from a library (it reads the environment at load), so
// the session measures both and runs the faster.
//
// The rules (times are the caller's measured Run latencies; an arm's
// "typical" time is the median of its last five Runs):
// - The session starts wide. After `first_probe_runs` wide Runs it probes the
//   other arm for `probe_runs` Runs (its old times dropped first) and switches
//   when the probe's typical time beats the current arm's by `probe_margin`.
// - A probe that does not win doubles the Runs to the next probe (up to
//   `max_probe_runs`); a switch starts over at `first_probe_runs`. The next
//   probe also waits until the Runs since the last one add up to
//   `probe_cost_ratio` x its cost, so probes cost about 1/ratio of the time
//   at most, even when a wide probe under load is very slow.
// - A wide Run slower than `slow_factor` x the wide typical time (the load
//   just arrived) switches to narrow at once, unless one thread was measured
//   slower still; that Run counts as a probe's cost.
#ifndef BRAID_RUNTIME_THREAD_ADAPTATION_H_
#define BRAID_RUNTIME_THREAD_ADAPTATION_H_

#include <array>
#include <cstdint>

namespace braid {

struct ThreadAdaptationOptions {
  double slow_factor = 2.0;
  int first_probe_runs = 3;
  int probe_runs = 3;
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

  bool narrow() const { return narrow_; }  // the arm the session runs between probes
  int64_t narrow_switches() const { return narrow_switches_; }  // wide -> narrow
  int64_t wide_returns() const { return wide_returns_; }        // narrow -> wide

 private:
  // The last few Run times of one arm.
  class Recent {
   public:
    void Clear() { count_ = 0; }
    void Add(double ms);
    int count() const { return count_; }
    double Typical() const;  // median; only with count() > 0

   private:
    std::array<double, 5> ms_{};
    int count_ = 0;
    int next_ = 0;
  };

  Recent& Arm(bool narrow) { return narrow ? narrow_recent_ : wide_recent_; }
  void Switch();

  const int wide_threads_;
  const ThreadAdaptationOptions options_;
  bool narrow_ = false;
  bool probing_ = false;  // running the other arm
  int probe_runs_left_ = 0;
  double probe_cost_ms_ = 0;
  int probe_interval_runs_;
  int runs_since_probe_ = 0;
  double ms_since_probe_ = 0;
  double last_probe_cost_ms_ = 0;
  Recent wide_recent_;
  Recent narrow_recent_;
  int64_t narrow_switches_ = 0;
  int64_t wide_returns_ = 0;
};

}  // namespace braid

#endif  // BRAID_RUNTIME_THREAD_ADAPTATION_H_
