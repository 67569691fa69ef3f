// `braid convert --prune`: the flags, the accuracy warning and counts, the
// annotated sparsity in the written file, and bad values.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <random>
#include <sstream>

#include "braid/braid.h"
#include "graph/braid_format.h"
#include "scheduler/device_profile.h"
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

// The session hands the crossovers `braid calibrate` stored in a device
// profile's "cpu" entry to the sparse kernels: mobilenet_v2 pruned to 50%
// stays on oneDNN with the defaults (0.75 / 0.80 / 0.55) and runs sparse
// kernels with a profile whose crossovers are 0.4.
TEST(ConvertPrune, SessionTakesTheCrossoverFromTheProfile) {
  const std::string model = TempFile("mnv2_50.braid");
  Result r = Convert({"-o", model, "--prune", "0.5"});
  ASSERT_EQ(r.status, 0) << r.err;
  DeviceProfile profile = BuiltinHostProfile();
  DeviceSpec* cpu = nullptr;
  for (DeviceSpec& d : profile.devices)
    if (d.name == "cpu") cpu = &d;
  ASSERT_NE(cpu, nullptr);
  for (const char* op_class : {"conv1x1", "conv3x3", "gemm"})
    cpu->sparse.push_back({op_class, 0.4, 0.3, 0.8, 3});
  const std::string profile_path = TempFile("profile.json");
  ASSERT_TRUE(SaveDeviceProfile(profile, profile_path).ok());

  auto sparse_nodes_with = [&](SessionOptions options) {
    options.num_threads = 1;
    StatusOr<std::unique_ptr<Session>> session = Session::Open(model, options);
    EXPECT_TRUE(session.ok()) << session.status().ToString();
    if (!session.ok()) return -1;
    std::vector<int64_t> dims = (*session)->inputs()[0].dims;
    for (int64_t& d : dims) d = d < 0 ? 1 : d;
    Tensor x = Tensor::Allocate(DataType::kF32, dims);
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> uniform(-1, 1);
    for (int64_t i = 0; i < x.elements(); ++i) x.data<float>()[i] = uniform(rng);
    EXPECT_TRUE((*session)->SetInput((*session)->inputs()[0].name, x).ok());
    Status ran = (*session)->Run();
    EXPECT_TRUE(ran.ok()) << ran.ToString();
    int on_sparse = 0;
    for (const NodePlacement& p : (*session)->placements())
      on_sparse += p.implementation == "sparse";
    return on_sparse;
  };
  auto sparse_nodes = [&](const std::string& profile_file) {
    SessionOptions options;
    options.profile = profile_file;
    return sparse_nodes_with(options);
  };
  EXPECT_EQ(sparse_nodes(""), 0);
  const int with_profile = sparse_nodes(profile_path);
  EXPECT_GT(with_profile, 0);

  // SessionOptions say the same without a profile, and can turn them off.
  SessionOptions low;
  low.sparse_crossover = "conv1x1=0.4,conv3x3=0.4,gemm=0.4";
  EXPECT_EQ(sparse_nodes_with(low), with_profile);
  SessionOptions off;
  off.profile = profile_path;
  off.sparse_kernels = false;
  EXPECT_EQ(sparse_nodes_with(off), 0);
  // The vgpu takes the session's kernel options too (it used to register
  // the defaults while the CPU took the profile's).
  SessionOptions on_vgpu = low;
  on_vgpu.devices = {"cpu", "vgpu"};
  on_vgpu.policy = "gpu-only";
  EXPECT_EQ(sparse_nodes_with(on_vgpu), with_profile);
  SessionOptions bad;
  bad.sparse_crossover = "conv1x1=2";
  StatusOr<std::unique_ptr<Session>> refused = Session::Open(model, bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("sparse_crossover"), std::string::npos)
      << refused.status().message();
  std::filesystem::remove(model);
  std::filesystem::remove(profile_path);
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
