// The `sparoa` policy (SparOA, see docs/scheduler.md): threshold predictor
// -> threshold plan -> SAC refinement per operator (when a trained policy
// file is given) -> a safety net: the result is never worse (simulated cost)
// than the best of cpu-only, gpu-only and the threshold plan; when one of
// those wins it is used and every node's reason says so -> optionally
// (SparoaOptions::polish, on by default) a greedy local search on the
// simulator (partition's moves; NOT reinforcement learning), labelled in
// every reason it changes.
//
//   braid::SparoaOptions o;
//   o.policy_file = "sparoa.bin";                 // from `braid train`; "" = untrained
//   braid::RegisterSparoaPolicy(policies, o);     // needs ctx.cost_model at Place time
//   ASSIGN_OR_RETURN(braid::Plan plan, braid::MakePlan(policies, "sparoa", graph, ctx));
//
// Without a policy file the thresholds come from a grid search on the
// simulator (what the predictor is trained to imitate) and no SAC step runs.
#ifndef BRAID_SCHEDULER_SPAROA_POLICY_H_
#define BRAID_SCHEDULER_SPAROA_POLICY_H_

#include <cstdint>
#include <memory>
#include <string>

#include "scheduler/cost_model.h"
#include "scheduler/policy.h"
#include "scheduler/sac_policy.h"
#include "scheduler/sparoa_options.h"
#include "scheduler/threshold_predictor.h"

namespace braid {

// A trained SparOA model: the threshold predictor and, optionally, the SAC actor.
struct SparoaModel {
  ThresholdPredictor predictor;
  std::unique_ptr<DiscreteSac> agent;  // null: no refinement
  double energy_weight = 0;
  std::string profiles;  // profiles it was trained on (informational)
};
// "BRAIDSPO", version, energy weight, profiles, predictor, has-agent flag,
// SAC actor. Errors name the file.
Status SaveSparoaModel(const SparoaModel& model, const std::string& path);
StatusOr<SparoaModel> LoadSparoaModel(const std::string& path);

class SparoaPolicy : public Policy {
 public:
  // `model` may be null (untrained: grid-searched thresholds, no SAC).
  SparoaPolicy(std::shared_ptr<SparoaModel> model, SparoaOptions options,
               Status load_status = Status(), std::string name = "sparoa",
               std::shared_ptr<const CostModel> fallback_cost_model = nullptr)
      : model_(std::move(model)),
        options_(std::move(options)),
        load_status_(load_status),
        name_(std::move(name)),
        fallback_cost_model_(std::move(fallback_cost_model)) {}
  std::string name() const override { return name_; }
  StatusOr<Plan> Place(const Graph& graph, const PlacementContext& context) const override;

 private:
  StatusOr<Plan> PlaceWithModel(const Graph& graph, const PlacementContext& context) const;

  std::shared_ptr<SparoaModel> model_;
  SparoaOptions options_;
  Status load_status_;
  std::string name_;
  std::shared_ptr<const CostModel> fallback_cost_model_;
};

}  // namespace braid

#endif  // BRAID_SCHEDULER_SPAROA_POLICY_H_
