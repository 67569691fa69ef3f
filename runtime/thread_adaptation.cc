#include "runtime/thread_adaptation.h"

#include <algorithm>

namespace braid {

void ThreadAdaptation::Recent::Add(double ms) {
  ms_[static_cast<size_t>(next_)] = ms;
  next_ = (next_ + 1) % static_cast<int>(ms_.size());
  count_ = std::min(count_ + 1, static_cast<int>(ms_.size()));
}

double ThreadAdaptation::Recent::Typical() const {
  // The newest count_ entries end just before next_; insertion-sorted (five
  // at most).
  std::array<double, 5> sorted{};
  const size_t size = ms_.size();
  const size_t n = static_cast<size_t>(count_);
  for (size_t i = 0; i < n; ++i) {
    double v = ms_[(static_cast<size_t>(next_) + size - 1 - i) % size];
    size_t j = i;
    for (; j > 0 && sorted[j - 1] > v; --j) sorted[j] = sorted[j - 1];
    sorted[j] = v;
  }
  return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

ThreadAdaptation::ThreadAdaptation(int wide_threads, ThreadAdaptationOptions options)
    : wide_threads_(std::max(wide_threads, 1)),
      options_(options),
      probe_interval_runs_(std::max(options.first_probe_runs, 1)) {}

int ThreadAdaptation::ThreadsForNextRun() const {
  if (wide_threads_ == 1) return 1;
  return narrow_ != probing_ ? 1 : wide_threads_;
}

void ThreadAdaptation::Switch() {
  narrow_ = !narrow_;
  ++(narrow_ ? narrow_switches_ : wide_returns_);
  probe_interval_runs_ = std::max(options_.first_probe_runs, 1);
  runs_since_probe_ = 0;
  ms_since_probe_ = 0;
}

void ThreadAdaptation::Observe(int threads, double ms) {
  if (wide_threads_ == 1) return;
  const bool ran_narrow = threads == 1;
  if (!ran_narrow && threads != wide_threads_) return;
  if (probing_ && ran_narrow != narrow_) {
    Arm(ran_narrow).Add(ms);
    probe_cost_ms_ += ms;
    if (--probe_runs_left_ > 0) return;
    probing_ = false;
    last_probe_cost_ms_ = probe_cost_ms_;
    if (Arm(!narrow_).Typical() * options_.probe_margin < Arm(narrow_).Typical()) {
      // The next probe runs the arm being left: what it costs.
      last_probe_cost_ms_ = Arm(narrow_).Typical() * std::max(options_.probe_runs, 1);
      Switch();
      return;
    }
    runs_since_probe_ = 0;
    ms_since_probe_ = 0;
    probe_interval_runs_ =
        std::min(probe_interval_runs_ * 2, std::max(options_.max_probe_runs, 1));
    return;
  }
  if (ran_narrow != narrow_) return;  // not what this state runs
  Recent& arm = Arm(narrow_);
  if (!narrow_ && arm.count() >= 3 && ms > options_.slow_factor * arm.Typical() &&
      (narrow_recent_.count() == 0 || narrow_recent_.Typical() < ms)) {
    Switch();
    last_probe_cost_ms_ = ms;
    return;
  }
  arm.Add(ms);
  ++runs_since_probe_;
  ms_since_probe_ += ms;
  if (runs_since_probe_ >= probe_interval_runs_ &&
      ms_since_probe_ >= options_.probe_cost_ratio * last_probe_cost_ms_) {
    probing_ = true;
    probe_runs_left_ = std::max(options_.probe_runs, 1);
    probe_cost_ms_ = 0;
    Arm(!narrow_).Clear();
  }
}

}  // namespace braid
