#include "runtime/thread_adaptation.h"

#include <algorithm>

namespace braid {

ThreadAdaptation::ThreadAdaptation(int wide_threads, ThreadAdaptationOptions options)
    : wide_threads_(std::max(wide_threads, 1)),
      options_(options),
      probe_interval_runs_(std::max(options.first_probe_runs, 1)) {}

int ThreadAdaptation::ThreadsForNextRun() const {
  if (!narrow_ || wide_threads_ == 1) return wide_threads_;
  const bool probe_due = narrow_runs_since_probe_ >= probe_interval_runs_ &&
                         narrow_ms_since_probe_ >= options_.probe_cost_ratio * last_failed_probe_ms_;
  return probe_due ? wide_threads_ : 1;
}

void ThreadAdaptation::Observe(int threads, double ms) {
  if (wide_threads_ == 1) return;
  if (!narrow_) {
    if (threads != wide_threads_) return;
    if (ms > options_.slow_factor * best_wide_ms_) {
      narrow_ = true;
      ++narrow_switches_;
      best_narrow_ms_ = kNone;
      probe_interval_runs_ = std::max(options_.first_probe_runs, 1);
      narrow_runs_since_probe_ = 0;
      narrow_ms_since_probe_ = 0;
      last_failed_probe_ms_ = ms;  // this Run was a probe of the full count too
      return;
    }
    best_wide_ms_ = std::min(best_wide_ms_, ms);
    return;
  }
  if (threads == 1) {
    best_narrow_ms_ = std::min(best_narrow_ms_, ms);
    ++narrow_runs_since_probe_;
    narrow_ms_since_probe_ += ms;
    return;
  }
  // A probe of the full count.
  narrow_runs_since_probe_ = 0;
  narrow_ms_since_probe_ = 0;
  if (ms * options_.probe_margin < best_narrow_ms_) {
    narrow_ = false;
    ++wide_returns_;
    best_wide_ms_ = ms;  // the machine as it is now, not before the load
    return;
  }
  last_failed_probe_ms_ = ms;
  probe_interval_runs_ = std::min(probe_interval_runs_ * 2, std::max(options_.max_probe_runs, 1));
}

}  // namespace braid
