#include "runtime/thread_pinning.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <thread>

#include "kernels/cpu/cpu_device.h"
#include "kernels/host/worker_stream.h"

namespace braid {
namespace {

cpu_set_t CurrentCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(pthread_getaffinity_np(pthread_self(), sizeof set, &set), 0);
  return set;
}

cpu_set_t Allowed() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  return set;
}

TEST(ThreadPinning, SplitGivesTheCallerItsCoresAndTheWorkersTheRest) {
  const cpu_set_t allowed = Allowed();
  const int cores = CPU_COUNT(&allowed);
  const CoreSplit one = SplitAllowedCores(1);
  if (cores < 2) {
    EXPECT_FALSE(one.usable);
    GTEST_SKIP() << "one core allowed: nothing to split";
  }
  ASSERT_TRUE(one.usable);
  EXPECT_EQ(CPU_COUNT(&one.caller), 1);
  EXPECT_EQ(CPU_COUNT(&one.workers), cores - 1);
  cpu_set_t both, overlap;
  CPU_OR(&both, &one.caller, &one.workers);
  CPU_AND(&overlap, &one.caller, &one.workers);
  EXPECT_TRUE(CPU_EQUAL(&both, &allowed));
  EXPECT_EQ(CPU_COUNT(&overlap), 0);
  EXPECT_NE(one.description.find("cpu stream on cores "), std::string::npos) << one.description;
  // As many caller threads as cores: the caller keeps every core, the
  // workers share the last.
  const CoreSplit all = SplitAllowedCores(cores);
  EXPECT_TRUE(CPU_EQUAL(&all.caller, &allowed));
  EXPECT_EQ(CPU_COUNT(&all.workers), 1);
  CPU_AND(&overlap, &all.caller, &all.workers);
  EXPECT_EQ(CPU_COUNT(&overlap), 1);
}

TEST(ThreadPinning, ScopedPinHoldsForItsScopeThenRestores) {
  const CoreSplit split = SplitAllowedCores(1);
  if (!split.usable) GTEST_SKIP() << "one core allowed: nothing to pin";
  // On a thread of its own, so the test runner's thread keeps its cores
  // whatever happens.
  std::thread([&] {
    const cpu_set_t before = CurrentCores();
    {
      ScopedThreadPin pin(split.caller);
      const cpu_set_t during = CurrentCores();
      EXPECT_TRUE(CPU_EQUAL(&during, &split.caller));
    }
    const cpu_set_t after = CurrentCores();
    EXPECT_TRUE(CPU_EQUAL(&after, &before));
  }).join();
}

TEST(ThreadPinning, AWorkerStreamPinsItsOwnThread) {
  const CoreSplit split = SplitAllowedCores(1);
  if (!split.usable) GTEST_SKIP() << "one core allowed: nothing to pin";
  std::unique_ptr<Device> cpu = CreateCpuDevice();
  WorkerStream stream(*cpu, "pin-test", 1);
  const cpu_set_t workers = split.workers;
  ASSERT_TRUE(stream.Submit([workers] { return PinCurrentThread(workers); }).ok());
  cpu_set_t seen;
  CPU_ZERO(&seen);
  ASSERT_TRUE(stream.Submit([&seen] {
    seen = CurrentCores();
    return Status::Ok();
  }).ok());
  ASSERT_TRUE(stream.Synchronize().ok());
  EXPECT_TRUE(CPU_EQUAL(&seen, &split.workers));
}

TEST(ThreadPinning, AnEmptyCoreSetIsAClearError) {
  cpu_set_t none;
  CPU_ZERO(&none);
  std::thread([&] {
    const Status s = PinCurrentThread(none);
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find("pthread_setaffinity_np"), std::string::npos) << s.message();
  }).join();
}

}  // namespace
}  // namespace braid
