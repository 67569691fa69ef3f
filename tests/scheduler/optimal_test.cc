// The optimal reference: chain DP against exhaustive search on random
// chains, the lower bound against exact optima, the kinds it reports, and
// a seeded search that repeats itself.
#include "scheduler/optimal.h"

#include <gtest/gtest.h>

#include <random>

#include "graph/annotate.h"
#include "graph/passes/passes.h"
#include "models/architectures.h"
#include "scheduler/partition_policy.h"
#include "tests/scheduler/baseline_test_util.h"

namespace braid {
namespace {

using testing::TinyGraph;

constexpr double kTestRatios[] = {0.25, 0.5, 0.75};
const char* const kOpTypes[] = {"Relu", "MaxPool", "Gemm"};

DeviceProfile RandomProfile(std::mt19937& rng) {
  const bool mapped = rng() % 3 == 0;
  DeviceProfile p = testing::TwoDeviceProfile(static_cast<double>(rng() % 20), mapped);
  const double elementwise[] = {0.1, 0.25, 1.0};
  testing::SetGpuCompute(p, "elementwise", elementwise[rng() % 3]);
  p.links[0].copy_engines = 1 + static_cast<int>(rng() % 2);
  return p;
}

StatusOr<PlacementSpace> Space(const Graph& g, const CostModel& model) {
  PlacementContext ctx;
  ctx.devices = {"cpu", "gpu"};
  ctx.cost_model = &model;
  return BuildPlacementSpace(g, ctx, "test", true, kTestRatios);
}

TEST(OptimalTest, ChainDpMatchesExhaustiveSearchOnRandomChains) {
  std::mt19937 rng(42);
  for (int trial = 0; trial < 30; ++trial) {
    CostModel model(RandomProfile(rng));
    TinyGraph t;
    ValueId v = t.Input("x", 16 + static_cast<int64_t>(rng() % 4000));
    const int n = 2 + static_cast<int>(rng() % 5);
    for (int i = 0; i < n; ++i)
      v = t.Op(testing::NodeName(i), {v}, 1 + static_cast<double>(rng() % 60),
               16 + static_cast<int64_t>(rng() % 4000), kOpTypes[rng() % 3]);
    t.Output(v);
    StatusOr<PlacementSpace> space = Space(t.graph(), model);
    ASSERT_TRUE(space.ok()) << space.status().ToString();
    ASSERT_TRUE(IsChain(space->sim));
    OptimalOptions dp_options, all_options;
    dp_options.method = OptimalMethod::kChainDp;
    all_options.method = OptimalMethod::kExhaustive;
    all_options.exhaustive_limit = 1 << 14;
    StatusOr<OptimalResult> dp = FindOptimal(*space, dp_options);
    StatusOr<OptimalResult> all = FindOptimal(*space, all_options);
    ASSERT_TRUE(dp.ok() && all.ok()) << "trial " << trial;
    EXPECT_EQ(dp->kind, OptimalKind::kChainDp);
    EXPECT_NEAR(dp->latency_us, all->latency_us, 1e-9 * all->latency_us) << "trial " << trial;
    EXPECT_LE(PlacementLowerBoundUs(*space), all->latency_us * (1 + 1e-12)) << "trial " << trial;
  }
}

// Random DAGs (each node reads one or two earlier values): the bound stays
// below the exhaustive optimum, which no baseline beats.
TEST(OptimalTest, LowerBoundAndBaselinesAgainstExhaustiveOnRandomDags) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    CostModel model(RandomProfile(rng));
    TinyGraph t;
    std::vector<ValueId> values = {t.Input("x", 16 + static_cast<int64_t>(rng() % 2000))};
    const int n = 3 + static_cast<int>(rng() % 5);
    for (int i = 0; i < n; ++i) {
      std::vector<ValueId> in = {values[rng() % values.size()]};
      const ValueId other = values[rng() % values.size()];
      if (rng() % 2 && other != in[0]) in.push_back(other);
      values.push_back(t.Op(testing::NodeName(i), in, 1 + static_cast<double>(rng() % 60),
                            16 + static_cast<int64_t>(rng() % 2000),
                            kOpTypes[rng() % 2]));  // Relu / MaxPool: device choice only
    }
    t.Output(values.back());
    StatusOr<PlacementSpace> space = Space(t.graph(), model);
    ASSERT_TRUE(space.ok());
    OptimalOptions options;
    options.method = OptimalMethod::kExhaustive;
    StatusOr<OptimalResult> best = FindOptimal(*space, options);
    ASSERT_TRUE(best.ok());
    EXPECT_TRUE(best->exact());
    EXPECT_EQ(best->Gap(), 0);
    EXPECT_LE(PlacementLowerBoundUs(*space), best->latency_us * (1 + 1e-12)) << "trial " << trial;
    const PartitionResult partition = PlacePartition(*space);
    EXPECT_LE(best->latency_us, partition.latency_us * (1 + 1e-12)) << "trial " << trial;
    options.method = OptimalMethod::kSearch;
    options.search_iterations = 300;
    StatusOr<OptimalResult> searched = FindOptimal(*space, options);
    ASSERT_TRUE(searched.ok());
    EXPECT_LE(searched->lower_bound_us, best->latency_us * (1 + 1e-12));
    EXPECT_LE(searched->latency_us, partition.latency_us * (1 + 1e-12));
    EXPECT_GE(searched->latency_us, best->latency_us * (1 - 1e-12));
  }
}

TEST(OptimalTest, ReportsWhichKindOfResultItIs) {
  CostModel model(testing::TwoDeviceProfile(10));
  TinyGraph chain;
  chain.Output(chain.Op("b", {chain.Op("a", {chain.Input("x", 250)}, 10)}, 10));
  PlacementContext ctx;
  ctx.devices = {"cpu", "gpu"};
  ctx.cost_model = &model;
  OptimalResult r;
  StatusOr<Plan> plan = FindOptimalPlan(chain.graph(), ctx, {}, &r);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(r.kind, OptimalKind::kChainDp);
  EXPECT_EQ(r.lower_bound_us, r.latency_us);
  EXPECT_NE(plan->nodes[0].reason.find("exact (chain DP)"), std::string::npos);

  TinyGraph fork;
  ValueId a = fork.Op("a", {fork.Input("x", 250)}, 10);
  fork.Output(fork.Op("c", {fork.Op("b1", {a}, 10), fork.Op("b2", {a}, 10)}, 10));
  ASSERT_TRUE(FindOptimalPlan(fork.graph(), ctx, {}, &r).ok());
  EXPECT_EQ(r.kind, OptimalKind::kExhaustive);
  OptimalOptions dp;
  dp.method = OptimalMethod::kChainDp;
  StatusOr<Plan> not_chain = FindOptimalPlan(fork.graph(), ctx, dp);
  ASSERT_FALSE(not_chain.ok());
  EXPECT_NE(not_chain.status().message().find("not a chain"), std::string::npos);
  OptimalOptions few;
  few.method = OptimalMethod::kExhaustive;
  few.exhaustive_limit = 4;
  EXPECT_FALSE(FindOptimalPlan(fork.graph(), ctx, few).ok());
}

TEST(OptimalTest, SearchIsReproducibleWithASeedAndBoundedBelow) {
  Graph g = BuildTinyCnn(5);
  ASSERT_TRUE(RunDefaultPasses(g).ok());
  ASSERT_TRUE(Annotate(g).ok());
  CostModel model(testing::TwoDeviceProfile(5));
  PlacementContext ctx;
  ctx.devices = {"cpu", "gpu"};
  ctx.cost_model = &model;
  StatusOr<PlacementSpace> space = BuildPlacementSpace(g, ctx, "test");
  ASSERT_TRUE(space.ok());
  OptimalOptions options;
  options.method = OptimalMethod::kSearch;
  options.search_iterations = 1500;
  options.seed = 11;
  StatusOr<OptimalResult> a = FindOptimal(*space, options);
  StatusOr<OptimalResult> b = FindOptimal(*space, options);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->kind, OptimalKind::kSearched);
  ASSERT_EQ(a->placement.size(), b->placement.size());
  for (size_t i = 0; i < a->placement.size(); ++i) {
    EXPECT_EQ(a->placement[i].device, b->placement[i].device) << i;
    EXPECT_EQ(a->placement[i].other_device, b->placement[i].other_device) << i;
    EXPECT_EQ(a->placement[i].ratio, b->placement[i].ratio) << i;
  }
  EXPECT_EQ(a->latency_us, b->latency_us);
  EXPECT_GT(a->lower_bound_us, 0);
  EXPECT_LE(a->lower_bound_us, a->latency_us);
  EXPECT_GE(a->Gap(), 0);
  EXPECT_LE(a->latency_us, PlacePartition(*space).latency_us * (1 + 1e-12));
}

}  // namespace
}  // namespace braid
