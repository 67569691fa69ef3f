#include "scheduler/cost_model.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include "graph/op_schema.h"
#include "scheduler/plan.h"

namespace braid {

const char* OpClassName(OpClass op_class) {
  switch (op_class) {
    case OpClass::kConv: return "conv";
    case OpClass::kDepthwiseConv: return "depthwise_conv";
    case OpClass::kGemm: return "gemm";
    case OpClass::kPool: return "pool";
    case OpClass::kElementwise: return "elementwise";
    case OpClass::kNormalization: return "normalization";
    case OpClass::kReduce: return "reduce";
    case OpClass::kDataMovement: return "data_movement";
    case OpClass::kOther: return "other";
  }
  return "other";
}

OpClass ClassifyOp(const Node& node) {
  switch (FamilyOf(node.op_type)) {
    case OpFamily::kConv:
      return node.attrs.GetInt("group", 1) == 1 ? OpClass::kConv : OpClass::kDepthwiseConv;
    case OpFamily::kGemm: return OpClass::kGemm;
    case OpFamily::kPool: return OpClass::kPool;
    case OpFamily::kNormalization: return OpClass::kNormalization;
    case OpFamily::kReduce: return OpClass::kReduce;
    case OpFamily::kDataMovement: return OpClass::kDataMovement;
    case OpFamily::kElementwise: return OpClass::kElementwise;
    case OpFamily::kOther: break;
  }
  return OpClass::kOther;
}

OpClassEfficiency DefaultEfficiency(std::string_view device_kind, OpClass op_class) {
  // Typical fractions of peak that tuned libraries reach at batch 1: dense
  // conv/GEMM well, depthwise poorly; memory-bound ops reach part of the
  // DRAM bandwidth. Rough estimates; `braid calibrate` replaces them.
  const DeviceKindTraits* kind = FindDeviceKindTraits(device_kind);
  const bool gpu = kind == nullptr || !kind->host;
  OpClassEfficiency e;
  e.op_class = OpClassName(op_class);
  if (kind != nullptr && kind->exact_roofline) {
    // The virtual GPU is padded to exactly its profile's roofline
    // (kernels/vgpu: launch + max(FLOPs / peak, bytes / bandwidth)), so the
    // model of it is that roofline: efficiencies 1, overhead the launch.
    e.compute = 1;
    e.memory = 1;
    e.overhead_us = -1;
    return e;
  }
  switch (op_class) {
    case OpClass::kConv: e.compute = gpu ? 0.55 : 0.45; e.memory = 0.6; break;
    case OpClass::kGemm: e.compute = gpu ? 0.6 : 0.5; e.memory = 0.6; break;
    case OpClass::kDepthwiseConv: e.compute = gpu ? 0.15 : 0.12; e.memory = 0.4; break;
    case OpClass::kPool:
    case OpClass::kElementwise:
    case OpClass::kNormalization:
    case OpClass::kReduce: e.compute = 0.3; e.memory = gpu ? 0.6 : 0.5; break;
    case OpClass::kDataMovement:
    case OpClass::kOther: e.compute = 0.2; e.memory = 0.4; break;
  }
  return e;
}

namespace {

std::string_view SparseClassOfConv(const Node& node, const Graph* graph) {
  if (node.attrs.GetInt("group", 1) != 1 || node.op_type != "Conv") return "";
  std::vector<int64_t> kernel = node.attrs.GetInts("kernel_shape");
  if (kernel.empty() && graph != nullptr && node.inputs.size() > 1 && node.inputs[1] != kNoValue) {
    const Value& w = graph->value(node.inputs[1]);
    for (size_t i = 2; i < w.shape.size(); ++i)
      kernel.push_back(w.shape[i].is_static() ? w.shape[i].extent() : 0);
  }
  if (kernel.empty()) return "conv3x3";
  for (int64_t k : kernel)
    if (k != 1) return "conv3x3";
  return "conv1x1";
}

// The elements one normalization shares when they are contiguous rows (a
// LayerNormalization's trailing dims from `axis`; a Softmax's last axis, or
// before opset 13 the coerced 2-D row dims[axis:], 1 element at axis ==
// rank), else 0: a Softmax along a middle axis (oneDNN's kernel, another
// per-row cost; braid's declines it) or a shape that is not static.
int64_t NormalizedRowElements(const Graph& graph, const Node& node) {
  const Value& x = graph.value(node.inputs[0]);
  if (!x.has_shape || !IsStatic(x.shape) || x.shape.empty()) return 0;
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  const bool softmax = node.op_type == "Softmax";
  const bool coerced = softmax && graph.opset() != 0 && graph.opset() < 13;
  int64_t axis = node.attrs.GetInt("axis", coerced ? 1 : -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank || (axis == rank && !coerced)) return 0;
  if (softmax && !coerced && axis != rank - 1) return 0;
  int64_t row = 1;
  for (int64_t d = axis; d < rank; ++d) row *= x.shape[static_cast<size_t>(d)].extent();
  return row;
}

}  // namespace

double ValueBytes(const Graph& graph, ValueId id) {
  if (id == kNoValue) return 0;
  const Value& v = graph.value(id);
  if (!v.has_shape) return 0;
  return static_cast<double>(ElementCount(v.shape, 1)) * static_cast<double>(DataTypeSize(v.dtype));
}

bool RepeatsEarlierInput(const Node& node, size_t k) {
  const auto end = node.inputs.begin() + static_cast<std::ptrdiff_t>(k);
  return std::find(node.inputs.begin(), end, node.inputs[k]) != end;
}

namespace {

template <class T>
void AssignColdBytesTo(const ColdBytes& cold, T& to) {
  to.cold_bytes = cold.beyond_cache;
  to.dram_bytes = cold.beyond_llc;
  to.dram_written_bytes = cold.written_beyond_llc;
}

}  // namespace

void AssignColdBytes(const ColdBytes& cold, OpWork& work) {
  AssignColdBytesTo(cold, work);
  work.reclaimed_bytes = cold.written_held_elsewhere;
}
void AssignColdBytes(const ColdBytes& cold, OpMeasurement& m) { AssignColdBytesTo(cold, m); }

OpWork MeasuredWork(const OpMeasurement& m) {
  OpWork w;
  w.op_class = m.op_class;
  w.op_type = m.op_type;
  w.flops = m.flops;
  w.bytes = m.bytes;
  w.weight_sparsity = m.weight_sparsity;
  w.sparse_class = m.sparse_class;
  w.cold_bytes = m.cold_bytes;
  w.dram_bytes = m.dram_bytes;
  w.dram_written_bytes = m.dram_written_bytes;
  return w;
}

OpWork OpWorkOf(const Node& node, const Graph* graph) {
  OpWork w;
  w.view = graph != nullptr && RunsAsView(*graph, node);
  w.op_class = ClassifyOp(node);
  w.op_type = node.op_type;
  w.flops = node.annotation.flops;
  w.bytes = node.annotation.bytes;
  w.weight_sparsity = node.annotation.weight_sparsity;
  w.input_sparsity = SkippedInputSparsity(node, graph);
  if (w.op_class == OpClass::kConv) {
    w.sparse_class = SparseClassOfConv(node, graph);
    // Kernel variants keyed apart for the per-op-type factors.
    if (node.op_type == "Conv") w.op_type = w.sparse_class == "conv1x1" ? "Conv:1x1" : "Conv:kxk";
  } else if (w.op_class == OpClass::kDepthwiseConv && node.op_type == "Conv") {
    // A strided depthwise conv reads its whole input for a quarter of the
    // outputs: ~2x slower per FLOP than a stride-1 one at the same bytes.
    bool strided = false;
    for (int64_t s : node.attrs.GetInts("strides")) strided = strided || s > 1;
    w.op_type = strided ? "Conv:depthwise/s2" : "Conv:depthwise";
  } else if (node.op_type == "Concat" && node.name.ends_with("#join") && graph != nullptr &&
             !node.outputs.empty() && node.outputs[0] != kNoValue) {
    // The join of a sliced node (runtime/engine: its parts' outputs into
    // one).
    w.op_type = JoinOpType(graph->value(node.outputs[0]).shape, node.attrs.GetInt("axis", 0));
  } else if (node.op_type == "Concat" && graph != nullptr && !node.outputs.empty() &&
             node.outputs[0] != kNoValue && graph->value(node.outputs[0]).shape.size() == 4) {
    // Feature-map concats run channels-last inside CNNs (a few contiguous
    // blocks per pixel), several times faster per byte than a token concat.
    w.op_type = "Concat:4d";
  } else if ((node.op_type == "LayerNormalization" || node.op_type == "Softmax") &&
             graph != nullptr && !node.inputs.empty() && node.inputs[0] != kNoValue) {
    // Row-wise kernels also pay per row (a reduction, a horizontal sum, a
    // masked tail): on the AMD host the suite's LayerNorm took 35-45 ns/KB
    // over rows of 192 and 18-27 over rows of 384-768, which one factor per
    // op type cannot hold. Short rows are keyed apart.
    const int64_t row = NormalizedRowElements(*graph, node);
    if (row > 0 && row < kShortRowElements)
      w.op_type = node.op_type == "Softmax" ? "Softmax:short-rows" : "LayerNormalization:short-rows";
  } else if (node.op_type == "Transpose") {
    // Keeping the innermost axis copies whole rows (fast); moving it
    // scatters single elements.
    const std::vector<int64_t> perm = node.attrs.GetInts("perm");
    if (!perm.empty() && perm.back() == static_cast<int64_t>(perm.size()) - 1)
      w.op_type = "Transpose:rows";
  } else if (node.op_type == "GlobalAveragePool" && graph != nullptr && !node.inputs.empty() &&
             node.inputs[0] != kNoValue && graph->value(node.inputs[0]).shape.size() == 4) {
    // A CNN's last pooling (7x7 or 13x13, many channels) costs ~4x more per
    // byte than one over a large map with few channels.
    const Shape& in = graph->value(node.inputs[0]).shape;
    if (in[2].is_static() && in[3].is_static() && in[2].extent() * in[3].extent() <= 256)
      w.op_type = "GlobalAveragePool:small";
  } else if (node.op_type == "Gemm") {
    w.sparse_class = "gemm";
    // A classifier's one-row Gemm (a GEMV) streams its weight: 1.5-1.6x a
    // many-row Gemm's time per FLOP (a transformer's Linears, FuseMatMulBias)
    // at the same roofline. Keyed apart so neither sets the other's factor.
    if (graph != nullptr && !node.outputs.empty() && node.outputs[0] != kNoValue) {
      const Value& y = graph->value(node.outputs[0]);
      if (y.has_shape && y.shape.size() == 2 && y.shape[0].is_static() &&
          y.shape[0].extent() == 1)
        w.op_type = "Gemm:gemv";
    }
  } else if (node.op_type == "MatMul" && graph != nullptr && node.inputs.size() > 1 &&
             node.inputs[1] != kNoValue && graph->IsConstant(node.inputs[1])) {
    w.sparse_class = "gemm";
  }
  if (graph != nullptr && node.op_type == "Gather" && node.inputs.size() > 1 &&
      !node.outputs.empty()) {
    // A Gather reads the rows it selects, not its whole table.
    const double rows = ValueBytes(*graph, node.inputs[1]) + 2 * ValueBytes(*graph, node.outputs[0]);
    if (rows > 0) w.bytes = std::min(w.bytes > 0 ? w.bytes : rows, rows);
  }
  return w;
}

std::string_view JoinOpType(const Shape& out, int64_t axis) {
  const size_t rank = out.size();
  if (axis < 0) axis += static_cast<int64_t>(rank);
  // Feature maps are channels-last in memory (N, H, W, C).
  const bool feature_map = rank == 4;
  std::vector<size_t> memory_order;
  if (feature_map) {
    memory_order = {0, 2, 3, 1};
  } else {
    for (size_t d = 0; d < rank; ++d) memory_order.push_back(d);
  }
  int64_t outer = 1;  // blocks per part: the extents before the axis in memory
  for (size_t d : memory_order) {
    if (static_cast<int64_t>(d) == axis) break;
    // An unknown extent counts as more than one.
    outer *= out[d].is_static() ? out[d].extent() : 2;
  }
  // Whole parts one after the other: a plain copy. Otherwise the parts
  // interleave block by block, as a Concat's inputs do (a channel join of a
  // 56x56 map copies 3136 blocks per part: 1.3-1.5x a Reshape's time per
  // byte with braid's Concat, 3x with oneDNN 2.6's).
  if (outer == 1) return "Reshape";
  return feature_map ? "Concat:4d" : "Concat";
}

OpWork JoinWork(const Graph& graph, const Node& node, SliceAxis axis) {
  OpWork join;
  join.op_class = OpClass::kDataMovement;
  if (node.outputs.empty() || node.outputs[0] == kNoValue) return join;
  const Value& out = graph.value(node.outputs[0]);
  if (!out.has_shape) return join;
  join.op_type =
      JoinOpType(out.shape, SliceOutputAxis(node, axis, static_cast<int>(out.shape.size())));
  // Reads the parts and writes the output.
  join.bytes = 2.0 * ValueBytes(graph, node.outputs[0]);
  return join;
}

double SkippedInputSparsity(const Node& node, const Graph* graph) {
  const double measured = node.annotation.activation_sparsity;
  if (graph == nullptr || measured < kInputSparseCrossover ||
      (node.op_type != "Gemm" && node.op_type != "MatMul") || node.inputs.size() < 2 ||
      node.inputs[1] == kNoValue || !graph->IsConstant(node.inputs[1]) || node.outputs.empty() ||
      node.outputs[0] == kNoValue)
    return 0;
  const Value& y = graph->value(node.outputs[0]);
  if (!y.has_shape || y.shape.empty() || !IsStatic(y.shape)) return 0;
  const int64_t columns = y.shape.back().extent();
  if (columns <= 0 || ElementCount(y.shape, 1) / columns > kInputSparseMaxRows) return 0;
  return std::min(measured, 1.0);
}

double RoutableSparsity(const Node& node, const Graph* graph) {
  return std::max({0.0, node.annotation.weight_sparsity, SkippedInputSparsity(node, graph)});
}

bool UsesCacheTier(OpClass op_class) {
  // A depthwise conv moves its bytes at one rate in or out of the cache
  // (measured on the build machine: 20-31 GB/s from 0.4 to 9.6 MB, stride 1
  // and 2, in mobilenet_v2 and in the op suite): the kernel's per-byte work
  // bounds it, not the memory tier. With the tier, its fit could not tell
  // compute from memory and flipped between runs (9-46% error).
  return op_class != OpClass::kDepthwiseConv;
}

bool MemoryBoundClass(OpClass op_class) {
  return op_class != OpClass::kConv && op_class != OpClass::kGemm &&
         op_class != OpClass::kDepthwiseConv;
}

namespace {

// The device has a cache tier for MemoryTierTimesUs.
bool HasCacheTier(const DeviceSpec& device) {
  return device.cache_bytes > 0 && device.cache_bandwidth_gbps > 0;
}

// "@cache" keys: a class without the cache tier, bytes within the cache.
constexpr std::string_view kCacheKeySuffix = "@cache";
bool CacheKeyed(const DeviceSpec& device, OpClass op_class, double bytes) {
  return !UsesCacheTier(op_class) && device.cache_bytes > 0 && bytes <= device.cache_bytes;
}

}  // namespace

std::string OpTypeFactorKey(const DeviceSpec& device, OpClass op_class, std::string_view op_type,
                            double bytes) {
  std::string key(op_type);
  if (!key.empty() && CacheKeyed(device, op_class, bytes)) key += kCacheKeySuffix;
  return key;
}

const OpTypeFactor* FindOpTypeFactor(const DeviceSpec& device, OpClass op_class,
                                     std::string_view op_type, double bytes) {
  if (op_type.empty()) return nullptr;
  if (CacheKeyed(device, op_class, bytes)) {
    // Built on the stack: the simulator calls this for every op it costs.
    char key[96];
    if (op_type.size() + kCacheKeySuffix.size() <= sizeof key) {
      std::memcpy(key, op_type.data(), op_type.size());
      std::memcpy(key + op_type.size(), kCacheKeySuffix.data(), kCacheKeySuffix.size());
      if (const OpTypeFactor* f =
              device.OpType(std::string_view(key, op_type.size() + kCacheKeySuffix.size())))
        return f;
    }
  }
  return device.OpType(op_type);
}

MemoryTierTimes MemoryTierTimesUs(const DeviceSpec& device, double bytes) {
  // GB/s = 1e3 bytes/us.
  MemoryTierTimes t;
  if (HasCacheTier(device)) {
    const double in_cache = std::min(bytes, device.cache_bytes);
    t.cache_us = in_cache / (device.cache_bandwidth_gbps * 1e3);
    bytes -= in_cache;
  }
  t.memory_us = bytes / (device.memory_bandwidth_gbps * 1e3);
  return t;
}

double MemoryTimeUs(const DeviceSpec& device, double bytes) {
  const MemoryTierTimes t = MemoryTierTimesUs(device, bytes);
  return t.cache_us + t.memory_us;
}

namespace {

// RooflineCost on memory times already split by tier.
OpCost TieredRooflineCost(const DeviceSpec& device, double compute_efficiency,
                          double memory_efficiency, double overhead_us, double flops,
                          const MemoryTierTimes& t, double cache_memory_efficiency) {
  OpCost cost;
  cost.overhead_us = overhead_us;
  cost.compute_us = flops / (device.peak_gflops * compute_efficiency * 1e3);
  const double cache_efficiency =
      cache_memory_efficiency > 0 ? cache_memory_efficiency : memory_efficiency;
  cost.memory_us = t.cache_us / cache_efficiency + t.memory_us / memory_efficiency;
  return cost;
}

// An op's memory time per tier at efficiency 1, as CostNoFloor prices it and
// FitEfficiency fits it: a class without the cache tier (depthwise) moves
// every byte at memory bandwidth, and so do a memory-bound class's cold bytes
// (OpWork::cold_bytes); those beyond the last-level cache (dram_bytes) leave
// the tiers for the DRAM stall on a device with that tier.
MemoryTierTimes OpMemoryTimes(const DeviceSpec& device, OpClass op_class, double bytes,
                              double cold_bytes, double dram_bytes, double dram_written_bytes) {
  if (!UsesCacheTier(op_class)) return {0, bytes / (device.memory_bandwidth_gbps * 1e3)};
  if (!MemoryBoundClass(op_class)) return MemoryTierTimesUs(device, bytes);
  const bool dram_tier = device.llc_bytes > 0 && device.dram_bandwidth_gbps > 0;
  const double dram = dram_tier ? std::clamp(dram_bytes, 0.0, bytes) : 0.0;
  const double written = std::clamp(dram_written_bytes, 0.0, dram);
  // Cold bytes include the DRAM ones (ColdBytesPerNode's beyond_cache).
  const double cold = std::clamp(cold_bytes - dram, 0.0, bytes - dram);
  MemoryTierTimes t = MemoryTierTimesUs(device, bytes - dram - cold);
  t.memory_us += cold / (device.memory_bandwidth_gbps * 1e3);
  if (dram > 0) t.dram_us = (dram + written) / (device.dram_bandwidth_gbps * 1e3);
  return t;
}

}  // namespace

OpCost RooflineCost(const DeviceSpec& device, double compute_efficiency, double memory_efficiency,
                    double overhead_us, double flops, double bytes,
                    double cache_memory_efficiency) {
  return TieredRooflineCost(device, compute_efficiency, memory_efficiency, overhead_us, flops,
                            MemoryTierTimesUs(device, bytes), cache_memory_efficiency);
}

CostModel::CostModel(DeviceProfile profile) : profile_(std::move(profile)) {
  const size_t n = profile_.devices.size();
  efficiency_.resize(n);
  for (size_t d = 0; d < n; ++d) {
    const DeviceSpec& spec = profile_.devices[d];
    for (int c = 0; c < kNumOpClasses; ++c) {
      const auto op_class = static_cast<OpClass>(c);
      const OpClassEfficiency* fitted = spec.Efficiency(OpClassName(op_class));
      OpClassEfficiency e = fitted ? *fitted : DefaultEfficiency(spec.kind, op_class);
      if (e.overhead_us < 0) e.overhead_us = spec.launch_overhead_us;
      efficiency_[d][static_cast<size_t>(c)] = e;
    }
  }
  floor_device_.assign(n, -1);
  for (size_t d = 0; d < n; ++d) {
    const std::string& floor = profile_.devices[d].floor_device;
    if (floor.empty()) continue;
    for (size_t k = 0; k < n; ++k)
      if (k != d && profile_.devices[k].name == floor && profile_.devices[k].floor_device.empty())
        floor_device_[d] = static_cast<int>(k);
  }
  links_.assign(n * n, Link{});
  for (const LinkSpec& l : profile_.links) {
    const int from = DeviceIndex(l.from), to = DeviceIndex(l.to);
    if (from < 0 || to < 0) continue;
    Link& link = links_[static_cast<size_t>(from) * n + static_cast<size_t>(to)];
    link.present = true;
    link.mapped = l.mapped;
    link.latency_us = l.mapped ? 0 : l.latency_us;
    link.us_per_byte = l.mapped ? 0 : 1.0 / (l.bandwidth_gbps * 1e3);
    link.copy_engines = l.copy_engines;
  }
}

int CostModel::DeviceIndex(std::string_view device) const {
  for (size_t i = 0; i < profile_.devices.size(); ++i)
    if (profile_.devices[i].name == device) return static_cast<int>(i);
  for (size_t i = 0; i < profile_.devices.size(); ++i) {
    const std::string& name = profile_.devices[i].name;
    if (PinMatchesDevice(device, name) || PinMatchesDevice(name, device))
      return static_cast<int>(i);
  }
  return -1;
}

OpCost CostModel::Cost(OpClass op_class, double flops, double bytes, int device) const {
  OpWork w;
  w.op_class = op_class;
  w.flops = flops;
  w.bytes = bytes;
  return Cost(w, device);
}

OpCost CostModel::Cost(const Node& node, int device) const { return Cost(OpWorkOf(node), device); }

OpCost CostModel::CostNoFloor(const OpWork& work, int device) const {
  const DeviceSpec& spec = profile_.devices[static_cast<size_t>(device)];
  const OpClassEfficiency& e =
      efficiency_[static_cast<size_t>(device)][static_cast<size_t>(work.op_class)];
  const MemoryTierTimes memory = OpMemoryTimes(spec, work.op_class, work.bytes, work.cold_bytes,
                                               work.dram_bytes, work.dram_written_bytes);
  OpCost cost = TieredRooflineCost(spec, e.compute, e.memory, e.overhead_us, work.flops, memory,
                                   e.cache_memory);
  double factor = 1;
  if (const OpTypeFactor* f = FindOpTypeFactor(spec, work.op_class, work.op_type, work.bytes))
    factor = f->factor;
  if (!work.sparse_class.empty())
    if (const SparseKernelSpeed* sp = spec.Sparse(work.sparse_class); sp != nullptr)
      factor *= sp->Ratio(work.weight_sparsity);
  if (const DeviceKindTraits* kind = FindDeviceKindTraits(spec.kind);
      kind != nullptr && kind->input_sparse_kernels && work.input_sparsity > 0)
    factor *= 1.0 - work.input_sparsity;
  cost.compute_us *= factor;
  cost.memory_us *= factor;
  const double copied = std::clamp(work.copied_bytes, 0.0, work.bytes);
  if (copied > 0 && HasCacheTier(spec)) {
    // Its copied-in inputs are not in the cache: they read at the device's
    // copied_read_gbps (solved on chains of Adds, profiling/probes.h) instead
    // of the cache-tier rate of a plain stream (the elementwise class's)
    // over the same bytes. The difference is a stall added to the op's time
    // whatever bounds it: a depthwise conv the model holds compute-bound
    // still waits for its copied input (inside the roofline's max the stall
    // vanished: copied depthwise convs were predicted at 0.5x their time on
    // the AMD host), and a pool keeps its slower per-byte work on every byte
    // (round 8 put copied MaxPools at 1.6-1.8x when every byte took the
    // class's efficiency; replacing that work by the copied rate instead
    // under-predicted them, 0.7x).
    const OpClassEfficiency& stream =
        efficiency_[static_cast<size_t>(device)][static_cast<size_t>(OpClass::kElementwise)];
    // A window op (depthwise conv, pool) reads its copied input slower than
    // a stream does: each row is read by several output rows. The rate is
    // measured on 3x3 depthwise convs; global pools and grouped convs take it
    // too (copied GlobalAveragePools read -29..-45% short at the stream rate,
    // -7..-14% at this one, on the AMD host of docs/profiling.md round 13, in its git history).
    const bool window =
        work.op_class == OpClass::kDepthwiseConv || work.op_class == OpClass::kPool;
    // A depthwise conv's depends on the map; it has its own rate where the
    // profile has one.
    const double read_gbps =
        work.op_class == OpClass::kDepthwiseConv && spec.copied_depthwise_read_gbps > 0
            ? spec.copied_depthwise_read_gbps
        : window && spec.copied_window_read_gbps > 0 ? spec.copied_window_read_gbps
        : spec.copied_read_gbps > 0                  ? spec.copied_read_gbps
                                                     : spec.memory_bandwidth_gbps * stream.memory;
    const double streamed_us =
        TieredRooflineCost(spec, 1, stream.memory, 0, 0,
                           OpMemoryTimes(spec, OpClass::kElementwise, work.bytes, 0, 0, 0),
                           stream.cache_memory)
            .memory_us;
    const double stall_us =
        std::max(0.0, copied / (read_gbps * 1e3) - streamed_us * copied / work.bytes);
    cost.compute_us += stall_us;
    cost.memory_us += stall_us;
  }
  // Its input came from another device: the stream waited for it.
  if (copied > 0) {
    cost.compute_us *= spec.resume_factor;
    cost.memory_us *= spec.resume_factor;
  }
  // Its DRAM traffic and the lines it takes back from another core: stalls
  // outside the efficiencies and factors. A window or compute-bound op
  // (conv, gemm, depthwise conv, pool) hides the latter behind its work: in
  // braid calibrate's probe chains a depthwise conv writing such lines took
  // under 1.5 us more, an Add of the same 200 KB 6.5 us more.
  const bool streams_its_writes =
      MemoryBoundClass(work.op_class) && work.op_class != OpClass::kPool;
  const double reclaim_us = spec.reclaim_gbps > 0 && streams_its_writes
                                ? std::max(0.0, work.reclaimed_bytes) / (spec.reclaim_gbps * 1e3)
                                : 0;
  cost.compute_us += memory.dram_us + reclaim_us;
  cost.memory_us += memory.dram_us + reclaim_us;
  return cost;
}

OpCost CostModel::Cost(const OpWork& work, int device) const {
  if (work.view) return OpCost{};  // no kernel runs, no byte moves
  OpCost cost = CostNoFloor(work, device);
  const int floor = floor_device_[static_cast<size_t>(device)];
  if (floor >= 0) {
    // The device runs the floor device's kernels: it cannot be faster than
    // they are on their own data (what its copies bring in is its own, and
    // no line of its memory is held by another core).
    OpWork local = work;
    local.copied_bytes = 0;
    local.reclaimed_bytes = 0;
    const double host = CostNoFloor(local, floor).TotalUs();
    if (host > cost.TotalUs()) cost.compute_us = std::max(cost.compute_us, host - cost.overhead_us);
  }
  return cost;
}

double CostModel::TransferUs(int from, int to, double bytes) const {
  if (from == to) return 0;
  const Link& l = links_[static_cast<size_t>(from) * profile_.devices.size() + static_cast<size_t>(to)];
  if (!l.present) return -1;
  return l.mapped ? 0 : l.latency_us + bytes * l.us_per_byte;
}

bool CostModel::Mapped(int from, int to) const {
  if (from == to) return true;
  return links_[static_cast<size_t>(from) * profile_.devices.size() + static_cast<size_t>(to)].mapped;
}

double CostModel::DeviceEnergyJ(int device, double busy_us, double span_us) const {
  const DeviceSpec& spec = profile_.devices[static_cast<size_t>(device)];
  const double idle_us = std::max(0.0, span_us - busy_us);
  return (spec.active_power_w * busy_us + spec.idle_power_w * idle_us) * 1e-6;
}

namespace {

struct FitResult {
  double compute = 1, memory = 1, cache_memory = 1, overhead = 0,
         loss = std::numeric_limits<double>::infinity();
};

// The fixed multiplier of a sample's work: its op type's factor and, above
// the crossover, the sparse kernel's speed (both from the device).
double WorkMultiplier(const DeviceSpec& device, const OpMeasurement& m) {
  double factor = 1;
  if (const OpTypeFactor* f = FindOpTypeFactor(device, m.op_class, m.op_type, m.bytes))
    factor = f->factor;
  if (!m.sparse_class.empty())
    if (const SparseKernelSpeed* sp = device.Sparse(m.sparse_class); sp != nullptr)
      factor *= sp->Ratio(m.weight_sparsity);
  return factor;
}

// A sample with its memory time and multiplier precomputed (the grid search
// evaluates the loss many times).
struct FitSample {
  double flops = 0;
  MemoryTierTimes memory;  // at memory efficiency 1
  double multiplier = 1;
  double measured_us = 0;
};

double Loss(const std::vector<FitSample>& ms, double peak, double ec, double em, double emc,
            double overhead) {
  double loss = 0;
  for (const FitSample& m : ms) {
    // RooflineCost, inlined: overhead + multiplier * max(compute, memory).
    const double t =
        overhead + m.memory.dram_us +
        m.multiplier * std::max(m.flops / (peak * ec * 1e3),
                                m.memory.cache_us / emc + m.memory.memory_us / em);
    loss += std::abs(std::log(std::max(t, 1e-3) / std::max(m.measured_us, 1e-3)));
  }
  return loss / static_cast<double>(ms.size());
}

// Weight of the pull towards the default efficiencies. Small: it only
// decides between fits that explain the measurements (almost) equally well.
// Without it an efficiency the samples never exercise was left at whatever
// grid point first reached the minimum: e.g. a gemm class fitted only on
// batch-1 classifier GEMVs (all memory-bound) got the lowest compute
// efficiency that still kept them memory-bound, and then predicted a
// compute-bound attention MatMul ~10x too slow.
constexpr double kPriorWeight = 1e-3;

// Coarse log-spaced grid, then two finer passes around the best point.
// When `fix_compute`, the compute efficiency stays at the prior's (the
// samples cannot tell it) and only memory efficiency and overhead are fitted.
// When `split_tiers`, the cache tier's efficiency is fitted apart from the
// memory tier's (else they are one).
FitResult FitClass(const std::vector<FitSample>& ms, const DeviceSpec& device,
                   const OpClassEfficiency& prior, bool fix_compute, bool split_tiers,
                   double min_memory) {
  const double peak = device.peak_gflops;
  double min_measured = std::numeric_limits<double>::infinity();
  for (const FitSample& m : ms) min_measured = std::min(min_measured, m.measured_us);
  std::vector<double> overheads = {0};
  for (double o = 0.25; o <= min_measured; o *= 1.6) overheads.push_back(o);
  FitResult best;
  auto grid = [](double lo, double hi, int i, int steps) {
    return lo * std::pow(hi / lo, static_cast<double>(i) / steps);
  };
  auto search = [&](double ec_lo, double ec_hi, double em_lo, double em_hi, double emc_lo,
                    double emc_hi, int steps, const std::vector<double>& os) {
    for (int i = 0; i <= (fix_compute ? 0 : steps); ++i) {
      const double ec = fix_compute ? prior.compute : grid(ec_lo, ec_hi, i, steps);
      for (int j = 0; j <= steps; ++j) {
        const double em = grid(em_lo, em_hi, j, steps);
        for (int k = 0; k <= (split_tiers ? steps : 0); ++k) {
          const double emc = split_tiers ? grid(emc_lo, emc_hi, k, steps) : em;
          for (double o : os) {
            const double loss =
                Loss(ms, peak, ec, em, emc, o) +
                kPriorWeight * (std::abs(std::log(ec / prior.compute)) +
                                std::abs(std::log(em / prior.memory)) +
                                (split_tiers ? std::abs(std::log(emc / prior.memory)) : 0.0));
            if (loss < best.loss) best = {ec, em, emc, o, loss};
          }
        }
      }
    }
  };
  const double lowest_memory = std::max(1e-3, min_memory);
  search(1e-3, 8, lowest_memory, 8, lowest_memory, 8, split_tiers ? 16 : 24, overheads);
  for (double span : {2.0, 1.25}) {
    std::vector<double> os;
    for (double f : {1 / span, 1 / std::sqrt(span), 1.0, std::sqrt(span), span})
      os.push_back(best.overhead * f);
    search(best.compute / span, best.compute * span, std::max(best.memory / span, min_memory),
           std::max(best.memory * span, min_memory), std::max(best.cache_memory / span, min_memory),
           std::max(best.cache_memory * span, min_memory), split_tiers ? 6 : 8, os);
  }
  return best;
}

}  // namespace

std::vector<OpClassEfficiency> FitEfficiency(const DeviceSpec& device,
                                             std::span<const OpMeasurement> measurements,
                                             int min_samples) {
  std::vector<OpClassEfficiency> out;
  // The ridge point: below this intensity (FLOP/byte) an op is memory-bound
  // even at full compute efficiency. A class whose samples all lie below it
  // (e.g. gemm measured only on batch-1 classifier GEMVs, 0.5 FLOP/byte) says
  // nothing about its compute efficiency; fitting it anyway let the compute
  // term absorb cache effects (a 2 MB GEMV in L2 vs an 8 MB one from DRAM),
  // and compute-bound MatMuls were then predicted 5-10x too slow. Such a class
  // keeps the compute efficiency of the fitted dense conv class (same kind of
  // kernel), else the default.
  const double ridge = device.peak_gflops / std::max(device.memory_bandwidth_gbps, 1e-12);
  double dense_compute = -1;
  for (int c = 0; c < kNumOpClasses; ++c) {
    std::vector<FitSample> ms;
    bool compute_seen = false;
    int in_cache = 0, beyond_cache = 0;  // samples mostly in one memory tier
    for (const OpMeasurement& m : measurements)
      if (static_cast<int>(m.op_class) == c && m.measured_us > 0 && std::isfinite(m.measured_us)) {
        const MemoryTierTimes memory =
            OpMemoryTimes(device, m.op_class, m.bytes, m.cold_bytes, m.dram_bytes,
                          m.dram_written_bytes);
        ms.push_back({m.flops, memory, WorkMultiplier(device, m), m.measured_us});
        in_cache += memory.memory_us == 0 && memory.dram_us == 0;
        beyond_cache += memory.memory_us > memory.cache_us;
        compute_seen = compute_seen || m.flops >= ridge * m.bytes;
      }
    if (static_cast<int>(ms.size()) < std::max(1, min_samples)) continue;
    const auto op_class = static_cast<OpClass>(c);
    OpClassEfficiency prior = DefaultEfficiency(device.kind, op_class);
    if (op_class == OpClass::kGemm && dense_compute > 0) prior.compute = dense_compute;
    // Dense classes only: elsewhere a low fitted compute efficiency stands for
    // real per-element work (pooling windows) and is kept.
    // Not depthwise: its samples sit below the ridge yet run far slower
    // than bandwidth, so its compute efficiency is what they measure.
    // Elementwise too: its FLOP counts are nominal (an Add's 1 per element,
    // a Gelu's 8), its kernels stream; with a fitted compute efficiency
    // (0.03-0.08, set by the Gelu / Erf samples) every broadcast bias Add
    // was predicted compute-bound, at one time per element whatever its
    // bytes (vit_tiny's residual Adds, 1.5x the bytes of its bias Adds, ran
    // 1.4x longer and were predicted alike). The per-element cost of the
    // costly ones is their op type's factor.
    const bool dense = op_class == OpClass::kGemm || op_class == OpClass::kConv;
    const bool fix_compute =
        (!compute_seen && dense) || op_class == OpClass::kElementwise;
    // A memory-bound class streams from DRAM near its bandwidth (resnet50's
    // 5-10 MB Adds: 0.9 of it) but reaches half the cache's or less: each
    // tier gets its own efficiency. Not the dense classes (compute-bound,
    // their memory side only matters for weight-heavy layers) nor the ones
    // without the cache tier; and only when samples pin down both tiers (a
    // class measured only inside the cache, normalization on ViT tokens, got
    // a cache efficiency of 0.07 from 10 samples and predicted Softmax 2x).
    constexpr int kMinSamplesPerTier = 3;
    const bool split_tiers = MemoryBoundClass(op_class) && UsesCacheTier(op_class) &&
                             HasCacheTier(device) && in_cache >= kMinSamplesPerTier &&
                             beyond_cache >= kMinSamplesPerTier;
    // A dense kernel streams its weights and activations; a fit far below
    // the bandwidth stands for compute inefficiency of small shapes (few
    // channels), and then wrongly makes big weight-heavy convs memory-bound.
    const double min_memory = dense ? 0.3 : 0.0;
    FitResult fit = FitClass(ms, device, prior, fix_compute, false, min_memory);
    bool split = false;
    if (split_tiers) {
      // Kept only when it fits better (on a coarser grid, so it must gain
      // more than the grid loses): elementwise -3..-10% mean |log| error,
      // data movement -1..-8%; pool, compute-bound, gained nothing (its
      // cache efficiency came out anywhere from 1.2 to 5.8).
      const FitResult tiers = FitClass(ms, device, prior, fix_compute, true, min_memory);
      split = tiers.loss < fit.loss;
      if (split) fit = tiers;
    }
    if (op_class == OpClass::kConv && compute_seen) dense_compute = fit.compute;
    OpClassEfficiency e;
    e.op_class = OpClassName(static_cast<OpClass>(c));
    e.compute = fit.compute;
    e.memory = fit.memory;
    if (split) e.cache_memory = fit.cache_memory;
    e.overhead_us = fit.overhead;
    e.samples = static_cast<int>(ms.size());
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<OpTypeFactor> FitOpTypeFactors(const DeviceSpec& device,
                                           std::span<const OpMeasurement> measurements,
                                           int min_samples) {
  DeviceSpec plain = device;
  plain.op_types.clear();  // the class prediction alone
  DeviceProfile profile;
  profile.name = "fit";
  plain.floor_device.clear();
  profile.devices.push_back(std::move(plain));
  const CostModel model(profile);
  // Per key: its samples' log(measured / class prediction), and whether the
  // factor carries what its class's model lacks by design (then unshrunk,
  // below): a cache-tier key or an elementwise op type.
  struct KeySamples {
    std::vector<double> logs;
    bool class_lacks_it = false;
  };
  std::map<std::string, KeySamples> by_key;
  for (const OpMeasurement& m : measurements) {
    if (m.op_type.empty() || !(m.measured_us > 0) || !std::isfinite(m.measured_us)) continue;
    const OpWork w = MeasuredWork(m);  // `model` has no op-type factors
    const OpCost c = model.Cost(w, 0);
    // The DRAM stall is outside the factor (CostNoFloor).
    const double stall_us =
        OpMemoryTimes(device, m.op_class, m.bytes, m.cold_bytes, m.dram_bytes, m.dram_written_bytes)
            .dram_us;
    const double work = std::max(c.compute_us, c.memory_us) - stall_us;
    if (!(work > 0)) continue;
    // What is left for the work once the overhead (and the stall) is paid
    // (at least a tenth of the time: a sample below the overhead says
    // "smaller", not "zero").
    const double left =
        std::max(m.measured_us - c.overhead_us - stall_us, 0.1 * m.measured_us);
    auto [it, added] = by_key.try_emplace(OpTypeFactorKey(device, m.op_class, m.op_type, m.bytes));
    if (added)
      it->second.class_lacks_it =
          CacheKeyed(device, m.op_class, m.bytes) || m.op_class == OpClass::kElementwise;
    it->second.logs.push_back(std::log(left / work));
  }
  std::vector<OpTypeFactor> out;
  for (auto& [type, samples] : by_key) {
    std::vector<double>& logs = samples.logs;
    const int n = static_cast<int>(logs.size());
    if (n < std::max(1, min_samples)) continue;
    std::sort(logs.begin(), logs.end());
    const double median =
        n % 2 ? logs[static_cast<size_t>(n / 2)]
              : 0.5 * (logs[static_cast<size_t>(n / 2 - 1)] + logs[static_cast<size_t>(n / 2)]);
    // Shrunk towards the class (1) by n / (n + 1): few samples, less trust
    // (n / (n + 2) until round 14: a class of two kinds of kernel, LayerNorm's
    // 4 token samples beside Softmax's 6, then kept LayerNorm 20% slow, and
    // three check runs had all-CPU normalization 6-14%, elementwise 14-18%
    // and data movement 15-17% against 3-7%, 10-12% and 11-15%).
    // Not where the factor carries what its class's model lacks by design,
    // so that the class is no prior for it: a cache-tier key ("@cache", the
    // memory tier of a class without one: mobilenet_v2's in-cache depthwise
    // convs ran 0.6-0.7x the class, the shrunk factors 0.8 and 0.7 kept them
    // 18% too slow) and an elementwise op type (the class has no compute
    // term: a Gelu's per-element work is its factor; shrunk, vit_tiny's Gelus
    // read 33-38% fast).
    const double shrunk = samples.class_lacks_it ? median : median * n / (n + 1.0);
    const double factor = std::clamp(std::exp(shrunk), 1e-2, 1e2);
    if (std::abs(std::log(factor)) < std::log(1.05)) continue;
    out.push_back({type, factor, n});
  }
  return out;
}

void FitDevice(DeviceSpec& device, std::span<const OpMeasurement> measurements, int min_samples) {
  device.op_types.clear();
  device.efficiency = FitEfficiency(device, measurements, min_samples);
  device.op_types = FitOpTypeFactors(device, measurements, min_samples);
  if (device.op_types.empty()) return;
  // Again with the types' factors fixed: the class efficiencies then
  // describe the class's typical op rather than a compromise between its
  // types; the factors are refitted against them.
  device.efficiency = FitEfficiency(device, measurements, min_samples);
  device.op_types.clear();
  device.op_types = FitOpTypeFactors(device, measurements, min_samples);
}

SparseKernelSpeed FitSparseKernelSpeed(std::string sparse_class,
                                       std::span<const std::pair<double, double>> points) {
  SparseKernelSpeed sp;
  sp.op_class = std::move(sparse_class);
  sp.samples = static_cast<int>(points.size());
  if (points.empty()) return sp;  // crossover 1: never predicted sparse
  // ratio = fixed + per_density * density, least squares.
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& [sparsity, ratio] : points) {
    const double x = 1 - sparsity;
    n += 1;
    sx += x;
    sy += ratio;
    sxx += x * x;
    sxy += x * ratio;
  }
  const double denom = n * sxx - sx * sx;
  double slope = denom > 1e-12 ? (n * sxy - sx * sy) / denom : 0;
  slope = std::max(slope, 0.0);
  double fixed = (sy - slope * sx) / n;
  if (fixed < 0) {
    fixed = 0;
    slope = sxx > 0 ? std::max(sxy / sxx, 0.0) : 0;
  }
  sp.fixed = fixed;
  sp.per_density = slope;
  // ratio(s) = 1 at density (1 - fixed) / slope.
  if (fixed >= 1) {
    sp.crossover = 1;
  } else if (slope <= 0) {
    sp.crossover = 0;
  } else {
    sp.crossover = std::clamp(1 - (1 - fixed) / slope, 0.0, 1.0);
  }
  return sp;
}

}  // namespace braid
