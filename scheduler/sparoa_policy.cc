#include "scheduler/sparoa_policy.h"

#include <algorithm>
#include <cstdio>

#include "graph/text.h"
#include "scheduler/device_profile.h"
#include "scheduler/partition_policy.h"

namespace braid {
namespace {

constexpr char kSparoaMagic[] = "BRAIDSPO";
constexpr uint32_t kSparoaVersion = 2;  // 2: 30 state features, 9 actions

std::string PairText(ThresholdPair t) {
  return "S*=" + (t.sparsity > 1 ? std::string("off") : FixedDigits(t.sparsity, 2)) +
         ", I*=" + (t.intensity >= 1e8 ? std::string("inf") : FixedDigits(t.intensity, 1)) + " FLOP/B";
}

}  // namespace

Status SaveSparoaModel(const SparoaModel& model, const std::string& path) {
  BinaryWriter w;
  w.Bytes(std::string_view(kSparoaMagic, 8));
  w.U32(kSparoaVersion);
  w.F64(model.energy_weight);
  w.Str(model.profiles);
  model.predictor.Save(w);
  w.U32(model.agent ? 1 : 0);
  if (model.agent) model.agent->SaveActor(w);
  return WriteFileBytes(path, w.bytes());
}

StatusOr<SparoaModel> LoadSparoaModel(const std::string& path) {
  ASSIGN_OR_RETURN(std::string bytes, ReadFileBytes(path));
  BinaryReader r(bytes, path);
  RETURN_IF_ERROR(r.Expect(std::string_view(kSparoaMagic, 8)));
  ASSIGN_OR_RETURN(uint32_t version, r.U32());
  if (version != kSparoaVersion) return r.Error("unsupported version " + std::to_string(version));
  SparoaModel model;
  ASSIGN_OR_RETURN(model.energy_weight, r.F64());
  if (!(model.energy_weight >= 0 && model.energy_weight < 1e6)) return r.Error("bad energy weight");
  ASSIGN_OR_RETURN(model.profiles, r.Str(4096));
  ASSIGN_OR_RETURN(model.predictor, ThresholdPredictor::Load(r));
  ASSIGN_OR_RETURN(uint32_t has_agent, r.U32());
  if (has_agent > 1) return r.Error("bad SAC flag");
  if (has_agent) {
    ASSIGN_OR_RETURN(model.agent, DiscreteSac::LoadActor(r));
    if (model.agent->state_size() != PlacementEnv::kStateSize ||
        model.agent->num_actions() != PlacementEnv::kNumActions)
      return r.Error("SAC actor was trained for a different state or action size");
  }
  if (r.remaining() != 0) return r.Error("trailing bytes");
  return model;
}

StatusOr<Plan> SparoaPolicy::Place(const Graph& graph, const PlacementContext& context) const {
  RETURN_IF_ERROR(load_status_);
  if (context.cost_model == nullptr && fallback_cost_model_) {
    PlacementContext with_model = context;
    with_model.cost_model = fallback_cost_model_.get();
    return PlaceWithModel(graph, with_model);
  }
  return PlaceWithModel(graph, context);
}

StatusOr<Plan> SparoaPolicy::PlaceWithModel(const Graph& graph,
                                            const PlacementContext& context) const {
  if (context.cost_model == nullptr)
    return FailedPrecondition("sparoa: needs a cost model (a device profile)");
  if (context.devices.empty()) return InvalidArgument("sparoa: no devices given");
  const double energy_weight = options_.energy_weight >= 0 ? options_.energy_weight
                               : model_                    ? model_->energy_weight
                                                           : 0.0;
  // 1. Thresholds: predicted candidates verified on the simulator, or (no
  //    model) the grid search the predictor imitates.
  ThresholdPair thresholds;
  std::string threshold_note;
  if (model_ && model_->predictor.fitted()) {
    ASSIGN_OR_RETURN(std::vector<double> features, ThresholdFeatures(graph, context));
    const std::vector<int> cells =
        model_->predictor.RankCells(features, std::max(1, options_.threshold_candidates));
    ASSIGN_OR_RETURN(SimGraph sim, BuildSimGraph(graph, *context.cost_model, context.devices));
    Simulator simulator(sim);
    double best_cost = 0;
    CostScale scale;
    scale.energy_weight = energy_weight;
    for (size_t i = 0; i < cells.size(); ++i) {
      const ThresholdPair t = ThresholdGridPair(cells[i]);
      ASSIGN_OR_RETURN(std::vector<SimPlacement> p, ThresholdPlacement(graph, context, sim, t));
      const SimResult& r = simulator.Run(p);
      if (i == 0) scale = {r.latency_us, std::max(r.energy_j, 1e-12), energy_weight};
      const double cost = scale.Cost(r);
      if (i == 0 || cost < best_cost) {
        best_cost = cost;
        thresholds = t;
      }
    }
    threshold_note = "predicted " + PairText(thresholds) + " (best of " +
                     std::to_string(cells.size()) + " predicted pairs, simulated)";
  } else {
    ASSIGN_OR_RETURN(ThresholdGridResult grid, GridSearchThresholds(graph, context, energy_weight));
    thresholds = grid.best;
    threshold_note = "no trained model: grid-searched " + PairText(thresholds) + " (simulated)";
  }

  // 2. The threshold plan, then the SAC refinement.
  ASSIGN_OR_RETURN(std::unique_ptr<PlacementEnv> env,
                   PlacementEnv::Create(graph, context, thresholds, energy_weight));
  const PlacementSpace& space = env->space();
  struct Candidate {
    std::string what;
    std::vector<SimPlacement> placement;
    double cost = 0;
  };
  std::vector<Candidate> candidates;
  if (model_ && model_->agent)
    candidates.push_back(
        {"SAC-refined threshold plan",
         BestOfSampledPlacements(*model_->agent, *env, options_.sac_samples, /*seed=*/1), 0});
  candidates.push_back({"threshold plan", env->start_placement(), 0});
  if (space.num_devices > 1) candidates.push_back({"gpu-only", space.SingleDevice(1), 0});
  candidates.push_back({"cpu-only", space.SingleDevice(0), 0});
  size_t best = 0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    candidates[i].cost = env->CostOf(candidates[i].placement);
    if (candidates[i].cost < candidates[best].cost * (1 - 1e-9)) best = i;
  }

  // 3. Optional polish: greedy local moves on the simulator from the winner
  //    (not RL; kept only when it lowers the cost, so never worse).
  std::vector<SimPlacement> chosen = candidates[best].placement;
  double chosen_cost = candidates[best].cost;
  std::string polish_note;
  if (options_.polish) {
    std::vector<SimPlacement> polished = chosen;
    Simulator simulator(space.sim);
    const LocalSearchStats stats = ImproveByLocalMoves(
        space, simulator, polished, std::max<int64_t>(1, options_.polish_evaluations));
    const double cost = env->CostOf(polished);
    if (cost < chosen_cost * (1 - 1e-9)) {
      polish_note = "; then polished by simulator local search (not RL: " +
                    std::to_string(stats.moves) + " greedy moves, simulated cost " +
                    FixedDigits(chosen_cost, 3) + " -> " + FixedDigits(cost, 3) + ")";
      chosen.swap(polished);
      chosen_cost = cost;
    } else {
      polish_note = "; simulator local search (not RL) found no improving move";
    }
  }

  // 4. Reasons: which stage won, the fallback when it was not the first,
  //    and what the polish changed.
  std::string head = "sparoa: " + threshold_note + "; ";
  if (best == 0 && candidates[0].what == "threshold plan") {
    head += "threshold plan (no SAC model; no slower than cpu-only and gpu-only, simulated)";
  } else if (best == 0) {
    head += candidates[0].what + " (simulated cost " + FixedDigits(candidates[0].cost, 3) +
            "x the threshold plan)";
  } else {
    head += "fallback to " + candidates[best].what + ": simulated cost " +
            FixedDigits(candidates[best].cost, 3) + " vs " + FixedDigits(candidates[0].cost, 3) + " for the " +
            candidates[0].what;
  }
  if (model_ && model_->agent)
    head += "; SAC: greedy + " + std::to_string(std::max(options_.sac_samples, 0)) +
            " sampled episodes, lowest simulated cost kept";
  head += polish_note;
  std::vector<std::string> reasons(static_cast<size_t>(space.sim.num_nodes), head);
  const std::vector<SimPlacement>& start = env->start_placement();
  const std::vector<SimPlacement>& picked = candidates[best].placement;
  for (size_t n = 0; n < reasons.size(); ++n) {
    if (candidates[best].what.starts_with("SAC") &&
        (picked[n].device != start[n].device || picked[n].other_device >= 0))
      reasons[n] += picked[n].other_device >= 0
                        ? "; SAC split this node (threshold plan: " +
                              space.sim.devices[static_cast<size_t>(start[n].device)] + ")"
                        : "; SAC moved this node from " +
                              space.sim.devices[static_cast<size_t>(start[n].device)];
    if (!SamePlacement(chosen[n], picked[n]))
      reasons[n] += "; changed by the local search (not RL)";
  }
  Plan plan = space.ToPlan(graph, chosen, name_, reasons);
  return plan;
}

void RegisterSparoaPolicy(PolicyRegistry& registry, const SparoaOptions& options,
                          const std::string& name) {
  registry.Register(name, [options, name]() -> std::unique_ptr<Policy> {
    std::shared_ptr<const CostModel> fallback;
    if (!options.fallback_profile.empty()) {
      StatusOr<DeviceProfile> profile = LoadDeviceProfile(options.fallback_profile);
      if (!profile.ok())
        return std::make_unique<SparoaPolicy>(
            nullptr, options, InvalidArgument("sparoa: " + profile.status().ToString()), name);
      fallback = std::make_shared<const CostModel>(std::move(*profile));
    }
    if (options.policy_file.empty())
      return std::make_unique<SparoaPolicy>(nullptr, options, Status(), name, fallback);
    StatusOr<SparoaModel> model = LoadSparoaModel(options.policy_file);
    if (!model.ok())
      return std::make_unique<SparoaPolicy>(
          nullptr, options, InvalidArgument("sparoa: " + model.status().ToString()), name);
    return std::make_unique<SparoaPolicy>(std::make_shared<SparoaModel>(std::move(*model)),
                                          options, Status(), name, fallback);
  });
}

}  // namespace braid
