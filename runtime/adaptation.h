// Online adaptation: compares each Run's measured kernel time per device with
// what the plan predicts, and when a device drifts (say the CPU is loaded by
// another process and its ops take 2x) proposes a corrected device profile
// (that device's throughput scaled by the observed factor) so the session can
// re-plan. Hysteresis: a drift threshold on the ratio over a window of runs
// (total measured / total predicted with the slowest run left out, so one
// preemption or page fault is not drift), warm-up runs ignored after every
// plan change, a minimum number of runs between decisions, and a new plan
// only when its predicted gain exceeds a margin (the session checks that with
// PredictLatencyUs).
//
//   braid::PlanAdapter adapter(profile, {});              // profile covers the devices
//   RETURN_IF_ERROR(adapter.Track(graph, plan, {"cpu", "vgpu"}));  // annotated static graph
//   for (;;) {
//     engine->Run(inputs);
//     engine->DeviceBusyUs(busy);                          // measured, no allocation
//     if (!adapter.Observe(busy)) continue;                // no decision due
//     braid::CostModel corrected(adapter.ProposedProfile());  // drift() says why
//     ... re-plan with `corrected`, compare adapter.PredictLatencyUs(...) ...
//     adapter.Accept();                                    // the corrections become the model
//     RETURN_IF_ERROR(adapter.Track(graph, chosen_plan, {"cpu", "vgpu"}));
//   }
//
// Every prediction is the cost model's on the (corrected) profile; the
// corrections are per device and multiply: a device measured 2x slower than
// predicted twice in a row ends at 4x.
#ifndef BRAID_RUNTIME_ADAPTATION_H_
#define BRAID_RUNTIME_ADAPTATION_H_

#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "graph/ir.h"
#include "scheduler/cost_model.h"
#include "scheduler/device_profile.h"
#include "scheduler/plan.h"
#include "scheduler/simulator.h"

namespace braid {

struct AdaptationOptions {
  // Drift: measured / predicted kernel time on a device over a window (the
  // sums, without the run with the largest measurement) leaves
  // [1 / drift_threshold, drift_threshold].
  double drift_threshold = 1.5;
  // A window is at least `window` runs and at least `min_window_us` of
  // measured kernel time (all devices): a scheduler time slice is
  // milliseconds, so a CPU load shows in short runs as occasional long
  // preemptions, and the window must be long enough to see their share.
  int window = 5;
  double min_window_us = 20000;
  // Runs ignored after every plan change (first-run allocation, caches).
  int warmup_runs = 2;
  // Runs between two decisions (a re-plan or a kept plan), warm-up included.
  int min_runs_between = 10;
  // A new plan is taken only when its predicted latency is at least this
  // fraction below the current plan's (both on the corrected profile).
  double min_gain = 0.10;
  // Devices predicted busier than this per run are judged; below it the
  // measurement is mostly timer and dispatch noise.
  double min_device_us = 50;
};

// Reasonable bounds checked: threshold > 1, window >= 1, ...
Status ValidateAdaptationOptions(const AdaptationOptions& options);

// `profile` with device `name`'s op times multiplied by `factor` (> 0):
// peak FLOP/s and bandwidth divided, launch and fitted per-class overheads
// multiplied, so CostModel::OpTimeUs scales exactly. Links are unchanged.
DeviceProfile ScaleDeviceSpeed(DeviceProfile profile, const std::string& name, double factor);

class PlanAdapter {
 public:
  // `profile` must name every device the tracked plans use.
  PlanAdapter(DeviceProfile profile, const AdaptationOptions& options);
  ~PlanAdapter();

  // Starts judging `plan` on `graph` (static shapes, annotated) over
  // `devices` (a superset of the plan's, host first; the order of the busy
  // times given to Observe): predicts its per-device kernel time on the
  // corrected profile and restarts the window and the warm-up.
  Status Track(const Graph& graph, const Plan& plan, const std::vector<std::string>& devices);

  // One Run's measured kernel microseconds per device (Track's order). True
  // when a decision is due: enough runs since the last one and a device
  // drifted. Allocates nothing.
  bool Observe(std::span<const double> measured_busy_us);

  // After Observe returned true: the drifting devices with their median
  // measured / predicted ratio, and the profile with those corrections
  // applied (not yet accepted).
  const std::vector<std::pair<std::string, double>>& drift() const { return drift_; }
  DeviceProfile ProposedProfile() const;
  // Makes the proposed corrections the model and restarts the counters (call
  // after a decision, whether the plan changed or not; then Track the plan
  // that runs).
  void Accept();

  // The profile with the accepted corrections (the base profile at first).
  DeviceProfile CorrectedProfile() const;
  // Accepted correction factor of a device (1 when none).
  double correction(const std::string& device) const;
  // Predicted (simulated) latency of `plan` on `graph` with `profile`.
  static StatusOr<double> PredictLatencyUs(const Graph& graph, const Plan& plan,
                                           const DeviceProfile& profile);

  // The tracked plan's predicted kernel time per device on the corrected
  // profile, and on the base profile (what a fake measurement derives from).
  std::span<const double> predicted_busy_us() const { return predicted_; }
  std::span<const double> base_predicted_busy_us() const { return base_predicted_; }
  double predicted_latency_us() const { return predicted_latency_us_; }
  const std::vector<std::string>& devices() const { return devices_; }
  int runs_since_decision() const { return runs_since_decision_; }
  int decisions() const { return decisions_; }

 private:
  DeviceProfile base_;
  AdaptationOptions options_;
  std::map<std::string, double> corrections_;  // accepted, per device
  std::vector<std::string> devices_;
  std::vector<double> predicted_, base_predicted_;
  double predicted_latency_us_ = 0;
  double window_measured_us_ = 0;      // all devices, in the window
  std::vector<double> window_sum_us_;  // [device] measured in the window
  std::vector<double> window_max_us_;  // [device] largest single run
  int window_runs_ = 0;
  int runs_since_decision_ = 0;
  int runs_since_track_ = 0;
  int decisions_ = 0;
  std::vector<std::pair<std::string, double>> drift_;
};

}  // namespace braid

#endif  // BRAID_RUNTIME_ADAPTATION_H_
