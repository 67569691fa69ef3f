// A Run with the same shapes as the previous one allocates nothing: global
// operator new/delete are replaced in this binary and count calls while
// g_counting is set, around SetInput + Run. (malloc calls made directly by
// libraries are not seen; the CPU device allocates (AllocateHostMemory) only
// while planning.)
#include <gtest/gtest.h>

#include <atomic>
#include <iostream>
#include <cstdlib>
#include <new>
#include <random>
#include <vector>

#include "api/model_loader.h"
#include "braid/braid.h"
#include "kernels/cpu/cpu_device.h"
#include "runtime/session_internal.h"
#include "tests/runtime/test_kernels.h"

// The replacements below pair malloc with free by design; GCC sees through
// the inlined operators and would flag the pairing.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};

void* CountedAlloc(std::size_t size, std::size_t alignment) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1);
  if (size == 0) size = 1;
  void* p = alignment > alignof(std::max_align_t)
                ? std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment)
                : std::malloc(size);
  return p;
}
}  // namespace

void* operator new(std::size_t size) {
  void* p = CountedAlloc(size, 0);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new[](std::size_t size) { return operator new(size); }
void* operator new(std::size_t size, std::align_val_t a) {
  void* p = CountedAlloc(size, static_cast<std::size_t>(a));
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new[](std::size_t size, std::align_val_t a) { return operator new(size, a); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return CountedAlloc(size, 0);
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return CountedAlloc(size, 0);
}
void* operator new(std::size_t size, std::align_val_t a, const std::nothrow_t&) noexcept {
  return CountedAlloc(size, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t size, std::align_val_t a, const std::nothrow_t&) noexcept {
  return CountedAlloc(size, static_cast<std::size_t>(a));
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  std::free(p);
}

namespace braid {
namespace {

std::vector<float> Random(size_t n) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> d(0.1f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// Allocations made by SetInput + Run for a batch the session already ran.
long CountSteadyStateAllocations(Session& session, int64_t batch) {
  const TensorInfo& info = session.inputs().at(0);
  std::vector<int64_t> dims = info.dims;
  dims[0] = batch;
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<float> input = Random(static_cast<size_t>(n));
  Tensor tensor = Tensor::Borrow(DataType::kF32, dims, input.data());
  Status s = session.SetInput(info.name, tensor);
  EXPECT_TRUE(s.ok()) << s.ToString();
  s = session.Run();  // plans and allocates
  EXPECT_TRUE(s.ok()) << s.ToString();

  g_allocations = 0;
  g_counting = true;
  Status set = session.SetInput(info.name, tensor);
  Status run = session.Run();
  g_counting = false;
  EXPECT_TRUE(set.ok()) << set.ToString();
  EXPECT_TRUE(run.ok()) << run.ToString();
  return g_allocations.load();
}

// Wraps a kernel to attribute the allocations made inside its Run.
class AttributingKernel : public Kernel {
 public:
  AttributingKernel(std::unique_ptr<Kernel> inner, std::atomic<long>* count)
      : inner_(std::move(inner)), count_(count) {}
  Status Prepare(const PrepareArgs& args) override { return inner_->Prepare(args); }
  size_t workspace_bytes() const override { return inner_->workspace_bytes(); }
  Status Run(const RunArgs& args) override {
    const long before = g_allocations.load();
    Status s = inner_->Run(args);
    count_->fetch_add(g_allocations.load() - before);
    return s;
  }

 private:
  std::unique_ptr<Kernel> inner_;
  std::atomic<long>* count_;
};

// The full CPU registry with every entry wrapped; counts[i] belongs to
// labels[i] ("Conv/onednn").
struct AttributingRegistry {
  std::shared_ptr<KernelRegistry> registry = std::make_shared<KernelRegistry>();
  std::vector<std::string> labels;
  std::vector<std::unique_ptr<std::atomic<long>>> counts;

  AttributingRegistry() {
    KernelRegistry cpu;
    RegisterCpuKernels(cpu);
    for (const std::string& op : cpu.OpTypes(DeviceKind::kCpu)) {
      for (const KernelEntry* e : cpu.Candidates(op, DeviceKind::kCpu)) {
        labels.push_back(op + "/" + e->impl);
        counts.push_back(std::make_unique<std::atomic<long>>(0));
        std::atomic<long>* count = counts.back().get();
        auto create = e->create;
        registry->Register(KernelEntry{op, e->device, e->impl, e->priority, [create, count] {
                                         return std::unique_ptr<Kernel>(
                                             std::make_unique<AttributingKernel>(create(), count));
                                       }});
      }
    }
  }
  void Reset() {
    for (auto& c : counts) c->store(0);
  }
  std::string Report() const {
    std::string s;
    for (size_t i = 0; i < labels.size(); ++i)
      if (counts[i]->load() > 0)
        s += " " + labels[i] + ": " + std::to_string(counts[i]->load());
    return s.empty() ? "none inside kernels (the executor allocates)"
                     : "allocating kernels:" + s;
  }
};

TEST(Allocation, CounterSeesAllocations) {
  g_allocations = 0;
  g_counting = true;
  auto* v = new std::vector<int>(100);
  g_counting = false;
  delete v;
  EXPECT_GE(g_allocations.load(), 2);  // the vector and its buffer
}

TEST(Allocation, SteadyStateRunOfTestGraphAllocatesNothing) {
  SessionOptions options;
  options.num_threads = 1;
  auto session = CreateSession(test::AddReluGraph(true), options, test::TestRegistry(),
                               CreateCpuDevice());
  ASSERT_TRUE(session.ok());
  std::vector<float> x = Random(12), y = Random(12);
  ASSERT_TRUE((*session)->SetInput("x", Tensor::Borrow(DataType::kF32, {3, 4}, x.data())).ok());
  ASSERT_TRUE((*session)->SetInput("y", Tensor::Borrow(DataType::kF32, {3, 4}, y.data())).ok());
  ASSERT_TRUE((*session)->Run().ok());
  Tensor y_tensor = Tensor::Borrow(DataType::kF32, {3, 4}, y.data());  // outside the count
  g_allocations = 0;
  g_counting = true;
  Status a = (*session)->SetInput("x", y_tensor);
  Status r = (*session)->Run();
  g_counting = false;
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(g_allocations.load(), 0);
}

class BuiltinAllocation : public ::testing::TestWithParam<std::string> {};

// Known limitation, measured here rather than hidden: oneDNN 2.6 builds an
// argument map inside every dnnl_primitive_execute (a few heap blocks per
// call, even with a user scratchpad), and its public API has no way around
// it. So this test asserts that braid itself (executor, binding, braid's own
// kernels) allocates nothing in a steady-state Run, and that what oneDNN
// allocates is attributed to oneDNN kernels and constant from run to run.
TEST_P(BuiltinAllocation, SecondRunAllocatesNothingOutsideOneDnnExecute) {
  // Session::Open's path (loader + CPU registry), with kernels wrapped so
  // every allocation is attributed to the kernel that made it.
  StatusOr<Graph> graph = LoadGraphForExecution("builtin:" + GetParam());
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  AttributingRegistry attributing;
  SessionOptions options;
  options.num_threads = 2;
  // One executor's steady state: thread adaptation would switch some Runs to
  // its one-thread twin, whose oneDNN primitives allocate other counts.
  options.adapt_threads = false;
  auto session = CreateSession(std::move(*graph), options, attributing.registry,
                               CreateCpuDevice());
  ASSERT_TRUE(session.ok()) << session.status().ToString();

  auto check = [&](int batch) {
    std::vector<long> per_run;
    for (int run = 0; run < 2; ++run) {
      attributing.Reset();
      const long total = CountSteadyStateAllocations(**session, batch);
      long in_onednn = 0, in_other_kernels = 0;
      for (size_t i = 0; i < attributing.labels.size(); ++i) {
        const long n = attributing.counts[i]->load();
        (attributing.labels[i].ends_with("/onednn") ? in_onednn : in_other_kernels) += n;
      }
      EXPECT_EQ(total - in_onednn - in_other_kernels, 0)
          << "batch " << batch << ": the executor allocated; " << attributing.Report();
      EXPECT_EQ(in_other_kernels, 0)
          << "batch " << batch << ": a non-oneDNN kernel allocated; " << attributing.Report();
      per_run.push_back(in_onednn);
      std::cout << "batch " << batch << " run " << run << ": " << in_onednn
                << " heap blocks inside oneDNN execute (" << attributing.Report() << ")\n";
    }
    EXPECT_EQ(per_run[0], per_run[1]) << "oneDNN's per-execute allocations must be steady";
  };
  check(1);
  check(2);  // after a re-plan for another batch too
}

INSTANTIATE_TEST_SUITE_P(Models, BuiltinAllocation, ::testing::Values("tiny_cnn", "resnet18"));

// With thread adaptation (the default) the one-thread twin is prepared at
// the first probe (4th Run) and kept: from then on no Run allocates in braid,
// whichever thread count it uses.
TEST(ThreadAdaptationAllocation, RunsAfterTheFirstProbeAllocateNothingInBraid) {
  StatusOr<Graph> graph = LoadGraphForExecution("builtin:tiny_cnn");
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  AttributingRegistry attributing;
  SessionOptions options;
  options.num_threads = 2;
  // Made-up latencies (1 thread faster, as under contention) so that the
  // probes, not this machine's noise, decide: Runs 4-6 probe the twin and
  // switch to it (the switch's notice allocates, once, as a re-plan does);
  // the counted Runs then run the twin.
  SessionInternals internals;
  auto one_thread_runs = std::make_shared<int>(0);  // counted without allocating
  internals.run_ms = [one_thread_runs](int threads, double) {
    *one_thread_runs += threads == 1;
    return threads == 1 ? 1.0 : 2.0;
  };
  std::vector<SessionDevice> devices(1);
  devices[0].device = CreateCpuDevice();
  auto session = CreateSession(std::move(*graph), options, attributing.registry,
                               std::move(devices), std::move(internals));
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  for (int i = 0; i < 4; ++i) CountSteadyStateAllocations(**session, 1);  // 8 Runs
  const int one_thread_before = *one_thread_runs;
  for (int run = 0; run < 10; ++run) {
    attributing.Reset();
    const long total = CountSteadyStateAllocations(**session, 1);
    long in_kernels = 0;
    for (const auto& count : attributing.counts) in_kernels += count->load();
    EXPECT_EQ(total - in_kernels, 0) << "run " << run << ": the session allocated; "
                                     << attributing.Report();
  }
  EXPECT_EQ(*one_thread_runs - one_thread_before, 20);  // every counted Run was the twin's
}

}  // namespace
}  // namespace braid
