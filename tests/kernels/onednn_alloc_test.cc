// Run allocates nothing: a counting global operator new (and, outside
// sanitizer builds, posix_memalign, which oneDNN uses for its own buffers)
// counts allocations on every thread while a flag is set. The flag is set
// only around Kernel::Run of an already prepared (and once run) kernel.
//
// Finding measured here (oneDNN 2.6, OpenMP runtime): oneDNN's
// dnnl_primitive_execute builds a std::unordered_map of its arguments (an
// exec_ctx) on every call, so every oneDNN primitive allocates a few small
// blocks per execute even with a user scratchpad. braid's side (handle
// re-pointing, the prebuilt argument array) allocates nothing; the test
// asserts that, and asserts the oneDNN count is small and constant per Run.
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <new>

#include <oneapi/dnnl/dnnl.hpp>

#include "kernels/cpu/onednn_common.h"
#include "tests/kernels/onednn_test_util.h"

namespace {

std::atomic<bool> g_counting{false};
std::atomic<int64_t> g_allocations{0};

void* CountedMalloc(std::size_t size) {
  if (g_counting.load(std::memory_order_relaxed))
    g_allocations.fetch_add(1, std::memory_order_relaxed);
  void* p = std::malloc(size == 0 ? 1 : size);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace

void* operator new(std::size_t size) { return CountedMalloc(size); }
void* operator new[](std::size_t size) { return CountedMalloc(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return CountedMalloc(size);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return CountedMalloc(size);
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

#if !defined(__SANITIZE_ADDRESS__)
// oneDNN allocates its own buffers with posix_memalign; count those too.
extern "C" void* __libc_memalign(std::size_t alignment, std::size_t size);
extern "C" int posix_memalign(void** out, std::size_t alignment,
                              std::size_t size) {
  if (g_counting.load(std::memory_order_relaxed))
    g_allocations.fetch_add(1, std::memory_order_relaxed);
  void* p = __libc_memalign(alignment, size);
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}
#endif

namespace braid {
namespace {

using testing_cpu::F32;
using testing_cpu::In;
using testing_cpu::MakeCase;
using testing_cpu::OpCase;

int64_t CountRunAllocations(testing_cpu::Prepared& p) {
  g_allocations = 0;
  g_counting = true;
  Status s = testing_cpu::RunPrepared(p);
  g_counting = false;
  EXPECT_TRUE(s.ok()) << s.ToString();
  return g_allocations.load();
}

struct Measured {
  std::string op;
  int64_t first = 0, second = 0;
};

Measured Measure(const OpCase& c, const std::string& impl) {
  testing_cpu::Prepared p;
  Status s = testing_cpu::PrepareImpl(c, impl, p);
  EXPECT_TRUE(s.ok()) << s.ToString();
  if (!s.ok()) return {c.node.op_type, -1, -1};
  EXPECT_TRUE(testing_cpu::RunPrepared(p).ok());  // warm-up (OpenMP team)
  return {c.node.op_type, CountRunAllocations(p), CountRunAllocations(p)};
}

OpCase Conv() {
  OpCase c = MakeCase("Conv",
                      {In(F32({1, 16, 12, 12})), In(F32({16, 16, 3, 3}), true),
                       In(F32({16}), true)},
                      {F32({1, 16, 12, 12})});
  c.node.attrs.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
  c.node.attrs.Set("kernel_shape", std::vector<int64_t>{3, 3});
  c.node.attrs.Set("activation", std::string("Relu"));
  return c;
}

TEST(CpuRunAllocations, BraidSideAllocatesNothing) {
  // Re-pointing a memory handle (what every Run does) must not allocate.
  auto engine = dnnl::engine(dnnl::engine::kind::cpu, 0);
  dnnl::memory m({{16}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::a},
                 engine, DNNL_MEMORY_NONE);
  float buffer[16] = {};
  g_allocations = 0;
  g_counting = true;
  Status s = onednn::SetHandle(m, buffer, "test");
  g_counting = false;
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(g_allocations.load(), 0);

  // braid's own kernel: zero.
  OpCase t = MakeCase("Transpose", {In(F32({8, 16, 32}))}, {F32({32, 8, 16})});
  t.node.attrs.Set("perm", std::vector<int64_t>{2, 0, 1});
  Measured transpose = Measure(t, "cpu");
  EXPECT_EQ(transpose.first, 0);
  EXPECT_EQ(transpose.second, 0);
}

TEST(CpuRunAllocations, OnednnExecuteAllocationsAreSmallAndSteady) {
  std::vector<OpCase> cases;
  cases.push_back(Conv());
  cases.push_back(MakeCase("MatMul", {In(F32({4, 32})), In(F32({32, 8}), true)},
                           {F32({4, 8})}));
  OpCase pool = MakeCase("MaxPool", {In(F32({1, 8, 8, 8}))}, {F32({1, 8, 4, 4})});
  pool.node.attrs.Set("kernel_shape", std::vector<int64_t>{2, 2});
  pool.node.attrs.Set("strides", std::vector<int64_t>{2, 2});
  cases.push_back(pool);
  cases.push_back(MakeCase("Relu", {In(F32({256}))}, {F32({256})}));
  cases.push_back(MakeCase("Add", {In(F32({4, 64})), In(F32({64}))}, {F32({4, 64})}));
  cases.push_back(MakeCase("Softmax", {In(F32({4, 64}))}, {F32({4, 64})}));
  for (const OpCase& c : cases) {
    Measured m = Measure(c, "onednn");
    std::cout << "[ alloc    ] oneDNN " << m.op << ": " << m.first
              << " allocations per Run (then " << m.second << ")\n";
    ::testing::Test::RecordProperty("alloc_" + m.op, std::to_string(m.first));
    // Steady: the same count each Run (no growth, no lazy caches), and small:
    // under ~10 per executed primitive (oneDNN's per-execute argument map);
    // Conv may execute three (reorder in, conv, reorder out).
    EXPECT_EQ(m.first, m.second) << m.op;
    EXPECT_LE(m.first, 32) << m.op;
  }
}

}  // namespace
}  // namespace braid
