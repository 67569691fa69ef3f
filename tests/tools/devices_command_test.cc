// `braid devices`, run in-process: the CPU is always listed; CUDA devices are
// listed or the reason there are none is; --ops shows per-op coverage.
#include <gtest/gtest.h>

#include <sstream>

#include "kernels/cuda/cuda_backend.h"
#include "tests/tools/cli_test_util.h"
#include "tools/commands.h"

namespace braid::cli {
namespace {

using Result = CliResult;

Result Devices(std::vector<std::string> args) { return RunCliCommand("devices", std::move(args)); }

TEST(DevicesCommand, ListsCpuAndCudaOrWhyNot) {
  Result r = Devices({});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("cpu: ", 0), 0u) << r.out;
  StatusOr<std::vector<CudaDeviceProperties>> gpus = QueryCudaDevices();
  if (gpus.ok()) {
    EXPECT_NE(r.out.find("cuda:0: "), std::string::npos) << r.out;
  } else {
    EXPECT_NE(r.out.find(gpus.status().message()), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("cuda: unavailable: "), std::string::npos) << r.out;
  }
}

TEST(DevicesCommand, OpsListsCoverageAndWhatIsNotOnCuda) {
  Result r = Devices({"--ops"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("not on cuda ("), std::string::npos) << r.out;
  if (CudaBackendCompiled()) {
    EXPECT_NE(r.out.find("Conv"), std::string::npos);
    const size_t conv = r.out.find("  Conv ");
    ASSERT_NE(conv, std::string::npos) << r.out;
    EXPECT_NE(r.out.substr(conv, r.out.find('\n', conv) - conv).find("cuda"), std::string::npos);
    // The CPU computes Conv in bf16 too; CUDA in f32 only (no suffix).
    EXPECT_NE(r.out.find("  Conv                  cpu (f32, bf16), cuda,"), std::string::npos)
        << r.out;
    // Shape has no CUDA kernel: it must be listed as not on cuda.
    const size_t missing = r.out.find("not on cuda (");
    EXPECT_NE(r.out.find(" Shape", missing), std::string::npos) << r.out;
  }
}

TEST(DevicesCommand, JsonAndBadArguments) {
  Result r = Devices({"--json", "--ops"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("{\"devices\":[{\"name\":\"cpu\"", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("\"ops\":{"), std::string::npos);
  EXPECT_NE(r.out.find("\"Relu\":[\"cpu\""), std::string::npos);
  // Which devices compute which ops in bf16 (Relu in f32 only).
  const size_t bf16 = r.out.find("\"precisions\":{\"bf16\":{");
  ASSERT_NE(bf16, std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"Conv\":[\"cpu\"", bf16), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\"Relu\"", bf16), std::string::npos) << r.out;
  EXPECT_EQ(Devices({"--bogus"}).status, 2);
  EXPECT_EQ(Devices({"extra"}).status, 2);
  EXPECT_EQ(Devices({"--help"}).status, 0);
}

}  // namespace
}  // namespace braid::cli
