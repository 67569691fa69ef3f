// PrepackedWeights (kernels/cpu/prepacked_weights.h): the store alone, and the
// oneDNN kernels sharing packed weights across the kernels of one CPU device
// (a Session's one-thread twin prepares every kernel a second time).
#include "kernels/cpu/prepacked_weights.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_device.h"
#include "tests/kernels/onednn_test_util.h"

namespace braid {
namespace {

TensorData Bytes(size_t n, uint8_t first) {
  TensorData t = TensorData::Allocate(n);
  for (size_t i = 0; i < n; ++i) t.mutable_data()[i] = static_cast<std::byte>(first + i);
  return t;
}

TEST(PrepackedWeights, SameStorageAndLayoutShareOneBlock) {
  PrepackedWeights store;
  const TensorData source = Bytes(16, 1);
  const TensorData alias = source;  // the same storage, as a copied graph holds it
  int packs = 0;
  auto reverse = [&](std::byte* dst) {
    ++packs;
    for (size_t i = 0; i < 16; ++i) dst[i] = source.data()[15 - i];
  };
  std::shared_ptr<const std::byte> a = store.GetOrPack(source, "rev", 16, reverse);
  std::shared_ptr<const std::byte> b = store.GetOrPack(alias, "rev", 16, reverse);
  EXPECT_EQ(a.get(), b.get());
  EXPECT_EQ(packs, 1);
  EXPECT_EQ(store.hits(), 1);
  EXPECT_EQ(store.live_entries(), 1u);
  EXPECT_EQ(static_cast<uint8_t>(a.get()[0]), 16);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.get()) % 64, 0u);

  // Another layout of the same constant, or equal bytes elsewhere: packed anew.
  std::shared_ptr<const std::byte> c = store.GetOrPack(source, "copy", 16, reverse);
  const TensorData twin = Bytes(16, 1);
  ASSERT_TRUE(twin.ContentEquals(source));
  std::shared_ptr<const std::byte> d = store.GetOrPack(twin, "rev", 16, reverse);
  EXPECT_NE(c.get(), a.get());
  EXPECT_NE(d.get(), a.get());
  EXPECT_EQ(packs, 3);
  EXPECT_EQ(store.live_entries(), 3u);
}

TEST(PrepackedWeights, AnEntryNobodyHoldsIsPackedAgain) {
  PrepackedWeights store;
  const TensorData source = Bytes(8, 3);
  int packs = 0;
  auto copy = [&](std::byte* dst) {
    ++packs;
    std::memcpy(dst, source.data(), 8);
  };
  store.GetOrPack(source, "k", 8, copy).reset();
  EXPECT_EQ(store.live_entries(), 0u);
  std::shared_ptr<const std::byte> again = store.GetOrPack(source, "k", 8, copy);
  EXPECT_EQ(packs, 2);
  EXPECT_EQ(store.hits(), 0);
  EXPECT_EQ(store.live_entries(), 1u);
}

TEST(PrepackedWeights, APackThatThrowsLeavesNoEntry) {
  PrepackedWeights store;
  const TensorData source = Bytes(8, 3);
  EXPECT_THROW(store.GetOrPack(source, "k", 8, [](std::byte*) { throw std::bad_alloc(); }),
               std::bad_alloc);
  EXPECT_EQ(store.live_entries(), 0u);
}

// After packing, a large source's pages are given back to the system
// (MADV_PAGEOUT): a hint that must keep the bytes, for heap memory and for a
// file mapping (a .braid file's weights) alike.
TEST(PrepackedWeights, PackedSourcesKeepTheirBytes) {
  constexpr size_t kBytes = size_t{1} << 20;
  const TensorData heap = Bytes(kBytes, 5);
  const std::string path = ::testing::TempDir() + "/prepacked_source.bin";
  {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(std::fwrite(heap.data(), 1, kBytes, f), kBytes);
    std::fclose(f);
  }
  const int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  void* map = mmap(nullptr, kBytes, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  ASSERT_NE(map, MAP_FAILED);
  std::shared_ptr<const void> owner(map, [](const void* p) {
    munmap(const_cast<void*>(p), kBytes);
  });
  const TensorData mapped =
      TensorData::Wrap(owner, static_cast<const std::byte*>(map), kBytes);
  ASSERT_TRUE(mapped.ContentEquals(heap));

  PrepackedWeights store;
  for (const TensorData* source : {&heap, &mapped}) {
    std::shared_ptr<const std::byte> packed =
        store.GetOrPack(*source, "copy", kBytes,
                        [&](std::byte* dst) { std::memcpy(dst, source->data(), kBytes); });
    for (size_t i = 0; i < kBytes; i += 4093)
      ASSERT_EQ(static_cast<uint8_t>(source->data()[i]), static_cast<uint8_t>(5 + i)) << i;
    EXPECT_EQ(0, std::memcmp(packed.get(), heap.data(), kBytes));
  }
  std::remove(path.c_str());
}

TEST(PrepackedWeights, OnlyCpuDevicesHaveAStore) {
  std::unique_ptr<Device> cpu = CreateCpuDevice();
  EXPECT_NE(PrepackedWeightsOf(cpu.get()), nullptr);
  EXPECT_EQ(PrepackedWeightsOf(nullptr), nullptr);
}

// Two kernels of one node on one CPU device, prepared for 2 threads and for
// 1 (the twin), read the same constant: one packed block, both outputs equal
// to the reference kernel's.
void ExpectSharedAcrossThreadCounts(const testing_cpu::OpCase& c, const std::string& impl) {
  SCOPED_TRACE(c.node.op_type);
  std::unique_ptr<Device> cpu = CreateCpuDevice();
  PrepackedWeights* store = PrepackedWeightsOf(cpu.get());
  ASSERT_NE(store, nullptr);
  const KernelEntry* entry = nullptr;
  for (const KernelEntry* e : testing_cpu::CpuRegistry().Candidates(c.node.op_type,
                                                                     DeviceKind::kCpu))
    if (e->impl == impl) entry = e;
  ASSERT_NE(entry, nullptr);
  std::vector<TensorData> constants;
  PrepareArgs wide = testing_cpu::ArgsFor(c, constants, 2);
  wide.device = cpu.get();
  std::vector<TensorData> shared = constants;  // the twin's graph copy: same storage
  PrepareArgs narrow = wide;
  narrow.num_threads = 1;
  for (size_t i = 0; i < narrow.constants.size(); ++i)
    if (narrow.constants[i] != nullptr) narrow.constants[i] = &shared[i];

  auto want = testing_cpu::RunImpl(c, "reference", 1);
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  std::vector<std::unique_ptr<Kernel>> kernels;
  for (const PrepareArgs* args : {&wide, &narrow}) {
    kernels.push_back(entry->create());
    ASSERT_TRUE(kernels.back()->Prepare(*args).ok());
  }
  EXPECT_EQ(store->live_entries(), 1u);
  EXPECT_EQ(store->hits(), 1);
  for (const std::unique_ptr<Kernel>& kernel : kernels) {
    std::vector<std::byte> out(c.outputs[0].bytes());
    std::vector<std::byte> workspace(kernel->workspace_bytes() + 64);
    std::vector<const void*> src;
    for (const testing_cpu::Input& in : c.inputs) src.push_back(in.bytes.data());
    void* dst = out.data();
    RunArgs run;
    run.src = src;
    run.dst = std::span<void* const>(&dst, 1);
    run.workspace = workspace.data();
    ASSERT_TRUE(kernel->Run(run).ok());
    const auto* got = reinterpret_cast<const float*>(out.data());
    const auto* ref = reinterpret_cast<const float*>((*want)[0].data());
    for (size_t i = 0; i < out.size() / sizeof(float); ++i)
      ASSERT_NEAR(got[i], ref[i], 1e-4f * (1.0f + std::fabs(ref[i]))) << "element " << i;
  }
  kernels.clear();
  EXPECT_EQ(store->live_entries(), 0u);
}

TEST(PrepackedWeights, OnednnKernelsShareAcrossThreadCounts) {
  using testing_cpu::F32;
  using testing_cpu::In;
  using testing_cpu::MakeCase;
  ExpectSharedAcrossThreadCounts(
      MakeCase("MatMul", {In(F32({2, 64, 96})), In(F32({96, 80}), true)}, {F32({2, 64, 80})}),
      "onednn");
  testing_cpu::OpCase conv =
      MakeCase("Conv", {In(F32({1, 16, 12, 12})), In(F32({24, 16, 3, 3}), true)},
               {F32({1, 24, 12, 12})});
  conv.node.attrs.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
  ExpectSharedAcrossThreadCounts(conv, "onednn");
  ExpectSharedAcrossThreadCounts(
      MakeCase("Gemm", {In(F32({8, 48})), In(F32({48, 40}), true)}, {F32({8, 40})}), "onednn");
  ExpectSharedAcrossThreadCounts(
      MakeCase("ConvTranspose", {In(F32({1, 8, 6, 6})), In(F32({8, 12, 3, 3}), true)},
               {F32({1, 12, 8, 8})}),
      "onednn");
}

}  // namespace
}  // namespace braid
