// The cost model: predicted time of an op on a device (roofline plus a fixed
// per-op overhead, with per-op-class efficiency factors fitted from measured
// profiles), of a copy between devices, and energy from per-device power.
//
//   ASSIGN_OR_RETURN(braid::DeviceProfile profile, braid::LoadDeviceProfile("jetson-orin-nano-8gb"));
//   braid::CostModel model(profile);
//   int gpu = model.DeviceIndex("cuda:0");
//   double us = model.OpTimeUs(graph.node(7), gpu);           // needs Annotate(graph)
//   double copy_us = model.TransferUs(0, gpu, 4 << 20);       // 0 on Jetson (mapped memory)
//
//   // Fit efficiency factors from measured per-op times (what `braid calibrate` does):
//   std::vector<braid::OpMeasurement> measured = ...;
//   profile.devices[0].efficiency = braid::FitEfficiency(profile.devices[0], measured);
//
// Every figure here is a prediction; callers label it so.
#ifndef BRAID_SCHEDULER_COST_MODEL_H_
#define BRAID_SCHEDULER_COST_MODEL_H_

#include <algorithm>
#include <array>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "graph/ir.h"
#include "scheduler/cache_residency.h"
#include "scheduler/device_profile.h"
#include "scheduler/plan.h"

namespace braid {

// Ops grouped by how their kernels use a device.
enum class OpClass : uint8_t {
  kConv,           // dense Conv / ConvTranspose (group 1)
  kDepthwiseConv,  // grouped Conv
  kGemm,           // Gemm, MatMul
  kPool,           // MaxPool, AveragePool, Global*Pool
  kElementwise,    // unary / binary / activation ops
  kNormalization,  // BatchNormalization, LayerNormalization, Softmax, ...
  kReduce,         // Reduce*, ArgMax, ArgMin
  kDataMovement,   // Reshape, Transpose, Concat, Gather, Slice, Pad, ...
  kOther,
};
inline constexpr int kNumOpClasses = 9;
const char* OpClassName(OpClass op_class);  // "conv", "depthwise_conv", ...
OpClass ClassifyOp(const Node& node);

// Default efficiency of a device kind ("cpu", "gpu", "vgpu") for a class,
// used when the profile has no fitted entry: estimates, see docs/scheduler.md.
OpClassEfficiency DefaultEfficiency(std::string_view device_kind, OpClass op_class);

// A prediction split into its parts (microseconds).
struct OpCost {
  double overhead_us = 0;  // launch / dispatch
  double compute_us = 0;   // FLOPs over attainable compute
  double memory_us = 0;    // bytes over attainable bandwidth
  // Roofline: the larger of compute and memory time, plus the overhead;
  // `fraction` scales the work (a slice of the op).
  double TotalUs(double fraction = 1.0) const {
    return overhead_us + fraction * (compute_us > memory_us ? compute_us : memory_us);
  }
};

// What the cost model needs to know about one op: its class and type, its
// work, and (Conv / Gemm / MatMul with a constant weight) which sparse kernel
// class it belongs to and how sparse its weight is.
struct OpWork {
  OpClass op_class = OpClass::kOther;
  std::string_view op_type;       // "" when unknown: no per-op-type factor
  double flops = 0;
  double bytes = 0;
  double weight_sparsity = 0;
  std::string_view sparse_class;  // "conv1x1", "conv3x3", "gemm" or ""
  // The input zeros a CPU kernel skips (SkippedInputSparsity): the CPU's
  // work scales by 1 - this (the input-sparse kernel reads only the weight
  // rows of non-zero inputs; 1.9-2.8x at 50% in bench/sparse_bench.cc).
  double input_sparsity = 0;
  // Bytes of its inputs that arrived by a copy from another device (another
  // core or a DMA wrote them). On a device with a cache tier they are not in
  // its cache: they read at the device's copied_read_gbps (a window op, a
  // depthwise conv or a pool: copied_window_read_gbps, a depthwise conv
  // copied_depthwise_read_gbps where set; unset: memory
  // bandwidth x its elementwise memory efficiency) instead of at a plain
  // stream's rate (the elementwise class's), and the difference is a stall
  // added to the op's time whatever bounds it. With any, the work also takes
  // the device's resume_factor (its stream waited for those inputs).
  double copied_bytes = 0;
  // Bytes it touches that the device's cache tier no longer holds when it
  // runs (ColdBytesPerNode, scheduler/cache_residency.h): they move at
  // memory_bandwidth_gbps. Memory-bound classes only (MemoryBoundClass).
  double cold_bytes = 0;
  // Of those, the bytes the last-level cache no longer holds either, and of
  // these its output's, on a device with the DRAM tier (llc_bytes,
  // dram_bandwidth_gbps): their DRAM traffic (an output byte twice: read for
  // ownership, written back) at dram_bandwidth_gbps is a stall added to the
  // op's time whatever bounds it, outside its efficiencies and factors (a
  // MaxPool writing 800 KB to cold lines took 77 + 45-60 us). Memory-bound
  // classes only.
  double dram_bytes = 0;
  double dram_written_bytes = 0;
  // Output bytes whose lines another device's copy thread still holds on
  // its core (ColdBytes::written_held_elsewhere): on a device with
  // reclaim_gbps, an op that streams its writes (a memory-bound class other
  // than pool) stalls for those bytes at that rate, outside its
  // efficiencies and factors (resnet's sliced convs' joins read 2.5-3x their
  // prediction without it on the AMD host); a window or compute-bound op
  // hides it behind its work.
  double reclaimed_bytes = 0;
  // The engine runs it as a view (RunsAsView: its output is its input's
  // buffer): it costs nothing.
  bool view = false;
};

// From the node's annotation (Annotate first). With the graph, also: whether
// it runs as a view, the sparse class from the weight's shape, and a Gather's bytes as the rows it
// reads (indices + 2 x output) instead of its whole table. `op_type` is the
// key of the per-op-type factor: the node's op type, except for kernel
// variants that differ in speed: "Conv:1x1", "Conv:kxk", "Conv:depthwise",
// "Conv:depthwise/s2", "Transpose:rows" (the innermost axis stays
// innermost), with the graph "Gemm:gemv" (one output row), "Concat:4d" (feature maps) and
// "GlobalAveragePool:small" (maps of at most 16x16),
// "LayerNormalization:short-rows" / "Softmax:short-rows" (fewer than
// kShortRowElements per normalized row, the rows contiguous); a sliced
// node's join as JoinOpType says.
OpWork OpWorkOf(const Node& node, const Graph* graph = nullptr);
inline constexpr int64_t kShortRowElements = 256;

// The op-type key of the join (the "#join" Concat, runtime/slicing.cc) of an
// output of `out` shape split along `axis`: "Reshape" (a plain copy) when the
// parts lie whole one after the other in memory (a batch split, a one-row
// Gemm's columns), else the Concat key of the shape ("Concat:4d" for a
// feature map, channels-last in memory; "Concat").
std::string_view JoinOpType(const Shape& out, int64_t axis);
// The join's work when `node`'s output is sliced along `axis` (the
// simulator's price of a slice; no graph node exists for it before the
// runtime slices): the key above for the output dim SliceOutputAxis splits,
// reading the parts and writing the output.
OpWork JoinWork(const Graph& graph, const Node& node, SliceAxis axis);

// The CPU's input-sparse fully connected kernel (kernels/cpu/sparse/
// gemm_input_sparse.cc) runs a Gemm / MatMul with a constant weight on at
// most this many rows whose measured activation sparsity reaches this
// crossover (the default of its SparseCrossover::gemm_input; the scheduler
// and the kernels do not include each other).
inline constexpr double kInputSparseCrossover = 0.30;
inline constexpr int64_t kInputSparseMaxRows = 4;
// The fraction of its input a node's CPU kernel skips: the measured
// activation sparsity where the input-sparse kernel applies (needs the
// graph: the weight must be constant, the rows few), else 0.
double SkippedInputSparsity(const Node& node, const Graph* graph);

// The sparsity a placement may route on: what braid's CPU kernels skip, the
// weight's zeros (the sparse kernels) and SkippedInputSparsity. Other
// measured activation sparsity (runtime/activation_sparsity.h) is recorded
// but not routed on: no kernel skips scattered zeros entering a conv
// (docs/sparse.md), and routing on them moved 19 of resnet50's dense convs
// to the CPU (simulated 4.05 -> 19.6 ms on AGX Orin).
double RoutableSparsity(const Node& node, const Graph* graph);

// A value's size in bytes (0 without a shape).
double ValueBytes(const Graph& graph, ValueId id);
// Whether node.inputs[k] is an earlier input of the node again (a node that
// reads one value twice reads its bytes once).
bool RepeatsEarlierInput(const Node& node, size_t k);

// The one roofline formula every prediction and every fit uses (and the
// vgpu's timing shaping mirrors, kernels/vgpu/vgpu_device.h):
//   overhead + max(flops / (peak * compute_eff),
//                  cache_time / cache_memory_eff + memory_time / memory_eff)
// where the bytes spill: the first cache_bytes at cache_bandwidth_gbps
// (cache_time), the rest at memory_bandwidth_gbps (memory_time). Returns the
// split (overhead, compute, memory) in microseconds. Efficiencies must be
// > 0, except cache_memory_efficiency: <= 0 means memory_efficiency.
OpCost RooflineCost(const DeviceSpec& device, double compute_efficiency, double memory_efficiency,
                    double overhead_us, double flops, double bytes,
                    double cache_memory_efficiency = 0);
// The two tiers' shares of a memory time at full efficiency.
struct MemoryTierTimes {
  double cache_us = 0;   // the bytes within cache_bytes, at cache_bandwidth_gbps
  double memory_us = 0;  // the rest (all of them without a cache tier)
  double dram_us = 0;    // an op's DRAM traffic (OpWork::dram_bytes): a stall
};
MemoryTierTimes MemoryTierTimesUs(const DeviceSpec& device, double bytes);
// Bytes over the device's bandwidth, through its cache tier when it has one
// (continuous and non-decreasing in bytes): the sum of MemoryTierTimesUs.
double MemoryTimeUs(const DeviceSpec& device, double bytes);
// Whether the class's memory time uses the cache tier (MemoryTimeUs); a
// class that does not (depthwise conv) moves every byte at the memory
// bandwidth.
bool UsesCacheTier(OpClass op_class);
// The classes whose time is their bytes (not conv, depthwise conv, gemm):
// each cache tier gets its own efficiency (OpClassEfficiency::cache_memory)
// and their cold bytes (OpWork::cold_bytes, dram_bytes) move at the memory's
// (DRAM's) speed.
bool MemoryBoundClass(OpClass op_class);
// The device's per-op-type factor for an op of `op_type` moving `bytes`, or
// null. For a class without the cache tier (depthwise conv), an op whose
// bytes fit the device's cache is keyed apart first ("Conv:depthwise@cache",
// "Conv:depthwise/s2@cache"), falling back to the plain key: it runs 1.4-2x
// faster per byte than one streaming from memory, and a single factor per
// key was right for one size and wrong for the other.
const OpTypeFactor* FindOpTypeFactor(const DeviceSpec& device, OpClass op_class,
                                     std::string_view op_type, double bytes);
// The key FindOpTypeFactor tries first (what a fit groups the sample under).
std::string OpTypeFactorKey(const DeviceSpec& device, OpClass op_class, std::string_view op_type,
                            double bytes);

class CostModel {
 public:
  // `profile` should be valid (ValidateDeviceProfile).
  explicit CostModel(DeviceProfile profile);

  const DeviceProfile& profile() const { return profile_; }
  int num_devices() const { return static_cast<int>(profile_.devices.size()); }
  // Index of the profile device named `device`; also "cuda" matches
  // "cuda:0" and the reverse. -1 when absent.
  int DeviceIndex(std::string_view device) const;

  OpCost Cost(OpClass op_class, double flops, double bytes, int device) const;
  // Node without graph: OpWorkOf(node). Prefer Cost(OpWorkOf(node, &graph), d).
  OpCost Cost(const Node& node, int device) const;
  // The full model: class efficiency and overhead, the cache tier, the
  // per-op-type factor, the sparse kernel's speed above its crossover, and
  // the floor device (a vgpu is never faster than the host kernels it runs).
  OpCost Cost(const OpWork& work, int device) const;
  // Predicted time of `node` (annotated) on `device`, `fraction` of its work.
  double OpTimeUs(const Node& node, int device, double fraction = 1.0) const {
    return Cost(node, device).TotalUs(fraction);
  }

  // Copy of `bytes` from device `from` to `to`: link latency plus bytes over
  // bandwidth; 0 on the same device or a mapped link; -1 when the profile has
  // no link between them.
  double TransferUs(int from, int to, double bytes) const;
  bool Mapped(int from, int to) const;

  // Joules a device uses over `span_us` while busy for `busy_us` of it.
  double DeviceEnergyJ(int device, double busy_us, double span_us) const;

 private:
  struct Link {
    bool present = false;
    bool mapped = false;
    double latency_us = 0;
    double us_per_byte = 0;
    int copy_engines = 1;
  };
  DeviceProfile profile_;
  OpCost CostNoFloor(const OpWork& work, int device) const;
  // [device][class]: efficiency resolved from the profile or the defaults.
  std::vector<std::array<OpClassEfficiency, kNumOpClasses>> efficiency_;
  std::vector<int> floor_device_;  // [device]: index or -1
  std::vector<Link> links_;  // [from * num_devices + to]

};

// One measured op, for fitting.
struct OpMeasurement {
  OpClass op_class = OpClass::kOther;
  double flops = 0;
  double bytes = 0;
  double measured_us = 0;
  std::string op_type;            // for FitOpTypeFactors; "" = none
  double weight_sparsity = 0;
  std::string sparse_class;       // as OpWork::sparse_class
  double cold_bytes = 0;          // as OpWork::cold_bytes
  double dram_bytes = 0;          // as OpWork::dram_bytes
  double dram_written_bytes = 0;  // as OpWork::dram_written_bytes
};

// The cold bytes ColdBytesPerNode counted (scheduler/cache_residency.h)
// into the fields the model prices them by. A measurement takes no
// reclaimed bytes: the fits use all-CPU runs, where no copy reads a line.
void AssignColdBytes(const ColdBytes& cold, OpWork& work);
void AssignColdBytes(const ColdBytes& cold, OpMeasurement& m);
// The work a measurement describes (its op type included), as the model
// prices it.
OpWork MeasuredWork(const OpMeasurement& m);

// Per op class with at least `min_samples` measurements, the compute and
// memory efficiencies and overhead that minimise the mean |log(pred/meas)|
// over those measurements on `device` (a grid search; deterministic). Other
// classes are left out (the model then uses the defaults). A dense class
// (conv, depthwise, gemm) whose samples all lie below the ridge point
// (peak / bandwidth) keeps a prior compute efficiency (gemm: the fitted conv
// class's, else DefaultEfficiency), and near-ties are broken towards the
// defaults: the samples cannot tell those numbers.
// The fit uses the device's cache tier, and its `op_types` factors and
// `sparse` speeds as fixed multipliers of each sample's work. A memory-bound
// class (MemoryBoundClass) with at least 3 samples inside the cache and 3
// mostly beyond it also tries a cache-tier efficiency of its own
// (`cache_memory`), kept when it fits better; elementwise keeps the prior
// compute efficiency (its FLOP counts are nominal). Samples' cold_bytes move
// at memory bandwidth, as in the predictions.
std::vector<OpClassEfficiency> FitEfficiency(const DeviceSpec& device,
                                             std::span<const OpMeasurement> measurements,
                                             int min_samples = 3);

// Per op type with at least `min_samples` measurements: the factor on the
// class's predicted work (the device's efficiencies, else the defaults) that
// the measurements ask for, as the median of (measured - overhead) / work in
// log space, shrunk towards 1 by n / (n + 1). Types whose factor is within
// 5% of 1 are left out.
std::vector<OpTypeFactor> FitOpTypeFactors(const DeviceSpec& device,
                                           std::span<const OpMeasurement> measurements,
                                           int min_samples = 3);

// Class efficiencies, then op-type factors, then the classes again with
// those factors (what `braid calibrate` stores). Keeps `device.sparse`.
void FitDevice(DeviceSpec& device, std::span<const OpMeasurement> measurements,
               int min_samples = 3);

// Least-squares fit of SparseKernelSpeed from (sparsity, sparse time / dense
// time) pairs: fixed, per_density, and the crossover where the ratio is 1
// (clamped to [0, 1]; 1 when the sparse kernel never wins).
SparseKernelSpeed FitSparseKernelSpeed(std::string sparse_class,
                                       std::span<const std::pair<double, double>> points);

}  // namespace braid

#endif  // BRAID_SCHEDULER_COST_MODEL_H_
