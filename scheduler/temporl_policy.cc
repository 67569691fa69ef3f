#include "scheduler/temporl_policy.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "graph/text.h"
#include "scheduler/partition_policy.h"

namespace braid {
namespace {

constexpr char kTemporlMagic[] = "BRAIDTRL";
// 1: actor only; 2: + the measured correction.
// 3: the state's split granularity (s[13]) follows the layer's axis (rows
// or channels); files of 1 and 2 were trained on the channel-only feature.
constexpr uint32_t kTemporlVersion = 3;
constexpr uint32_t kMaxCorrectionEntries = 1 << 16;

double Logit(double p) {
  p = std::clamp(p, 1e-4, 1 - 1e-4);
  return std::log(p / (1 - p));
}

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

Eigen::MatrixXd Column(const TemporlState& s) {
  Eigen::MatrixXd x(kTemporlStateSize, 1);
  for (int i = 0; i < kTemporlStateSize; ++i) x(i, 0) = s[static_cast<size_t>(i)];
  return x;
}

double MeanOf(const std::vector<double>& v) {
  return v.empty() ? 0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

}  // namespace

// ---- model ---------------------------------------------------------------------

TemporlModel NewTemporlModel(int hidden, uint64_t seed) {
  TemporlModel m;
  MlpSpec spec{.sizes = {kTemporlStateSize, hidden, hidden, 1}, .hidden = MlpActivation::kTanh};
  m.actor = Mlp(spec, seed);
  // Start at ratio 0.5 everywhere: the last layer's weights scaled down, so
  // the first episodes explore around the static split.
  std::vector<size_t> sizes;
  std::vector<double*> blocks = m.actor.ParamBlocks(&sizes);
  for (size_t i = 0; i < sizes[blocks.size() - 2]; ++i) blocks[blocks.size() - 2][i] *= 0.01;
  m.seed = seed;
  return m;
}

Status SaveTemporlModel(const TemporlModel& model, const std::string& path) {
  BinaryWriter w;
  w.Bytes(std::string_view(kTemporlMagic, 8));
  w.U32(kTemporlVersion);
  w.U32(kTemporlStateSize);
  w.F64(model.weights.gap);
  w.F64(model.weights.hidden);
  w.F64(model.weights.latency);
  w.Str(model.trained_on);
  w.U64(static_cast<uint64_t>(model.episodes));
  w.U64(model.seed);
  model.actor.Save(w);
  const TemporlCorrection& c = model.correction;
  for (const auto* table : {&c.layer_offset, &c.pair_offset}) {
    w.U32(static_cast<uint32_t>(table->size()));
    for (const auto& [key, offset] : *table) {
      w.Str(key);
      w.F64(offset);
    }
  }
  w.U64(static_cast<uint64_t>(c.updates));
  w.Str(c.measured_on);
  return WriteFileBytes(path, w.bytes());
}

StatusOr<TemporlModel> LoadTemporlModel(const std::string& path) {
  ASSIGN_OR_RETURN(std::string bytes, ReadFileBytes(path));
  BinaryReader r(bytes, path);
  if (Status s = r.Expect(std::string_view(kTemporlMagic, 8)); !s.ok())
    return r.Error("not a temporl model (expected magic BRAIDTRL; `braid train --policy temporl` "
                   "writes one)");
  ASSIGN_OR_RETURN(uint32_t version, r.U32());
  if (version < 1 || version > kTemporlVersion)
    return r.Error("unsupported version " + std::to_string(version));
  if (version < 3)
    return r.Error("version " + std::to_string(version) +
                   " was trained before row splits changed the state's split granularity; "
                   "retrain with `braid train --policy temporl`");
  ASSIGN_OR_RETURN(uint32_t state_size, r.U32());
  if (state_size != kTemporlStateSize)
    return r.Error("trained for " + std::to_string(state_size) + " state features, this build has " +
                   std::to_string(kTemporlStateSize));
  TemporlModel m;
  for (double* w : {&m.weights.gap, &m.weights.hidden, &m.weights.latency}) {
    ASSIGN_OR_RETURN(*w, r.F64());
    if (!(*w >= 0 && *w < 1e6)) return r.Error("bad reward weight");
  }
  ASSIGN_OR_RETURN(m.trained_on, r.Str(1 << 16));
  ASSIGN_OR_RETURN(uint64_t episodes, r.U64());
  if (episodes > (uint64_t{1} << 40)) return r.Error("bad episode count");
  m.episodes = static_cast<int64_t>(episodes);
  ASSIGN_OR_RETURN(m.seed, r.U64());
  ASSIGN_OR_RETURN(m.actor, Mlp::Load(r));
  if (m.actor.input_size() != kTemporlStateSize || m.actor.output_size() != 1)
    return r.Error("actor has the wrong input or output size");
  std::vector<size_t> sizes;
  std::vector<double*> blocks = m.actor.ParamBlocks(&sizes);
  for (size_t b = 0; b < blocks.size(); ++b)
    for (size_t i = 0; i < sizes[b]; ++i)
      if (!std::isfinite(blocks[b][i])) return r.Error("actor has a non-finite weight");
  if (version >= 2) {
    for (auto* table : {&m.correction.layer_offset, &m.correction.pair_offset}) {
      ASSIGN_OR_RETURN(uint32_t count, r.U32());
      if (count > kMaxCorrectionEntries) return r.Error("bad correction count");
      for (uint32_t i = 0; i < count; ++i) {
        ASSIGN_OR_RETURN(std::string key, r.Str(1 << 12));
        ASSIGN_OR_RETURN(double offset, r.F64());
        if (!(std::abs(offset) <= 50)) return r.Error("bad correction offset for " + key);
        (*table)[key] = offset;
      }
    }
    ASSIGN_OR_RETURN(uint64_t updates, r.U64());
    if (updates > (uint64_t{1} << 40)) return r.Error("bad fine-tuning count");
    m.correction.updates = static_cast<int64_t>(updates);
    ASSIGN_OR_RETURN(m.correction.measured_on, r.Str(1 << 16));
  }
  if (r.remaining() != 0) return r.Error("trailing bytes");
  return m;
}

double TemporlRatio(const TemporlModel& model, const TemporlState& state) {
  const double mu = model.actor.Predict(Column(state))(0, 0);
  return Sigmoid(std::clamp(mu, -12.0, 12.0));
}

TemporlChooser GreedyChooser(const TemporlModel& model) {
  return [&model](const TemporlState& s) { return TemporlRatio(model, s); };
}

double FinishTogetherRatio(const TemporlState& s) {
  // In units of S (both devices' full time): s[0] the own device's full
  // time, s[1] / s[2] the overheads, s[3] the own device's start minus the
  // other's. Own part: start + overhead + r * work; other part the same with
  // 1 - r; equal when r is below.
  const double work_d = s[0] - s[1], work_o = 1 - s[0] - s[2];
  const double r = (work_o + s[2] - s[1] - s[3]) / std::max(work_d + work_o, 1e-6);
  return std::clamp(r, 0.01, 0.99);
}

double PeakRatio(const CostModel& model, const std::string& device, const std::string& other) {
  const int d = model.DeviceIndex(device), o = model.DeviceIndex(other);
  if (d < 0 || o < 0) return 0.5;
  const double pd = model.profile().devices[static_cast<size_t>(d)].peak_gflops;
  const double po = model.profile().devices[static_cast<size_t>(o)].peak_gflops;
  return pd + po > 0 ? pd / (pd + po) : 0.5;
}

std::string TemporlLayerKey(const std::string& device, const std::string& other,
                            const std::string& node, int64_t extent, SliceAxis axis) {
  const char* unit = axis == SliceAxis::kBatch ? "/N=" : axis == SliceAxis::kRows ? "/H=" : "/C=";
  return device + "+" + other + "/" + node + unit + std::to_string(extent);
}

namespace {
// Distinct split points of `extent` along `axis` (0 when it cannot split).
int64_t SplitPoints(int64_t extent, SliceAxis axis) {
  if (extent < 2) return 0;
  const int64_t lo = SliceSplitIndex(extent, 0.0, axis), hi = SliceSplitIndex(extent, 1.0, axis);
  return (hi - lo) / SliceSplitStep(extent, axis) + 1;
}

// How a split along `axis` is rounded, for plan reasons.
std::string SplitUnit(const SimGraph& g, int n, SliceAxis axis) {
  const std::string of = " of " + std::to_string(g.SliceExtentOf(n, axis));
  if (axis == SliceAxis::kRows) return "whole rows" + of;
  if (axis == SliceAxis::kBatch) return "whole batch items" + of;
  return "channels in blocks of " + std::to_string(kSliceChannelMultiple) + of;
}
}  // namespace

SliceAxis FinestSplitAxis(const SimGraph& g, int n) {
  return SplitPoints(g.SliceExtentOf(n, SliceAxis::kRows), SliceAxis::kRows) >
                 SplitPoints(g.SliceExtentOf(n, SliceAxis::kOutputChannels),
                             SliceAxis::kOutputChannels)
             ? SliceAxis::kRows
             : SliceAxis::kOutputChannels;
}

double MeasuredBalancedShare(const SplitLayerMetrics& m) {
  const double r = std::clamp(m.share, 1e-3, 1 - 1e-3);
  const double t_a = m.part_a_us / r, t_b = m.part_b_us / (1 - r);
  const double s_a = m.finish_a_us - m.part_a_us, s_b = m.finish_b_us - m.part_b_us;
  if (!(t_a + t_b > 0)) return r;
  return std::clamp((s_b - s_a + t_b) / (t_a + t_b), 0.02, 0.98);
}

int FineTuneTemporl(std::span<const TemporlMeasuredLayer> layers,
                    const TemporlFineTuneOptions& options, TemporlCorrection& correction) {
  int updated = 0;
  for (const TemporlMeasuredLayer& l : layers) {
    if (!(l.measured.part_a_us > 0 && l.measured.part_b_us > 0)) continue;
    const double ran = Logit(l.ran_ratio);
    const double next = ran + options.step * (Logit(MeasuredBalancedShare(l.measured)) - ran);
    correction.layer_offset[l.key] =
        std::clamp(next - Logit(l.agent_ratio), -options.max_offset, options.max_offset);
    ++updated;
  }
  // Pair offsets: the mean over the pair's measured layers (for layers not measured).
  std::map<std::string, std::pair<double, int>> sums;
  for (const auto& [key, offset] : correction.layer_offset) {
    auto& s = sums[key.substr(0, key.find('/'))];
    s.first += offset;
    s.second += 1;
  }
  for (const auto& [pair, s] : sums) correction.pair_offset[pair] = s.first / s.second;
  if (updated > 0) ++correction.updates;
  return updated;
}

// ---- environment ----------------------------------------------------------------

StatusOr<std::unique_ptr<TemporlEnv>> TemporlEnv::Create(const Graph& graph,
                                                         const PlacementContext& context,
                                                         const Plan& base_plan) {
  std::unique_ptr<TemporlEnv> env(new TemporlEnv());
  ASSIGN_OR_RETURN(env->space_, BuildPlacementSpace(graph, context, "temporl"));
  if (env->space_.num_devices < 2)
    return FailedPrecondition("temporl: needs two devices to split layers between");
  ASSIGN_OR_RETURN(env->base_, CompilePlacement(env->space_.sim, base_plan));
  const SimGraph& g = env->space_.sim;
  env->sim_ = std::make_unique<Simulator>(g);
  env->producer_.assign(static_cast<size_t>(g.num_values), -1);
  for (int n = 0; n < g.num_nodes; ++n)
    for (int32_t i = g.out_begin[n]; i < g.out_begin[n + 1]; ++i)
      env->producer_[static_cast<size_t>(g.out_values[static_cast<size_t>(i)])] = n;
  const size_t D = static_cast<size_t>(g.num_devices);
  for (int n = 0; n < g.num_nodes; ++n) {
    if (!env->space_.Sliceable(n)) continue;
    const SimPlacement& p = env->base_[static_cast<size_t>(n)];
    const int main = p.device;
    int other = p.other_device;
    if (other < 0) {
      // The allowed partner that runs the whole layer fastest.
      double best = 0;
      for (int o = 0; o < g.num_devices; ++o) {
        if (o == main || !env->space_.Allowed(n, o)) continue;
        const size_t k = static_cast<size_t>(n) * D + static_cast<size_t>(o);
        const double t = g.overhead_us[k] + g.work_us[k];
        if (other < 0 || t < best) other = o, best = t;
      }
    }
    if (other < 0 || !env->space_.Allowed(n, main)) continue;
    const SliceAxis axis =
        p.other_device >= 0 && p.axis == SliceAxis::kBatch ? p.axis : FinestSplitAxis(g, n);
    // A layer the base left whole is the agent's only when splitting it can
    // pay: split at the cost model's balanced ratio, it lowers the simulated
    // latency (else every ratio would be judged against a split not worth
    // making, and the agent would learn "all on one side").
    if (p.other_device < 0) {
      std::vector<SimPlacement>& probe = env->base_;
      const SimPlacement keep = probe[static_cast<size_t>(n)];
      SimPlacement split;
      split.device = static_cast<int16_t>(main);
      split.other_device = static_cast<int16_t>(other);
      split.axis = axis;
      split.ratio = static_cast<float>(
          std::clamp(BalancedSliceRatio(env->space_, probe, n, main, other), 1e-3, 1 - 1e-3));
      const double before = env->sim_->Run(probe).latency_us;
      probe[static_cast<size_t>(n)] = split;
      const double after = env->sim_->Run(probe).latency_us;
      probe[static_cast<size_t>(n)] = keep;
      if (!(after < before * (1 - 1e-3))) continue;
    }
    env->layers_.push_back(n);
    env->main_.push_back(main);
    env->other_.push_back(other);
    env->axis_.push_back(axis);
  }
  env->base_latency_us_ = env->sim_->Run(env->base_).latency_us;
  return env;
}

TemporlState TemporlEnv::State(int n, int d, int o, SliceAxis axis,
                               std::span<const SimPlacement> placement, const SimResult& r) const {
  const SimGraph& g = space_.sim;
  const size_t D = static_cast<size_t>(g.num_devices);
  const size_t kd = static_cast<size_t>(n) * D + static_cast<size_t>(d);
  const size_t ko = static_cast<size_t>(n) * D + static_cast<size_t>(o);
  const double full_d = g.overhead_us[kd] + g.work_us[kd];
  const double full_o = g.overhead_us[ko] + g.work_us[ko];
  const double S = std::max(full_d + full_o, 1e-3);
  // When each device is free: the last end of a kernel of an earlier node there.
  double free_d = 0, free_o = 0;
  for (int m = 0; m < n; ++m) {
    const SimNodeTime& t = r.nodes[static_cast<size_t>(m)];
    const double main_end = t.other_device >= 0 ? t.done_us : t.end_us;
    for (auto [dev, free] : {std::pair{d, &free_d}, std::pair{o, &free_o}}) {
      if (t.device == dev) *free = std::max(*free, main_end);
      if (t.other_device == dev) *free = std::max(*free, t.other_end_us);
    }
  }
  // When the inputs are there: made (done) on their home, then copied over.
  double made = 0, ready_d = 0, ready_o = 0;
  for (int32_t i = g.in_begin[n]; i < g.in_begin[n + 1]; ++i) {
    const int v = g.in_values[static_cast<size_t>(i)];
    const int m = producer_[static_cast<size_t>(v)];
    const double done = m < 0 ? 0 : r.nodes[static_cast<size_t>(m)].done_us;
    const int home = m < 0 ? 0 : placement[static_cast<size_t>(m)].device;
    const double bytes = g.value_bytes[static_cast<size_t>(v)];
    made = std::max(made, done);
    ready_d = std::max(ready_d, done + space_.CopyUs(home, d, bytes));
    ready_o = std::max(ready_o, done + space_.CopyUs(home, o, bytes));
  }
  double out_bytes = 0;
  for (int32_t i = g.out_begin[n]; i < g.out_begin[n + 1]; ++i)
    out_bytes += g.value_bytes[static_cast<size_t>(g.out_values[static_cast<size_t>(i)])];
  const double start_d = std::max(free_d, ready_d), start_o = std::max(free_o, ready_o);
  const double balanced = BalancedSliceRatio(space_, placement, n, d, o);
  TemporlState s{};
  s[0] = full_d / S;
  s[1] = g.overhead_us[kd] / S;
  s[2] = g.overhead_us[ko] / S;
  s[3] = std::clamp((start_d - start_o) / S, -4.0, 4.0);
  s[4] = std::clamp(std::max(0.0, free_d - ready_d) / S, 0.0, 4.0);
  s[5] = std::clamp(std::max(0.0, free_o - ready_o) / S, 0.0, 4.0);
  s[6] = std::clamp((ready_o - made) / S, 0.0, 4.0);
  s[7] = std::clamp((ready_d - made) / S, 0.0, 4.0);
  s[8] = std::clamp(space_.CopyUs(o, d, out_bytes) / S, 0.0, 4.0);
  s[9] = std::clamp(g.join_us[kd] / S, 0.0, 4.0);
  s[10] = std::log10(S) / 4;
  s[11] = d == 0 ? 1.0 : 0.0;
  s[12] = balanced;
  // The split's granularity: one split step over the extent.
  const int64_t points = SplitPoints(g.SliceExtentOf(n, axis), axis);
  s[13] = 1.0 / static_cast<double>(points + 1);
  return s;
}

SplitLayerMetrics TemporlEnv::LayerMetrics(int n, std::span<const SimPlacement> placement,
                                           const SimResult& r) const {
  const SimGraph& g = space_.sim;
  const SimPlacement& p = placement[static_cast<size_t>(n)];
  const SimNodeTime& t = r.nodes[static_cast<size_t>(n)];
  SplitLayerTimeline layer;
  layer.node = g.node_names[static_cast<size_t>(n)];
  layer.share = SliceShare(g, n, p);
  layer.part_a = {t.start_us, t.end_us};
  layer.part_b = {t.other_start_us, t.other_end_us};
  for (const SimCopy& c : r.copy_log)
    if (c.node == n) layer.copies.push_back({c.start_us, c.end_us});
  return MeasureSplitLayer(layer);
}

std::string TemporlEnv::LayerKey(size_t k) const {
  const SimGraph& g = space_.sim;
  const int n = layers_[k];
  return TemporlLayerKey(g.devices[static_cast<size_t>(main_[k])],
                         g.devices[static_cast<size_t>(other_[k])],
                         g.node_names[static_cast<size_t>(n)], g.SliceExtentOf(n, axis_[k]),
                         axis_[k]);
}

std::string TemporlEnv::PairKey(size_t k) const {
  const SimGraph& g = space_.sim;
  return g.devices[static_cast<size_t>(main_[k])] + "+" + g.devices[static_cast<size_t>(other_[k])];
}

TemporlPass TemporlEnv::Run(const TemporlChooser& choose, bool guard,
                            const TemporlRewardWeights& weights,
                            const TemporlCorrection* correction) {
  const SimGraph& g = space_.sim;
  const size_t D = static_cast<size_t>(g.num_devices);
  TemporlPass pass;
  pass.placement = base_;
  const SimResult& r = sim_->Run(pass.placement, /*timeline=*/true);
  double latency = r.latency_us;
  pass.base_latency_us = latency;
  for (size_t k = 0; k < layers_.size(); ++k) {
    const int n = layers_[k];
    TemporlStep step;
    step.node = n;
    step.state = State(n, main_[k], other_[k], axis_[k], pass.placement, r);
    step.agent_ratio = std::clamp(choose(step.state), 1e-4, 1 - 1e-4);
    step.asked_ratio = step.agent_ratio;
    if (correction != nullptr && !correction->empty()) {
      double offset = 0;
      if (auto it = correction->layer_offset.find(LayerKey(k)); it != correction->layer_offset.end()) {
        offset = it->second;
        step.measured = true;
      } else if (auto jt = correction->pair_offset.find(PairKey(k));
                 jt != correction->pair_offset.end()) {
        offset = jt->second;
        step.pair_corrected = true;
      } else if (auto rt = correction->pair_offset.find(
                     g.devices[static_cast<size_t>(other_[k])] + "+" +
                     g.devices[static_cast<size_t>(main_[k])]);
                 rt != correction->pair_offset.end()) {
        // The pair the other way round: the share of this side is 1 - that
        // side's, so the logit offset changes sign.
        offset = -rt->second;
        step.pair_corrected = true;
      }
      step.asked_ratio = std::clamp(Sigmoid(Logit(step.agent_ratio) + offset), 1e-4, 1 - 1e-4);
    }
    SimPlacement split;
    split.device = static_cast<int16_t>(main_[k]);
    split.other_device = static_cast<int16_t>(other_[k]);
    split.axis = axis_[k];
    split.ratio = static_cast<float>(step.asked_ratio);
    const SimPlacement before = pass.placement[static_cast<size_t>(n)];
    pass.placement[static_cast<size_t>(n)] = split;
    sim_->Run(pass.placement, true);
    const SplitLayerMetrics m = LayerMetrics(n, pass.placement, r);
    const size_t kd = static_cast<size_t>(n) * D + static_cast<size_t>(main_[k]);
    const size_t ko = static_cast<size_t>(n) * D + static_cast<size_t>(other_[k]);
    step.scale_us = std::max(g.overhead_us[kd] + g.work_us[kd] + g.overhead_us[ko] + g.work_us[ko],
                             1e-3);
    step.share = m.share;
    step.gap_us = m.gap_us;
    step.hidden_share = m.hidden_share;
    step.latency_delta_us = r.latency_us - latency;
    step.reward = -weights.gap * m.gap_us / step.scale_us +
                  weights.hidden * (m.hidden_share >= 0 ? m.hidden_share - 1 : 0.0) -
                  weights.latency * std::clamp(step.latency_delta_us / step.scale_us, -2.0, 2.0);
    if (guard && !step.measured && !step.pair_corrected && r.latency_us > latency * (1 + 1e-9)) {
      step.kept = false;
      pass.placement[static_cast<size_t>(n)] = before;
      sim_->Run(pass.placement, true);
    }
    latency = r.latency_us;
    pass.steps.push_back(step);
  }
  pass.latency_us = latency;
  return pass;
}

std::vector<SimPlacement> TemporlEnv::WithRatios(
    std::span<const SimPlacement> placement,
    const std::function<double(int, int, int)>& ratio) const {
  std::vector<SimPlacement> out(placement.begin(), placement.end());
  for (size_t n = 0; n < out.size(); ++n)
    if (out[n].other_device >= 0)
      out[n].ratio = static_cast<float>(
          std::clamp(ratio(static_cast<int>(n), out[n].device, out[n].other_device), 1e-4, 1 - 1e-4));
  return out;
}

std::vector<SplitLayerMetrics> TemporlEnv::Metrics(std::span<const SimPlacement> placement,
                                                   double* latency_us) {
  const SimResult& r = sim_->Run(placement, true);
  if (latency_us != nullptr) *latency_us = r.latency_us;
  return SplitMetricsFromSim(space_.sim, placement, r);
}

Plan TemporlEnv::ToPlan(const Plan& base_plan, const TemporlPass& pass, const std::string& policy,
                        const std::string& base_name) const {
  const SimGraph& g = space_.sim;
  Plan plan = base_plan;
  plan.policy = policy;
  const std::string tail = " (simulated latency " + FixedDigits(pass.base_latency_us / 1e3, 3) +
                           " ms with " + base_name + "'s plan, " +
                           FixedDigits(pass.latency_us / 1e3, 3) + " ms with temporl's splits)";
  for (NodePlan& p : plan.nodes) {
    p.reason = "temporl: " + base_name + " placed it" + (p.reason.empty() ? "" : ": " + p.reason);
  }
  for (const TemporlStep& s : pass.steps) {
    NodePlan& np = plan.nodes[static_cast<size_t>(s.node)];
    const SimPlacement& p = pass.placement[static_cast<size_t>(s.node)];
    const std::string asked = "agent ratio " + FixedDigits(s.agent_ratio, 3) +
                              (s.asked_ratio != s.agent_ratio
                                   ? std::string(s.measured ? ", measured correction"
                                                            : ", device pair's measured correction") +
                                         " -> " + FixedDigits(s.asked_ratio, 3)
                                   : std::string()) +
                              " -> " +
                              FixedDigits(s.share, 3) + " as run (" + SplitUnit(g, s.node, p.axis) +
                              ")";
    if (!s.kept) {
      np.reason = "temporl: " + asked + " raised simulated latency by " +
                  FixedDigits(s.latency_delta_us, 1) + " us; kept " + base_name + "'s placement" +
                  tail;
      continue;
    }
    np.device = g.devices[static_cast<size_t>(p.device)];
    SliceSpec slice;
    slice.axis = p.axis;
    slice.other_device = g.devices[static_cast<size_t>(p.other_device)];
    slice.ratio = SliceShare(g, s.node, p);
    np.slice = slice;
    np.predicted_ms = std::max(space_.MainUs(s.node, p), space_.OtherUs(s.node, p)) / 1e3;
    np.reason = "temporl: " + asked + "; simulated gap " + FixedDigits(s.gap_us, 1) + " us" +
                (s.hidden_share >= 0
                     ? ", copies " + FixedDigits(100 * s.hidden_share, 0) + "% hidden"
                     : "") +
                tail;
  }
  return plan;
}

// ---- training --------------------------------------------------------------------

namespace {

struct Critic {
  Mlp net;
  Adam adam;
};

}  // namespace

std::vector<TemporlCurvePoint> TrainTemporl(std::span<TemporlEnv* const> train,
                                            std::span<TemporlEnv* const> eval,
                                            const TemporlTrainOptions& options, TemporlModel& model,
                                            const std::function<void(const TemporlCurvePoint&)>&
                                                on_point) {
  std::vector<TemporlCurvePoint> curve;
  model.weights = options.weights;
  model.seed = options.seed;
  Adam actor_adam(model.actor, {.learning_rate = options.learning_rate, .max_grad_norm = 1.0});
  MlpSpec critic_spec{.sizes = {kTemporlStateSize, options.hidden, options.hidden, 1},
                      .hidden = MlpActivation::kTanh};
  Critic critic{Mlp(critic_spec, options.seed ^ 0x5eed), {}};
  critic.adam = Adam(critic.net, {.learning_rate = options.learning_rate, .max_grad_norm = 1.0});
  std::mt19937_64 rng(options.seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<size_t> order(train.size());
  std::iota(order.begin(), order.end(), 0);
  // Transitions since the last gradient step: state, drawn logit, its sigma, reward.
  std::vector<TemporlState> states;
  std::vector<double> drawn, sigmas, batch_rewards;

  auto evaluate = [&](TemporlCurvePoint& point) {
    std::vector<double> log_gap, log_latency;
    for (TemporlEnv* env : eval) {
      // Without the guard: the agent's own ratios, not the base's kept ones.
      const TemporlPass pass = env->Run(GreedyChooser(model), false, options.weights);
      double gap = 0, half = 0;
      for (const SplitLayerMetrics& m : env->Metrics(pass.placement)) gap += m.gap_us;
      for (const SplitLayerMetrics& m :
           env->Metrics(env->WithRatios(pass.placement, [](int, int, int) { return 0.5; })))
        half += m.gap_us;
      if (half > 0) log_gap.push_back(std::log(std::max(gap, 1e-3) / half));
      log_latency.push_back(std::log(pass.latency_us / pass.base_latency_us));
    }
    point.eval_gap_vs_half = log_gap.empty() ? 1.0 : std::exp(MeanOf(log_gap));
    point.eval_latency_vs_base = log_latency.empty() ? 1.0 : std::exp(MeanOf(log_latency));
  };
  TemporlCurvePoint start;
  evaluate(start);
  curve.push_back(start);
  if (on_point) on_point(start);

  for (int e = 0; e < options.episodes && !train.empty(); ++e) {
    if (e % static_cast<int>(train.size()) == 0) std::shuffle(order.begin(), order.end(), rng);
    TemporlEnv& env = *train[order[static_cast<size_t>(e) % train.size()]];
    const double progress = options.episodes > 1 ? static_cast<double>(e) / (options.episodes - 1) : 1;
    const double sigma =
        options.sigma_start * std::pow(options.sigma_end / options.sigma_start, progress);
    const TemporlPass pass = env.Run(
        [&](const TemporlState& s) {
          const double mu = model.actor.Predict(Column(s))(0, 0);
          const double u = mu + sigma * normal(rng);
          drawn.push_back(u);
          sigmas.push_back(sigma);
          return Sigmoid(std::clamp(u, -12.0, 12.0));
        },
        true, options.weights);
    TemporlCurvePoint point;
    point.episode = e + 1;
    std::vector<double> gaps, rewards;
    for (size_t i = 0; i < pass.steps.size(); ++i) {
      const TemporlStep& s = pass.steps[i];
      states.push_back(s.state);
      batch_rewards.push_back(s.reward);
      rewards.push_back(s.reward);
      gaps.push_back(s.gap_us / s.scale_us);
    }
    point.train_reward = MeanOf(rewards);
    point.train_gap_norm = MeanOf(gaps);
    const Eigen::Index B = static_cast<Eigen::Index>(states.size());
    if (B > 0 && ((e + 1) % std::max(1, options.batch_episodes) == 0 || e + 1 == options.episodes)) {
      Eigen::MatrixXd x(kTemporlStateSize, B), reward(1, B);
      for (Eigen::Index b = 0; b < B; ++b) {
        x.col(b) = Column(states[static_cast<size_t>(b)]);
        reward(0, b) = batch_rewards[static_cast<size_t>(b)];
      }
      // Critic: the expected reward of a state (the baseline).
      const Eigen::MatrixXd value = critic.net.Forward(x);
      Eigen::MatrixXd advantage = reward - value;
      critic.net.ZeroGrad();
      critic.net.Backward(2.0 * (value - reward) / static_cast<double>(B));
      critic.adam.Step(critic.net);
      // Actor: grad of -A log N(u; mu, sigma) w.r.t. mu is -A (u - mu) / sigma^2.
      const double spread = std::sqrt(advantage.array().square().mean()) + 1e-6;
      advantage /= spread;
      const Eigen::MatrixXd& mu = model.actor.Forward(x);
      Eigen::MatrixXd grad(1, B);
      for (Eigen::Index b = 0; b < B; ++b) {
        const double sg = sigmas[static_cast<size_t>(b)];
        grad(0, b) = -advantage(0, b) * (drawn[static_cast<size_t>(b)] - mu(0, b)) / (sg * sg) /
                     static_cast<double>(B);
      }
      model.actor.ZeroGrad();
      model.actor.Backward(grad);
      actor_adam.Step(model.actor);
      states.clear();
      batch_rewards.clear();
      drawn.clear();
      sigmas.clear();
    }
    ++model.episodes;
    if ((e + 1) % std::max(1, options.eval_every) == 0 || e + 1 == options.episodes)
      evaluate(point);
    curve.push_back(point);
    if (on_point) on_point(point);
  }
  return curve;
}

bool SplitCanMove(const SimGraph& g, int node, SliceAxis axis) {
  return SplitPoints(g.SliceExtentOf(node, axis), axis) > 1;
}

TemporlComparison CompareTemporl(TemporlEnv& env, const TemporlModel& model, const CostModel& cost,
                                 bool guard, const TemporlChooser& chooser) {
  TemporlComparison c;
  const TemporlPass pass = env.Run(chooser ? chooser : GreedyChooser(model), guard, model.weights,
                                   chooser ? nullptr : &model.correction);
  const SimGraph& g = env.space().sim;
  c.base_latency_us = pass.base_latency_us;
  // Metrics come in graph order of the split nodes, the same for all three.
  std::vector<bool> movable;
  for (size_t n = 0; n < pass.placement.size(); ++n)
    if (pass.placement[n].other_device >= 0)
      movable.push_back(SplitCanMove(g, static_cast<int>(n), pass.placement[n].axis));
  auto sum = [&](const std::vector<SplitLayerMetrics>& ms, double& gap, double& hidden,
                 double& movable_gap) {
    SplitSummary s = SummarizeSplits(ms);
    gap = s.mean_gap_us * s.layers;
    hidden = s.hidden_share;
    movable_gap = 0;
    for (size_t i = 0; i < ms.size() && i < movable.size(); ++i)
      if (movable[i]) movable_gap += ms[i].gap_us;
    return s.layers;
  };
  c.layers = sum(env.Metrics(pass.placement, &c.latency_us), c.gap_us, c.hidden_share,
                 c.movable_gap_us);
  c.movable_layers = static_cast<int>(std::count(movable.begin(), movable.end(), true));
  sum(env.Metrics(env.WithRatios(pass.placement, [](int, int, int) { return 0.5; }),
                  &c.half_latency_us),
      c.half_gap_us, c.half_hidden_share, c.movable_half_gap_us);
  sum(env.Metrics(env.WithRatios(pass.placement,
                                 [&](int, int d, int o) {
                                   return PeakRatio(cost, g.devices[static_cast<size_t>(d)],
                                                    g.devices[static_cast<size_t>(o)]);
                                 }),
                  &c.peak_latency_us),
      c.peak_gap_us, c.peak_hidden_share, c.movable_peak_gap_us);
  return c;
}

// ---- policy ----------------------------------------------------------------------

StatusOr<Plan> TemporlPolicy::Place(const Graph& graph, const PlacementContext& context) const {
  RETURN_IF_ERROR(load_status_);
  if (!model_)
    return FailedPrecondition(
        "temporl: no trained agent (set temporl.model to a file from `braid train --policy "
        "temporl`, e.g. `braid plan --policy temporl --policy-file temporl.bin`)");
  if (context.cost_model == nullptr)
    return FailedPrecondition("temporl: needs a cost model (a device profile)");
  if (context.devices.size() < 2)
    return FailedPrecondition("temporl: needs two devices to split layers between");
  if (options_.base == "temporl" || !base_policies_)
    return InvalidArgument("temporl: temporl.base must name another policy, got '" +
                           options_.base + "'");
  ASSIGN_OR_RETURN(Plan base, MakePlan(*base_policies_, options_.base, graph, context));
  ASSIGN_OR_RETURN(std::unique_ptr<TemporlEnv> env, TemporlEnv::Create(graph, context, base));
  const TemporlPass pass =
      env->Run(GreedyChooser(*model_), options_.guard, model_->weights, &model_->correction);
  return env->ToPlan(base, pass, name(), options_.base);
}

void RegisterTemporlPolicy(PolicyRegistry& registry, const TemporlOptions& options,
                           std::shared_ptr<const PolicyRegistry> base_policies) {
  registry.Register("temporl", [options, base_policies]() -> std::unique_ptr<Policy> {
    if (options.model_file.empty())
      return std::make_unique<TemporlPolicy>(nullptr, options, base_policies);
    StatusOr<TemporlModel> model = LoadTemporlModel(options.model_file);
    if (!model.ok())
      return std::make_unique<TemporlPolicy>(
          nullptr, options, base_policies, InvalidArgument("temporl: " + model.status().ToString()));
    return std::make_unique<TemporlPolicy>(
        std::make_shared<const TemporlModel>(std::move(*model)), options, base_policies);
  });
}

}  // namespace braid
