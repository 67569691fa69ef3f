// The cost model's newer terms (cache tier, per-op-type factors, sparse
// kernel speed, floor device) and the fits that produce them.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "scheduler/cache_residency.h"
#include "scheduler/cost_model.h"
#include "tests/scheduler/sim_test_util.h"

namespace braid {
namespace {

DeviceProfile CpuOnly(double cache_bytes = 0, double cache_gbps = 0) {
  DeviceProfile p;
  p.name = "t";
  DeviceSpec d;
  d.name = "cpu";
  d.kind = "cpu";
  d.peak_gflops = 50;
  d.memory_bandwidth_gbps = 20;
  d.cache_bytes = cache_bytes;
  d.cache_bandwidth_gbps = cache_gbps;
  p.devices.push_back(d);
  return p;
}

TEST(CostModelFitTest, CacheTierIsContinuousAndMonotone) {
  const DeviceProfile p = CpuOnly(1 << 20, 100);
  const CostModel m(p);
  double last = -1;
  for (double bytes = 0; bytes <= 8 << 20; bytes += 64 << 10) {
    const double t = m.Cost(OpClass::kElementwise, 0, bytes, 0).TotalUs();
    EXPECT_GE(t, last) << bytes;
    last = t;
  }
  // Inside the cache: cache bandwidth; beyond: the rest at DRAM bandwidth.
  EXPECT_DOUBLE_EQ(MemoryTimeUs(p.devices[0], 1 << 20), (1 << 20) / 100e3);
  EXPECT_DOUBLE_EQ(MemoryTimeUs(p.devices[0], 3 << 20),
                   (1 << 20) / 100e3 + (2 << 20) / 20e3);
  // No tier (old profiles): one bandwidth.
  EXPECT_DOUBLE_EQ(MemoryTimeUs(CpuOnly().devices[0], 3 << 20), (3 << 20) / 20e3);
  // And monotone in FLOPs.
  double prev = -1;
  for (double flops = 0; flops < 1e8; flops += 1e6) {
    const double t = m.Cost(OpClass::kConv, flops, 1e5, 0).TotalUs();
    EXPECT_GE(t, prev);
    prev = t;
  }
}

TEST(CostModelFitTest, DepthwiseConvStreamsAtMemoryBandwidthInsideTheCache) {
  DeviceProfile p = CpuOnly(1 << 20, 100);
  p.devices[0].efficiency.push_back({"depthwise_conv", 1, 0.5, 0, 0});
  p.devices[0].efficiency.push_back({"elementwise", 1, 0.5, 0, 0});
  const CostModel m(p);
  OpWork w;
  w.bytes = 5e5;  // inside the 1 MiB cache
  w.op_class = OpClass::kDepthwiseConv;
  EXPECT_FALSE(UsesCacheTier(OpClass::kDepthwiseConv));
  EXPECT_DOUBLE_EQ(m.Cost(w, 0).memory_us, 5e5 / (20e3 * 0.5));
  w.op_class = OpClass::kElementwise;
  EXPECT_TRUE(UsesCacheTier(OpClass::kElementwise));
  EXPECT_DOUBLE_EQ(m.Cost(w, 0).memory_us, 5e5 / (100e3 * 0.5));
}

TEST(CostModelFitTest, OpTypeFactorScalesTheWorkNotTheOverhead) {
  DeviceProfile p = CpuOnly();
  p.devices[0].efficiency.push_back({"data_movement", 1, 1, 2.0, 0});
  p.devices[0].op_types.push_back({"Concat", 4.0, 5});
  const CostModel m(p);
  OpWork w;
  w.op_class = OpClass::kDataMovement;
  w.bytes = 2e5;  // 10 us at 20 GB/s
  w.op_type = "Reshape";
  EXPECT_DOUBLE_EQ(m.Cost(w, 0).TotalUs(), 2 + 10);
  w.op_type = "Concat";
  EXPECT_DOUBLE_EQ(m.Cost(w, 0).TotalUs(), 2 + 40);
}

TEST(CostModelFitTest, DepthwiseInsideTheCacheTakesItsOwnFactorAndFitsItApart) {
  DeviceProfile p = CpuOnly(1 << 20, 100);
  p.devices[0].efficiency.push_back({"depthwise_conv", 1, 1, 0, 0});
  p.devices[0].op_types.push_back({"Conv:depthwise", 2.0, 5});
  const DeviceSpec& d = p.devices[0];
  // Keyed apart only for a class without the cache tier, and only inside it.
  EXPECT_EQ(OpTypeFactorKey(d, OpClass::kDepthwiseConv, "Conv:depthwise", 5e5),
            "Conv:depthwise@cache");
  EXPECT_EQ(OpTypeFactorKey(d, OpClass::kDepthwiseConv, "Conv:depthwise", 2e6), "Conv:depthwise");
  EXPECT_EQ(OpTypeFactorKey(d, OpClass::kElementwise, "Add", 5e5), "Add");
  OpWork w;
  w.op_class = OpClass::kDepthwiseConv;
  w.op_type = "Conv:depthwise";
  w.bytes = 5e5;  // 25 us at 20 GB/s
  // No "@cache" factor yet: the plain key's.
  EXPECT_DOUBLE_EQ(CostModel(p).Cost(w, 0).TotalUs(), 2 * 25);
  p.devices[0].op_types.push_back({"Conv:depthwise@cache", 0.5, 5});
  const CostModel m(p);
  EXPECT_DOUBLE_EQ(m.Cost(w, 0).TotalUs(), 0.5 * 25);
  w.bytes = 2e6;  // beyond the cache: the plain key
  EXPECT_DOUBLE_EQ(m.Cost(w, 0).TotalUs(), 2 * 100);

  // The fit groups samples by the same key: small ones 0.6x, big ones 1.8x
  // the class prediction come back as two factors.
  DeviceSpec plain = CpuOnly(1 << 20, 100).devices[0];
  plain.efficiency.push_back({"depthwise_conv", 1, 1, 0, 0});
  std::vector<OpMeasurement> ms;
  for (int i = 0; i < 6; ++i) {
    const double small = 2e5 + 5e4 * i, big = 3e6 + 5e5 * i;
    ms.push_back({OpClass::kDepthwiseConv, 0, small, 0.6 * small / 20e3, "Conv:depthwise"});
    ms.push_back({OpClass::kDepthwiseConv, 0, big, 1.8 * big / 20e3, "Conv:depthwise"});
  }
  const std::vector<OpTypeFactor> factors = FitOpTypeFactors(plain, ms, 3);
  ASSERT_EQ(factors.size(), 2u);
  for (const OpTypeFactor& f : factors) {
    const double truth = f.op_type == "Conv:depthwise@cache" ? 0.6 : 1.8;
    EXPECT_TRUE(f.op_type == "Conv:depthwise@cache" || f.op_type == "Conv:depthwise") << f.op_type;
    // The fit shrinks an op type's factor towards 1 by n / (n + 1) in log
    // space, not the cache tier's: the class is no prior for a tier it lacks.
    const double shrink = f.op_type == "Conv:depthwise@cache" ? 1.0 : 6.0 / 7;
    EXPECT_NEAR(std::log(f.factor), std::log(truth) * shrink, 1e-9) << f.op_type;
  }
}

// An elementwise class has no compute term: a costly op type's per-element
// work is its factor alone, so it is not shrunk towards the class; another
// class's op type is (n / (n + 1) in log space).
TEST(CostModelFitTest, ElementwiseOpTypeFactorsAreNotShrunkTowardsTheClass) {
  DeviceProfile p = CpuOnly(1 << 20, 100);
  p.devices[0].efficiency.push_back({"elementwise", 1, 1, 0, 0});
  p.devices[0].efficiency.push_back({"normalization", 1, 1, 0, 0});
  const CostModel classes(p);
  std::vector<OpMeasurement> ms;
  for (int i = 0; i < 4; ++i) {
    OpWork w;
    w.bytes = 2e5 + 8e5 * i;  // in and beyond the cache
    w.op_class = OpClass::kElementwise;
    ms.push_back({w.op_class, 0, w.bytes, 3.0 * classes.Cost(w, 0).TotalUs(), "Gelu"});
    w.op_class = OpClass::kNormalization;
    ms.push_back({w.op_class, 0, w.bytes, 0.5 * classes.Cost(w, 0).TotalUs(), "LayerNormalization"});
  }
  const std::vector<OpTypeFactor> factors = FitOpTypeFactors(p.devices[0], ms, 3);
  ASSERT_EQ(factors.size(), 2u);
  for (const OpTypeFactor& f : factors) {
    if (f.op_type == "Gelu") {
      EXPECT_NEAR(f.factor, 3.0, 1e-9);
    } else {
      EXPECT_EQ(f.op_type, "LayerNormalization");
      EXPECT_NEAR(std::log(f.factor), std::log(0.5) * 4 / 5, 1e-9);
    }
  }
}

TEST(CostModelFitTest, InputSparseFullyConnectedScalesTheCpuWorkByItsZeros) {
  // x [rows, 64] -> Gemm with a constant [64, 32] weight.
  auto fc = [](int64_t rows, double measured, bool constant_weight) {
    Graph g;
    const ValueId x = g.AddInput("x", DataType::kF32, {rows, 64});
    std::vector<float> w(64 * 32, 0.5f);
    const ValueId wv = constant_weight
                           ? g.AddConstant("w", DataType::kF32, {64, 32},
                                           TensorData::Copy(w.data(), w.size() * sizeof(float)))
                           : g.AddInput("w", DataType::kF32, {64, 32});
    Node n;
    n.name = "fc";
    n.op_type = "Gemm";
    n.inputs = {x, wv};
    Value y;
    y.name = "y";
    y.dtype = DataType::kF32;
    y.has_shape = true;
    y.shape = {rows, 32};
    n.outputs = {g.AddValue(std::move(y))};
    n.annotation.flops = 2.0 * static_cast<double>(rows) * 64 * 32;
    n.annotation.bytes = 4.0 * (static_cast<double>(rows) * 96 + 64 * 32);
    n.annotation.activation_sparsity = measured;
    g.AddNode(n);
    return g;
  };
  const Graph sparse = fc(1, 0.6, true);
  EXPECT_DOUBLE_EQ(SkippedInputSparsity(sparse.nodes()[0], &sparse), 0.6);
  EXPECT_DOUBLE_EQ(RoutableSparsity(sparse.nodes()[0], &sparse), 0.6);
  EXPECT_EQ(SkippedInputSparsity(sparse.nodes()[0], nullptr), 0.0);  // rows unknown
  for (const Graph& g : {fc(5, 0.6, true), fc(1, 0.2, true), fc(1, 0.6, false), fc(1, -1, true)})
    EXPECT_EQ(SkippedInputSparsity(g.nodes()[0], &g), 0.0);
  // The CPU's work (not its overhead) scales by 1 - 0.6; a GPU's does not.
  DeviceProfile p = testing::TwoDeviceProfile();
  p.devices[0].efficiency.push_back({"gemm", 1, 1, 0, 0});
  const CostModel m(p);
  const Graph dense = fc(1, 0.0, true);
  const double cpu_dense = m.Cost(OpWorkOf(dense.nodes()[0], &dense), 0).TotalUs();
  EXPECT_NEAR(m.Cost(OpWorkOf(sparse.nodes()[0], &sparse), 0).TotalUs(), 0.4 * cpu_dense, 1e-9);
  EXPECT_DOUBLE_EQ(m.Cost(OpWorkOf(sparse.nodes()[0], &sparse), 1).TotalUs(),
                   m.Cost(OpWorkOf(dense.nodes()[0], &dense), 1).TotalUs());
}

TEST(CostModelFitTest, SparseSpeedAppliesAboveTheCrossoverAndFallsWithSparsity) {
  DeviceProfile p = CpuOnly();
  p.devices[0].sparse.push_back({"conv1x1", 0.6, 0.1, 2.0, 5});
  const CostModel m(p);
  OpWork w;
  w.op_class = OpClass::kConv;
  w.op_type = "Conv";
  w.sparse_class = "conv1x1";
  w.flops = 5e6;  // 100 us dense at 50 GFLOP/s (efficiency default 0.45)
  const double dense = m.Cost(w, 0).TotalUs();
  w.weight_sparsity = 0.5;  // below: dense kernel
  EXPECT_DOUBLE_EQ(m.Cost(w, 0).TotalUs(), dense);
  double last = std::numeric_limits<double>::infinity();
  for (double s = 0.6; s <= 1.0001; s += 0.05) {
    w.weight_sparsity = s;
    const double t = m.Cost(w, 0).TotalUs();
    EXPECT_LE(t, last) << s;
    EXPECT_NEAR(t / dense, 0.1 + 2.0 * (1 - s), 1e-9);
    last = t;
  }
  w.sparse_class = "conv3x3";  // no entry for it: dense
  EXPECT_DOUBLE_EQ(m.Cost(w, 0).TotalUs(), dense);
}

TEST(CostModelFitTest, FloorDeviceKeepsAVirtualDeviceNoFasterThanItsHost) {
  DeviceProfile p = CpuOnly();
  DeviceSpec v;
  v.name = "vgpu";
  v.kind = "vgpu";
  v.peak_gflops = 1000;  // faster than the host on paper
  v.memory_bandwidth_gbps = 100;
  v.launch_overhead_us = 5;
  p.devices.push_back(v);
  const CostModel free(p);
  p.devices[1].floor_device = "cpu";
  const CostModel floored(p);
  ASSERT_TRUE(ValidateDeviceProfile(p).ok());
  for (double flops : {0.0, 1e5, 1e7, 1e9}) {
    const double cpu = floored.Cost(OpClass::kConv, flops, 1e4, 0).TotalUs();
    const double shaped = free.Cost(OpClass::kConv, flops, 1e4, 1).TotalUs();
    const double vgpu = floored.Cost(OpClass::kConv, flops, 1e4, 1).TotalUs();
    EXPECT_DOUBLE_EQ(vgpu, std::max(cpu, shaped)) << flops;
  }
  // The vgpu's own model is its shaping: launch + max(FLOPs/peak, bytes/bw).
  EXPECT_DOUBLE_EQ(free.Cost(OpClass::kConv, 2e6, 1e5, 1).TotalUs(), 5 + 2.0);
  EXPECT_DOUBLE_EQ(free.Cost(OpClass::kPool, 1e3, 1e6, 1).TotalUs(), 5 + 10.0);
}

// Synthetic truth: a device with class efficiencies, overheads, a cache tier
// and op-type factors generates noisy times; FitDevice must predict fresh
// ops of the same population within a few percent and recover the factors.
TEST(CostModelFitTest, FittedFactorsReproduceASyntheticTruth) {
  DeviceProfile truth_profile = CpuOnly(2 << 20, 80);
  DeviceSpec& truth = truth_profile.devices[0];
  truth.efficiency.push_back({"elementwise", 0.3, 0.7, 1.5, 0});
  truth.efficiency.push_back({"data_movement", 0.2, 0.9, 0.5, 0});
  truth.efficiency.push_back({"conv", 0.6, 0.5, 4.0, 0});
  truth.op_types.push_back({"Concat", 6.0, 0});
  truth.op_types.push_back({"Mul", 1.5, 0});
  const CostModel truth_model(truth_profile);
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> log_bytes(std::log(1e3), std::log(2e7));
  std::normal_distribution<double> noise(0, 0.03);
  auto sample = [&](OpClass c, const char* type) {
    OpMeasurement m;
    m.op_class = c;
    m.op_type = type;
    m.bytes = std::exp(log_bytes(rng));
    m.flops = c == OpClass::kConv ? m.bytes * std::uniform_real_distribution<double>(5, 80)(rng)
                                  : m.bytes / 4;
    OpWork w;
    w.op_class = c;
    w.op_type = m.op_type;
    w.flops = m.flops;
    w.bytes = m.bytes;
    m.measured_us = truth_model.Cost(w, 0).TotalUs() * std::exp(noise(rng));
    return m;
  };
  std::vector<OpMeasurement> train, test;
  for (int i = 0; i < 40; ++i) {
    for (auto [c, type] : {std::pair{OpClass::kElementwise, "Add"}, {OpClass::kElementwise, "Mul"},
                           {OpClass::kDataMovement, "Reshape"},
                           {OpClass::kDataMovement, "Concat"}, {OpClass::kConv, "Conv"}}) {
      train.push_back(sample(c, type));
      test.push_back(sample(c, type));
    }
  }
  DeviceSpec fitted = truth;  // keeps peak, bandwidths and the cache tier
  fitted.efficiency.clear();
  fitted.op_types.clear();
  FitDevice(fitted, train);
  DeviceProfile fitted_profile = truth_profile;
  fitted_profile.devices[0] = fitted;
  const CostModel model(fitted_profile);
  std::vector<double> errors;
  for (const OpMeasurement& m : test) {
    OpWork w;
    w.op_class = m.op_class;
    w.op_type = m.op_type;
    w.flops = m.flops;
    w.bytes = m.bytes;
    errors.push_back(std::abs(model.Cost(w, 0).TotalUs() - m.measured_us) / m.measured_us);
  }
  std::sort(errors.begin(), errors.end());
  EXPECT_LT(errors[errors.size() / 2], 0.05);       // median
  EXPECT_LT(errors[errors.size() * 9 / 10], 0.15);  // 90th percentile
  // The Concat / Reshape ratio (6x in the truth) is what the factors carry.
  const OpTypeFactor* concat = fitted.OpType("Concat");
  ASSERT_NE(concat, nullptr);
  const OpTypeFactor* reshape = fitted.OpType("Reshape");
  const double ratio = concat->factor / (reshape ? reshape->factor : 1.0);
  EXPECT_NEAR(ratio, 6.0, 6.0 * 0.15);
}

// A 1 MiB cache at 100 GB/s over 20 GB/s memory; elementwise reaches 0.4 of
// the cache's bandwidth and 0.8 of the memory's, conv 0.8 of both.
DeviceProfile TwoTierProfile() {
  DeviceProfile p = CpuOnly(1 << 20, 100);
  OpClassEfficiency elementwise{"elementwise", 1, 0.8, 0, 0};
  elementwise.cache_memory = 0.4;
  p.devices[0].efficiency.push_back(elementwise);
  p.devices[0].efficiency.push_back({"conv", 1, 0.8, 0, 0});
  return p;
}

TEST(CostModelFitTest, MemoryBoundClassesGiveTheCacheTierItsOwnEfficiency) {
  const DeviceProfile p = TwoTierProfile();
  const CostModel m(p);
  OpWork w;
  w.op_class = OpClass::kElementwise;
  w.bytes = 3 << 20;  // 1 MiB in the cache, 2 MiB beyond it
  const double cache_us = (1 << 20) / (100e3 * 0.4), dram_us = (2 << 20) / (20e3 * 0.8);
  EXPECT_DOUBLE_EQ(m.Cost(w, 0).memory_us, cache_us + dram_us);
  // Unset (old profiles, conv): one efficiency for both tiers.
  w.op_class = OpClass::kConv;
  EXPECT_DOUBLE_EQ(m.Cost(w, 0).memory_us, (1 << 20) / (100e3 * 0.8) + dram_us);
  EXPECT_DOUBLE_EQ(RooflineCost(p.devices[0], 1, 0.8, 0, 0, 3 << 20).memory_us,
                   (1 << 20) / (100e3 * 0.8) + dram_us);
  EXPECT_DOUBLE_EQ(RooflineCost(p.devices[0], 1, 0.8, 0, 0, 3 << 20, 0.4).memory_us,
                   cache_us + dram_us);
  const MemoryTierTimes tiers = MemoryTierTimesUs(p.devices[0], 3 << 20);
  EXPECT_DOUBLE_EQ(tiers.cache_us, (1 << 20) / 100e3);
  EXPECT_DOUBLE_EQ(tiers.memory_us, (2 << 20) / 20e3);
}

TEST(CostModelFitTest, ColdInputsOfMemoryBoundOpsMoveAtMemorySpeed) {
  const DeviceProfile p = TwoTierProfile();
  const CostModel m(p);
  OpWork w;
  w.op_class = OpClass::kElementwise;
  w.bytes = 6e5;
  w.cold_bytes = 2e5;  // e.g. a residual Add's skip input
  EXPECT_DOUBLE_EQ(m.Cost(w, 0).memory_us, 4e5 / (100e3 * 0.4) + 2e5 / (20e3 * 0.8));
  w.cold_bytes = 9e9;  // never more than the op's bytes
  EXPECT_DOUBLE_EQ(m.Cost(w, 0).memory_us, 6e5 / (20e3 * 0.8));
  // A DRAM tier: of the cold bytes, those beyond the last level leave the
  // tiers for a stall at the DRAM bandwidth (no efficiency: a stream's
  // traffic, as calibrate measures it), an output byte twice (read for
  // ownership, written back); the other cold ones move at the memory's.
  // Without the tier dram_bytes change nothing.
  w.cold_bytes = 2e5;
  w.dram_bytes = 1e5;
  EXPECT_DOUBLE_EQ(m.Cost(w, 0).memory_us, 4e5 / (100e3 * 0.4) + 2e5 / (20e3 * 0.8));
  DeviceProfile dram = p;
  dram.devices[0].llc_bytes = 1 << 22;
  dram.devices[0].dram_bandwidth_gbps = 5;
  const CostModel with_dram(dram);
  EXPECT_DOUBLE_EQ(with_dram.Cost(w, 0).memory_us,
                   4e5 / (100e3 * 0.4) + 1e5 / (20e3 * 0.8) + 1e5 / 5e3);
  w.dram_written_bytes = 4e4;
  EXPECT_DOUBLE_EQ(with_dram.Cost(w, 0).memory_us,
                   4e5 / (100e3 * 0.4) + 1e5 / (20e3 * 0.8) + 1.4e5 / 5e3);
  // The stall is outside the op's factor and bounds it whatever else does.
  dram.devices[0].op_types.push_back({"Add", 2.0, 5});
  w.op_type = "Add";
  EXPECT_DOUBLE_EQ(CostModel(dram).Cost(w, 0).memory_us,
                   2 * (4e5 / (100e3 * 0.4) + 1e5 / (20e3 * 0.8)) + 1.4e5 / 5e3);
  w.op_type = {};
  w.dram_written_bytes = 0;
  // DRAM bytes are cold bytes (a caller's smaller cold_bytes is raised)...
  w.cold_bytes = 0;
  EXPECT_DOUBLE_EQ(with_dram.Cost(w, 0).memory_us, 5e5 / (100e3 * 0.4) + 1e5 / 5e3);
  // ... and a dense class keeps its view of them too.
  w.op_class = OpClass::kConv;
  EXPECT_DOUBLE_EQ(with_dram.Cost(w, 0).memory_us, m.Cost(w, 0).memory_us);
  w.op_class = OpClass::kElementwise;
  w.dram_bytes = 0;
  w.cold_bytes = 9e9;
  // A third of its bytes copied in from another device: they read at the
  // memory bandwidth at the elementwise memory efficiency (copied_read_gbps
  // unset), the rest as usual, and the work takes the device's resume factor
  // (the stream waited for them).
  w.cold_bytes = 0;
  w.copied_bytes = 2e5;
  const double warm_us = 6e5 / (100e3 * 0.4);
  EXPECT_DOUBLE_EQ(m.Cost(w, 0).memory_us, 2e5 / (20e3 * 0.8) + warm_us * 2 / 3);
  DeviceProfile resumed = p;
  resumed.devices[0].resume_factor = 1.5;
  resumed.devices[0].copied_read_gbps = 10;  // measured: it wins
  const double copied_us = 2e5 / 10e3 + warm_us * 2 / 3;
  EXPECT_DOUBLE_EQ(CostModel(resumed).Cost(w, 0).memory_us, 1.5 * copied_us);
  w.copied_bytes = 0;
  EXPECT_DOUBLE_EQ(CostModel(resumed).Cost(w, 0).memory_us, warm_us);
  // The copied bytes add a stall: their read at copied_read_gbps beyond what
  // a plain stream (the elementwise class) takes over them. A pool keeps its
  // per-byte work (memory efficiency 0.1) on every byte.
  resumed.devices[0].efficiency.push_back({"pool", 1, 0.1, 0, 0});
  w.op_class = OpClass::kPool;
  w.copied_bytes = 2e5;
  const double stall_us = 2e5 / 10e3 - warm_us / 3;
  EXPECT_DOUBLE_EQ(CostModel(resumed).Cost(w, 0).memory_us,
                   1.5 * (6e5 / (100e3 * 0.1) + stall_us));
  // An op the model holds compute-bound waits for its copied input all the
  // same: the stall is on both roofline terms, so on its total.
  w.flops = 1e9;  // 20 ms at 50 GFLOP/s: compute-bound
  const OpCost bound = CostModel(resumed).Cost(w, 0);
  EXPECT_DOUBLE_EQ(bound.TotalUs(), 1.5 * (1e9 / (resumed.devices[0].peak_gflops * 1e3) + stall_us));
  w.flops = 0;
  // A window op (pool, depthwise conv) reads its copied bytes at the
  // window rate where the profile has one; an Add keeps the stream rate.
  resumed.devices[0].copied_window_read_gbps = 5;
  EXPECT_DOUBLE_EQ(CostModel(resumed).Cost(w, 0).memory_us,
                   1.5 * (6e5 / (100e3 * 0.1) + 2e5 / 5e3 - warm_us / 3));
  w.op_class = OpClass::kElementwise;
  EXPECT_DOUBLE_EQ(CostModel(resumed).Cost(w, 0).memory_us, 1.5 * copied_us);
  // A depthwise conv reads at its own rate where the profile has one; a
  // pool keeps the window rate.
  resumed.devices[0].copied_depthwise_read_gbps = 4;
  resumed.devices[0].efficiency.push_back({"depthwise_conv", 1, 0.1, 0, 0});
  w.op_class = OpClass::kDepthwiseConv;
  const double depthwise_work_us = CostModel(resumed).Cost(w, 0).memory_us;
  resumed.devices[0].copied_depthwise_read_gbps = 0;
  EXPECT_NEAR(depthwise_work_us - CostModel(resumed).Cost(w, 0).memory_us,
              1.5 * (2e5 / 4e3 - 2e5 / 5e3), 1e-9);
  resumed.devices[0].copied_depthwise_read_gbps = 4;
  w.op_class = OpClass::kPool;
  EXPECT_DOUBLE_EQ(CostModel(resumed).Cost(w, 0).memory_us,
                   1.5 * (6e5 / (100e3 * 0.1) + 2e5 / 5e3 - warm_us / 3));
  resumed.devices[0].copied_depthwise_read_gbps = 0;
  resumed.devices[0].efficiency.pop_back();
  resumed.devices[0].copied_window_read_gbps = 0;
  // A device without a cache tier (a GPU profile here) keeps its usual time.
  DeviceProfile flat = resumed;
  flat.devices[0].cache_bytes = 0;
  w.op_class = OpClass::kElementwise;
  EXPECT_DOUBLE_EQ(CostModel(flat).Cost(w, 0).memory_us, 1.5 * 6e5 / (20e3 * 0.8));
  w.copied_bytes = 0;
  // Dense classes keep their fitted view (their inputs are a small part).
  EXPECT_FALSE(MemoryBoundClass(OpClass::kConv));
  EXPECT_TRUE(MemoryBoundClass(OpClass::kPool));
  w.op_class = OpClass::kConv;
  w.cold_bytes = 2e5;
  EXPECT_DOUBLE_EQ(m.Cost(w, 0).memory_us, 6e5 / (100e3 * 0.8));
}

TEST(CostModelFitTest, LinesAnotherCoreHoldsAreAStallOfOpsThatStreamTheirWrites) {
  DeviceProfile p = TwoTierProfile();
  const CostModel off(p);
  OpWork w;
  w.op_class = OpClass::kElementwise;
  w.op_type = "Add";
  w.bytes = 6e5;
  w.reclaimed_bytes = 1e5;
  const double warm_us = 6e5 / (100e3 * 0.4);
  // Without reclaim_gbps the bytes change nothing.
  EXPECT_DOUBLE_EQ(off.Cost(w, 0).memory_us, warm_us);
  p.devices[0].reclaim_gbps = 12.5;
  p.devices[0].op_types.push_back({"Add", 2.0, 5});
  p.devices[0].resume_factor = 1.5;
  const CostModel on(p);
  // A stall at that rate, outside the op type's factor and the resume
  // factor (a copied input brings the latter), on both roofline terms.
  const double stall_us = 1e5 / 12.5e3;
  EXPECT_DOUBLE_EQ(on.Cost(w, 0).memory_us, 2 * warm_us + stall_us);
  w.copied_bytes = 1;
  const double copied_us = on.Cost(w, 0).memory_us - stall_us;
  w.reclaimed_bytes = 0;
  EXPECT_DOUBLE_EQ(on.Cost(w, 0).memory_us, copied_us);
  w.copied_bytes = 0;
  w.reclaimed_bytes = 1e5;
  w.flops = 1e9;  // compute-bound: the stall is still added
  EXPECT_DOUBLE_EQ(on.Cost(w, 0).TotalUs(),
                   2 * 1e9 / (p.devices[0].peak_gflops * 1e3) + stall_us);
  w.flops = 0;
  // Data movement and normalization stream their writes too; a window or
  // compute-bound op hides the stall behind its work.
  w.op_type = {};
  for (OpClass c : {OpClass::kDataMovement, OpClass::kNormalization, OpClass::kReduce}) {
    w.op_class = c;
    OpWork plain = w;
    plain.reclaimed_bytes = 0;
    EXPECT_DOUBLE_EQ(on.Cost(w, 0).TotalUs(), on.Cost(plain, 0).TotalUs() + stall_us)
        << OpClassName(c);
  }
  for (OpClass c : {OpClass::kPool, OpClass::kDepthwiseConv, OpClass::kConv, OpClass::kGemm}) {
    w.op_class = c;
    OpWork plain = w;
    plain.reclaimed_bytes = 0;
    EXPECT_DOUBLE_EQ(on.Cost(w, 0).TotalUs(), on.Cost(plain, 0).TotalUs()) << OpClassName(c);
  }
  // A device that runs the host's kernels (floor_device) is floored by
  // their time without the stall: no line of its memory is held elsewhere.
  DeviceProfile floored = p;
  floored.devices.push_back(floored.devices[0]);
  floored.devices[1].name = "vgpu";
  floored.devices[1].kind = "vgpu";
  floored.devices[1].floor_device = "cpu";
  floored.devices[1].reclaim_gbps = 0;
  floored.devices[1].peak_gflops *= 100;
  floored.devices[1].memory_bandwidth_gbps *= 100;
  floored.devices[1].cache_bandwidth_gbps *= 100;
  w.op_class = OpClass::kElementwise;
  OpWork plain = w;
  plain.reclaimed_bytes = 0;
  const CostModel with_floor(floored);
  EXPECT_DOUBLE_EQ(with_floor.Cost(w, 1).TotalUs(), with_floor.Cost(plain, 0).TotalUs());
  // AssignColdBytes carries them from ColdBytesPerNode to the work.
  ColdBytes cold;
  cold.written_held_elsewhere = 3e4;
  OpWork assigned;
  AssignColdBytes(cold, assigned);
  EXPECT_EQ(assigned.reclaimed_bytes, 3e4);
}

TEST(CostModelFitTest, MemoryBoundFitRecoversBothTiersAndKeepsElementwiseComputeAtItsPrior) {
  DeviceProfile truth_profile = CpuOnly(2 << 20, 80);
  OpClassEfficiency truth_elementwise{"elementwise", 0.3, 0.85, 1.0, 0};
  truth_elementwise.cache_memory = 0.45;
  truth_profile.devices[0].efficiency.push_back(truth_elementwise);
  const CostModel truth(truth_profile);
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> log_bytes(std::log(2e4), std::log(2e7));
  std::uniform_real_distribution<double> unit(0, 1);
  std::normal_distribution<double> noise(0, 0.02);
  std::vector<OpMeasurement> ms;
  for (int i = 0; i < 60; ++i) {
    OpMeasurement m;
    m.op_class = OpClass::kElementwise;
    m.op_type = "Add";
    m.bytes = std::exp(log_bytes(rng));
    m.flops = m.bytes / 12;
    m.cold_bytes = unit(rng) < 0.3 ? m.bytes / 3 : 0;  // a cold skip input
    m.measured_us = truth.Cost(MeasuredWork(m), 0).TotalUs() * std::exp(noise(rng));
    ms.push_back(m);
  }
  const std::vector<OpClassEfficiency> fit = FitEfficiency(CpuOnly(2 << 20, 80).devices[0], ms);
  ASSERT_EQ(fit.size(), 1u);
  EXPECT_EQ(fit[0].compute, DefaultEfficiency("cpu", OpClass::kElementwise).compute);
  EXPECT_NEAR(fit[0].memory, 0.85, 0.85 * 0.1);
  EXPECT_NEAR(fit[0].cache_memory, 0.45, 0.45 * 0.1);
  // Without the tier split the two efficiencies would have to agree: a
  // dense class keeps one.
  for (OpMeasurement& m : ms) m.op_class = OpClass::kConv;
  const std::vector<OpClassEfficiency> dense = FitEfficiency(CpuOnly(2 << 20, 80).devices[0], ms);
  ASSERT_EQ(dense.size(), 1u);
  EXPECT_LE(dense[0].cache_memory, 0);
}

TEST(CostModelFitTest, FitsSeeThroughTheDramStall) {
  // Pools, a third of them with DRAM bytes (an output from DRAM counts twice)
  // on a device with the tier: the class fit recovers the efficiencies the
  // stall does not touch, and no op-type factor absorbs the stall.
  DeviceProfile truth_profile = CpuOnly(2 << 20, 80);
  truth_profile.devices[0].llc_bytes = 32 << 20;
  truth_profile.devices[0].dram_bandwidth_gbps = 8;
  truth_profile.devices[0].efficiency.push_back({"pool", 0.2, 0.6, 0.5, 0});
  const CostModel truth(truth_profile);
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> log_bytes(std::log(5e4), std::log(8e6));
  std::uniform_real_distribution<double> unit(0, 1);
  std::normal_distribution<double> noise(0, 0.02);
  std::vector<OpMeasurement> ms;
  for (int i = 0; i < 60; ++i) {
    OpMeasurement m;
    m.op_class = OpClass::kPool;
    m.op_type = "MaxPool";
    m.bytes = std::exp(log_bytes(rng));
    m.flops = m.bytes / 8;
    if (unit(rng) < 0.35) {
      m.dram_bytes = m.bytes / 5;
      m.dram_written_bytes = m.bytes / 5;  // its output
      m.cold_bytes = m.dram_bytes;
    }
    m.measured_us = truth.Cost(MeasuredWork(m), 0).TotalUs() * std::exp(noise(rng));
    ms.push_back(m);
  }
  DeviceSpec device = CpuOnly(2 << 20, 80).devices[0];
  device.llc_bytes = 32 << 20;
  device.dram_bandwidth_gbps = 8;
  FitDevice(device, ms);
  const OpClassEfficiency* pool = device.Efficiency("pool");
  ASSERT_NE(pool, nullptr);
  EXPECT_NEAR(pool->memory, 0.6, 0.6 * 0.1);  // memory-bound samples: compute unseen
  EXPECT_NEAR(pool->overhead_us, 0.5, 0.5);
  EXPECT_EQ(device.OpType("MaxPool"), nullptr);  // within 5% of 1: none
  // The same samples read without the tier: the stall is unexplained and the
  // fit is worse off (a factor or lower efficiencies absorb it).
  DeviceSpec flat = CpuOnly(2 << 20, 80).devices[0];
  FitDevice(flat, ms);
  DeviceProfile with_tier = CpuOnly();
  with_tier.devices[0] = device;
  DeviceProfile without_tier = CpuOnly();
  without_tier.devices[0] = flat;
  const CostModel fitted(with_tier);
  const CostModel fitted_flat(without_tier);
  double err = 0, err_flat = 0;
  for (const OpMeasurement& m : ms) {
    err += std::abs(std::log(fitted.Cost(MeasuredWork(m), 0).TotalUs() / m.measured_us));
    err_flat += std::abs(std::log(fitted_flat.Cost(MeasuredWork(m), 0).TotalUs() / m.measured_us));
  }
  EXPECT_LT(err, 0.5 * err_flat);
}

TEST(CostModelFitTest, SparseSpeedFitRecoversLineAndCrossover) {
  // Truth: ratio = 0.12 + 2.2 * density; crossover where it is 1: 0.6.
  std::vector<std::pair<double, double>> points;
  for (double s : {0.5, 0.7, 0.8, 0.9, 0.95}) points.push_back({s, 0.12 + 2.2 * (1 - s)});
  const SparseKernelSpeed sp = FitSparseKernelSpeed("conv3x3", points);
  EXPECT_EQ(sp.op_class, "conv3x3");
  EXPECT_NEAR(sp.fixed, 0.12, 1e-9);
  EXPECT_NEAR(sp.per_density, 2.2, 1e-9);
  EXPECT_NEAR(sp.crossover, 0.6, 1e-9);
  EXPECT_EQ(sp.samples, 5);
  // A sparse kernel that never wins: crossover 1.
  const std::vector<std::pair<double, double>> slow = {{0.5, 3.0}, {0.9, 1.5}};
  EXPECT_DOUBLE_EQ(FitSparseKernelSpeed("gemm", slow).crossover, 1.0);
  EXPECT_DOUBLE_EQ(FitSparseKernelSpeed("gemm", {}).crossover, 1.0);
}

TEST(CostModelFitTest, OpWorkOfReadsTheSparseClassAndGatherRows) {
  Graph g;
  const ValueId x = g.AddInput("x", DataType::kF32, {1, 8, 4, 4});
  std::vector<float> w1(16 * 8, 0.f), w3(16 * 8 * 9, 0.f), table(1000 * 16, 1.f);
  const ValueId k1 = g.AddConstant("k1", DataType::kF32, {16, 8, 1, 1},
                                   TensorData::Copy(w1.data(), w1.size() * 4));
  const ValueId k3 = g.AddConstant("k3", DataType::kF32, {16, 8, 3, 3},
                                   TensorData::Copy(w3.data(), w3.size() * 4));
  const ValueId t = g.AddConstant("table", DataType::kF32, {1000, 16},
                                  TensorData::Copy(table.data(), table.size() * 4));
  const int64_t idx[2] = {3, 7};
  const ValueId i = g.AddConstant("idx", DataType::kI64, {2}, TensorData::Copy(idx, sizeof(idx)));
  Value out;
  out.name = "rows";
  out.dtype = DataType::kF32;
  out.has_shape = true;
  out.shape = {2, 16};
  const ValueId rows = g.AddValue(out);
  Node c1, c3, gather;
  c1.op_type = c3.op_type = "Conv";
  c1.inputs = {x, k1};
  c3.inputs = {x, k3};
  gather.op_type = "Gather";
  gather.inputs = {t, i};
  gather.outputs = {rows};
  gather.annotation.bytes = 1000 * 16 * 4 + 16 + 2 * 16 * 4;  // the whole table
  EXPECT_EQ(OpWorkOf(c1, &g).sparse_class, "conv1x1");
  EXPECT_EQ(OpWorkOf(c1, &g).op_type, "Conv:1x1");
  EXPECT_EQ(OpWorkOf(c3, &g).sparse_class, "conv3x3");
  EXPECT_EQ(OpWorkOf(c3, &g).op_type, "Conv:kxk");
  Node rows_kept, scatter;
  rows_kept.op_type = scatter.op_type = "Transpose";
  rows_kept.attrs.Set("perm", std::vector<int64_t>{0, 2, 1, 3});
  scatter.attrs.Set("perm", std::vector<int64_t>{0, 2, 3, 1});
  EXPECT_EQ(OpWorkOf(rows_kept).op_type, "Transpose:rows");
  EXPECT_EQ(OpWorkOf(scatter).op_type, "Transpose");
  EXPECT_EQ(OpWorkOf(gather, &g).bytes, 16 + 2 * (2 * 16 * 4));
  EXPECT_EQ(OpWorkOf(gather).bytes, gather.annotation.bytes);  // no graph: annotation
}

TEST(CostModelFitTest, OpWorkOfKeysStridedDepthwiseAndLateGlobalPooling) {
  Graph g;
  const ValueId x = g.AddInput("x", DataType::kF32, {1, 8, 14, 14});
  const ValueId late = g.AddInput("late", DataType::kF32, {1, 8, 7, 7});
  std::vector<float> w(8 * 9, 0.5f);
  const ValueId k = g.AddConstant("k", DataType::kF32, {8, 1, 3, 3},
                                  TensorData::Copy(w.data(), w.size() * 4));
  Node dw, dw2, pool_big, pool_late;
  dw.op_type = dw2.op_type = "Conv";
  dw.inputs = dw2.inputs = {x, k};
  dw.attrs.Set("group", int64_t{8});
  dw2.attrs.Set("group", int64_t{8});
  dw2.attrs.Set("strides", std::vector<int64_t>{2, 2});
  ASSERT_EQ(ClassifyOp(dw), OpClass::kDepthwiseConv);
  EXPECT_EQ(OpWorkOf(dw, &g).op_type, "Conv:depthwise");
  EXPECT_EQ(OpWorkOf(dw2, &g).op_type, "Conv:depthwise/s2");
  pool_big.op_type = pool_late.op_type = "GlobalAveragePool";
  pool_big.inputs = {x};
  pool_late.inputs = {late};
  EXPECT_EQ(OpWorkOf(pool_late, &g).op_type, "GlobalAveragePool:small");  // 7x7 <= 16x16
  EXPECT_EQ(OpWorkOf(pool_big, &g).op_type, "GlobalAveragePool:small");   // 14x14 too
  EXPECT_EQ(OpWorkOf(pool_late).op_type, "GlobalAveragePool");  // no graph: the op type
  const ValueId big = g.AddInput("big", DataType::kF32, {1, 8, 28, 28});
  pool_big.inputs = {big};
  EXPECT_EQ(OpWorkOf(pool_big, &g).op_type, "GlobalAveragePool");
}

TEST(CostModelFitTest, OpWorkOfKeysNormalizationsOverShortRowsApart) {
  // Rows under kShortRowElements pay a per-row cost one factor per op type
  // cannot hold beside long rows: keyed apart, LayerNormalization by its
  // trailing dims from `axis`, Softmax by its last axis (from opset 13; a
  // middle axis is strided, another kernel) or the coerced 2-D row (before).
  Graph g;
  g.set_opset(17);
  const ValueId tokens = g.AddInput("tokens", DataType::kF32, {1, 197, 192});
  const ValueId wide = g.AddInput("wide", DataType::kF32, {1, 4, 768});
  Node ln, ln_wide, ln_two_axes, softmax, softmax_mid, softmax_wide;
  ln.op_type = ln_wide.op_type = ln_two_axes.op_type = "LayerNormalization";
  softmax.op_type = softmax_mid.op_type = softmax_wide.op_type = "Softmax";
  ln.inputs = softmax.inputs = softmax_mid.inputs = ln_two_axes.inputs = {tokens};
  ln_wide.inputs = softmax_wide.inputs = {wide};
  ln_two_axes.attrs.Set("axis", int64_t{1});  // 197 x 192 per row
  softmax_mid.attrs.Set("axis", int64_t{1});  // 197 elements, strided
  EXPECT_EQ(OpWorkOf(ln, &g).op_type, "LayerNormalization:short-rows");
  EXPECT_EQ(OpWorkOf(ln_wide, &g).op_type, "LayerNormalization");
  EXPECT_EQ(OpWorkOf(ln_two_axes, &g).op_type, "LayerNormalization");
  EXPECT_EQ(OpWorkOf(softmax, &g).op_type, "Softmax:short-rows");
  EXPECT_EQ(OpWorkOf(softmax_mid, &g).op_type, "Softmax");
  EXPECT_EQ(OpWorkOf(softmax_wide, &g).op_type, "Softmax");
  EXPECT_EQ(OpWorkOf(softmax).op_type, "Softmax");  // no graph, no shapes
  g.set_opset(11);  // coerced to 2-D at axis 1: rows of 197 x 192
  EXPECT_EQ(OpWorkOf(softmax, &g).op_type, "Softmax");
  EXPECT_EQ(OpWorkOf(softmax_mid, &g).op_type, "Softmax");
  Node softmax_last = softmax, softmax_past = softmax;
  softmax_last.attrs.Set("axis", int64_t{2});  // rows of 192
  softmax_past.attrs.Set("axis", int64_t{3});  // axis == rank: rows of 1
  EXPECT_EQ(OpWorkOf(softmax_last, &g).op_type, "Softmax:short-rows");
  EXPECT_EQ(OpWorkOf(softmax_past, &g).op_type, "Softmax:short-rows");
}

// A slice's join is a plain copy only when its parts lie whole one after
// the other in memory; a feature map's channel join interleaves them per
// pixel (channels-last), as a Concat does.
TEST(CostModelFitTest, JoinIsAPlainCopyOnlyWhenItsPartsAreWhole) {
  EXPECT_EQ(JoinOpType({1, 64, 56, 56}, 1), "Concat:4d");  // channels, nhwc
  EXPECT_EQ(JoinOpType({4, 64, 56, 56}, 0), "Reshape");    // batch
  EXPECT_EQ(JoinOpType({1, 64, 1, 1}, 1), "Reshape");      // 1x1 map: whole parts
  EXPECT_EQ(JoinOpType({1, 1000}, -1), "Reshape");         // a one-row Gemm's columns
  EXPECT_EQ(JoinOpType({8, 1000}, 1), "Concat");           // eight rows each
  EXPECT_EQ(JoinOpType({1, 197, 384}, 2), "Concat");       // a MatMul's columns
  Shape symbolic_batch = {Dim::Symbol("N"), 16};
  EXPECT_EQ(JoinOpType(symbolic_batch, 1), "Concat");      // an unknown batch may be > 1

  Graph g;
  const ValueId a = g.AddInput("a", DataType::kF32, {1, 56, 28, 28});
  const ValueId b = g.AddInput("b", DataType::kF32, {1, 8, 28, 28});
  Value y;
  y.name = "y";
  y.dtype = DataType::kF32;
  y.has_shape = true;
  y.shape = {1, 64, 28, 28};
  const ValueId out = g.AddValue(y);
  Node conv;
  conv.name = "conv";
  conv.op_type = "Conv";
  conv.outputs = {out};
  Node join;
  join.name = "conv#join";
  join.op_type = "Concat";
  join.attrs.Set("axis", int64_t{1});
  join.inputs = {a, b};
  join.outputs = {out};
  EXPECT_EQ(OpWorkOf(join, &g).op_type, "Concat:4d");
  const OpWork priced = JoinWork(g, conv, SliceAxis::kOutputChannels);  // what the simulator charges for it
  EXPECT_EQ(priced.op_class, OpClass::kDataMovement);
  EXPECT_EQ(priced.op_type, "Concat:4d");
  EXPECT_EQ(priced.bytes, 2.0 * 64 * 28 * 28 * 4);  // parts read, output written
}

}  // namespace
}  // namespace braid
