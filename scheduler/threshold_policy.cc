#include "scheduler/threshold_policy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "graph/text.h"
#include "scheduler/cost_model.h"

namespace braid {

StatusOr<Plan> ThresholdPolicy::Place(const Graph& graph, const PlacementContext& context) const {
  if (context.devices.empty()) return InvalidArgument("threshold: no devices given");
  if (!(options_.intensity_threshold >= 0) || !std::isfinite(options_.intensity_threshold))
    return InvalidArgument("threshold: intensity threshold must be a number >= 0");
  if (!(options_.sparsity_threshold >= 0 && options_.sparsity_threshold <= 1))
    return InvalidArgument("threshold: sparsity threshold must be in [0, 1]");
  const std::string& host = context.devices.front();
  Plan plan = SingleDevicePlan(graph, host, name());
  plan.devices = context.devices;
  // Device of each value's producer (graph inputs and constants: the host).
  std::vector<const std::string*> value_device(static_cast<size_t>(graph.num_values()), &host);
  for (size_t i = 0; i < plan.nodes.size(); ++i) {
    const Node& node = graph.nodes()[i];
    NodePlan& p = plan.nodes[i];
    const std::string* accelerator = nullptr;
    for (size_t d = 1; d < context.devices.size() && accelerator == nullptr; ++d)
      if (context.Allows(i, context.devices[d])) accelerator = &context.devices[d];
    const Annotation& a = node.annotation;
    const double sparsity = RoutableSparsity(node, &graph);
    if (options_.data_ops_follow_input && a.flops == 0) {
      const std::string* input_device = &host;
      for (ValueId in : node.inputs) {
        if (in == kNoValue || graph.IsConstant(in)) continue;
        input_device = value_device[static_cast<size_t>(in)];
        break;
      }
      if (context.Allows(i, *input_device)) {
        p.device = *input_device;
        p.reason = "no compute: stays with its input on " + *input_device;
      } else {
        p.device = host;
        p.reason = "no compute; no " + *input_device + " kernel, so on " + host;
      }
    } else if (a.intensity < options_.intensity_threshold) {
      p.device = host;
      p.reason = "intensity " + FixedDigits(a.intensity, 2) + " < " +
                 FixedDigits(options_.intensity_threshold, 2) + " FLOP/B";
    } else if (sparsity >= options_.sparsity_threshold) {
      p.device = host;
      p.reason = "sparsity " + FixedDigits(sparsity, 2) + " >= " + FixedDigits(options_.sparsity_threshold, 2);
    } else if (accelerator == nullptr) {
      p.device = host;
      p.reason = context.devices.size() < 2 ? "dense and intense, but no accelerator"
                                            : "dense and intense, but no accelerator kernel for " +
                                                  node.op_type;
    } else {
      p.device = *accelerator;
      p.reason = "intensity " + FixedDigits(a.intensity, 2) + " >= " +
                 FixedDigits(options_.intensity_threshold, 2) + ", sparsity " + FixedDigits(sparsity, 2) +
                 " < " + FixedDigits(options_.sparsity_threshold, 2);
    }
    for (ValueId out : node.outputs)
      if (out != kNoValue) value_device[static_cast<size_t>(out)] = &p.device;
    if (context.cost_model != nullptr) {
      const int d = context.cost_model->DeviceIndex(p.device);
      if (d >= 0)
        p.predicted_ms = context.cost_model->Cost(OpWorkOf(node, &graph), d).TotalUs() / 1e3;
    }
  }
  return plan;
}

void RegisterCostModelPolicies(PolicyRegistry& registry, const ThresholdOptions& options) {
  registry.Register("threshold",
                    [options] { return std::make_unique<ThresholdPolicy>(options); });
}

}  // namespace braid
