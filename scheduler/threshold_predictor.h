// SparOA's threshold predictor: reads a model's operator sequence (per-op
// FLOPs, bytes, intensity, sparsity, predicted CPU/GPU speed ratio) and the
// device profile, and predicts the sparsity threshold S* and intensity
// threshold I* for the static-threshold policy (scheduler/threshold_policy.h).
//
// The learner is k-nearest-neighbours over standardised graph+profile
// features, averaging the neighbours' *regret surfaces* (simulated cost of
// every grid threshold pair relative to that sample's best) and taking the
// arg-min. Why not the paper's Transformer-LSTM or an MLP regressor: the
// target is the arg-min of a piecewise-constant surface with wide ties, so
// regressing (S*, I*) averages between modes; with a few hundred training
// samples k-NN over surfaces is simpler, exact on the training set and
// degrades gracefully. MlpThresholdPredictor below is the MLP baseline it
// is compared with on held-out pairs (`braid train` prints both;
// docs/scheduler.md has the figures).
//
//   braid::ThresholdPredictor predictor;
//   for (...) {   // per (graph, profile) training pair
//     ASSIGN_OR_RETURN(braid::ThresholdGridResult grid, braid::GridSearchThresholds(graph, ctx));
//     predictor.AddSample(braid::ThresholdFeatures(graph, ctx), grid.cost);
//   }
//   predictor.Fit();
//   braid::ThresholdPair t = predictor.Predict(braid::ThresholdFeatures(graph2, ctx2));
#ifndef BRAID_SCHEDULER_THRESHOLD_PREDICTOR_H_
#define BRAID_SCHEDULER_THRESHOLD_PREDICTOR_H_

#include <span>
#include <vector>

#include "graph/ir.h"
#include "scheduler/mlp.h"
#include "scheduler/policy.h"
#include "scheduler/simulator.h"
#include "scheduler/threshold_policy.h"

namespace braid {

struct ThresholdPair {
  double sparsity = 0.5;
  double intensity = 8.0;
};

// The grid searched: sparsity thresholds x intensity thresholds (FLOP/B;
// the last, 1e9, sends no op to the accelerator by intensity).
std::span<const double> SparsityThresholdGrid();
std::span<const double> IntensityThresholdGrid();
int ThresholdGridSize();
ThresholdPair ThresholdGridPair(int cell);  // cell = s * |intensity grid| + i

inline constexpr int kThresholdFeatureCount = 24;
// Graph features over compute ops (flops > 0): count, total FLOPs, quantiles
// of log FLOPs / log bytes / log intensity / sparsity, FLOP shares of op
// classes, quantiles of the predicted CPU-vs-accelerator time ratio; device
// features: accelerator/CPU peak and bandwidth ratios (log), launch overhead
// ratio, link mapped and link cost. Needs context.cost_model and >= 1 device.
StatusOr<std::vector<double>> ThresholdFeatures(const Graph& graph,
                                                const PlacementContext& context);

// Cost of a simulation result: latency / ref_latency + energy_weight *
// energy / ref_energy (dimensionless; energy_weight = 0: latency only).
struct CostScale {
  double ref_latency_us = 1, ref_energy_j = 1, energy_weight = 0;
  double Cost(const SimResult& r) const {
    return r.latency_us / ref_latency_us + energy_weight * r.energy_j / ref_energy_j;
  }
};

// The placement the threshold policy gives for `t`, compiled for `sim`.
StatusOr<std::vector<SimPlacement>> ThresholdPlacement(const Graph& graph,
                                                       const PlacementContext& context,
                                                       const SimGraph& sim, ThresholdPair t);

struct ThresholdGridResult {
  std::vector<double> cost;  // per grid cell, relative to the best cell (>= 1)
  int best_cell = 0;
  ThresholdPair best;
  double best_latency_us = 0;  // simulated
};
// Simulates the threshold plan of every grid pair. Ties go to the earlier
// cell (lower sparsity threshold, then lower intensity threshold).
StatusOr<ThresholdGridResult> GridSearchThresholds(const Graph& graph,
                                                   const PlacementContext& context,
                                                   double energy_weight = 0);

class ThresholdPredictor {
 public:
  // `relative_cost`: the sample's ThresholdGridResult::cost.
  Status AddSample(std::vector<double> features, std::vector<double> relative_cost);
  // Computes the feature standardisation. Needs >= 1 sample.
  Status Fit();
  bool fitted() const { return !mean_.empty(); }
  int num_samples() const { return static_cast<int>(features_.size()); }
  void set_k(int k) { k_ = k; }

  // Grid cells ranked by the k nearest samples' mean relative cost, best
  // first (at most `count`).
  std::vector<int> RankCells(std::span<const double> features, int count) const;
  ThresholdPair Predict(std::span<const double> features) const {
    return ThresholdGridPair(RankCells(features, 1).front());
  }

  void Save(BinaryWriter& out) const;
  static StatusOr<ThresholdPredictor> Load(BinaryReader& in);

 private:
  int k_ = 5;
  std::vector<std::vector<double>> features_, cost_;
  std::vector<double> mean_, scale_;
};

// The MLP baseline: a small net (features -> hidden -> tanh... -> one output
// per grid cell) regressing the log of each cell's relative cost on
// standardised features; the ranking is by predicted cost. It regresses the
// whole surface rather than (S*, I*) so it cannot average between modes.
// Seeded full-batch Adam with weight decay; deterministic for a seed.
struct MlpPredictorOptions {
  int hidden = 32;
  int epochs = 3000;
  double learning_rate = 3e-3;
  double weight_decay = 1e-3;  // L2 on every parameter (few samples)
  uint64_t seed = 1;
};
class MlpThresholdPredictor {
 public:
  Status AddSample(std::vector<double> features, std::vector<double> relative_cost);
  // Trains on the samples added so far; returns the final training loss.
  StatusOr<double> Fit(const MlpPredictorOptions& options = {});
  bool fitted() const { return fitted_; }
  std::vector<int> RankCells(std::span<const double> features, int count) const;

 private:
  std::vector<std::vector<double>> features_, cost_;
  std::vector<double> mean_, scale_;
  Mlp net_;
  bool fitted_ = false;
};

}  // namespace braid

#endif  // BRAID_SCHEDULER_THRESHOLD_PREDICTOR_H_
