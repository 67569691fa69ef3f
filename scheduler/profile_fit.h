// The host CPU's DeviceSpec fitted to measured op times: what `braid
// calibrate` writes into a device profile. Takes plain measurement rows, so
// the scheduler knows nothing of how they were timed (profiling/ times them).
//
//   braid::MeasuredOps run;
//   run.label = "builtin:resnet18";
//   run.threads = 8;
//   run.ops = ...;  // OpMeasurement rows (profiling::ToMeasurements)
//   braid::HostCaches caches{.l2_bytes_per_core = 1 << 20, .llc_bytes = 32 << 20};
//   braid::DeviceSpec cpu = braid::FitCpuSpec({&run, 1}, caches, /*dram_bandwidth_gbps=*/0);
#ifndef BRAID_SCHEDULER_PROFILE_FIT_H_
#define BRAID_SCHEDULER_PROFILE_FIT_H_

#include <span>
#include <string>
#include <vector>

#include "scheduler/cost_model.h"
#include "scheduler/device_profile.h"

namespace braid {

// One measured run's op rows (a model or a calibration suite section).
struct MeasuredOps {
  std::string label;  // names the run in the spec's sources ("builtin:resnet18")
  int threads = 1;    // intra-op threads it ran with
  std::vector<OpMeasurement> ops;
};

// The host's caches as discovered (0 = unknown).
struct HostCaches {
  double l2_bytes_per_core = 0;
  double llc_bytes = 0;  // the last-level cache when it is an L3 or beyond
};

// peak_gflops is the best conv/GEMM throughput seen; cache_bytes the L2 per
// core, with cache_bandwidth_gbps the best streaming-op throughput within it
// and memory_bandwidth_gbps the best beyond 2x it (one tier when either side
// has no sample); per-class efficiencies and per-op-type factors fitted to
// every op (FitDevice). With `dram_bandwidth_gbps` > 0 and a last-level cache
// larger than the L2, also the DRAM tier (llc_bytes, dram_bandwidth_gbps)
// the fit then prices. compute_units is the last run's threads. Every
// number's source says "measured".
DeviceSpec FitCpuSpec(std::span<const MeasuredOps> runs, const HostCaches& caches,
                      double dram_bandwidth_gbps = 0);

}  // namespace braid

#endif  // BRAID_SCHEDULER_PROFILE_FIT_H_
