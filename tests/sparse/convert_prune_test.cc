// `braid convert --prune`: the flags, the accuracy warning and counts, the
// annotated sparsity in the written file, and bad values.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "graph/braid_format.h"
#include "tools/cli_common.h"
#include "tools/commands.h"

namespace braid::cli {
namespace {

struct Result {
  int status;
  std::string out;
  std::string err;
};

Result Convert(std::vector<std::string> extra) {
  std::vector<std::string> args = {"convert", "builtin:mobilenet_v2", "-q"};
  args.insert(args.end(), extra.begin(), extra.end());
  std::ostringstream out, err;
  const int status = RunBraid(args, out, err);
  return {status, out.str(), err.str()};
}

std::string TempFile(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("braid_sparse_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

TEST(ConvertPrune, PrunesReportsAndAnnotates) {
  const std::string path = TempFile("mnv2.braid");
  Result r = Convert({"-o", path, "--prune", "0.9", "--prune-skip", "first,depthwise"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("Pruning changes the model's accuracy"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("weights are now zero"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(unstructured)"), std::string::npos) << r.out;
  StatusOr<Graph> g = LoadBraidFile(path);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  int sparse_convs = 0, dense_depthwise = 0;
  for (const Node& n : g->nodes()) {
    if (n.op_type != "Conv") continue;
    if (n.attrs.GetInt("group", 1) > 1) {
      dense_depthwise += n.annotation.weight_sparsity < 0.01;
    } else if (n.annotation.weight_sparsity > 0.85) {
      ++sparse_convs;  // bias counted in params: a little under 0.9
    }
  }
  EXPECT_GT(sparse_convs, 30);
  EXPECT_EQ(dense_depthwise, 17);
  std::filesystem::remove(path);
}

TEST(ConvertPrune, RejectsBadFlags) {
  const std::string path = TempFile("bad.braid");
  EXPECT_EQ(Convert({"-o", path, "--prune", "1.5"}).status, kExitBadInput);
  EXPECT_EQ(Convert({"-o", path, "--prune", "x"}).status, kExitBadInput);
  Result r = Convert({"-o", path, "--prune", "0.5", "--prune-structure", "block:0x1"});
  EXPECT_EQ(r.status, kExitBadInput);
  EXPECT_NE(r.err.find("block:RxC"), std::string::npos) << r.err;
  EXPECT_EQ(Convert({"-o", path, "--prune-structure", "block:4x4"}).status, kExitBadInput);
  EXPECT_FALSE(std::filesystem::exists(path));
}

}  // namespace
}  // namespace braid::cli
