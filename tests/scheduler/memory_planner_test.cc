// The arena planner: simultaneously live tensors never overlap, offsets are
// aligned, and the arena lies between the live-bytes lower bound and the
// no-reuse upper bound. Checked on hand-made cases and on random lifetime
// sets over many seeds.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "scheduler/memory_planner.h"

namespace braid {
namespace {

size_t AlignUp(size_t n) { return (n + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment; }

bool Live(const BufferRequest& r, int step) {
  return r.first_step <= step && step <= r.last_step;
}

// Checks every invariant of `plan` for `requests` (gtest failures).
void CheckPlan(const std::vector<BufferRequest>& requests, const MemoryPlan& plan) {
  ASSERT_EQ(plan.offsets.size(), requests.size());
  size_t sum_aligned = 0;
  int last_step = 0;
  for (size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(plan.offsets[i] % kArenaAlignment, 0u) << "request " << i;
    EXPECT_LE(plan.offsets[i] + requests[i].bytes, plan.arena_bytes) << "request " << i;
    sum_aligned += AlignUp(requests[i].bytes);
    last_step = std::max(last_step, requests[i].last_step);
  }
  // No two tensors alive at a common step share a byte.
  for (size_t a = 0; a < requests.size(); ++a) {
    for (size_t b = a + 1; b < requests.size(); ++b) {
      const BufferRequest& ra = requests[a];
      const BufferRequest& rb = requests[b];
      if (ra.bytes == 0 || rb.bytes == 0) continue;
      const bool overlap_in_time = ra.first_step <= rb.last_step && rb.first_step <= ra.last_step;
      if (!overlap_in_time) continue;
      const bool disjoint = plan.offsets[a] + ra.bytes <= plan.offsets[b] ||
                            plan.offsets[b] + rb.bytes <= plan.offsets[a];
      EXPECT_TRUE(disjoint) << "requests " << a << " [" << plan.offsets[a] << ", +" << ra.bytes
                            << ") and " << b << " [" << plan.offsets[b] << ", +" << rb.bytes
                            << ") are both live at a common step";
    }
  }
  // Bounds: at least the bytes live at the busiest step; at most every
  // request side by side.
  size_t max_live = 0;
  for (int step = 0; step <= last_step; ++step) {
    size_t live = 0;
    for (const BufferRequest& r : requests)
      if (Live(r, step)) live += r.bytes;
    max_live = std::max(max_live, live);
  }
  EXPECT_GE(plan.arena_bytes, max_live);
  EXPECT_LE(plan.arena_bytes, sum_aligned);
}

TEST(MemoryPlanner, EmptyAndZeroSized) {
  MemoryPlan empty = PlanMemory({});
  EXPECT_EQ(empty.arena_bytes, 0u);
  std::vector<BufferRequest> zero = {{0, 0, 3}, {0, 1, 2}};
  MemoryPlan plan = PlanMemory(zero);
  EXPECT_EQ(plan.arena_bytes, 0u);
  CheckPlan(zero, plan);
}

TEST(MemoryPlanner, ChainReusesMemory) {
  // a -> b -> c -> d: each tensor lives for two steps, so two slots suffice.
  std::vector<BufferRequest> chain = {{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}, {1000, 3, 4}};
  MemoryPlan plan = PlanMemory(chain);
  CheckPlan(chain, plan);
  EXPECT_EQ(plan.arena_bytes, 2 * AlignUp(1000));
  EXPECT_EQ(plan.offsets[0], plan.offsets[2]);
  EXPECT_EQ(plan.offsets[1], plan.offsets[3]);
}

TEST(MemoryPlanner, BestFitPicksSmallestGap) {
  // B and D die after step 1, leaving two holes between the long-lived A, C
  // and E: B's (about 3000 bytes, lower address) and D's (about 1000). F
  // (800 bytes, steps 2..3) fits both; best fit takes D's, first fit would
  // take B's.
  std::vector<BufferRequest> r = {
      {4000, 0, 4},  // A
      {3000, 0, 1},  // B
      {2000, 0, 4},  // C
      {1000, 0, 1},  // D
      {900, 0, 4},   // E
      {800, 2, 3},   // F
  };
  MemoryPlan plan = PlanMemory(r);
  CheckPlan(r, plan);
  EXPECT_LT(plan.offsets[1], plan.offsets[3]);
  EXPECT_EQ(plan.offsets[5], plan.offsets[3]);
  EXPECT_EQ(plan.arena_bytes, AlignUp(plan.offsets[4] + 900));
}

TEST(MemoryPlanner, OddSizesStayAligned) {
  std::vector<BufferRequest> r = {{1, 0, 2}, {3, 0, 2}, {65, 1, 2}, {127, 2, 3}, {63, 0, 0}};
  MemoryPlan plan = PlanMemory(r);
  CheckPlan(r, plan);
}

TEST(MemoryPlanner, RandomLifetimesManySeeds) {
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> count_dist(1, 40);
    const int steps = std::uniform_int_distribution<int>(1, 30)(rng);
    std::uniform_int_distribution<int> step_dist(0, steps - 1);
    std::uniform_int_distribution<size_t> bytes_dist(0, 1 << 14);
    std::vector<BufferRequest> requests(static_cast<size_t>(count_dist(rng)));
    for (BufferRequest& r : requests) {
      int a = step_dist(rng), b = step_dist(rng);
      r.first_step = std::min(a, b);
      r.last_step = std::max(a, b);
      r.bytes = bytes_dist(rng);
    }
    MemoryPlan plan = PlanMemory(requests);
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    CheckPlan(requests, plan);
    if (::testing::Test::HasFailure()) return;
  }
}

}  // namespace
}  // namespace braid
