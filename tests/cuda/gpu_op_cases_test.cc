// The CUDA kernels on a real GPU: every ComputeOpCases(), DataOpCases() and
// CudaDataOpCases() case with a CUDA kernel is prepared on cuda:0 (inputs
// copied to device buffers), run on a CUDA stream, copied back and compared
// with kernels/reference. Without a usable GPU each test is SKIPPED with
// the CUDA runtime's reason. tests/cuda/run_gpu_checks.sh runs this under
// compute-sanitizer on a GPU machine.
#include <gtest/gtest.h>

#include <cstring>
#include <iostream>

#include "kernels/cuda/cuda_backend.h"
#include "tests/cuda/emulate.h"

namespace braid::cuda_test {
namespace {

struct Gpu {
  Status status;
  std::unique_ptr<Device> device;
  KernelRegistry registry;
};

Gpu& TheGpu() {
  static Gpu* gpu = [] {
    auto* g = new Gpu;
    StatusOr<std::unique_ptr<Device>> d = CreateCudaDevice(0);
    if (d.ok()) g->device = std::move(*d);
    else g->status = d.status();
    RegisterCudaKernels(g->registry);
    return g;
  }();
  return *gpu;
}

void RunOnGpu(const OpCase& c) {
  Gpu& gpu = TheGpu();
  if (!gpu.status.ok()) GTEST_SKIP() << "no CUDA device: " << gpu.status.message();
  auto inst = OpCaseInstance::Build(c);
  ASSERT_TRUE(inst.ok()) << inst.status().ToString();
  const OpCaseInstance& instance = **inst;
  StatusOr<PreparedKernel> prepared = PrepareFirstAccepting(
      gpu.registry, DeviceKind::kCuda, instance.MakePrepareArgs(gpu.device.get()));
  if (!prepared.ok() && prepared.status().code() == StatusCode::kUnimplemented)
    GTEST_SKIP() << "no CUDA kernel accepts it: " << prepared.status().message();
  ASSERT_TRUE(prepared.ok()) << prepared.status().ToString();
  auto stream = gpu.device->CreateStream();
  ASSERT_TRUE(stream.ok()) << stream.status().ToString();
  std::vector<std::unique_ptr<Buffer>> buffers;
  auto device_buffer = [&](size_t bytes) -> void* {
    auto b = gpu.device->Allocate(std::max<size_t>(bytes, 1), MemoryKind::kDevice);
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    if (!b.ok()) return nullptr;
    buffers.push_back(std::move(*b));
    return buffers.back()->data();
  };
  std::vector<const void*> src;
  for (size_t i = 0; i < instance.input_descs().size(); ++i) {
    const TensorDesc& d = instance.input_descs()[i];
    if (!d.present()) {
      src.push_back(nullptr);
      continue;
    }
    void* p = device_buffer(d.bytes());
    ASSERT_TRUE((*stream)->CopyToDevice(p, instance.input_pointers()[i], d.bytes()).ok());
    src.push_back(p);
  }
  std::vector<void*> dst;
  for (const TensorDesc& d : instance.output_descs()) dst.push_back(device_buffer(d.bytes()));
  RunArgs run;
  run.src = src;
  run.dst = dst;
  run.stream = stream->get();
  if (size_t ws = prepared->kernel->workspace_bytes()) run.workspace = device_buffer(ws);
  const Status ran = prepared->kernel->Run(run);
  ASSERT_TRUE(ran.ok()) << ran.ToString();
  std::vector<std::vector<std::byte>> got;
  for (size_t i = 0; i < dst.size(); ++i) {
    got.emplace_back(instance.output_descs()[i].bytes());
    ASSERT_TRUE((*stream)->CopyToHost(got.back().data(), dst[i], got.back().size()).ok());
  }
  const Status synced = (*stream)->Synchronize();
  ASSERT_TRUE(synced.ok()) << synced.ToString();
  auto want = ReferenceOutputs(instance);
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  EXPECT_EQ(CompareOutputs(instance, got, *want), "")
      << c.name << " on " << prepared->entry->impl << "@cuda";
}

class GpuComputeCases : public ::testing::TestWithParam<OpCase> {};
TEST_P(GpuComputeCases, MatchesReference) { RunOnGpu(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Cases, GpuComputeCases, ::testing::ValuesIn(ComputeOpCases()),
                         [](const auto& info) { return info.param.name; });

class GpuDataCases : public ::testing::TestWithParam<OpCase> {};
TEST_P(GpuDataCases, MatchesReference) { RunOnGpu(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Cases, GpuDataCases, ::testing::ValuesIn(CudaDataOpCases()),
                         [](const auto& info) { return info.param.name; });

class GpuHarnessDataCases : public ::testing::TestWithParam<OpCase> {};
TEST_P(GpuHarnessDataCases, MatchesReference) { RunOnGpu(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Cases, GpuHarnessDataCases, ::testing::ValuesIn(DataOpCases()),
                         [](const auto& info) { return info.param.name; });

TEST(GpuDevice, BuffersOfEveryKindAndEvents) {
  Gpu& gpu = TheGpu();
  if (!gpu.status.ok()) GTEST_SKIP() << "no CUDA device: " << gpu.status.message();
  auto stream = gpu.device->CreateStream();
  ASSERT_TRUE(stream.ok());
  auto dev = gpu.device->Allocate(4096, MemoryKind::kDevice);
  auto pinned = gpu.device->Allocate(4096, MemoryKind::kHostPinned);
  ASSERT_TRUE(dev.ok() && pinned.ok());
  std::memset((*pinned)->data(), 0x5a, 4096);
  ASSERT_TRUE((*stream)->CopyToDevice((*dev)->data(), (*pinned)->data(), 4096).ok());
  std::vector<unsigned char> back(4096);
  ASSERT_TRUE((*stream)->CopyToHost(back.data(), (*dev)->data(), 4096).ok());
  auto event = (*stream)->Record();
  ASSERT_TRUE(event.ok());
  ASSERT_TRUE((*event)->Wait().ok());
  EXPECT_TRUE((*event)->Ready());
  EXPECT_EQ(back[4095], 0x5a);
  auto mapped = gpu.device->Allocate(4096, MemoryKind::kHostMapped);
  if (mapped.ok()) {
    EXPECT_EQ((*mapped)->memory_kind(), MemoryKind::kHostMapped);
  } else {
    EXPECT_EQ(mapped.status().code(), StatusCode::kUnimplemented);
  }
}

}  // namespace
}  // namespace braid::cuda_test
