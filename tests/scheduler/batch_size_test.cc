// Batch size for throughput mode (scheduler/batch_size.h): the candidate
// list, the choice on synthetic latency curves (monotone, peaked, bounded,
// failing), the batch dimension of models, and the choice on tiny_cnn with
// the simulator (symbolic and fixed batch, shared plan and per-device lanes).
#include "scheduler/batch_size.h"

#include <gtest/gtest.h>

#include <cmath>

#include "graph/passes/passes.h"
#include "graph/passes/specialize.h"
#include "models/architectures.h"
#include "scheduler/cost_model.h"
#include "scheduler/device_profile.h"
#include "scheduler/optimal.h"
#include "scheduler/threshold_policy.h"

namespace braid {
namespace {

TEST(BatchSize, CandidatesArePowersOfTwoThenTheMaximum) {
  EXPECT_EQ(BatchCandidates(1), (std::vector<int64_t>{1}));
  EXPECT_EQ(BatchCandidates(32), (std::vector<int64_t>{1, 2, 4, 8, 16, 32}));
  EXPECT_EQ(BatchCandidates(12), (std::vector<int64_t>{1, 2, 4, 8, 12}));
  EXPECT_TRUE(BatchCandidates(0).empty());
}

TEST(BatchSize, FixedCostAmortisesSoTheLargestBatchWinsWithoutABound) {
  // latency = fixed + per image: images/s rises monotonically with the batch.
  for (double fixed : {10.0, 1000.0, 1e5}) {
    BatchSizeOptions o;
    o.max_batch = 16;
    StatusOr<LaneChoice> c = ChooseBatch(
        "x", [&](int64_t b) -> StatusOr<double> { return fixed + 300.0 * b; }, o);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_EQ(c->batch, 16);
    EXPECT_DOUBLE_EQ(c->latency_us, fixed + 300.0 * 16);
    EXPECT_DOUBLE_EQ(c->images_per_s, 16 / ((fixed + 300.0 * 16) * 1e-6));
    ASSERT_EQ(c->candidates.size(), 5u);
    for (size_t i = 1; i < c->candidates.size(); ++i)
      EXPECT_GT(c->candidates[i].images_per_s, c->candidates[i - 1].images_per_s);
  }
}

TEST(BatchSize, TheBoundIsRespected) {
  auto latency = [](int64_t b) -> StatusOr<double> { return 2000.0 + 900.0 * b; };
  for (double bound_us : {2900.0, 5000.0, 9000.0, 16400.0, 1e9}) {
    BatchSizeOptions o;
    o.max_batch = 32;
    o.latency_bound_us = bound_us;
    StatusOr<LaneChoice> c = ChooseBatch("x", latency, o);
    ASSERT_TRUE(c.ok()) << bound_us;
    EXPECT_LE(c->latency_us, bound_us);
    // The largest candidate within the bound (images/s is monotone here).
    int64_t expected = 0;
    for (int64_t b : BatchCandidates(32))
      if (2000.0 + 900.0 * b <= bound_us) expected = b;
    EXPECT_EQ(c->batch, expected) << bound_us;
    for (const BatchCandidate& k : c->candidates)
      EXPECT_EQ(k.within_bound, k.latency_us <= bound_us) << k.batch;
  }
  BatchSizeOptions tight;
  tight.latency_bound_us = 1000;
  StatusOr<LaneChoice> none = ChooseBatch("cpu", latency, tight);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(none.status().message().find("fastest, batch 1, takes 2.900 ms"), std::string::npos)
      << none.status().message();
}

TEST(BatchSize, APeakedCurvePicksItsMaximumNotTheLargestBatch) {
  // Superlinear cost (memory pressure): images/s = b / (100 + 5 b^2) peaks
  // near b = sqrt(20) ~ 4.5, i.e. at 4 among the candidates.
  auto latency = [](int64_t b) -> StatusOr<double> {
    return 100.0 + 5.0 * static_cast<double>(b * b);
  };
  BatchSizeOptions o;
  o.max_batch = 64;
  StatusOr<LaneChoice> c = ChooseBatch("x", latency, o);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->batch, 4);
  for (const BatchCandidate& k : c->candidates) EXPECT_LE(k.images_per_s, c->images_per_s);
}

TEST(BatchSize, FailingCandidatesAreSkippedAndNamed) {
  auto latency = [](int64_t b) -> StatusOr<double> {
    if (b > 4) return ResourceExhausted("out of memory at batch " + std::to_string(b));
    return 50.0 * static_cast<double>(b);
  };
  BatchSizeOptions o;
  o.max_batch = 16;
  StatusOr<LaneChoice> c = ChooseBatch("x", latency, o);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->batch, 1);  // equal images/s: the smaller batch
  EXPECT_EQ(c->candidates.back().error, "out of memory at batch 16");
  BatchSizeOptions bad;
  bad.max_batch = 0;
  EXPECT_FALSE(ChooseBatch("x", latency, bad).ok());
}

Graph TinyCnn(int64_t image) {
  Graph g = BuildTinyCnn(1);
  EXPECT_TRUE(RunDefaultPasses(g).ok());
  for (ValueId in : g.inputs()) {
    g.value(in).shape[2] = Dim(image);
    g.value(in).shape[3] = Dim(image);
  }
  for (Value& v : g.values())
    if (!v.constant && v.producer != kNoNode) v.has_shape = false;
  EXPECT_TRUE(InferShapes(g).ok());
  return g;
}

TEST(BatchSize, FindsTheBatchSymbolOrSaysItIsFixed) {
  Graph g = TinyCnn(32);
  BatchDim d = FindBatchDim(g);
  EXPECT_EQ(d.symbol, "N");
  EXPECT_TRUE(d.why.empty());
  ASSERT_TRUE(SpecializeSymbols(g, {{"N", 3}}).ok());
  d = FindBatchDim(g);
  EXPECT_TRUE(d.symbol.empty());
  EXPECT_EQ(d.fixed_batch, 3);
  EXPECT_NE(d.why.find("input 'input' has a fixed batch dimension (3)"), std::string::npos)
      << d.why;
}

struct Fixture {
  Fixture() : model(*LoadDeviceProfile("host-vgpu")) {
    RegisterBasicPolicies(policies);
    RegisterCostModelPolicies(policies);
    RegisterBaselinePolicies(policies);
    ctx.devices = {"cpu", "vgpu"};
    ctx.cost_model = &model;
  }
  CostModel model;
  PolicyRegistry policies;
  PlacementContext ctx;
};

TEST(BatchSize, ChoosesOnAModelWithTheSimulator) {
  Fixture f;
  const Graph g = TinyCnn(32);
  BatchSizeOptions o;
  o.max_batch = 8;
  StatusOr<ThroughputChoice> c = ChooseThroughputBatches(g, f.policies, "heft", f.ctx, o);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->batch_dim.symbol, "N");
  EXPECT_EQ(c->shared.lane, "cpu+vgpu (heft)");
  ASSERT_EQ(c->shared.candidates.size(), 4u);
  for (const BatchCandidate& k : c->shared.candidates) {
    EXPECT_GT(k.latency_us, 0) << k.error;
    EXPECT_LE(k.images_per_s, c->shared.images_per_s);
  }
  // A bigger batch takes longer (more work), here strictly.
  for (size_t i = 1; i < c->shared.candidates.size(); ++i)
    EXPECT_GT(c->shared.candidates[i].latency_us, c->shared.candidates[i - 1].latency_us);
  ASSERT_EQ(c->per_device.size(), 2u);
  EXPECT_EQ(c->per_device[0].lane, "cpu");
  EXPECT_EQ(c->per_device[1].lane, "vgpu");
  const double lanes = c->per_device[0].images_per_s + c->per_device[1].images_per_s;
  EXPECT_EQ(c->use_per_device, lanes > c->shared.images_per_s);
  EXPECT_DOUBLE_EQ(c->images_per_s, std::max(lanes, c->shared.images_per_s));

  // A bound between batch 1's and batch 8's latency rules the big ones out.
  const double bound =
      0.5 * (c->shared.candidates[0].latency_us + c->shared.candidates[3].latency_us);
  o.latency_bound_us = bound;
  StatusOr<ThroughputChoice> bounded = ChooseThroughputBatches(g, f.policies, "heft", f.ctx, o);
  ASSERT_TRUE(bounded.ok());
  EXPECT_LE(bounded->shared.latency_us, bound);
  EXPECT_LT(bounded->shared.batch, 8);
  for (const LaneChoice& l : bounded->per_device) EXPECT_LE(l.latency_us, bound) << l.lane;
}

TEST(BatchSize, AFixedBatchModelIsEvaluatedAtItsBatchOnly) {
  Fixture f;
  Graph g = TinyCnn(32);
  ASSERT_TRUE(SpecializeSymbols(g, {{"N", 2}}).ok());
  BatchSizeOptions o;
  o.max_batch = 16;
  StatusOr<ThroughputChoice> c = ChooseThroughputBatches(g, f.policies, "heft", f.ctx, o);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->batch_dim.symbol.empty());
  EXPECT_EQ(c->shared.batch, 2);
  ASSERT_EQ(c->shared.candidates.size(), 1u);
  EXPECT_DOUBLE_EQ(c->shared.images_per_s, 2 / (c->shared.latency_us * 1e-6));
  EXPECT_TRUE(c->per_device.empty());
  EXPECT_NE(c->note.find("the batch cannot be chosen"), std::string::npos) << c->note;
}

TEST(BatchSize, NeedsACostModel) {
  Fixture f;
  f.ctx.cost_model = nullptr;
  EXPECT_FALSE(ChooseThroughputBatches(TinyCnn(32), f.policies, "heft", f.ctx, {}).ok());
}

}  // namespace
}  // namespace braid
