#include "scheduler/policy.h"

#include <algorithm>
#include <array>
#include <random>

namespace braid {

bool PlacementContext::Allows(size_t index, std::string_view device) const {
  if (index >= allowed_devices.size() || allowed_devices[index].empty()) return true;
  const std::vector<std::string>& allowed = allowed_devices[index];
  return std::find(allowed.begin(), allowed.end(), device) != allowed.end();
}

void PolicyRegistry::Register(std::string name,
                              std::function<std::unique_ptr<Policy>()> create) {
  entries_.emplace_back(std::move(name), std::move(create));
}

StatusOr<std::unique_ptr<Policy>> PolicyRegistry::Create(std::string_view name) const {
  for (const auto& [n, create] : entries_)
    if (n == name) return create();
  std::string known;
  for (const std::string& n : Names()) known += (known.empty() ? "" : ", ") + n;
  return NotFound("unknown policy '" + std::string(name) + "' (known: " + known + ")");
}

std::vector<std::string> PolicyRegistry::Names() const {
  std::vector<std::string> names;
  for (const auto& entry : entries_) names.push_back(entry.first);
  std::sort(names.begin(), names.end());
  return names;
}

namespace {

Status NeedDevices(const PlacementContext& context) {
  if (context.devices.empty()) return InvalidArgument("placement: no devices given");
  return Status::Ok();
}

class CpuOnlyPolicy : public Policy {
 public:
  std::string name() const override { return "cpu-only"; }
  StatusOr<Plan> Place(const Graph& graph, const PlacementContext& context) const override {
    RETURN_IF_ERROR(NeedDevices(context));
    Plan plan = SingleDevicePlan(graph, context.devices.front(), name());
    plan.devices = context.devices;
    return plan;
  }
};

class GpuOnlyPolicy : public Policy {
 public:
  std::string name() const override { return "gpu-only"; }
  StatusOr<Plan> Place(const Graph& graph, const PlacementContext& context) const override {
    RETURN_IF_ERROR(NeedDevices(context));
    if (context.devices.size() < 2)
      return FailedPrecondition("gpu-only: no device besides '" + context.devices.front() +
                                "' is available");
    const std::string& host = context.devices.front();
    const std::string& accelerator = context.devices[1];
    Plan plan = SingleDevicePlan(graph, accelerator, name());
    plan.devices = context.devices;
    for (size_t i = 0; i < plan.nodes.size(); ++i) {
      if (context.Allows(i, accelerator)) continue;
      plan.nodes[i].device = host;
      plan.nodes[i].reason = "no " + accelerator + " kernel for " + graph.nodes()[i].op_type;
    }
    return plan;
  }
};

// random-K: a seeded random plan to test engines and devices with (outputs
// must not depend on placement), never a scheduling choice. Each node on the
// host or the accelerator with equal odds (where both have a kernel), and a
// channel or batch slice with a ratio in [0.1, 0.9] on about a third of the
// nodes that can be sliced (both devices must run them).
class RandomPolicy : public Policy {
 public:
  explicit RandomPolicy(uint32_t seed) : seed_(seed) {}
  std::string name() const override { return "random-" + std::to_string(seed_); }
  StatusOr<Plan> Place(const Graph& graph, const PlacementContext& context) const override {
    RETURN_IF_ERROR(NeedDevices(context));
    if (context.devices.size() < 2)
      return FailedPrecondition(name() + ": no device besides '" + context.devices.front() +
                                "' is available");
    const std::string& host = context.devices.front();
    const std::string& accelerator = context.devices[1];
    Plan plan = SingleDevicePlan(graph, host, name());
    plan.devices = context.devices;
    std::mt19937 rng(seed_);
    for (size_t i = 0; i < plan.nodes.size(); ++i) {
      NodePlan& p = plan.nodes[i];
      const Node& node = graph.nodes()[i];
      const bool both = context.Allows(i, host) && context.Allows(i, accelerator);
      if (rng() % 2 == 1 && context.Allows(i, accelerator)) p.device = accelerator;
      if (!context.Allows(i, p.device)) p.device = accelerator;
      p.reason = "random (seed " + std::to_string(seed_) + ")";
      if (!both || rng() % 3 != 0) continue;
      // Rows first on a third of them (a conv's channels would win otherwise).
      const bool rows_first = rng() % 3 == 0;
      const std::array<SliceAxis, 3> axes =
          rows_first ? std::array{SliceAxis::kRows, SliceAxis::kOutputChannels, SliceAxis::kBatch}
                     : std::array{SliceAxis::kOutputChannels, SliceAxis::kBatch, SliceAxis::kRows};
      for (SliceAxis axis : axes) {
        if (!IsSliceable(node, axis) || SliceExtent(graph, node, axis) < 2) continue;
        SliceSpec slice;
        slice.axis = axis;
        slice.other_device = p.device == host ? accelerator : host;
        slice.ratio = 0.1 + 0.8 * std::uniform_real_distribution<double>(0, 1)(rng);
        p.slice = slice;
        break;
      }
    }
    return plan;
  }

 private:
  uint32_t seed_;
};

}  // namespace

void RegisterBasicPolicies(PolicyRegistry& registry) {
  registry.Register("cpu-only", [] { return std::make_unique<CpuOnlyPolicy>(); });
  registry.Register("gpu-only", [] { return std::make_unique<GpuOnlyPolicy>(); });
  for (uint32_t seed = 1; seed <= kRandomPolicySeeds; ++seed)
    registry.Register("random-" + std::to_string(seed),
                      [seed] { return std::make_unique<RandomPolicy>(seed); });
}

StatusOr<Plan> MakePlan(const PolicyRegistry& registry, std::string_view name,
                        const Graph& graph, const PlacementContext& context) {
  ASSIGN_OR_RETURN(std::unique_ptr<Policy> policy, registry.Create(name));
  ASSIGN_OR_RETURN(Plan plan, policy->Place(graph, context));
  RETURN_IF_ERROR(ApplyDevicePins(graph, plan));
  for (size_t i = 0; i < plan.nodes.size(); ++i) {
    const NodePlan& p = plan.nodes[i];
    for (const std::string* d : {&p.device, p.slice ? &p.slice->other_device : nullptr}) {
      if (d != nullptr && !context.Allows(i, *d))
        return FailedPrecondition("policy '" + std::string(name) + "' placed node '" + p.node +
                                  "' (" + graph.nodes()[i].op_type + ") on '" + *d +
                                  "', which has no kernel for it");
    }
  }
  RETURN_IF_ERROR(ValidatePlan(plan, graph));
  return plan;
}

}  // namespace braid
