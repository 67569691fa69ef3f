// What the profiling timers share (internal to profiling/): the clock,
// random input bytes, and the end-to-end and energy summary of timed runs.
//
//   const auto t0 = braid::profiling::Clock::now();
//   RETURN_IF_ERROR(engine->Run(inputs));
//   times.push_back(braid::profiling::MicrosSince(t0));
//   ...
//   braid::profiling::FinishRuns(meter.get(), times, iterations, timings);
#ifndef BRAID_PROFILING_TIMED_RUNS_H_
#define BRAID_PROFILING_TIMED_RUNS_H_

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <random>
#include <vector>

#include "graph/ir.h"
#include "profiling/energy.h"
#include "profiling/op_timer.h"

namespace braid::profiling {

using Clock = std::chrono::steady_clock;

// Stops the energy meter (if any) and fills the end-to-end and energy fields
// shared by ModelTimings and PlanTimings from the timed runs.
template <typename Timings>
void FinishRuns(EnergyMeter* meter, const std::vector<double>& runs, int iterations,
                Timings& t) {
  if (meter != nullptr) {
    StatusOr<EnergyReport> report = meter->Stop();
    if (!report.ok()) {
      t.energy_notes.push_back(report.status().message());
    } else if (report->measured) {
      t.energy_j_per_inference = report->total_joules / iterations;
      t.energy_source = report->total_from;
    }
  }
  t.end_to_end_median_us = Median(runs);
  t.end_to_end_min_us = *std::min_element(runs.begin(), runs.end());
}

inline double MicrosSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}


// Uniform in [-1, 1) for f32; other dtypes: zeros (valid indices / shapes).
inline std::vector<std::byte> RandomBytes(DataType dtype, int64_t elements,
                                          std::mt19937_64& rng) {
  std::vector<std::byte> bytes(static_cast<size_t>(elements) * DataTypeSize(dtype));
  if (dtype == DataType::kF32) {
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    float* f = reinterpret_cast<float*>(bytes.data());
    for (int64_t i = 0; i < elements; ++i) f[i] = u(rng);
  }
  return bytes;
}

}  // namespace braid::profiling

#endif  // BRAID_PROFILING_TIMED_RUNS_H_
