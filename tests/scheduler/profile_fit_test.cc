// FitCpuSpec: the host's DeviceSpec from plain measurement rows (what `braid
// calibrate` fits after profiling/ times the ops).
#include "scheduler/profile_fit.h"

#include <gtest/gtest.h>

#include <vector>

namespace braid {
namespace {

OpMeasurement Row(OpClass cls, double flops, double bytes, double us, const char* type) {
  OpMeasurement m;
  m.op_class = cls;
  m.flops = flops;
  m.bytes = bytes;
  m.measured_us = us;
  m.op_type = type;
  return m;
}

// A 1 MB L2: Adds of 256 KB inside it at 40 GB/s, of 8 MB beyond 2x it at
// 10 GB/s, and convs at up to 200 GFLOP/s.
std::vector<MeasuredOps> TwoRuns() {
  MeasuredOps a;
  a.label = "builtin:a";
  a.threads = 4;
  a.ops = {Row(OpClass::kConv, 2e8, 1e6, 1000, "Conv"),  // 200 GFLOP/s
           Row(OpClass::kElementwise, 0, 256e3, 6.4, "Add"),  // 40 GB/s
           Row(OpClass::kElementwise, 0, 512e3, 25.6, "Add")};
  MeasuredOps b;
  b.label = "builtin:b";
  b.threads = 2;
  b.ops = {Row(OpClass::kConv, 1e8, 1e6, 1000, "Conv"),  // 100 GFLOP/s
           Row(OpClass::kElementwise, 0, 8e6, 800, "Add"),  // 10 GB/s
           Row(OpClass::kElementwise, 0, 4e6, 800, "Add")};
  return {a, b};
}

TEST(FitCpuSpecTest, PeakAndBandwidthTiersComeFromTheBestRows) {
  const std::vector<MeasuredOps> runs = TwoRuns();
  const DeviceSpec d = FitCpuSpec(runs, {.l2_bytes_per_core = 1 << 20, .llc_bytes = 0});
  EXPECT_EQ(d.name, "cpu");
  EXPECT_DOUBLE_EQ(d.peak_gflops, 200);
  EXPECT_DOUBLE_EQ(d.cache_bytes, 1 << 20);
  EXPECT_DOUBLE_EQ(d.cache_bandwidth_gbps, 40);
  EXPECT_DOUBLE_EQ(d.memory_bandwidth_gbps, 10);
  EXPECT_EQ(d.compute_units, 2);  // the last run's threads
  EXPECT_EQ(d.llc_bytes, 0);      // no DRAM tier without a measured bandwidth
  EXPECT_NE(d.sources.at("peak_gflops").find("builtin:a, builtin:b"), std::string::npos);
}

TEST(FitCpuSpecTest, OneTierWithoutSamplesOnBothSidesOfTheCache) {
  std::vector<MeasuredOps> runs = TwoRuns();
  runs.pop_back();  // nothing beyond 2x the L2
  const DeviceSpec d = FitCpuSpec(runs, {.l2_bytes_per_core = 1 << 20, .llc_bytes = 0});
  EXPECT_EQ(d.cache_bytes, 0);
  EXPECT_DOUBLE_EQ(d.memory_bandwidth_gbps, 40);
}

TEST(FitCpuSpecTest, DramTierNeedsALastLevelCacheBeyondTheL2) {
  const std::vector<MeasuredOps> runs = TwoRuns();
  const DeviceSpec with = FitCpuSpec(runs, {.l2_bytes_per_core = 1 << 20, .llc_bytes = 32 << 20},
                                     /*dram_bandwidth_gbps=*/7);
  EXPECT_DOUBLE_EQ(with.llc_bytes, 32 << 20);
  EXPECT_DOUBLE_EQ(with.dram_bandwidth_gbps, 7);
  const DeviceSpec l2_last =
      FitCpuSpec(runs, {.l2_bytes_per_core = 1 << 20, .llc_bytes = 0}, /*dram_bandwidth_gbps=*/7);
  EXPECT_EQ(l2_last.llc_bytes, 0);
}

}  // namespace
}  // namespace braid
