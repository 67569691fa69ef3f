// `braid convert --precision int8 [--calibration-samples N]
// [--calibration-input NAME=FILE.npy]...`: the written file holds the int8
// ops, the summary says what was quantized on which data, `braid run` runs
// it, and bad arguments are clear errors that write nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "graph/braid_format.h"
#include "tests/scoped_temp_dir.h"
#include "tests/tools/cli_test_util.h"
#include "tools/npy.h"

namespace braid::cli {
namespace {

const std::filesystem::path& TempDir() {
  static const testing::ScopedTempDir dir("braid_quantize_cli_test");
  return dir.path();
}

int Count(const Graph& g, const std::string& op) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.op_type == op;
  return n;
}

TEST(QuantizeCli, ConvertWritesAnInt8ModelThatRuns) {
  const std::string path = (TempDir() / "tiny_int8.braid").string();
  CliResult r = RunCli({"convert", "builtin:tiny_cnn", "-o", path, "--precision", "int8",
                        "--calibration-samples", "2"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("int8 calibration (2 random samples, CPU)"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("int8: calibrated on 2 runs of random N(0,1) values for input"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("fit real data badly"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0 kept f32"), std::string::npos) << r.out;
  StatusOr<Graph> g = LoadBraidFile(path);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_GE(Count(*g, "QLinearConv"), 5);
  EXPECT_EQ(Count(*g, "Conv"), 0);
  CliResult run = RunCli({"run", path, "--iterations", "2"});
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("0 fallbacks"), std::string::npos) << run.out;  // int8 kernels took every op
}

TEST(QuantizeCli, CalibratesOnGivenInputs) {
  std::vector<float> x(3 * 224 * 224);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 17) / 8.0f - 1.0f;
  const std::string npy_path = (TempDir() / "image.npy").string();
  const std::vector<int64_t> dims = {1, 3, 224, 224};
  ASSERT_TRUE(npy::WriteFile(npy_path, DataType::kF32, dims, x.data()).ok());
  const std::string path = (TempDir() / "given.braid").string();
  CliResult r = RunCli({"convert", "builtin:tiny_cnn", "-o", path, "-q", "--precision", "int8",
                        "--calibration-input", "input=" + npy_path});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("int8: calibrated on 1 run of the given inputs"), std::string::npos) << r.out;
}

TEST(QuantizeCli, BadArgumentsAreClearErrors) {
  const std::string out = (TempDir() / "bad.braid").string();
  auto expect_error = [&](std::vector<std::string> extra, const std::string& text) {
    std::vector<std::string> args = {"convert", "builtin:tiny_cnn", "-o", out, "-q"};
    args.insert(args.end(), extra.begin(), extra.end());
    CliResult r = RunCli(args);
    EXPECT_NE(r.status, 0) << text;
    EXPECT_NE(r.err.find(text), std::string::npos) << r.err;
  };
  expect_error({"--precision", "fp16"}, "fp16 / bf16 are not implemented");
  expect_error({"--calibration-samples", "4"}, "need --precision int8");
  expect_error({"--precision", "int8", "--calibration-samples", "0"},
               "number of samples in [1, 10000], got '0'");
  expect_error({"--precision", "int8", "--no-fuse"}, "drop --no-fuse");
  expect_error({"--precision", "int8", "--prune", "0.5"}, "does not combine with --prune");
  expect_error({"--precision", "int8", "--activation-sparsity", "2"}, "--activation-sparsity");
  expect_error({"--precision", "int8", "--calibration-input", "image.npy"}, "expects NAME=FILE.npy");
  const std::string missing = (TempDir() / "missing.npy").string();
  expect_error({"--precision", "int8", "--calibration-input", "input=" + missing}, missing);
  EXPECT_FALSE(std::filesystem::exists(out));  // nothing written on error

  CliResult help = RunCli({"convert", "--help"});
  EXPECT_NE(help.out.find("--precision P"), std::string::npos);
  EXPECT_NE(help.out.find("--calibration-input NAME=FILE.npy"), std::string::npos);
}

}  // namespace
}  // namespace braid::cli
