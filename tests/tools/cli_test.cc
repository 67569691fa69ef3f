// The `braid` command line, run in-process.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "graph/annotate.h"
#include "graph/braid_format.h"
#include "tests/scoped_temp_dir.h"
#include "tests/tools/cli_test_util.h"
#include "tools/commands.h"

namespace braid::cli {
namespace {

using Result = CliResult;


// One folder per test process, removed when the process exits.
const std::filesystem::path& TempDir() {
  static const testing::ScopedTempDir dir("braid_cli_test");
  return dir.path();
}

// Reads a number that follows "key": in a JSON text (enough for checking).
double JsonField(const std::string& json, const std::string& key,
                 size_t from = 0) {
  size_t at = json.find("\"" + key + "\":", from);
  EXPECT_NE(at, std::string::npos) << key;
  if (at == std::string::npos) return -1;
  return std::stod(json.substr(at + key.size() + 3));
}

TEST(CliTest, HelpForEveryCommand) {
  Result top = RunCli({"--help"});
  EXPECT_EQ(top.status, 0);
  EXPECT_NE(top.out.find("Usage: braid COMMAND"), std::string::npos);
  for (const Command& c : Commands()) {
    EXPECT_NE(top.out.find(std::string(c.name)), std::string::npos);
    Result r = RunCli({std::string(c.name), "--help"});
    EXPECT_EQ(r.status, 0) << c.name;
    EXPECT_NE(r.out.find("Usage: braid " + std::string(c.name)),
              std::string::npos)
        << c.name;
  }
  EXPECT_NE(RunCli({"convert", "--help"}).out.find("builtin:resnet18"),
            std::string::npos);
}

TEST(CliTest, BadArgumentsExitTwo) {
  EXPECT_EQ(RunCli({}).status, 2);
  Result unknown = RunCli({"frobnicate"});
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.err.find("unknown command 'frobnicate'"), std::string::npos);
  EXPECT_EQ(RunCli({"convert", "builtin:tiny_cnn"}).status, 2);  // no -o
  Result flag = RunCli({"inspect", "builtin:tiny_cnn", "--bogus"});
  EXPECT_EQ(flag.status, 2);
  EXPECT_NE(flag.err.find("--bogus"), std::string::npos);
  Result missing = RunCli({"inspect", "/nonexistent/model.onnx"});
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.err.find("/nonexistent/model.onnx"), std::string::npos);
  Result builtin = RunCli({"inspect", "builtin:no_such_model"});
  EXPECT_EQ(builtin.status, 2);
  EXPECT_NE(builtin.err.find("resnet18"), std::string::npos);  // lists known
}

TEST(CliTest, ConvertThenInspectJsonMatchesFile) {
  const auto path = (TempDir() / "sq.braid").string();
  Result conv = RunCli({"convert", "builtin:squeezenet1_1", "-o", path, "-q"});
  ASSERT_EQ(conv.status, 0) << conv.err;
  EXPECT_NE(conv.out.find("wrote " + path), std::string::npos);
  EXPECT_TRUE(conv.err.empty()) << "--quiet prints no progress: " << conv.err;

  StatusOr<Graph> g = LoadBraidFile(path);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const ModelTotals totals = ComputeTotals(*g);
  ASSERT_GT(totals.flops, 0);

  Result js = RunCli({"inspect", path, "--json"});
  ASSERT_EQ(js.status, 0) << js.err;
  size_t total_at = js.out.find("\"total\":");
  ASSERT_NE(total_at, std::string::npos);
  EXPECT_DOUBLE_EQ(JsonField(js.out, "flops", total_at), totals.flops);
  EXPECT_EQ(JsonField(js.out, "params", total_at),
            static_cast<double>(totals.params));
  EXPECT_EQ(JsonField(js.out, "nodes", total_at), g->num_nodes());
  // One JSON object per node, and no BatchNormalization left after fusion.
  int count = 0;
  for (size_t at = js.out.find("{\"name\":"); at != std::string::npos;
       at = js.out.find("{\"name\":", at + 1))
    ++count;
  EXPECT_EQ(count, g->num_nodes());
  EXPECT_EQ(js.out.find("\"op\":\"BatchNormalization\""), std::string::npos);

  Result table = RunCli({"inspect", path});
  ASSERT_EQ(table.status, 0);
  EXPECT_NE(table.out.find("total: " + std::to_string(g->num_nodes()) +
                           " nodes"),
            std::string::npos);
}

TEST(CliTest, NoFuseKeepsBatchNorm) {
  const auto path = (TempDir() / "r18_nofuse.braid").string();
  ASSERT_EQ(RunCli({"convert", "builtin:resnet18", "-o", path, "--no-fuse", "-q"})
                .status,
            0);
  Result js = RunCli({"inspect", path, "--json"});
  ASSERT_EQ(js.status, 0);
  EXPECT_NE(js.out.find("\"op\":\"BatchNormalization\""), std::string::npos);
}

TEST(CliTest, ProgressLinesOnStderr) {
  const auto path = (TempDir() / "tiny.braid").string();
  Result conv = RunCli({"convert", "builtin:tiny_cnn", "--output=" + path});
  ASSERT_EQ(conv.status, 0) << conv.err;
  EXPECT_NE(conv.err.find("[1/4] load builtin:tiny_cnn"), std::string::npos);
  EXPECT_NE(conv.err.find("[4/4] write"), std::string::npos);
}

TEST(CliTest, CorruptBraidFileIsACleanError) {
  const auto good = (TempDir() / "good.braid").string();
  ASSERT_EQ(RunCli({"convert", "builtin:tiny_cnn", "-o", good, "-q"}).status, 0);
  std::string bytes;
  {
    std::ifstream in(good, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const auto bad = (TempDir() / "truncated.braid").string();
  {
    std::ofstream out(bad, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size() / 2));
  }
  Result r = RunCli({"inspect", bad});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("truncated.braid"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
}

TEST(CliTest, OpsetCheckOnSupportedModel) {
  Result r = RunCli({"convert", "builtin:mobilenet_v2", "--opset-check"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("all operators supported"), std::string::npos);
}

}  // namespace
}  // namespace braid::cli
