// `braid run --adapt` and `braid run --throughput`: the flags reach the
// session, the throughput report lists simulated candidates, the choice and
// measured figures (vgpu labelled virtual), a fixed batch is said, and bad
// combinations exit 2.
#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "scheduler/device_profile.h"
#include "tests/tools/cli_test_util.h"
#include "tools/commands.h"

namespace braid::cli {
namespace {

using Result = CliResult;

Result BraidRun(std::vector<std::string> args) { return RunCliCommand("run", std::move(args)); }

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(RunAdaptTest, AdaptRunsAHeterogeneousPolicyAndPrintsItsDecisions) {
  // A profile whose devices are 1000x too slow: the first full window (5
  // runs, 20 ms of kernel time) is drift on any machine, and says so. 120
  // runs: tiny_cnn's kernels take about 0.5 ms a run on a fast host, and 40
  // runs (38 after warm-up) fell short of one window there.
  StatusOr<DeviceProfile> profile = LoadDeviceProfile("host-vgpu");
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  for (DeviceSpec& d : profile->devices) {
    d.peak_gflops /= 1000;
    d.memory_bandwidth_gbps /= 1000;
  }
  const std::string path = ::testing::TempDir() + "/braid_adapt_slow_profile.json";
  ASSERT_TRUE(SaveDeviceProfile(*profile, path).ok());
  Result r = BraidRun({"builtin:tiny_cnn", "--devices", "cpu,vgpu", "--policy", "heft", "--adapt",
                       "--profile", path, "--iterations", "120", "--threads", "1"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(Has(r.out, "latency (")) << r.out;
  EXPECT_TRUE(Has(r.out, "notice: ") && Has(r.out, "faster than predicted")) << r.out;
  std::remove(path.c_str());
}

TEST(RunAdaptTest, AdaptNeedsAProfileThatKnowsTheDevice) {
  Result r = BraidRun({"builtin:tiny_cnn", "--devices", "cpu,vgpu", "--policy", "heft", "--adapt",
                       "--profile", "host", "--iterations", "1"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(Has(r.err, "has no device 'vgpu'")) << r.err;
}

TEST(RunThroughputTest, ChoosesABatchRunsItAndLabelsTheFigures) {
  Result r = BraidRun({"builtin:tiny_cnn", "--devices", "cpu,vgpu", "--vgpu-timing", "orin-like",
                       "--policy", "heft", "--throughput", "--max-batch", "4", "--iterations", "2",
                       "--warmup", "1", "--threads", "1"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(Has(r.out, "batch dimension: symbol 'N'")) << r.out;
  EXPECT_TRUE(Has(r.out, "SIMULATED")) << r.out;
  EXPECT_TRUE(Has(r.out, "    batch 4 ")) << r.out;
  EXPECT_TRUE(Has(r.out, "cpu alone") && Has(r.out, "vgpu alone")) << r.out;
  EXPECT_TRUE(Has(r.out, "chosen: ")) << r.out;
  EXPECT_TRUE(Has(r.out, "measured throughput: ")) << r.out;
  EXPECT_TRUE(Has(r.out, "a virtual figure")) << r.out;
}

TEST(RunThroughputTest, ALatencyBoundNobodyMeetsIsAnError) {
  Result r = BraidRun(
      {"builtin:tiny_cnn", "--throughput", "--latency-bound", "0.000001", "--iterations", "1"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(Has(r.err, "no batch meets the latency bound")) << r.err;
}

TEST(RunThroughputTest, BadFlagCombinationsExit2) {
  EXPECT_EQ(BraidRun({"builtin:tiny_cnn", "--max-batch", "8"}).status, 2);
  EXPECT_EQ(BraidRun({"builtin:tiny_cnn", "--throughput", "--latency-bound", "-3"}).status, 2);
  Result r = BraidRun({"builtin:tiny_cnn", "--throughput", "--plan", "x.json"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(Has(r.err, "takes no --input, --plan")) << r.err;
}

}  // namespace
}  // namespace braid::cli
