// `braid convert --precision int8 [--calibration-samples N]
// [--calibration-input NAME=FILE.npy]...`: the written file holds the int8
// ops, the summary says what was quantized on which data, `braid run` runs
// it, and bad arguments are clear errors that write nothing. And `--precision
// bf16`: every Conv / MatMul / Gemm marked, the accuracy check printed.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "graph/braid_format.h"
#include "tests/scoped_temp_dir.h"
#include "tests/tools/cli_test_util.h"
#include "tools/cli_common.h"
#include "tools/npy.h"

namespace braid::cli {
namespace {

const std::filesystem::path& TempDir() {
  static const testing::ScopedTempDir dir("braid_quantize_cli_test");
  return dir.path();
}

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  return lines;
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
  EXPECT_NE(r.out.find("int8: calibrated (min-max) on 2 runs of random N(0,1) values for input"),
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
                        "--calibration-input", "input=" + npy_path, "--calibration-method",
                        "percentile:99.9"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("int8: calibrated (percentile 99.9) on 1 run of the given inputs"),
            std::string::npos)
      << r.out;
}

// A target above what full int8 reaches keeps the most sensitive layers
// f32 (listed with the figure), the CSV ranks every quantized layer worst
// first with the precision it got, and the f32 layers are the first rows.
TEST(QuantizeCli, LayersThatLoseTooMuchStayFloat) {
  const std::string path = (TempDir() / "sensitive.braid").string();
  const std::string csv_path = (TempDir() / "sensitivity.csv").string();
  CliResult r = RunCli({"convert", "builtin:tiny_cnn", "-o", path, "--precision", "int8",
                        "--calibration-samples", "2", "--min-cosine", "0.999999",
                        "--sensitivity-report", csv_path});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("per-layer sensitivity"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("int8 accuracy on the calibration inputs: output cosine to f32 0."),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("most sensitive of"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("kept f32 for --min-cosine 0.999999"), std::string::npos) << r.out;
  const std::string csv = ReadTextFile(csv_path);
  ASSERT_EQ(csv.rfind("node,op_type,output_cosine_alone,sqnr_db,cosine,precision\n", 0), 0u) << csv;
  std::vector<std::string> precisions;
  std::vector<double> alone;
  for (const std::string& line : SplitLines(csv.substr(csv.find('\n') + 1))) {
    const std::vector<std::string> fields = SplitList(line);
    ASSERT_EQ(fields.size(), 6u) << line;
    alone.push_back(std::stod(fields[2]));
    precisions.push_back(fields[5]);
  }
  ASSERT_GE(precisions.size(), 5u);
  EXPECT_TRUE(std::is_sorted(alone.begin(), alone.end())) << csv;
  EXPECT_EQ(precisions.front(), "f32") << csv;
  const auto first_int8 = std::find(precisions.begin(), precisions.end(), "int8");
  EXPECT_NE(first_int8, precisions.end()) << csv;  // as few as reach it, not all
  EXPECT_TRUE(std::all_of(first_int8, precisions.end(),
                          [](const std::string& p) { return p == "int8"; }))
      << csv;
  // The cosine the kept layers reach is printed, and it meets the target.
  const std::string reached = " with the ";
  const size_t at = r.out.rfind(", ", r.out.find(reached));
  ASSERT_NE(at, std::string::npos) << r.out;
  EXPECT_GE(std::stod(r.out.substr(at + 2)), 0.999999) << r.out;
  EXPECT_EQ(r.out.find("warning"), std::string::npos) << r.out;
  StatusOr<Graph> g = LoadBraidFile(path);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const int kept = static_cast<int>(first_int8 - precisions.begin());
  EXPECT_EQ(Count(*g, "Conv") + Count(*g, "Gemm"), kept);  // the f32 ones
  EXPECT_GE(Count(*g, "QLinearConv"), 1);

  // --min-cosine 0: no check, no f32 layer for accuracy.
  CliResult all = RunCli({"convert", "builtin:tiny_cnn", "-o", path, "-q", "--precision", "int8",
                          "--calibration-samples", "2", "--min-cosine", "0"});
  ASSERT_EQ(all.status, 0) << all.err;
  EXPECT_EQ(all.out.find("int8 accuracy"), std::string::npos) << all.out;
  EXPECT_NE(all.out.find("0 kept f32"), std::string::npos) << all.out;
}

TEST(QuantizeCli, ConvertWritesABf16ModelThatRuns) {
  const std::string path = (TempDir() / "tiny_bf16.braid").string();
  CliResult r = RunCli({"convert", "builtin:tiny_cnn", "-o", path, "--precision", "bf16",
                        "--calibration-samples", "2"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("bf16 (accuracy check on the CPU)"), std::string::npos) << r.err;
  StatusOr<Graph> g = LoadBraidFile(path);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  int marked = 0;
  for (const Node& n : g->nodes()) {
    if (n.op_type != "Conv" && n.op_type != "Gemm" && n.op_type != "MatMul") continue;
    EXPECT_EQ(n.attrs.GetString("precision", ""), "bf16") << n.name;
    ++marked;
  }
  EXPECT_GE(marked, 5);
  EXPECT_NE(r.out.find("bf16: " + std::to_string(marked) +
                       " Conv / MatMul / Gemm nodes compute in bf16"),
            std::string::npos)
      << r.out;
  // bf16 keeps about 3 significant digits per operand: close to f32.
  const std::string accuracy = "bf16 accuracy on 2 random N(0,1) samples: output cosine to f32 ";
  const size_t at = r.out.find(accuracy);
  ASSERT_NE(at, std::string::npos) << r.out;
  const double cosine = std::stod(r.out.substr(at + accuracy.size()));
  EXPECT_GT(cosine, 0.999) << r.out;
  EXPECT_LE(cosine, 1.0) << r.out;
  CliResult run = RunCli({"run", path, "--iterations", "2"});
  EXPECT_EQ(run.status, 0) << run.err;
  // inspect shows each marked node's precision (table ":bf16", JSON "precision").
  CliResult inspect = RunCli({"inspect", path});
  ASSERT_EQ(inspect.status, 0) << inspect.err;
  EXPECT_NE(inspect.out.find(":bf16"), std::string::npos) << inspect.out;
  CliResult json = RunCli({"inspect", path, "--json"});
  ASSERT_EQ(json.status, 0) << json.err;
  size_t bf16_nodes = 0;
  for (size_t at = json.out.find("\"precision\":\"bf16\""); at != std::string::npos;
       at = json.out.find("\"precision\":\"bf16\"", at + 1))
    ++bf16_nodes;
  EXPECT_EQ(bf16_nodes, static_cast<size_t>(marked)) << json.out;
  EXPECT_NE(json.out.find("\"precision\":\"f32\""), std::string::npos);  // a Relu, an Add

  // --min-cosine 0: no check, nothing run.
  r = RunCli({"convert", "builtin:tiny_cnn", "-o", path, "-q", "--precision", "bf16",
              "--min-cosine", "0"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.find("accuracy"), std::string::npos) << r.out;
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
  expect_error({"--precision", "fp16"}, "fp16 is not implemented");
  expect_error({"--precision", "bf16", "--sensitivity-report", "s.csv"},
               "need --precision int8 (bf16 keeps no ranges");
  expect_error({"--precision", "bf16", "--calibration-method", "minmax"},
               "need --precision int8 (bf16 keeps no ranges");
  expect_error({"--precision", "bf16", "--min-cosine", "2"}, "cosine similarity in [0, 1]");
  expect_error({"--precision", "bf16", "--prune", "0.5"}, "the sparse kernels they are for");
  expect_error({"--precision", "bf16", "--activation-sparsity", "2"},
               "the sparse kernels they are for");
  expect_error({"--calibration-samples", "4"}, "need --precision int8");
  expect_error({"--precision", "int8", "--calibration-samples", "0"},
               "number of samples in [1, 10000], got '0'");
  expect_error({"--precision", "int8", "--no-fuse"}, "drop --no-fuse");
  expect_error({"--precision", "int8", "--prune", "0.5"}, "does not combine with --prune");
  expect_error({"--precision", "int8", "--activation-sparsity", "2"}, "--activation-sparsity");
  expect_error({"--precision", "int8", "--calibration-input", "image.npy"}, "expects NAME=FILE.npy");
  expect_error({"--precision", "int8", "--min-cosine", "1.5"}, "cosine similarity in [0, 1]");
  expect_error({"--precision", "int8", "--min-cosine", "high"}, "--min-cosine expects a number");
  expect_error({"--min-cosine", "0.9"}, "need --precision int8");
  expect_error({"--precision", "int8", "--calibration-method", "entropy"}, "minmax or percentile[:P]");
  expect_error({"--precision", "int8", "--calibration-method", "percentile:100"}, "P in (50, 100)");
  expect_error({"--precision", "int8", "--calibration-method", "percentilex"},
               "minmax or percentile[:P]");
  expect_error({"--precision", "int8", "--calibration-method", "percentile:"}, "expects a number");
  expect_error({"--precision", "int8", "--calibration-method", "percentile:50"}, "P in (50, 100)");
  expect_error({"--sensitivity-report", "s.csv"}, "need --precision int8");
  const std::string missing = (TempDir() / "missing.npy").string();
  expect_error({"--precision", "int8", "--calibration-input", "input=" + missing}, missing);
  EXPECT_FALSE(std::filesystem::exists(out));  // nothing written on error

  CliResult help = RunCli({"convert", "--help"});
  EXPECT_NE(help.out.find("--precision P"), std::string::npos);
  EXPECT_NE(help.out.find("--calibration-input NAME=FILE.npy"), std::string::npos);
}

}  // namespace
}  // namespace braid::cli
