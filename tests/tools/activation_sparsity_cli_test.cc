// `braid convert --activation-sparsity N [--activation-sparsity-input ...]`:
// the written file carries measured activation sparsity, `braid inspect`
// shows it, and bad arguments are clear errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <vector>

#include "graph/braid_format.h"
#include "tests/scoped_temp_dir.h"
#include "tests/tools/cli_test_util.h"
#include "tools/npy.h"

namespace braid::cli {
namespace {

const std::filesystem::path& TempDir() {
  static const testing::ScopedTempDir dir("braid_activation_sparsity_cli_test");
  return dir.path();
}

const Node* FindNode(const Graph& g, const std::string& name) {
  for (const Node& n : g.nodes())
    if (n.name == name) return &n;
  return nullptr;
}

TEST(ActivationSparsityCli, ConvertWritesMeasuredValues) {
  const std::string path = (TempDir() / "tiny.braid").string();
  CliResult r = RunCli({"convert", "builtin:tiny_cnn", "-o", path, "--activation-sparsity", "2"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("activation sparsity (2 random samples, CPU)"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("activation sparsity: 2 runs on random N(0,1) values for input"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("only approximate real data"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Conv/Gemm/MatMul inputs (5 nodes): median"), std::string::npos) << r.out;

  StatusOr<Graph> g = LoadBraidFile(path);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  for (const Node& n : g->nodes()) {
    EXPECT_GE(n.annotation.activation_sparsity, 0.0) << n.name;
    EXPECT_LE(n.annotation.activation_sparsity, 1.0) << n.name;
  }
  // /dw/Conv reads the stem's fused Conv+Relu output: about half zeros.
  const Node* dw = FindNode(*g, "/dw/Conv");
  ASSERT_NE(dw, nullptr);
  EXPECT_GT(dw->annotation.activation_sparsity, 0.05);
  const Node* stem = FindNode(*g, "/stem/Conv");
  ASSERT_NE(stem, nullptr);
  EXPECT_LT(stem->annotation.activation_sparsity, 1e-3);  // random input: no zeros

  CliResult inspect = RunCli({"inspect", path});
  ASSERT_EQ(inspect.status, 0) << inspect.err;
  EXPECT_NE(inspect.out.find("a.zero%"), std::string::npos);
  CliResult json = RunCli({"inspect", path, "--json"});
  ASSERT_EQ(json.status, 0) << json.err;
  EXPECT_EQ(json.out.find("\"activation_sparsity\":null"), std::string::npos);

  // Without the flag nothing is measured.
  const std::string plain = (TempDir() / "plain.braid").string();
  ASSERT_EQ(RunCli({"convert", "builtin:tiny_cnn", "-o", plain, "-q"}).status, 0);
  StatusOr<Graph> p = LoadBraidFile(plain);
  ASSERT_TRUE(p.ok());
  for (const Node& n : p->nodes()) EXPECT_EQ(n.annotation.activation_sparsity, -1.0);
}

TEST(ActivationSparsityCli, GivenInputZerosReachTheFirstConv) {
  std::vector<float> x(3 * 224 * 224);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> value(0.1f, 1.0f);
  for (size_t i = 0; i < x.size(); ++i) x[i] = i % 8 == 0 ? 0.0f : value(rng);  // 1/8 zeros
  const std::string npy_path = (TempDir() / "x.npy").string();
  const std::vector<int64_t> dims = {1, 3, 224, 224};
  ASSERT_TRUE(npy::WriteFile(npy_path, DataType::kF32, dims, x.data()).ok());
  const std::string path = (TempDir() / "given.braid").string();
  CliResult r = RunCli({"convert", "builtin:tiny_cnn", "-o", path, "-q", "--activation-sparsity",
                        "4", "--activation-sparsity-input", "input=" + npy_path});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("activation sparsity: 1 run on the given inputs"), std::string::npos)
      << r.out;
  StatusOr<Graph> g = LoadBraidFile(path);
  ASSERT_TRUE(g.ok());
  const Node* stem = FindNode(*g, "/stem/Conv");
  ASSERT_NE(stem, nullptr);
  EXPECT_DOUBLE_EQ(stem->annotation.activation_sparsity, 0.125);
}

TEST(ActivationSparsityCli, BadArgumentsAreClearErrors) {
  const std::string out = (TempDir() / "bad.braid").string();
  auto expect_error = [&](std::vector<std::string> extra, const std::string& text) {
    std::vector<std::string> args = {"convert", "builtin:tiny_cnn", "-o", out, "-q"};
    args.insert(args.end(), extra.begin(), extra.end());
    CliResult r = RunCli(args);
    EXPECT_NE(r.status, 0) << text;
    EXPECT_NE(r.err.find(text), std::string::npos) << r.err;
  };
  expect_error({"--activation-sparsity", "0"}, "number of samples in [1, 10000], got '0'");
  expect_error({"--activation-sparsity", "many"}, "got 'many'");
  expect_error({"--activation-sparsity"}, "--activation-sparsity needs a value");
  expect_error({"--activation-sparsity-input", "input=x.npy"},
               "--activation-sparsity-input needs --activation-sparsity N");
  expect_error({"--activation-sparsity", "2", "--activation-sparsity-input", "input"},
               "expects NAME=FILE.npy");
  const std::string missing = (TempDir() / "missing.npy").string();
  expect_error({"--activation-sparsity", "2", "--activation-sparsity-input", "input=" + missing},
               missing);
  std::vector<float> x(3 * 224 * 224, 1.0f);
  const std::string npy_path = (TempDir() / "ones.npy").string();
  const std::vector<int64_t> dims = {1, 3, 224, 224};
  ASSERT_TRUE(npy::WriteFile(npy_path, DataType::kF32, dims, x.data()).ok());
  expect_error({"--activation-sparsity", "2", "--activation-sparsity-input", "image=" + npy_path},
               "no input 'image'; its inputs are: input: f32[N,3,224,224]");
  EXPECT_FALSE(std::filesystem::exists(out));  // nothing written on error

  CliResult help = RunCli({"convert", "--help"});
  EXPECT_NE(help.out.find("--activation-sparsity N"), std::string::npos);
  EXPECT_NE(help.out.find("Random inputs only approximate real"), std::string::npos);
}

}  // namespace
}  // namespace braid::cli
