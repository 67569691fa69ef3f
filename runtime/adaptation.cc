#include "runtime/adaptation.h"

#include <algorithm>
#include <cmath>

namespace braid {

Status ValidateAdaptationOptions(const AdaptationOptions& o) {
  if (!(o.drift_threshold > 1.0) || !std::isfinite(o.drift_threshold))
    return InvalidArgument("adaptation: drift_threshold must be > 1, got " +
                           std::to_string(o.drift_threshold));
  if (o.window < 1 || o.window > 1000)
    return InvalidArgument("adaptation: window must be in [1, 1000], got " +
                           std::to_string(o.window));
  if (o.warmup_runs < 0 || o.min_runs_between < 1)
    return InvalidArgument("adaptation: warmup_runs must be >= 0 and min_runs_between >= 1");
  if (!(o.min_gain >= 0 && o.min_gain < 1))
    return InvalidArgument("adaptation: min_gain must be in [0, 1), got " +
                           std::to_string(o.min_gain));
  if (!(o.min_device_us >= 0) || !(o.min_window_us >= 0))
    return InvalidArgument("adaptation: min_device_us and min_window_us must be >= 0");
  return Status::Ok();
}

DeviceProfile ScaleDeviceSpeed(DeviceProfile profile, const std::string& name, double factor) {
  DeviceSpec* d = profile.Find(name);
  if (d == nullptr || !(factor > 0) || factor == 1.0) return profile;
  d->peak_gflops /= factor;
  d->memory_bandwidth_gbps /= factor;
  d->cache_bandwidth_gbps /= factor;
  d->copied_read_gbps /= factor;
  d->copied_window_read_gbps /= factor;
  d->copied_depthwise_read_gbps /= factor;
  d->launch_overhead_us *= factor;
  for (OpClassEfficiency& e : d->efficiency)
    if (e.overhead_us >= 0) e.overhead_us *= factor;
  return profile;
}

PlanAdapter::PlanAdapter(DeviceProfile profile, const AdaptationOptions& options)
    : base_(std::move(profile)), options_(options) {}

PlanAdapter::~PlanAdapter() = default;

DeviceProfile PlanAdapter::CorrectedProfile() const {
  DeviceProfile p = base_;
  for (const auto& [device, factor] : corrections_)
    p = ScaleDeviceSpeed(std::move(p), device, factor);
  return p;
}

double PlanAdapter::correction(const std::string& device) const {
  auto it = corrections_.find(device);
  return it == corrections_.end() ? 1.0 : it->second;
}

DeviceProfile PlanAdapter::ProposedProfile() const {
  DeviceProfile p = CorrectedProfile();
  for (const auto& [device, ratio] : drift_) p = ScaleDeviceSpeed(std::move(p), device, ratio);
  return p;
}

StatusOr<double> PlanAdapter::PredictLatencyUs(const Graph& graph, const Plan& plan,
                                               const DeviceProfile& profile) {
  CostModel model(profile);
  ASSIGN_OR_RETURN(SimGraph sim_graph, BuildSimGraph(graph, model, plan.devices));
  ASSIGN_OR_RETURN(SimResult result, SimulatePlan(sim_graph, plan));
  return result.latency_us;
}

Status PlanAdapter::Track(const Graph& graph, const Plan& plan,
                          const std::vector<std::string>& devices) {
  CostModel model(CorrectedProfile());
  ASSIGN_OR_RETURN(SimGraph sim_graph, BuildSimGraph(graph, model, devices));
  ASSIGN_OR_RETURN(SimResult result, SimulatePlan(sim_graph, plan));
  devices_ = devices;
  predicted_.assign(devices_.size(), 0.0);
  base_predicted_.assign(devices_.size(), 0.0);
  for (size_t d = 0; d < devices_.size(); ++d) {
    predicted_[d] = result.devices[d].busy_us;
    // Corrections scale every op time of a device exactly (ScaleDeviceSpeed).
    base_predicted_[d] = predicted_[d] / correction(devices_[d]);
  }
  predicted_latency_us_ = result.latency_us;
  window_sum_us_.assign(devices_.size(), 0.0);
  window_max_us_.assign(devices_.size(), 0.0);
  window_runs_ = 0;
  window_measured_us_ = 0;
  runs_since_track_ = 0;
  return Status::Ok();
}

bool PlanAdapter::Observe(std::span<const double> measured_busy_us) {
  ++runs_since_decision_;
  if (++runs_since_track_ <= options_.warmup_runs) return false;
  if (measured_busy_us.size() != devices_.size()) return false;
  for (size_t d = 0; d < devices_.size(); ++d) {
    window_sum_us_[d] += measured_busy_us[d];
    window_max_us_[d] = std::max(window_max_us_[d], measured_busy_us[d]);
    window_measured_us_ += measured_busy_us[d];
  }
  ++window_runs_;
  if (window_runs_ < options_.window || runs_since_decision_ < options_.min_runs_between ||
      window_measured_us_ < options_.min_window_us)
    return false;

  bool drifted = false;
  for (size_t d = 0; d < devices_.size(); ++d) {
    if (predicted_[d] < options_.min_device_us) continue;
    // Without the slowest run: one preemption is not drift.
    const int n = window_runs_ > 1 ? window_runs_ - 1 : 1;
    const double measured =
        window_runs_ > 1 ? window_sum_us_[d] - window_max_us_[d] : window_sum_us_[d];
    const double ratio = measured / (n * predicted_[d]);
    if (ratio > options_.drift_threshold || ratio < 1.0 / options_.drift_threshold) {
      if (!drifted) drift_.clear();
      drifted = true;
      // Bounded so one absurd window cannot wreck the model.
      drift_.emplace_back(devices_[d], std::clamp(ratio, 1e-2, 1e2));
    }
  }
  // Windows tumble: the next check sees only later runs.
  std::fill(window_sum_us_.begin(), window_sum_us_.end(), 0.0);
  std::fill(window_max_us_.begin(), window_max_us_.end(), 0.0);
  window_runs_ = 0;
  window_measured_us_ = 0;
  return drifted;
}

void PlanAdapter::Accept() {
  for (const auto& [device, ratio] : drift_) {
    double& c = corrections_.try_emplace(device, 1.0).first->second;
    c = std::clamp(c * ratio, 1e-3, 1e3);
  }
  drift_.clear();
  runs_since_decision_ = 0;
  ++decisions_;
}

}  // namespace braid
