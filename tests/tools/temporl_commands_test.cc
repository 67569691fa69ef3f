// `braid train --policy temporl` and `braid plan --policy temporl`: the
// model file, the learning curve, the split-layer table and its errors.
// Every figure is simulated.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "tests/tools/cli_test_util.h"

namespace braid::cli {
namespace {

namespace fs = std::filesystem;

TEST(TemporlCommandsTest, TrainThenPlanPrintsSplitLayers) {
  const fs::path dir =
      fs::temp_directory_path() / ("braid_temporl_cmd_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string model = (dir / "temporl.bin").string();
  const std::string csv = (dir / "curve.csv").string();
  const std::string svg = (dir / "curve.svg").string();
  CliResult r = RunCli({"train", "--policy", "temporl", "--profiles", "host-vgpu", "--models",
                        "squeezenet1_1", "--random-graphs", "0", "--episodes", "16", "--out",
                        model, "--csv", csv, "--svg", svg});
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("SIMULATED"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("peak-ratio"), std::string::npos) << r.out;
  const std::string curve = ReadTextFile(csv);
  EXPECT_EQ(std::count(curve.begin(), curve.end(), '\n'), 18) << curve;  // header, 0..16
  EXPECT_NE(ReadTextFile(svg).find("SIMULATED"), std::string::npos);

  CliResult plan = RunCli({"plan", "builtin:squeezenet1_1", "--profile", "host-vgpu", "--policy",
                           "temporl", "--policy-file", model});
  ASSERT_EQ(plan.status, 0) << plan.err;
  EXPECT_NE(plan.out.find("split layers (simulated)"), std::string::npos) << plan.out;
  EXPECT_NE(plan.out.find("temporl: "), std::string::npos);
  CliResult json = RunCli({"plan", "builtin:squeezenet1_1", "--profile", "host-vgpu", "--policy",
                           "temporl", "--policy-file", model, "--json"});
  ASSERT_EQ(json.status, 0) << json.err;
  EXPECT_NE(json.out.find("\"split_layers\":[{"), std::string::npos);

  // braid run takes the agent the same way (it once passed it to sparoa).
  CliResult run = RunCli({"run", "builtin:squeezenet1_1", "--devices", "cpu,vgpu", "--policy",
                          "temporl", "--policy-file", model, "--iterations", "1", "--warmup", "0"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("latency"), std::string::npos) << run.out;
  CliResult run_heft = RunCli({"run", "builtin:tiny_cnn", "--policy", "heft", "--policy-file", model});
  EXPECT_NE(run_heft.status, 0);
  EXPECT_NE(run_heft.err.find("sparoa or temporl only"), std::string::npos) << run_heft.err;

  CliResult untrained = RunCli({"plan", "builtin:tiny_cnn", "--profile", "host-vgpu", "--policy",
                                "temporl"});
  EXPECT_NE(untrained.status, 0);
  EXPECT_NE(untrained.err.find("temporl.model"), std::string::npos) << untrained.err;
  CliResult base = RunCli({"plan", "builtin:tiny_cnn", "--policy", "heft", "--temporl-base",
                           "partition"});
  EXPECT_NE(base.status, 0);
  CliResult self = RunCli({"train", "--policy", "temporl", "--out", model, "--base", "temporl"});
  EXPECT_NE(self.status, 0);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace braid::cli
