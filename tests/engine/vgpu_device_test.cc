// The virtual GPU device: separate memory, worker-thread streams, real
// events, sticky errors, timing shaping and the forced-off hook.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "kernels/cpu/cpu_device.h"
#include "kernels/host/precise_wait.h"
#include "kernels/vgpu/streaming_copy.h"
#include "kernels/vgpu/vgpu_device.h"
#include "kernels/host/worker_stream.h"

namespace braid {
namespace {

TEST(Vgpu, DeviceIsVirtualWithItsOwnMemory) {
  std::unique_ptr<VgpuDevice> vgpu = CreateVgpuDevice();
  EXPECT_EQ(vgpu->name(), "vgpu");
  EXPECT_EQ(vgpu->kind(), DeviceKind::kVirtualGpu);
  EXPECT_TRUE(vgpu->info().virtual_device);
  EXPECT_EQ(vgpu->info().description.find("GPU measurement"), std::string::npos);
  auto buffer = vgpu->Allocate(1000);
  ASSERT_TRUE(buffer.ok());
  EXPECT_EQ((*buffer)->size(), 1000u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>((*buffer)->data()) % 64, 0u);
  EXPECT_EQ((*buffer)->memory_kind(), MemoryKind::kDevice);
}

TEST(Vgpu, StreamRunsWorkInOrderOnItsOwnThreadAndCopiesExplicitly) {
  std::unique_ptr<VgpuDevice> vgpu = CreateVgpuDevice();
  auto stream = vgpu->CreateStream();
  ASSERT_TRUE(stream.ok());
  auto dev = vgpu->Allocate(4 * sizeof(float));
  ASSERT_TRUE(dev.ok());
  const float host_in[4] = {1, 2, 3, 4};
  float host_out[4] = {};
  std::vector<int> order;
  std::thread::id worker;
  ASSERT_TRUE((*stream)->CopyToDevice((*dev)->data(), host_in, sizeof(host_in)).ok());
  ASSERT_TRUE((*stream)->Submit([&] {
    worker = std::this_thread::get_id();
    float* p = static_cast<float*>((*dev)->data());
    for (int i = 0; i < 4; ++i) p[i] *= 2;
    order.push_back(1);
    return Status::Ok();
  }).ok());
  ASSERT_TRUE((*stream)->Submit([&] {
    order.push_back(2);
    return Status::Ok();
  }).ok());
  ASSERT_TRUE((*stream)->CopyToHost(host_out, (*dev)->data(), sizeof(host_out)).ok());
  ASSERT_TRUE((*stream)->Synchronize().ok());
  EXPECT_NE(worker, std::this_thread::get_id());
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(host_out[i], 2 * host_in[i]);
}

TEST(Vgpu, EventsOrderWorkAcrossStreams) {
  std::unique_ptr<VgpuDevice> vgpu = CreateVgpuDevice();
  auto a = vgpu->CreateStream();
  auto b = vgpu->CreateStream();
  ASSERT_TRUE(a.ok() && b.ok());
  auto gate = std::make_shared<ManualEvent>();
  std::atomic<int> value{0};
  // a waits on a host event; b waits on a's marker.
  ASSERT_TRUE((*a)->WaitFor(gate).ok());
  ASSERT_TRUE((*a)->Submit([&] {
    value = 1;
    return Status::Ok();
  }).ok());
  auto marker = (*a)->Record();
  ASSERT_TRUE(marker.ok());
  int seen = -1;
  ASSERT_TRUE((*b)->WaitFor(*marker).ok());
  ASSERT_TRUE((*b)->Submit([&] {
    seen = value.load();
    return Status::Ok();
  }).ok());
  EXPECT_FALSE((*marker)->Ready());
  gate->Signal();
  ASSERT_TRUE((*b)->Synchronize().ok());
  EXPECT_TRUE((*marker)->Ready());
  EXPECT_EQ(seen, 1);
  ASSERT_TRUE((*a)->Synchronize().ok());
}

TEST(Vgpu, ErrorsAreStickyPropagateThroughEventsAndClearAtSynchronize) {
  std::unique_ptr<VgpuDevice> vgpu = CreateVgpuDevice();
  auto a = vgpu->CreateStream();
  auto b = vgpu->CreateStream();
  ASSERT_TRUE(a.ok() && b.ok());
  bool ran_after = false, ran_dependent = false;
  ASSERT_TRUE((*a)->Submit([] { return Internal("boom"); }).ok());
  ASSERT_TRUE((*a)->Submit([&] {
    ran_after = true;
    return Status::Ok();
  }).ok());
  auto marker = (*a)->Record();
  ASSERT_TRUE(marker.ok());
  ASSERT_TRUE((*b)->WaitFor(*marker).ok());
  ASSERT_TRUE((*b)->Submit([&] {
    ran_dependent = true;
    return Status::Ok();
  }).ok());
  Status sa = (*a)->Synchronize();
  Status sb = (*b)->Synchronize();
  EXPECT_EQ(sa.message(), "boom");
  EXPECT_FALSE(sb.ok());  // inherited through the event
  EXPECT_FALSE(ran_after);
  EXPECT_FALSE(ran_dependent);
  EXPECT_EQ((*marker)->Wait().message(), "boom");
  // Cleared: the stream works again.
  bool ran_again = false;
  ASSERT_TRUE((*a)->Submit([&] {
    ran_again = true;
    return Status::Ok();
  }).ok());
  EXPECT_TRUE((*a)->Synchronize().ok());
  EXPECT_TRUE(ran_again);
}

TEST(Vgpu, StreamingCopyIsAnExactCopyAtAnyAlignmentAndSize) {
  // Odd offsets and lengths cover the partial first and last 16 bytes.
  std::vector<unsigned char> src(5000), dst(5100);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 131 + 7);
  for (size_t offset : {0u, 1u, 15u, 16u, 17u, 63u, 64u}) {
    for (size_t bytes : {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{65}, size_t{4095},
                         4999 - offset}) {
      std::fill(dst.begin(), dst.end(), 0xAB);
      StreamingCopy(dst.data() + offset, src.data() + 1, bytes);
      EXPECT_EQ(std::memcmp(dst.data() + offset, src.data() + 1, bytes), 0) << offset << "+" << bytes;
      // Nothing outside the destination range is touched.
      for (size_t i = 0; i < offset; ++i) ASSERT_EQ(dst[i], 0xAB) << i;
      for (size_t i = offset + bytes; i < dst.size(); ++i) ASSERT_EQ(dst[i], 0xAB) << i;
    }
  }
}

TEST(Vgpu, TimingShapingPadsCopiesToTheModel) {
  VgpuOptions options;
  options.timing.enabled = true;
  options.timing.label = "test";
  options.timing.copy_latency_us = 20000;  // 20 ms per copy, whatever the size
  std::unique_ptr<VgpuDevice> vgpu = CreateVgpuDevice(options);
  EXPECT_NE(vgpu->info().description.find("(model)"), std::string::npos);
  auto stream = vgpu->CreateStream();
  auto dev = vgpu->Allocate(64);
  ASSERT_TRUE(stream.ok() && dev.ok());
  char host[64] = {};
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE((*stream)->CopyToDevice((*dev)->data(), host, sizeof(host)).ok());
  ASSERT_TRUE((*stream)->Synchronize().ok());
  // A lower bound, not a speed assertion: a padded wait aims early by the
  // thread's wake-up latency (kernels/host/precise_wait.h), never by more
  // than kWaitUntilMaxEarlyUs.
  using Micros = std::chrono::duration<double, std::micro>;
  EXPECT_GE(Micros(std::chrono::steady_clock::now() - start).count(), 20000 - kWaitUntilMaxEarlyUs);
  EXPECT_EQ(options.timing.KernelTime(2e9, 0).count(), 0);  // no peak set: launch only
}

TEST(Vgpu, PresetsAreLabelledModels) {
  auto orin = VgpuTimingPreset("orin-like");
  ASSERT_TRUE(orin.ok());
  EXPECT_TRUE(orin->enabled);
  EXPECT_NE(orin->Describe().find("model"), std::string::npos);
  EXPECT_FALSE(VgpuTimingPreset("none")->enabled);
  auto bad = VgpuTimingPreset("a100");
  EXPECT_EQ(bad.status().code(), StatusCode::kNotFound);
  EXPECT_NE(bad.status().message().find("orin-like"), std::string::npos);
}

TEST(Vgpu, ForcedOffDeviceRefusesWork) {
  std::unique_ptr<VgpuDevice> vgpu = CreateVgpuDevice();
  auto stream = vgpu->CreateStream();
  ASSERT_TRUE(stream.ok());
  vgpu->SetForcedOff(true);
  EXPECT_EQ(vgpu->Allocate(8).status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(vgpu->CreateStream().status().code(), StatusCode::kUnavailable);
  EXPECT_EQ((*stream)->Submit([] { return Status::Ok(); }).code(), StatusCode::kUnavailable);
  vgpu->SetForcedOff(false);
  EXPECT_TRUE(vgpu->Allocate(8).ok());
}

TEST(Vgpu, RegistersEveryCpuKernelAtTheSamePriorities) {
  KernelRegistry registry;
  RegisterVgpuKernels(registry);
  KernelRegistry cpu;
  RegisterCpuKernels(cpu);
  for (const std::string& op : cpu.OpTypes(DeviceKind::kCpu)) {
    const auto want = cpu.Candidates(op, DeviceKind::kCpu);
    const auto got = registry.Candidates(op, DeviceKind::kVirtualGpu);
    ASSERT_EQ(got.size(), want.size()) << op;
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i]->impl, want[i]->impl) << op;
      EXPECT_EQ(got[i]->priority, want[i]->priority) << op;
    }
  }
  const auto conv = registry.Candidates("Conv", DeviceKind::kVirtualGpu);
  ASSERT_GE(conv.size(), 2u);
  EXPECT_EQ(conv.back()->impl, "reference");
  EXPECT_TRUE(registry.Candidates("Conv", DeviceKind::kCpu).empty());
  EXPECT_GT(registry.OpTypes(DeviceKind::kVirtualGpu).size(), 30u);
}

}  // namespace
}  // namespace braid
