// The vgpu's timing shaping is the cost model's estimate, and calibrate's op
// suite covers the op types the per-op-type factors need.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "scheduler/cost_model.h"
#include "scheduler/device_profile.h"
#include "graph/annotate.h"
#include "graph/passes/passes.h"
#include "models/graph_builder.h"
#include "profiling/cache_info.h"
#include "profiling/calibration_suite.h"
#include "profiling/op_timer.h"
#include "profiling/plan_timer.h"
#include "profiling/probes.h"

namespace braid::profiling {
namespace {

TEST(VgpuShapingTest, ShapingFromAProfileIsTheCostModelsEstimate) {
  StatusOr<DeviceProfile> profile = LoadDeviceProfile("host-vgpu");
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  profile->devices[1].floor_device = "cpu";  // the floor is not padded: the kernel is
  StatusOr<VgpuTiming> timing = VgpuTimingFromProfile(*profile);
  ASSERT_TRUE(timing.ok()) << timing.status().ToString();
  DeviceProfile unfloored = *profile;
  unfloored.devices[1].floor_device.clear();
  const CostModel model(unfloored);
  const int vgpu = model.DeviceIndex("vgpu");
  ASSERT_GE(vgpu, 0);
  for (auto [flops, bytes] : {std::pair{0.0, 0.0}, {1e6, 4e3}, {2e8, 1e6}, {1e3, 5e6}}) {
    const double shaped_us = static_cast<double>(timing->KernelTime(flops, bytes).count()) / 1e3;
    for (OpClass c : {OpClass::kConv, OpClass::kElementwise, OpClass::kDataMovement})
      EXPECT_NEAR(shaped_us, model.Cost(c, flops, bytes, vgpu).TotalUs(), 1e-3)
          << flops << " " << bytes;
  }
}

TEST(WakeLatencyTest, BothHandoffDirectionsTakeMeasurableTime) {
  // A thread blocked on a condition variable needs a futex wake and a
  // reschedule: never free, and far under the 300 us the waiter sleeps.
  StatusOr<WakeLatency> w = MeasureWakeLatency(8);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_GT(w->to_worker_us, 0);
  EXPECT_GT(w->to_caller_us, 0);
  EXPECT_LT(w->to_worker_us, 1e5);
  EXPECT_LT(w->to_caller_us, 1e5);
  // A ratio of two timings of one add: at least 1 (clamped), and finite.
  EXPECT_GE(w->resume_factor, 1.0);
  EXPECT_LT(w->resume_factor, 1e3);
}

TEST(WakeLatencyTest, TheReclaimRateIsTheBytesOverTheExtraTime) {
  // 200 KB in 16 us more: 12.8 GB/s.
  EXPECT_DOUBLE_EQ(ReclaimRateGbps(23.0, 7.0, 204800), 204800 / 16e3);
  // Within 2% of the add (7.14 against 7.0): no stall; faster: none either.
  EXPECT_EQ(ReclaimRateGbps(7.14, 7.0, 204800), 0);
  EXPECT_GT(ReclaimRateGbps(7.15, 7.0, 204800), 0);
  EXPECT_EQ(ReclaimRateGbps(6.0, 7.0, 204800), 0);
  EXPECT_EQ(ReclaimRateGbps(23.0, 7.0, 0), 0);
}

TEST(WakeLatencyTest, TheReclaimProbeGivesARateOrNone) {
  // A rate in GB/s (the extra time of an Add into the buffer the worker's
  // copy just read), or 0 where that extra is within 2% of the Add (a host
  // whose cores share one cache). Pinned and not: both must work.
  for (bool pinned : {false, true}) {
    StatusOr<double> rate = MeasureReclaimRate(pinned, 5);
    ASSERT_TRUE(rate.ok()) << rate.status().ToString();
    EXPECT_GE(*rate, 0) << pinned;
    EXPECT_TRUE(std::isfinite(*rate)) << pinned;
    // Never faster than a 200 KB write taking under a nanosecond.
    EXPECT_LT(*rate, 2e5) << pinned;
  }
}

TEST(VgpuShapingTest, FormulaIsLaunchPlusTheSlowerOfComputeAndMemory) {
  VgpuTiming t;
  t.enabled = true;
  t.launch_us = 5;
  t.peak_gflops = 10;  // 1e4 FLOP/us
  t.mem_gbps = 2;      // 2e3 B/us
  EXPECT_EQ(t.KernelTime(1e5, 2e3).count(), 15000);  // 5 + max(10, 1)
  EXPECT_EQ(t.KernelTime(1e4, 2e4).count(), 15000);  // 5 + max(1, 10)
  t.kernel_model_us = [](double flops, double) { return flops / 1e3; };
  EXPECT_EQ(t.KernelTime(7e3, 0).count(), 7000);
  t.enabled = false;
  EXPECT_EQ(t.KernelTime(7e3, 0).count(), 0);
}

TEST(CalibrationSuiteTest, CoversTheOpTypesWithAnnotatedWork) {
  std::set<std::string> types, sparse_classes;
  for (bool maps : {true, false}) {
    StatusOr<Graph> g = CalibrationSuiteGraph(maps);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    for (const Node& n : g->nodes()) {
      types.insert(n.op_type);
      EXPECT_GT(n.annotation.bytes, 0) << n.name;
      const OpWork w = OpWorkOf(n, &*g);
      if (!w.sparse_class.empty()) sparse_classes.insert(std::string(w.sparse_class));
    }
  }
  for (const char* t : {"Relu", "Add", "Mul", "Concat", "Reshape", "Transpose", "Flatten",
                        "Gather", "MaxPool", "GlobalAveragePool", "Softmax",
                        "LayerNormalization", "Conv", "MatMul", "Erf", "Gelu"})
    EXPECT_TRUE(types.count(t)) << t;
  EXPECT_TRUE(sparse_classes.count("conv1x1"));
  EXPECT_TRUE(sparse_classes.count("conv3x3"));
  EXPECT_TRUE(sparse_classes.count("gemm"));
}

// The 4-D suite runs in one engine run in node order: every timed op must
// come right after a producer of one of its inputs (depth first), so it reads
// fresh data as inside a model, not a value written many steps earlier.
TEST(CalibrationSuiteTest, MapOpsRunRightAfterTheirProducers) {
  StatusOr<Graph> g = CalibrationSuiteGraph(true);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  int timed = 0;
  for (size_t n = 1; n < g->nodes().size(); ++n) {
    const Node& node = g->nodes()[n];
    if (node.name.find("/in") != std::string::npos || node.name.find("/out") != std::string::npos)
      continue;
    bool fresh = false;
    for (ValueId in : node.inputs)
      if (in != kNoValue && g->value(in).producer == static_cast<NodeId>(n - 1)) fresh = true;
    EXPECT_TRUE(fresh) << node.name << " does not follow its producer";
    ++timed;
  }
  EXPECT_GT(timed, 40);
}

// Every depthwise sample reads an expansion conv's output whose own input is
// narrow (c / 6 channels, at least 8), as in an inverted residual block: the
// L2 holds little else, as inside mobilenet_v2.
TEST(CalibrationSuiteTest, DepthwiseConvsReadAnExpansionFromANarrowValue) {
  StatusOr<Graph> g = CalibrationSuiteGraph(true);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  auto channels = [&](ValueId v) { return g->value(v).shape[1].extent(); };
  int depthwise = 0;
  for (const Node& node : g->nodes()) {
    if (node.op_type != "Conv" || node.attrs.GetInt("group", 1) == 1) continue;
    ++depthwise;
    const NodeId expand = g->value(node.inputs[0]).producer;
    ASSERT_NE(expand, kNoNode) << node.name;
    const Node& e = g->nodes()[static_cast<size_t>(expand)];
    EXPECT_EQ(e.op_type, "Conv") << node.name;
    EXPECT_EQ(e.attrs.GetInt("group", 1), 1) << node.name;
    const int64_t c = channels(node.inputs[0]);
    EXPECT_EQ(channels(e.inputs[0]), std::max<int64_t>(8, c / 6)) << node.name;
  }
  EXPECT_EQ(depthwise, 14);  // dw and dw2 in each of the 7 map sections with them
}

}  // namespace
}  // namespace braid::profiling

namespace braid::profiling {
namespace {

// With evict_bytes the timer walks other memory and reads each node's inputs
// before every run (inputs warm, the rest evicted, as inside a model), on
// one core and on two (a walker thread per core): every node is still timed
// (a sanitizer build checks the reads stay within the inputs).
TEST(OpTimerTest, EvictionBeforeEachRunStillTimesEveryNode) {
  GraphBuilder b("evicted", 3);
  const ValueId x = b.Input("x", {1, 37, 24});
  const ValueId y = b.Input("y", {1, 37, 24});
  b.Output(b.Transpose(b.Add(x, y), {0, 2, 1}), "t", {1, 24, 37});
  b.Output(b.Softmax(x, -1), "s", {1, 37, 24});
  Graph g = std::move(b).Finish();
  ASSERT_TRUE(RunDefaultPasses(g).ok());
  ASSERT_TRUE(Annotate(g).ok());
  for (int threads : {1, 2}) {
    OpTimerOptions options;
    options.threads = threads;
    options.iterations = 2;
    options.warmup = 1;
    options.end_to_end = false;
    options.evict_bytes = 256 * 1024;
    StatusOr<ModelTimings> t = MeasureGraph(g, "evicted", options);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    ASSERT_EQ(t->ops.size(), 3u);
    for (const OpTiming& op : t->ops) {
      EXPECT_GT(op.median_us, 0) << op.node << " " << threads;
      EXPECT_FALSE(op.implementation.empty()) << op.node;
    }
  }
}

// The last-level cache from sysfs trees laid out like the real ones
// (/sys/devices/system/cpu/cpu0/cache/indexN/{level,type,size}).
TEST(OpTimerTest, LastLevelCacheIsTheHighestDataOrUnifiedLevelFromL3) {
  namespace fs = std::filesystem;
  // Per process: two test binaries running at once must not share it.
  const fs::path root = fs::temp_directory_path() / ("braid_cache_" + std::to_string(getpid()));
  fs::remove_all(root);
  auto write = [&](int index, int level, const std::string& type, const std::string& size) {
    const fs::path dir = root / ("index" + std::to_string(index));
    fs::create_directories(dir);
    std::ofstream(dir / "level") << level << "\n";
    std::ofstream(dir / "type") << type << "\n";
    std::ofstream(dir / "size") << size << "\n";
  };
  // An x86 core: L1d, L1i, L2, then a 32 MB L3.
  write(0, 1, "Data", "32K");
  write(1, 1, "Instruction", "32K");
  write(2, 2, "Unified", "1024K");
  EXPECT_EQ(LastLevelCacheBytes(root.string()), 0);  // the L2 is the last so far
  write(3, 3, "Unified", "32768K");
  EXPECT_EQ(LastLevelCacheBytes(root.string()), 32.0 * 1024 * 1024);
  // Sizes in M; an instruction cache never counts.
  write(3, 3, "Unified", "4M");
  write(4, 4, "Instruction", "64M");
  EXPECT_EQ(LastLevelCacheBytes(root.string()), 4.0 * 1024 * 1024);
  EXPECT_EQ(LastLevelCacheBytes((root / "missing").string()), 0);
  fs::remove_all(root);
}

// The DRAM probe times its two Adds and reports a bandwidth (the figure
// itself is the machine's; a 64 MB minimum keeps it beyond any L3 here).
TEST(OpTimerTest, DramProbeMeasuresABandwidth) {
  OpTimerOptions options;
  options.threads = 1;
  options.iterations = 3;
  StatusOr<double> gbps = MeasureDramBandwidth(options, 1 << 20);
  ASSERT_TRUE(gbps.ok()) << gbps.status().ToString();
  EXPECT_GT(*gbps, 0.1);
  EXPECT_LT(*gbps, 1e4);
}

}  // namespace
}  // namespace braid::profiling
