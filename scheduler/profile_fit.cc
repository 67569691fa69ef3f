#include "scheduler/profile_fit.h"

#include <algorithm>

namespace braid {

DeviceSpec FitCpuSpec(std::span<const MeasuredOps> runs, const HostCaches& caches,
                      double dram_bandwidth_gbps) {
  DeviceSpec d;
  d.name = "cpu";
  d.kind = "cpu";
  d.description = "host CPU (calibrated)";
  d.cache_bytes = caches.l2_bytes_per_core;
  if (const double llc = caches.llc_bytes; dram_bandwidth_gbps > 0 && llc > d.cache_bytes) {
    d.llc_bytes = llc;
    d.dram_bandwidth_gbps = dram_bandwidth_gbps;
  }
  double best_gflops = 0, best_gbps = 0, best_cache_gbps = 0, best_dram_gbps = 0;
  std::vector<double> small;
  std::vector<OpMeasurement> all;
  std::string models;
  for (const MeasuredOps& run : runs) {
    d.compute_units = run.threads;
    models += (models.empty() ? "" : ", ") + run.label;
    for (const OpMeasurement& m : run.ops) {
      all.push_back(m);
      if (m.measured_us <= 0) continue;
      const double gflops = m.flops / m.measured_us * 1e-3;
      const double gbps = m.bytes / m.measured_us * 1e-3;
      if (m.op_class == OpClass::kConv || m.op_class == OpClass::kGemm)
        best_gflops = std::max(best_gflops, gflops);
      // Streaming ops only (a Reshape / Flatten may not touch its bytes).
      if (m.op_class == OpClass::kElementwise || m.op_class == OpClass::kPool ||
          m.op_class == OpClass::kNormalization || m.op_class == OpClass::kGemm) {
        if (m.op_class != OpClass::kGemm || m.flops < 4 * m.bytes) {  // GEMV-like
          best_gbps = std::max(best_gbps, gbps);
          if (d.cache_bytes > 0 && m.bytes <= d.cache_bytes)
            best_cache_gbps = std::max(best_cache_gbps, gbps);
          if (d.cache_bytes > 0 && m.bytes > 2 * d.cache_bytes)
            best_dram_gbps = std::max(best_dram_gbps, gbps);
        }
      }
      small.push_back(m.measured_us);
    }
  }
  d.peak_gflops = best_gflops > 0 ? best_gflops : 1;
  // With a cache tier: DRAM bandwidth from ops well beyond the cache, cache
  // bandwidth from ops inside it; without samples on both sides, one tier.
  if (best_cache_gbps > 0 && best_dram_gbps > 0 && best_cache_gbps > best_dram_gbps) {
    d.memory_bandwidth_gbps = best_dram_gbps;
    d.cache_bandwidth_gbps = best_cache_gbps;
  } else {
    d.memory_bandwidth_gbps = best_gbps > 0 ? best_gbps : 1;
    d.cache_bytes = 0;
  }
  std::sort(small.begin(), small.end());
  d.launch_overhead_us = small.empty() ? 0 : small[small.size() / 20];  // 5th percentile op
  d.active_power_w = 0;
  d.idle_power_w = 0;
  FitDevice(d, all);
  const std::string how = "measured by braid calibrate (" + models + ", " +
                          std::to_string(d.compute_units) + " threads)";
  d.sources["compute_units"] = "intra-op threads used while measuring";
  d.sources["peak_gflops"] = "best conv/GEMM throughput " + how;
  d.sources["memory_bandwidth_gbps"] =
      d.cache_bytes > 0 ? "best memory-bound op throughput above 2x cache_bytes " + how
                        : "best memory-bound op throughput " + how;
  if (d.llc_bytes > 0) {
    d.sources["llc_bytes"] = "last-level cache (sysfs)";
    d.sources["dram_bandwidth_gbps"] =
        "measured by braid calibrate: two Adds over vectors of 2x llc_bytes (64 MB at least), "
        "bytes read plus twice the bytes written over time, " +
        std::to_string(d.compute_units) + " threads";
  }
  if (d.cache_bytes > 0) {
    d.sources["cache_bytes"] = "L2 cache per core (sysconf / sysfs)";
    d.sources["cache_bandwidth_gbps"] = "best memory-bound op throughput within cache_bytes " + how;
  }
  d.sources["launch_overhead_us"] = "5th percentile per-op time " + how;
  d.sources["efficiency"] = "per-class fit to per-op medians " + how;
  if (!d.op_types.empty())
    d.sources["op_types"] = "per-op-type factor on the class fit's residual " + how;
  d.sources["active_power_w"] = "not measured (no power sensor used by calibrate); 0";
  d.sources["idle_power_w"] = "not measured; 0";
  return d;
}

}  // namespace braid
