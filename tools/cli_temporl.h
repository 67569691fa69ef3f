// TempoRL in the CLI and the benchmarks: the training set (zoo models and
// seeded random graphs on device profiles, each with its base plan), the
// split-layer metrics of an engine run (measured) and their table, and the
// learning curve as SVG.
//
//   ASSIGN_OR_RETURN(braid::cli::TemporlTrainSet set,
//                    braid::cli::BuildTemporlTrainSet({"jetson-orin-nano-8gb"}, 8, 1, "partition"));
//   braid::TemporlModel model = braid::NewTemporlModel(64, 1);
//   auto curve = braid::TrainTemporl(set.Envs(false), set.Envs(true), options, model);
//   std::string svg = braid::cli::TemporlCurveSvg(curve);
//   out << braid::cli::SplitMetricsTable(braid::cli::MeasuredSplitMetrics(timings), "MEASURED");
#ifndef BRAID_TOOLS_CLI_TEMPORL_H_
#define BRAID_TOOLS_CLI_TEMPORL_H_

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "graph/ir.h"
#include "profiling/plan_timer.h"
#include "scheduler/split_metrics.h"
#include "scheduler/temporl_policy.h"

namespace braid::cli {

struct TemporlTrainSet {
  struct Item {
    std::string graph_name, profile_name;
    bool held_out = false;  // a quarter of the random graphs
    const Graph* graph = nullptr;
    const CostModel* model = nullptr;
    Plan base_plan;
    std::unique_ptr<TemporlEnv> env;
  };
  std::vector<std::unique_ptr<Graph>> graphs;
  std::vector<std::unique_ptr<CostModel>> models;
  std::vector<Item> items;
  std::vector<TemporlEnv*> Envs(bool held_out) const;
};

// The built-in models (`zoo_models`; empty: all) and `random_graphs` graphs
// from TrainingGraphSeed(seed, i) (every 4th held out), on each profile
// (names or files; each needs two devices), with `base`'s plan. Graphs with
// no sliceable layer are skipped.
StatusOr<TemporlTrainSet> BuildTemporlTrainSet(const std::vector<std::string>& profiles,
                                               const std::vector<std::string>& zoo_models,
                                               int random_graphs, uint64_t seed,
                                               const std::string& base);

// Per sliced node of timings.plan, from the engine's steps: parts "NODE#0"
// and "NODE#1", the copies of its part outputs and of its inputs to a part's
// device (unless an earlier node on that device read them first). Medians
// over the runs. Nodes whose steps are missing are left out.
std::vector<SplitLayerMetrics> MeasuredSplitMetrics(const profiling::PlanTimings& timings);

// A table: node, devices, share, T_a, T_b, |gap|, copy us, hidden %, and a
// summary line; every line labelled with `label` ("simulated", "MEASURED,
// vgpu = virtual GPU"). "" when there are no split layers.
std::string SplitMetricsTable(const std::vector<SplitLayerMetrics>& layers,
                              const std::string& label);

// Fine-tuning on measured part times (`braid train --policy temporl
// --fine-tune MODEL`): per round, plan with the model (temporl over `base`),
// run the plan through the engine (profiling::MeasurePlanOnGraph), read each
// split layer's two part times from the timeline, update the model's
// measured correction (FineTuneTemporl). Then `compare_rounds` rounds that
// run partition, temporl before and after, and the same layers at 50/50 and
// at the peak ratio, alternating plan by plan, and print medians.
struct TemporlFineTuneConfig {
  std::string model;                 // e.g. builtin:squeezenet1_1
  std::string profile;               // the cost model the plans come from
  std::string base = "partition";
  int rounds = 8;
  int compare_rounds = 10;
  bool guard = true;
  profiling::PlanTimerOptions timer;  // devices, threads, vgpu timing, runs per measurement
  TemporlFineTuneOptions update;
};
Status FineTuneTemporlMeasured(const TemporlFineTuneConfig& config, TemporlModel& model,
                               std::ostream& out);

// The learning curve: per-episode mean reward (moving mean) and the greedy
// evaluation's gap vs the 50/50 split, titled SIMULATED.
std::string TemporlCurveSvg(const std::vector<TemporlCurvePoint>& curve);

}  // namespace braid::cli

#endif  // BRAID_TOOLS_CLI_TEMPORL_H_
