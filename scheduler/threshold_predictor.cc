#include "scheduler/threshold_predictor.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "scheduler/cost_model.h"

namespace braid {
namespace {

constexpr double kSparsityGrid[] = {0.05, 0.25, 0.5, 0.75, 1.01};
constexpr double kIntensityGrid[] = {0, 0.5, 1, 2, 4, 8, 16, 32, 64, 128, 1e9};
constexpr int kNumIntensity = static_cast<int>(std::size(kIntensityGrid));
constexpr int kGridCells = static_cast<int>(std::size(kSparsityGrid)) * kNumIntensity;
constexpr uint32_t kMaxSamples = 1 << 20;

double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

double Mean(const std::vector<double>& v) {
  return v.empty() ? 0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

}  // namespace

std::span<const double> SparsityThresholdGrid() { return kSparsityGrid; }
std::span<const double> IntensityThresholdGrid() { return kIntensityGrid; }
int ThresholdGridSize() { return kGridCells; }
ThresholdPair ThresholdGridPair(int cell) {
  return {kSparsityGrid[cell / kNumIntensity], kIntensityGrid[cell % kNumIntensity]};
}

StatusOr<std::vector<double>> ThresholdFeatures(const Graph& graph,
                                                const PlacementContext& context) {
  if (context.cost_model == nullptr)
    return FailedPrecondition("threshold predictor: needs a cost model");
  if (context.devices.empty()) return InvalidArgument("threshold predictor: no devices");
  const CostModel& model = *context.cost_model;
  const int cpu = model.DeviceIndex(context.devices[0]);
  const int acc = context.devices.size() > 1 ? model.DeviceIndex(context.devices[1]) : -1;
  if (cpu < 0)
    return NotFound("threshold predictor: device " + context.devices[0] + " not in profile");
  std::vector<double> log_flops, log_bytes, log_intensity, sparsity, speed_ratio;
  double total_flops = 0, conv_flops = 0, depthwise_flops = 0, gemm_flops = 0;
  for (const Node& node : graph.nodes()) {
    const Annotation& a = node.annotation;
    if (!(a.flops > 0)) continue;
    log_flops.push_back(std::log10(a.flops));
    log_bytes.push_back(std::log10(std::max(a.bytes, 1.0)));
    log_intensity.push_back(std::log2(a.intensity + 1e-3));
    sparsity.push_back(RoutableSparsity(node, &graph));
    if (acc >= 0)
      speed_ratio.push_back(std::log(model.OpTimeUs(node, cpu) / model.OpTimeUs(node, acc)));
    total_flops += a.flops;
    const OpClass c = ClassifyOp(node);
    if (c == OpClass::kConv) conv_flops += a.flops;
    if (c == OpClass::kDepthwiseConv) depthwise_flops += a.flops;
    if (c == OpClass::kGemm) gemm_flops += a.flops;
  }
  const double flops_div = std::max(total_flops, 1.0);
  double frac_sparse = 0;
  for (double s : sparsity) frac_sparse += s >= 0.5 ? 1 : 0;
  if (!sparsity.empty()) frac_sparse /= static_cast<double>(sparsity.size());
  std::vector<double> f = {std::log10(1.0 + static_cast<double>(log_flops.size())),
                           std::log10(flops_div),
                           Quantile(log_flops, 0.1),
                           Quantile(log_flops, 0.5),
                           Quantile(log_flops, 0.9),
                           Mean(log_bytes),
                           Quantile(log_bytes, 0.5),
                           Quantile(log_intensity, 0.1),
                           Quantile(log_intensity, 0.5),
                           Quantile(log_intensity, 0.9),
                           Mean(log_intensity),
                           Mean(sparsity),
                           frac_sparse,
                           conv_flops / flops_div,
                           depthwise_flops / flops_div,
                           gemm_flops / flops_div,
                           Quantile(speed_ratio, 0.1),
                           Quantile(speed_ratio, 0.5),
                           Quantile(speed_ratio, 0.9)};
  if (acc >= 0) {
    const DeviceSpec& c = model.profile().devices[static_cast<size_t>(cpu)];
    const DeviceSpec& g = model.profile().devices[static_cast<size_t>(acc)];
    f.push_back(std::log(g.peak_gflops / c.peak_gflops));
    f.push_back(std::log(g.memory_bandwidth_gbps / c.memory_bandwidth_gbps));
    f.push_back(std::log((g.launch_overhead_us + 0.1) / (c.launch_overhead_us + 0.1)));
    f.push_back(model.Mapped(cpu, acc) ? 1.0 : 0.0);
    f.push_back(std::log1p(std::max(0.0, model.TransferUs(cpu, acc, 1 << 20))));
  } else {
    f.insert(f.end(), 5, 0.0);
  }
  return f;
}

StatusOr<std::vector<SimPlacement>> ThresholdPlacement(const Graph& graph,
                                                       const PlacementContext& context,
                                                       const SimGraph& sim, ThresholdPair t) {
  ThresholdOptions options;
  options.sparsity_threshold = std::min(1.0, t.sparsity);
  options.intensity_threshold = t.intensity;
  // A sparsity threshold above 1 means "sparsity never decides".
  if (t.sparsity > 1) options.sparsity_threshold = 1.0;
  ThresholdPolicy policy(options);
  PlacementContext no_model = context;
  no_model.cost_model = nullptr;  // skips predicted_ms: not needed here
  ASSIGN_OR_RETURN(Plan plan, policy.Place(graph, no_model));
  RETURN_IF_ERROR(ApplyDevicePins(graph, plan));
  return CompilePlacement(sim, plan);
}

StatusOr<ThresholdGridResult> GridSearchThresholds(const Graph& graph,
                                                   const PlacementContext& context,
                                                   double energy_weight) {
  if (context.cost_model == nullptr)
    return FailedPrecondition("threshold grid search: needs a cost model");
  ASSIGN_OR_RETURN(SimGraph sim, BuildSimGraph(graph, *context.cost_model, context.devices));
  Simulator simulator(sim);
  std::vector<double> latency(kGridCells), energy(kGridCells);
  for (int cell = 0; cell < kGridCells; ++cell) {
    ASSIGN_OR_RETURN(std::vector<SimPlacement> p,
                     ThresholdPlacement(graph, context, sim, ThresholdGridPair(cell)));
    const SimResult& r = simulator.Run(p);
    latency[static_cast<size_t>(cell)] = r.latency_us;
    energy[static_cast<size_t>(cell)] = r.energy_j;
  }
  CostScale scale{*std::min_element(latency.begin(), latency.end()),
                  std::max(1e-12, *std::min_element(energy.begin(), energy.end())), energy_weight};
  ThresholdGridResult out;
  out.cost.resize(kGridCells);
  for (int cell = 0; cell < kGridCells; ++cell) {
    SimResult r;
    r.latency_us = latency[static_cast<size_t>(cell)];
    r.energy_j = energy[static_cast<size_t>(cell)];
    out.cost[static_cast<size_t>(cell)] = scale.Cost(r);
    if (out.cost[static_cast<size_t>(cell)] <
        out.cost[static_cast<size_t>(out.best_cell)] * (1 - 1e-12))
      out.best_cell = cell;
  }
  const double best = out.cost[static_cast<size_t>(out.best_cell)];
  for (double& c : out.cost) c /= best;
  out.best = ThresholdGridPair(out.best_cell);
  out.best_latency_us = latency[static_cast<size_t>(out.best_cell)];
  return out;
}

Status ThresholdPredictor::AddSample(std::vector<double> features,
                                     std::vector<double> relative_cost) {
  if (features.size() != kThresholdFeatureCount)
    return InvalidArgument("threshold predictor: expected " +
                           std::to_string(kThresholdFeatureCount) + " features, got " +
                           std::to_string(features.size()));
  if (relative_cost.size() != static_cast<size_t>(kGridCells))
    return InvalidArgument("threshold predictor: cost surface has the wrong size");
  features_.push_back(std::move(features));
  cost_.push_back(std::move(relative_cost));
  mean_.clear();
  return Status();
}

Status ThresholdPredictor::Fit() {
  if (features_.empty()) return FailedPrecondition("threshold predictor: no samples");
  mean_.assign(kThresholdFeatureCount, 0);
  scale_.assign(kThresholdFeatureCount, 0);
  const double n = static_cast<double>(features_.size());
  for (const auto& f : features_)
    for (int j = 0; j < kThresholdFeatureCount; ++j)
      mean_[static_cast<size_t>(j)] += f[static_cast<size_t>(j)] / n;
  for (const auto& f : features_)
    for (int j = 0; j < kThresholdFeatureCount; ++j) {
      const double d = f[static_cast<size_t>(j)] - mean_[static_cast<size_t>(j)];
      scale_[static_cast<size_t>(j)] += d * d / n;
    }
  // Constant features get scale 1 so they never divide by zero.
  for (double& s : scale_) s = s > 1e-12 ? std::sqrt(s) : 1.0;
  return Status();
}

std::vector<int> ThresholdPredictor::RankCells(std::span<const double> features, int count) const {
  std::vector<int> cells(static_cast<size_t>(kGridCells));
  std::iota(cells.begin(), cells.end(), 0);
  if (!fitted() || features.size() != static_cast<size_t>(kThresholdFeatureCount)) {
    // Untrained: the threshold policy's defaults first (0.5, 8 FLOP/B).
    const int default_cell = 2 * kNumIntensity + 5;
    std::swap(cells[0], cells[static_cast<size_t>(default_cell)]);
    cells.resize(static_cast<size_t>(std::min(count, kGridCells)));
    return cells;
  }
  std::vector<std::pair<double, size_t>> dist;
  for (size_t s = 0; s < features_.size(); ++s) {
    double d = 0;
    for (size_t j = 0; j < features.size(); ++j) {
      const double z = (features[j] - features_[s][j]) / scale_[j];
      d += z * z;
    }
    dist.push_back({d, s});
  }
  const size_t k = std::min(static_cast<size_t>(std::max(k_, 1)), dist.size());
  std::partial_sort(dist.begin(), dist.begin() + static_cast<std::ptrdiff_t>(k), dist.end());
  std::vector<double> mean_cost(static_cast<size_t>(kGridCells), 0);
  // Inverse-distance weights, so an exact match dominates.
  double total_w = 0;
  for (size_t i = 0; i < k; ++i) {
    const double w = 1.0 / (1e-6 + std::sqrt(dist[i].first));
    total_w += w;
    for (int c = 0; c < kGridCells; ++c)
      mean_cost[static_cast<size_t>(c)] += w * cost_[dist[i].second][static_cast<size_t>(c)];
  }
  std::stable_sort(cells.begin(), cells.end(), [&](int a, int b) {
    return mean_cost[static_cast<size_t>(a)] < mean_cost[static_cast<size_t>(b)];
  });
  cells.resize(static_cast<size_t>(std::min(count, kGridCells)));
  (void)total_w;
  return cells;
}

void ThresholdPredictor::Save(BinaryWriter& out) const {
  out.U32(static_cast<uint32_t>(k_));
  out.U32(kThresholdFeatureCount);
  out.U32(static_cast<uint32_t>(kGridCells));
  out.U32(static_cast<uint32_t>(features_.size()));
  for (size_t s = 0; s < features_.size(); ++s) {
    out.F64s(features_[s].data(), features_[s].size());
    out.F64s(cost_[s].data(), cost_[s].size());
  }
}

StatusOr<ThresholdPredictor> ThresholdPredictor::Load(BinaryReader& in) {
  ThresholdPredictor p;
  ASSIGN_OR_RETURN(uint32_t k, in.U32());
  ASSIGN_OR_RETURN(uint32_t nf, in.U32());
  ASSIGN_OR_RETURN(uint32_t nc, in.U32());
  ASSIGN_OR_RETURN(uint32_t ns, in.U32());
  if (k == 0 || k > 1000) return in.Error("threshold predictor: k out of range");
  if (nf != kThresholdFeatureCount || nc != static_cast<uint32_t>(kGridCells))
    return in.Error("threshold predictor: feature or grid size differs from this build");
  if (ns > kMaxSamples || uint64_t{ns} * (nf + nc) > in.remaining() / sizeof(double))
    return in.Error("threshold predictor: truncated (" + std::to_string(ns) + " samples declared)");
  p.k_ = static_cast<int>(k);
  for (uint32_t s = 0; s < ns; ++s) {
    std::vector<double> f(nf), c(nc);
    RETURN_IF_ERROR(in.F64s(f.data(), f.size()));
    RETURN_IF_ERROR(in.F64s(c.data(), c.size()));
    p.features_.push_back(std::move(f));
    p.cost_.push_back(std::move(c));
  }
  if (ns > 0) RETURN_IF_ERROR(p.Fit());
  return p;
}

// ---- MlpThresholdPredictor ------------------------------------------------------

Status MlpThresholdPredictor::AddSample(std::vector<double> features,
                                        std::vector<double> relative_cost) {
  if (features.size() != kThresholdFeatureCount ||
      relative_cost.size() != static_cast<size_t>(kGridCells))
    return InvalidArgument("MLP threshold predictor: wrong feature or cost-surface size");
  features_.push_back(std::move(features));
  cost_.push_back(std::move(relative_cost));
  fitted_ = false;
  return Status();
}

StatusOr<double> MlpThresholdPredictor::Fit(const MlpPredictorOptions& options) {
  if (features_.empty()) return FailedPrecondition("MLP threshold predictor: no samples");
  if (options.hidden < 1 || options.epochs < 1)
    return InvalidArgument("MLP threshold predictor: hidden and epochs must be >= 1");
  const Eigen::Index n = static_cast<Eigen::Index>(features_.size());
  mean_.assign(kThresholdFeatureCount, 0);
  scale_.assign(kThresholdFeatureCount, 0);
  for (const auto& f : features_)
    for (size_t j = 0; j < f.size(); ++j) mean_[j] += f[j] / static_cast<double>(n);
  for (const auto& f : features_)
    for (size_t j = 0; j < f.size(); ++j)
      scale_[j] += (f[j] - mean_[j]) * (f[j] - mean_[j]) / static_cast<double>(n);
  for (double& v : scale_) v = v > 1e-12 ? std::sqrt(v) : 1.0;
  Eigen::MatrixXd x(kThresholdFeatureCount, n), y(kGridCells, n);
  for (Eigen::Index s = 0; s < n; ++s) {
    for (int j = 0; j < kThresholdFeatureCount; ++j)
      x(j, s) = (features_[static_cast<size_t>(s)][static_cast<size_t>(j)] -
                 mean_[static_cast<size_t>(j)]) /
                scale_[static_cast<size_t>(j)];
    // log relative cost, capped: the regions far from the optimum matter less.
    for (int c = 0; c < kGridCells; ++c)
      y(c, s) = std::min(std::log(std::max(cost_[static_cast<size_t>(s)][static_cast<size_t>(c)],
                                           1.0)),
                         1.0);
  }
  net_ = Mlp({.sizes = {kThresholdFeatureCount, options.hidden, options.hidden, kGridCells},
              .hidden = MlpActivation::kTanh},
             options.seed);
  Adam adam(net_, {.learning_rate = options.learning_rate, .max_grad_norm = 10});
  double loss = 0;
  for (int e = 0; e < options.epochs; ++e) {
    const Eigen::MatrixXd diff = net_.Forward(x) - y;
    loss = 0.5 * diff.squaredNorm() / static_cast<double>(n * kGridCells);
    net_.ZeroGrad();
    net_.Backward(diff / static_cast<double>(n * kGridCells));
    // Weight decay: add lambda * param to each gradient.
    std::vector<size_t> sizes;
    std::vector<double*> params = net_.ParamBlocks(&sizes);
    std::vector<double*> grads = net_.GradBlocks();
    for (size_t b = 0; b < params.size(); ++b)
      for (size_t i = 0; i < sizes[b]; ++i) grads[b][i] += options.weight_decay * params[b][i];
    adam.Step(net_);
  }
  fitted_ = true;
  return loss;
}

std::vector<int> MlpThresholdPredictor::RankCells(std::span<const double> features,
                                                  int count) const {
  std::vector<int> cells(static_cast<size_t>(kGridCells));
  std::iota(cells.begin(), cells.end(), 0);
  if (!fitted_ || features.size() != static_cast<size_t>(kThresholdFeatureCount)) {
    cells.resize(static_cast<size_t>(std::clamp(count, 0, kGridCells)));
    return cells;
  }
  Eigen::VectorXd x(kThresholdFeatureCount);
  for (int j = 0; j < kThresholdFeatureCount; ++j)
    x(j) = (features[static_cast<size_t>(j)] - mean_[static_cast<size_t>(j)]) /
           scale_[static_cast<size_t>(j)];
  const Eigen::VectorXd predicted = net_.Predict(x).col(0);
  std::stable_sort(cells.begin(), cells.end(),
                   [&](int a, int b) { return predicted(a) < predicted(b); });
  cells.resize(static_cast<size_t>(std::clamp(count, 0, kGridCells)));
  return cells;
}

}  // namespace braid
