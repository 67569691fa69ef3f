// Host memory of the CPU and vgpu devices (AllocateHostMemory): small
// buffers 64-byte aligned, buffers from kHugePageBytes up aligned to a huge
// page and, where the kernel has transparent huge pages in "madvise" or
// "always" mode, backed by them (read back from /proc/self/smaps).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "kernels/cpu/cpu_device.h"
#include "kernels/vgpu/vgpu_device.h"

namespace braid {
namespace {

// The bracketed mode of /sys/kernel/mm/transparent_hugepage/enabled
// ("always", "madvise", "never"), or "" without THP.
std::string TransparentHugePageMode() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  if (!std::getline(in, line)) return "";
  const size_t open = line.find('['), close = line.find(']');
  if (open == std::string::npos || close == std::string::npos || close < open) return "";
  return line.substr(open + 1, close - open - 1);
}

// AnonHugePages (kB) of the mapping of /proc/self/smaps that holds `p`, or -1.
long AnonHugePagesKb(const void* p) {
  const auto address = reinterpret_cast<uintptr_t>(p);
  std::ifstream in("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> lo >> dash >> hi && dash == '-' && line.find(':') > line.find(' ')) {
      inside = lo <= address && address < hi;
      continue;
    }
    if (inside && line.rfind("AnonHugePages:", 0) == 0) return std::stol(line.substr(14));
  }
  return -1;
}

TEST(HostMemory, SmallBuffersAreCacheLineAlignedLargeOnesHugePageAligned) {
  for (size_t bytes : {size_t{1}, size_t{1000}, kHugePageBytes - 1, kHugePageBytes,
                       3 * kHugePageBytes + 100}) {
    std::unique_ptr<void, decltype(&std::free)> p(AllocateHostMemory(bytes), &std::free);
    ASSERT_NE(p.get(), nullptr) << bytes;
    const auto address = reinterpret_cast<uintptr_t>(p.get());
    EXPECT_EQ(address % 64, 0u) << bytes;
    if (bytes >= kHugePageBytes) {
      EXPECT_EQ(address % kHugePageBytes, 0u) << bytes;
    }
    std::memset(p.get(), 0x5a, bytes);  // all of it is writable
  }
}

TEST(HostMemory, DevicesHandOutHugePageAlignedArenas) {
  std::unique_ptr<Device> cpu = CreateCpuDevice();
  std::unique_ptr<Device> vgpu = CreateVgpuDevice();
  for (Device* device : {cpu.get(), vgpu.get()}) {
    StatusOr<std::unique_ptr<Buffer>> arena =
        device->Allocate(4 * kHugePageBytes, MemoryKind::kDevice);
    ASSERT_TRUE(arena.ok()) << device->info().name << ": " << arena.status().ToString();
    EXPECT_EQ(reinterpret_cast<uintptr_t>((*arena)->data()) % kHugePageBytes, 0u)
        << device->info().name;
    EXPECT_EQ((*arena)->size(), 4 * kHugePageBytes);
  }
}

TEST(HostMemory, LargeBuffersAreBackedByHugePagesWhereTheKernelOffersThem) {
  const std::string mode = TransparentHugePageMode();
  if (mode != "madvise" && mode != "always")
    GTEST_SKIP() << "transparent huge pages are '" << (mode.empty() ? "absent" : mode)
                 << "' on this kernel: buffers stay on small pages";
  const size_t bytes = 8 * kHugePageBytes;
  std::unique_ptr<void, decltype(&std::free)> p(AllocateHostMemory(bytes), &std::free);
  ASSERT_NE(p.get(), nullptr);
  std::memset(p.get(), 1, bytes);  // fault the pages in
  const long huge_kb = AnonHugePagesKb(p.get());
  ASSERT_GE(huge_kb, 0) << "no /proc/self/smaps entry holds the buffer";
  // The kernel may fall back to small pages when memory is fragmented; one
  // huge page of eight is enough to show the advice took.
  EXPECT_GE(huge_kb, static_cast<long>(kHugePageBytes / 1024))
      << "THP mode '" << mode << "' but no huge page backs a " << bytes << "-byte buffer";
}

}  // namespace
}  // namespace braid
