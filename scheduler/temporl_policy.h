// The `temporl` policy (TempoRL, docs/scheduler.md): a learned agent picks
// the split ratio of each sliceable layer, continuously, so that the layer's
// two parts finish together (the timing gap) and its copies hide behind its
// compute, without raising end-to-end latency. The devices come from a base
// policy (default partition); the agent only decides how each sliceable
// layer is shared between its device and a second one.
//
//   ASSIGN_OR_RETURN(braid::TemporlModel model, braid::LoadTemporlModel("temporl.bin"));
//   ASSIGN_OR_RETURN(std::unique_ptr<braid::TemporlEnv> env,
//                    braid::TemporlEnv::Create(graph, ctx, base_plan));
//   braid::TemporlPass pass = env->Run(braid::GreedyChooser(model), /*guard=*/true);
//   braid::Plan plan = env->ToPlan(graph, base_plan, pass, "temporl");
//
// Agent: a Gaussian policy on the split ratio's logit (mean from an MLP,
// sigmoid to (0, 1)) trained by REINFORCE with a learned baseline (critic),
// one decision per layer (gamma = 0), in the simulator. Deterministic at plan
// time (the mean). Each layer splits along the axis with the most split
// points (FinestSplitAxis): output rows of a 2-D conv when it has more rows
// than channel blocks, else output channels, which the engine rounds to
// whole blocks of kSliceChannelMultiple (scheduler/plan.h); a base split
// along the batch stays so. The ratio as run is the nearest split point: the
// simulator and every metric use that.
#ifndef BRAID_SCHEDULER_TEMPORL_POLICY_H_
#define BRAID_SCHEDULER_TEMPORL_POLICY_H_

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "scheduler/cost_model.h"
#include "scheduler/mlp.h"
#include "scheduler/placement_space.h"
#include "scheduler/split_metrics.h"
#include "scheduler/temporl_options.h"

namespace braid {

// Per layer: its cost on both devices, when each device is free and its
// inputs are there (queue times from the simulated schedule so far), its
// copies and the cost model's balanced ratio; times relative to the layer's
// total work (docs/scheduler.md lists them).
inline constexpr int kTemporlStateSize = 14;
using TemporlState = std::array<double, kTemporlStateSize>;

// Reward of one layer's decision: -gap * |T_a - T_b| / S + hidden * (hidden
// share - 1) - latency * (change of simulated end-to-end latency) / S, with
// S the layer's time on both devices (scale-free across layers).
struct TemporlRewardWeights {
  double gap = 1.0;
  double hidden = 0.25;
  double latency = 1.0;
};

// Fine-tuning on measured part times (docs/scheduler.md, "TempoRL"): logit
// offsets added to the actor's mean, learned from the engine's timeline, so
// a layer balanced on the simulator is balanced on the machine. A layer with
// its own offset uses it; another layer on a device pair that has measured
// layers uses the pair's mean offset; else none.
struct TemporlCorrection {
  std::map<std::string, double> layer_offset;  // TemporlLayerKey -> logit offset
  std::map<std::string, double> pair_offset;   // "device+other" -> logit offset
  int64_t updates = 0;                         // fine-tuning rounds applied
  std::string measured_on;                     // model / devices (informational)
  bool empty() const { return layer_offset.empty() && pair_offset.empty(); }
};
// "device+other/node/C=extent" ("N=" along the batch, "H=" along rows): the
// node name alone could repeat across models.
std::string TemporlLayerKey(const std::string& device, const std::string& other,
                            const std::string& node, int64_t extent,
                            SliceAxis axis = SliceAxis::kOutputChannels);
// The axis a sliceable node splits most finely along: rows when its output
// has more row split points than channel ones (a 32-channel conv has one
// channel split point in blocks of 16, its 56 rows have 55), else channels.
SliceAxis FinestSplitAxis(const SimGraph& sim_graph, int node);

struct TemporlModel {
  Mlp actor;  // kTemporlStateSize -> 1: mean of the ratio's logit
  TemporlRewardWeights weights;
  std::string trained_on;  // profiles / graphs (informational)
  int64_t episodes = 0;
  uint64_t seed = 0;
  TemporlCorrection correction;  // empty until fine-tuned on measured times
};
// A fresh (untrained) actor: its output starts near 0, i.e. ratio ~0.5.
TemporlModel NewTemporlModel(int hidden, uint64_t seed);
// "BRAIDTRL", version (3), weights, trained_on, episodes, seed, actor, the
// measured correction. Versions 1 and 2 (trained before row splits changed
// the state's split granularity) are refused with a "retrain" message.
// Errors (DataLoss / NotFound) name the file.
Status SaveTemporlModel(const TemporlModel& model, const std::string& path);
StatusOr<TemporlModel> LoadTemporlModel(const std::string& path);

// The ratio (share of the layer's own device) the model picks: sigmoid of the mean.
double TemporlRatio(const TemporlModel& model, const TemporlState& state);

struct TemporlStep {
  int node = 0;
  TemporlState state{};
  double agent_ratio = 0.5;  // what the chooser returned
  double asked_ratio = 0.5;  // after the measured correction (= agent_ratio without one)
  bool measured = false;        // the layer has its own measured correction
  bool pair_corrected = false;  // it uses its device pair's (measured on other layers)
  double share = 0.5;        // as run (block rounding)
  double gap_us = 0;         // simulated, with this split
  double hidden_share = -1;
  double scale_us = 0;       // S
  double latency_delta_us = 0;
  double reward = 0;
  bool kept = true;  // false: the guard put the base placement back
};

struct TemporlPass {
  std::vector<SimPlacement> placement;
  std::vector<TemporlStep> steps;
  double base_latency_us = 0;  // simulated
  double latency_us = 0;       // simulated
};

// Returns the ratio in (0, 1) for a state (and may remember what it drew).
using TemporlChooser = std::function<double(const TemporlState&)>;
TemporlChooser GreedyChooser(const TemporlModel& model);
// A reference without learning: the ratio at which both parts would finish
// together by the state's own times (each device's start, overhead and
// work), before block rounding. The training summary reports it beside the
// agent, to show how much of the remaining gap is the split granularity.
double FinishTogetherRatio(const TemporlState& state);

// The environment for one graph on one device set: the placement space,
// the base plan's placement and the layers the agent decides.
class TemporlEnv {
 public:
  // base_plan: the base policy's plan for `graph` (MakePlan output).
  static StatusOr<std::unique_ptr<TemporlEnv>> Create(const Graph& graph,
                                                      const PlacementContext& context,
                                                      const Plan& base_plan);

  const PlacementSpace& space() const { return space_; }
  const std::vector<SimPlacement>& base_placement() const { return base_; }
  // The layers the agent decides, in graph order, with the device pair it
  // splits them between (the base's device first): those the base split,
  // and sliceable ones the base left whole where a split at the cost
  // model's balanced ratio lowers simulated latency by 0.1% or more.
  const std::vector<int>& layers() const { return layers_; }
  int main_device(size_t k) const { return main_[k]; }
  int other_device(size_t k) const { return other_[k]; }
  SliceAxis axis(size_t k) const { return axis_[k]; }
  double base_latency_us() const { return base_latency_us_; }

  // One pass over the layers in graph order: state, chooser's ratio (plus
  // `correction`'s offset, if any), split, simulate, reward; with `guard` a
  // split that raises the simulated latency is undone, except on layers with
  // a measured correction, their own or their device pair's (measured times
  // overrule the simulator there). Deterministic for a deterministic chooser.
  TemporlPass Run(const TemporlChooser& choose, bool guard,
                  const TemporlRewardWeights& weights = {},
                  const TemporlCorrection* correction = nullptr);
  // TemporlLayerKey of layers()[k] and its device pair "device+other".
  std::string LayerKey(size_t k) const;
  std::string PairKey(size_t k) const;

  // `placement` with every split layer's ratio replaced by ratio(node, main,
  // other) (the 50/50 and peak-ratio references), same layers split.
  std::vector<SimPlacement> WithRatios(std::span<const SimPlacement> placement,
                                       const std::function<double(int, int, int)>& ratio) const;
  // Simulated split-layer metrics and latency of a placement.
  std::vector<SplitLayerMetrics> Metrics(std::span<const SimPlacement> placement,
                                         double* latency_us = nullptr);

  // base_plan with the pass's placement applied (streams and pins kept) and
  // reasons that say what the agent did.
  Plan ToPlan(const Plan& base_plan, const TemporlPass& pass, const std::string& policy,
              const std::string& base_name) const;

 private:
  TemporlEnv() = default;
  TemporlState State(int node, int main, int other, SliceAxis axis,
                     std::span<const SimPlacement> placement, const SimResult& r) const;
  SplitLayerMetrics LayerMetrics(int node, std::span<const SimPlacement> placement,
                                 const SimResult& r) const;

  PlacementSpace space_;
  std::unique_ptr<Simulator> sim_;
  std::vector<SimPlacement> base_;
  std::vector<int> layers_, main_, other_;
  std::vector<SliceAxis> axis_;
  std::vector<int> producer_;  // [value] -> node, -1 for graph inputs
  double base_latency_us_ = 0;
};

// One split layer as measured: its key, the agent's own ratio, the ratio
// the plan ran (the corrected one, or the base's split where the guard kept
// it; before the block rounding) and its measured part times.
struct TemporlMeasuredLayer {
  std::string key, pair;
  double agent_ratio = 0.5;
  double ran_ratio = 0.5;
  SplitLayerMetrics measured;  // share as run, part durations, finish times
};
struct TemporlFineTuneOptions {
  double step = 0.7;         // fraction of the logit error corrected per round
  double max_offset = 4.0;   // |logit offset| cap
};
// The share of part a at which both parts would finish together if each
// part's time per unit of share and its start (relative to the layer's)
// stay as measured: r* = (s_b - s_a + t_b) / (t_a + t_b), t = part time /
// its share; in [0.02, 0.98].
double MeasuredBalancedShare(const SplitLayerMetrics& m);
// One fine-tuning round: each layer's ratio moves from the one it ran by
// step * (logit(r*) - logit(ran)) in logit space (its offset is set so that
// the agent's ratio plus the offset gives that), then every pair's offset
// becomes the mean of its layers'.
// Returns the number of layers updated (those with both parts timed).
int FineTuneTemporl(std::span<const TemporlMeasuredLayer> layers,
                    const TemporlFineTuneOptions& options, TemporlCorrection& correction);

// The peak-FLOPs split: share of `device` = its peak / (both peaks).
double PeakRatio(const CostModel& model, const std::string& device, const std::string& other);

struct TemporlTrainOptions {
  int episodes = 300;
  uint64_t seed = 1;
  int hidden = 64;
  double learning_rate = 1e-3;
  double sigma_start = 0.8, sigma_end = 0.08;  // exploration on the logit
  int eval_every = 20;                         // episodes between greedy evaluations
  int batch_episodes = 8;                      // episodes per gradient step
  TemporlRewardWeights weights;
};

struct TemporlCurvePoint {
  int episode = 0;          // 1-based; 0 = before training
  double train_reward = 0;  // mean per-layer reward of the episode (sampled actions)
  double train_gap_norm = 0;  // mean gap / S of its layers
  // Greedy without the guard (the agent's own ratios) on the evaluation
  // envs (only at evaluation points, else < 0):
  // summed split-layer gap over the 50/50 split's on the same layers, and
  // simulated latency over the base plan's (geometric means).
  double eval_gap_vs_half = -1;
  double eval_latency_vs_base = -1;
};

// REINFORCE with a critic baseline over `train` (episodes cycle through a
// seeded shuffle). `model` is trained in place (NewTemporlModel first).
// `on_point` (may be empty) sees every curve point as it is made.
std::vector<TemporlCurvePoint> TrainTemporl(std::span<TemporlEnv* const> train,
                                            std::span<TemporlEnv* const> eval,
                                            const TemporlTrainOptions& options, TemporlModel& model,
                                            const std::function<void(const TemporlCurvePoint&)>&
                                                on_point = {});

// Greedy evaluation of one env: its pass plus the same layers at 50/50 and
// at the peak ratio (simulated).
struct TemporlComparison {
  int layers = 0;  // split layers in the temporl plan
  double gap_us = 0, half_gap_us = 0, peak_gap_us = 0;  // summed over those layers
  double latency_us = 0, half_latency_us = 0, peak_latency_us = 0, base_latency_us = 0;
  double hidden_share = -1, half_hidden_share = -1, peak_hidden_share = -1;
  // The same sums over the layers whose split can move: more than one split
  // point along their axis (SliceSplitIndex), e.g. not 32 channels in blocks
  // of 16.
  int movable_layers = 0;
  double movable_gap_us = 0, movable_half_gap_us = 0, movable_peak_gap_us = 0;
};
// True when `node`'s split along `axis` has more than one split point.
bool SplitCanMove(const SimGraph& sim_graph, int node, SliceAxis axis);
// `chooser` replaces the model's greedy ratios when given (e.g. FinishTogetherRatio).
TemporlComparison CompareTemporl(TemporlEnv& env, const TemporlModel& model, const CostModel& cost,
                                 bool guard = true, const TemporlChooser& chooser = {});

class TemporlPolicy : public Policy {
 public:
  TemporlPolicy(std::shared_ptr<const TemporlModel> model, TemporlOptions options,
                std::shared_ptr<const PolicyRegistry> base_policies, Status load_status = Status())
      : model_(std::move(model)),
        options_(std::move(options)),
        base_policies_(std::move(base_policies)),
        load_status_(std::move(load_status)) {}
  std::string name() const override { return "temporl"; }
  StatusOr<Plan> Place(const Graph& graph, const PlacementContext& context) const override;

 private:
  std::shared_ptr<const TemporlModel> model_;
  TemporlOptions options_;
  std::shared_ptr<const PolicyRegistry> base_policies_;
  Status load_status_;
};

}  // namespace braid

#endif  // BRAID_SCHEDULER_TEMPORL_POLICY_H_
