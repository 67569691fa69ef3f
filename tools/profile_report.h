// The files `braid profile` writes from a measured engine run (PlanTimings):
// Chrome trace JSON (runtime/trace.h) with one track per device stream and
// copy direction, an SVG with the timeline and a per-op bar chart, and a
// per-step CSV.
//
//   braid::cli::ProfileData data;
//   data.timings = &plan_timings;                 // profiling::MeasurePlan
//   data.predicted_us = PredictSteps(plan_timings, cost_model);
//   data.sim_graph = &sim_graph; data.simulated = &sim_result;   // optional
//   braid::TraceWriter trace;
//   braid::cli::AppendProfileTrace(data, trace);
//   RETURN_IF_ERROR(braid::cli::WriteTextFile("ops.csv", braid::cli::ProfileCsv(data)));
#ifndef BRAID_TOOLS_PROFILE_REPORT_H_
#define BRAID_TOOLS_PROFILE_REPORT_H_

#include <string>
#include <vector>

#include "runtime/trace.h"
#include "scheduler/cost_model.h"
#include "profiling/plan_timer.h"
#include "scheduler/simulator.h"

namespace braid::cli {

struct ProfileData {
  const profiling::PlanTimings* timings = nullptr;  // measured
  const SimGraph* sim_graph = nullptr;   // the simulated plan's graph (optional)
  const SimResult* simulated = nullptr;  // with a timeline (optional)
  std::vector<double> predicted_us;      // per step; < 0 when the profile cannot tell
  std::string profile;                   // the profile predictions come from
};

// Per step: kernels the cost model's time for the step's node (slice parts
// with their own FLOPs / bytes) on the step's device, with the bytes that
// are cold when it runs (ColdBytesPerNode over the graph with the plan's
// slices expanded as the engine expands them, so parts and joins have
// their arena history too), copies the link's transfer time; -1 where the
// profile lacks the device or link.
std::vector<double> PredictSteps(const profiling::PlanTimings& timings, const CostModel& model);

// The track a measured step is shown on: the engine's track
// ("cpu/stream0", "vgpu/h2d"), marked "(virtual)" on a virtual device.
std::string ProfileTrack(const profiling::StepProfile& step);

// Measured steps at their median start on their own tracks; op events carry
// op, class, flops, bytes, intensity, weight_sparsity, device,
// implementation, predicted_us and measured_us; copy events bytes, from, to,
// predicted_us and measured_us. The simulated plan (when given) goes on
// "simulated:DEVICE/stream0" and "simulated:A->B" tracks.
void AppendProfileTrace(const ProfileData& data, TraceWriter& trace);
std::string ProfileSvg(const ProfileData& data);
std::string ProfileCsv(const ProfileData& data);

Status WriteTextFile(const std::string& path, const std::string& text);

}  // namespace braid::cli

#endif  // BRAID_TOOLS_PROFILE_REPORT_H_
