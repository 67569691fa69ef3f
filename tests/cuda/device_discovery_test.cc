// Discovery and registration, on any machine: with a GPU the properties are
// sane; without one every entry point says why, in the CUDA runtime's words.
#include <gtest/gtest.h>

#include "kernels/cuda/cuda_backend.h"

namespace braid {
namespace {

TEST(CudaDiscovery, DevicesOrAReason) {
  EXPECT_TRUE(CudaBackendCompiled());
  StatusOr<std::vector<CudaDeviceProperties>> devices = QueryCudaDevices();
  if (!devices.ok()) {
    EXPECT_EQ(devices.status().code(), StatusCode::kUnavailable);
    EXPECT_EQ(devices.status().message().rfind("cuda: unavailable: ", 0), 0u)
        << devices.status().message();
    EXPECT_GT(devices.status().message().size(), std::string("cuda: unavailable: ").size());
    StatusOr<std::unique_ptr<Device>> device = CreateCudaDevice(0);
    ASSERT_FALSE(device.ok());
    EXPECT_EQ(device.status().message(), devices.status().message());
    std::cout << "[cuda] " << devices.status().message() << "\n";
    return;
  }
  ASSERT_FALSE(devices->empty());
  for (const CudaDeviceProperties& p : *devices) {
    EXPECT_FALSE(p.name.empty());
    EXPECT_GE(p.cc_major, 5);
    EXPECT_GT(p.total_memory, 0u);
    EXPECT_GT(p.multiprocessors, 0);
  }
  StatusOr<std::unique_ptr<Device>> device = CreateCudaDevice(0);
  ASSERT_TRUE(device.ok()) << device.status().ToString();
  EXPECT_EQ((*device)->name(), "cuda:0");
  EXPECT_EQ((*device)->kind(), DeviceKind::kCuda);
  EXPECT_EQ(CreateCudaDevice(1000).status().code(), StatusCode::kOutOfRange);
}

TEST(CudaDiscovery, PropertiesSummary) {
  CudaDeviceProperties p;
  p.name = "Orin";
  p.cc_major = 8;
  p.cc_minor = 7;
  p.multiprocessors = 16;
  p.total_memory = size_t{8} << 30;
  p.integrated = true;
  p.unified_addressing = true;
  p.can_map_host_memory = true;
  EXPECT_EQ(p.Summary(),
            "sm_87, 16 SMs, 8.0 GiB, integrated (shares host DRAM), unified addressing, "
            "mapped host memory");
}

TEST(CudaRegistry, CoversTheMainOpsOnCuda) {
  KernelRegistry registry;
  RegisterCudaKernels(registry);
  const std::vector<std::string> ops = registry.OpTypes(DeviceKind::kCuda);
  for (const char* op : {"Conv", "Gemm", "MatMul", "Relu", "Add", "Concat", "Transpose", "Slice",
                         "Gather", "LayerNormalization", "Softmax", "MaxPool", "ReduceMean"})
    EXPECT_NE(std::find(ops.begin(), ops.end(), op), ops.end()) << op;
  EXPECT_TRUE(registry.OpTypes(DeviceKind::kCpu).empty());
  EXPECT_EQ(registry.Candidates("Conv", DeviceKind::kCuda).front()->impl, "cudnn");
}

}  // namespace
}  // namespace braid
