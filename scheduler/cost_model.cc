#include "scheduler/cost_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

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

namespace {

bool OneOf(std::string_view op, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), op) != names.end();
}

}  // namespace

OpClass ClassifyOp(const Node& node) {
  const std::string& op = node.op_type;
  if (op == "Conv" || op == "ConvTranspose")
    return node.attrs.GetInt("group", 1) == 1 ? OpClass::kConv : OpClass::kDepthwiseConv;
  if (op == "Gemm" || op == "MatMul") return OpClass::kGemm;
  if (op.ends_with("Pool")) return OpClass::kPool;
  if (OneOf(op, {"BatchNormalization", "LayerNormalization", "InstanceNormalization",
                 "GroupNormalization", "Softmax", "LogSoftmax", "LRN"}))
    return OpClass::kNormalization;
  if (op.starts_with("Reduce") || op == "ArgMax" || op == "ArgMin") return OpClass::kReduce;
  if (OneOf(op, {"Reshape", "Transpose", "Concat", "Flatten", "Gather", "Slice", "Squeeze",
                 "Unsqueeze", "Shape", "Split", "Pad", "Expand", "Identity", "Cast", "Tile",
                 "ConstantOfShape", "Range", "Resize", "Size", "DepthToSpace",
                 "SpaceToDepth", "GatherElements", "ScatterND", "Constant"}))
    return OpClass::kDataMovement;
  if (OneOf(op, {"Add", "Sub", "Mul", "Div", "Relu", "Clip", "Sigmoid", "Tanh", "Exp", "Log",
                 "Sqrt", "Pow", "Erf", "Gelu", "HardSwish", "HardSigmoid", "LeakyRelu", "PRelu",
                 "Elu", "Selu", "Celu", "Softplus", "Neg", "Abs", "Max", "Min", "Mean", "Sum",
                 "Where", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Not",
                 "And", "Or", "Xor", "Reciprocal", "Floor", "Ceil", "Round", "Sign", "Mod",
                 "Sin", "Cos", "SiLU", "Mish", "Dropout"}))
    return OpClass::kElementwise;
  return OpClass::kOther;
}

OpClassEfficiency DefaultEfficiency(std::string_view device_kind, OpClass op_class) {
  // Typical fractions of peak that tuned libraries reach at batch 1: dense
  // conv/GEMM well, depthwise poorly; memory-bound ops reach part of the
  // DRAM bandwidth. Rough estimates; `braid calibrate` replaces them.
  const bool gpu = device_kind != "cpu";
  OpClassEfficiency e;
  e.op_class = OpClassName(op_class);
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
  const DeviceSpec& spec = profile_.devices[static_cast<size_t>(device)];
  const OpClassEfficiency& e = efficiency_[static_cast<size_t>(device)][static_cast<size_t>(op_class)];
  OpCost cost;
  cost.overhead_us = e.overhead_us;
  // GFLOP/s = 1e3 FLOP/us; GB/s = 1e3 bytes/us.
  cost.compute_us = flops / (spec.peak_gflops * e.compute * 1e3);
  cost.memory_us = bytes / (spec.memory_bandwidth_gbps * e.memory * 1e3);
  return cost;
}

OpCost CostModel::Cost(const Node& node, int device) const {
  return Cost(ClassifyOp(node), node.annotation.flops, node.annotation.bytes, device);
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
  double compute = 1, memory = 1, overhead = 0, loss = std::numeric_limits<double>::infinity();
};

double Loss(const std::vector<const OpMeasurement*>& ms, double peak, double bw, double ec,
            double em, double overhead) {
  double loss = 0;
  for (const OpMeasurement* m : ms) {
    const double t = overhead + std::max(m->flops / (peak * ec * 1e3), m->bytes / (bw * em * 1e3));
    loss += std::abs(std::log(std::max(t, 1e-3) / std::max(m->measured_us, 1e-3)));
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
FitResult FitClass(const std::vector<const OpMeasurement*>& ms, const DeviceSpec& device,
                   const OpClassEfficiency& prior, bool fix_compute) {
  const double peak = device.peak_gflops, bw = device.memory_bandwidth_gbps;
  double min_measured = std::numeric_limits<double>::infinity();
  for (const OpMeasurement* m : ms) min_measured = std::min(min_measured, m->measured_us);
  std::vector<double> overheads = {0};
  for (double o = 0.25; o <= min_measured; o *= 1.6) overheads.push_back(o);
  FitResult best;
  auto search = [&](double ec_lo, double ec_hi, double em_lo, double em_hi, int steps,
                    const std::vector<double>& os) {
    for (int i = 0; i <= (fix_compute ? 0 : steps); ++i) {
      const double ec = fix_compute ? prior.compute
                                    : ec_lo * std::pow(ec_hi / ec_lo, static_cast<double>(i) / steps);
      for (int j = 0; j <= steps; ++j) {
        const double em = em_lo * std::pow(em_hi / em_lo, static_cast<double>(j) / steps);
        for (double o : os) {
          const double loss = Loss(ms, peak, bw, ec, em, o) +
                              kPriorWeight * (std::abs(std::log(ec / prior.compute)) +
                                              std::abs(std::log(em / prior.memory)));
          if (loss < best.loss) best = {ec, em, o, loss};
        }
      }
    }
  };
  search(1e-3, 8, 1e-3, 8, 24, overheads);
  for (double span : {2.0, 1.25}) {
    std::vector<double> os;
    for (double f : {1 / span, 1 / std::sqrt(span), 1.0, std::sqrt(span), span})
      os.push_back(best.overhead * f);
    search(best.compute / span, best.compute * span, best.memory / span, best.memory * span, 8,
           os);
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
    std::vector<const OpMeasurement*> ms;
    bool compute_seen = false;
    for (const OpMeasurement& m : measurements)
      if (static_cast<int>(m.op_class) == c && m.measured_us > 0 && std::isfinite(m.measured_us)) {
        ms.push_back(&m);
        compute_seen = compute_seen || m.flops >= ridge * m.bytes;
      }
    if (static_cast<int>(ms.size()) < std::max(1, min_samples)) continue;
    const auto op_class = static_cast<OpClass>(c);
    OpClassEfficiency prior = DefaultEfficiency(device.kind, op_class);
    if (op_class == OpClass::kGemm && dense_compute > 0) prior.compute = dense_compute;
    // Dense classes only: elsewhere a low fitted compute efficiency stands for
    // real per-element work (pooling windows) and is kept.
    const bool fix_compute = !compute_seen &&
                             (op_class == OpClass::kGemm || op_class == OpClass::kConv ||
                              op_class == OpClass::kDepthwiseConv);
    const FitResult fit = FitClass(ms, device, prior, fix_compute);
    if (op_class == OpClass::kConv && compute_seen) dense_compute = fit.compute;
    OpClassEfficiency e;
    e.op_class = OpClassName(static_cast<OpClass>(c));
    e.compute = fit.compute;
    e.memory = fit.memory;
    e.overhead_us = fit.overhead;
    e.samples = static_cast<int>(ms.size());
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace braid
