#include "scheduler/placement_space.h"

#include <algorithm>
#include <cstdio>

#include "scheduler/cost_model.h"

namespace braid {

StatusOr<PlacementSpace> BuildPlacementSpace(const Graph& graph, const PlacementContext& context,
                                             std::string_view who, bool allow_slices,
                                             std::span<const double> ratios) {
  if (context.devices.empty()) return InvalidArgument(std::string(who) + ": no devices given");
  if (context.cost_model == nullptr)
    return FailedPrecondition(std::string(who) +
                              ": needs a cost model (PlacementContext::cost_model)");
  for (double r : ratios)
    if (!(r > 0 && r < 1))
      return InvalidArgument(std::string(who) + ": slice ratios must be in (0, 1)");
  PlacementSpace space;
  ASSIGN_OR_RETURN(space.sim, BuildSimGraph(graph, *context.cost_model, context.devices));
  const int D = static_cast<int>(context.devices.size());
  space.num_devices = D;
  space.slice_ratios.assign(ratios.begin(), ratios.end());
  space.allowed.assign(static_cast<size_t>(graph.num_nodes()) * static_cast<size_t>(D), 0);
  space.options.resize(static_cast<size_t>(graph.num_nodes()));
  for (int n = 0; n < graph.num_nodes(); ++n) {
    const Node& node = graph.node(n);
    // A pin moves the node onto the first device it matches (ApplyDevicePins).
    int pinned = -1;
    if (!node.device_pin.empty())
      for (int d = 0; d < D && pinned < 0; ++d)
        if (PinMatchesDevice(node.device_pin, context.devices[static_cast<size_t>(d)])) pinned = d;
    bool any = false;
    for (int d = 0; d < D; ++d) {
      const bool ok = pinned >= 0 ? d == pinned
                                  : context.Allows(static_cast<size_t>(n),
                                                   context.devices[static_cast<size_t>(d)]);
      space.allowed[static_cast<size_t>(n) * static_cast<size_t>(D) + static_cast<size_t>(d)] = ok;
      any |= ok;
    }
    if (!any)
      return FailedPrecondition(std::string(who) + ": node '" + node.name + "' (" + node.op_type +
                                ") has no kernel on any plan device");
    std::vector<SimPlacement>& opts = space.options[static_cast<size_t>(n)];
    for (int d = 0; d < D; ++d) {
      if (!space.Allowed(n, d)) continue;
      SimPlacement p;
      p.device = static_cast<int16_t>(d);
      opts.push_back(p);
    }
    // Pinned nodes are never sliced (ApplyDevicePins clears slices).
    if (!allow_slices || pinned >= 0 || !IsSliceable(node, SliceAxis::kOutputChannels) ||
        SliceExtent(graph, node, SliceAxis::kOutputChannels) < 2)
      continue;
    for (int d = 0; d < D; ++d) {
      for (int o = 0; o < D; ++o) {
        if (o == d || !space.Allowed(n, d) || !space.Allowed(n, o)) continue;
        for (double r : ratios) {
          SimPlacement p;
          p.device = static_cast<int16_t>(d);
          p.other_device = static_cast<int16_t>(o);
          p.ratio = static_cast<float>(r);
          opts.push_back(p);
        }
      }
    }
  }
  return space;
}

std::vector<SimPlacement> PlacementSpace::SingleDevice(int device) const {
  std::vector<SimPlacement> out(options.size());
  for (size_t n = 0; n < options.size(); ++n) {
    out[n] = options[n].front();
    if (Allowed(static_cast<int>(n), device)) out[n].device = static_cast<int16_t>(device);
  }
  return out;
}

double PlacementSpace::MainUs(int node, const SimPlacement& p) const {
  const size_t k = static_cast<size_t>(node) * static_cast<size_t>(num_devices) +
                   static_cast<size_t>(p.device);
  return sim.overhead_us[k] + SliceShare(sim, node, p) * sim.work_us[k];
}

double PlacementSpace::OtherUs(int node, const SimPlacement& p) const {
  if (p.other_device < 0) return 0;
  const size_t k = static_cast<size_t>(node) * static_cast<size_t>(num_devices) +
                   static_cast<size_t>(p.other_device);
  return sim.overhead_us[k] + (1.0 - SliceShare(sim, node, p)) * sim.work_us[k];
}

double PlacementSpace::CopyUs(int from, int to, double bytes) const {
  if (from == to) return 0;
  const size_t k = static_cast<size_t>(from) * static_cast<size_t>(num_devices) +
                   static_cast<size_t>(to);
  return sim.link_latency_us[k] + bytes * sim.link_us_per_byte[k];  // 0 per byte if mapped
}

Plan PlacementSpace::ToPlan(const Graph& graph, std::span<const SimPlacement> placement,
                            std::string policy, std::span<const std::string> reasons) const {
  Plan plan;
  plan.policy = std::move(policy);
  plan.devices = sim.devices;
  plan.nodes.resize(static_cast<size_t>(graph.num_nodes()));
  for (int n = 0; n < graph.num_nodes(); ++n) {
    const SimPlacement& p = placement[static_cast<size_t>(n)];
    NodePlan& np = plan.nodes[static_cast<size_t>(n)];
    np.node = graph.node(n).name;
    np.device = sim.devices[static_cast<size_t>(p.device)];
    if (p.other_device >= 0) {
      SliceSpec s;
      s.axis = p.axis;
      s.other_device = sim.devices[static_cast<size_t>(p.other_device)];
      s.ratio = SliceShare(sim, n, p);  // the split the engine makes
      np.slice = s;
    }
    if (static_cast<size_t>(n) < reasons.size()) np.reason = reasons[static_cast<size_t>(n)];
    np.predicted_ms = std::max(MainUs(n, p), OtherUs(n, p)) / 1e3;
  }
  return plan;
}

bool Better(double latency_us, double energy_j, double best_latency_us, double best_energy_j) {
  const double tol = 1e-9;
  if (latency_us < best_latency_us * (1 - tol)) return true;
  if (latency_us > best_latency_us * (1 + tol)) return false;
  return energy_j < best_energy_j * (1 - tol);
}

}  // namespace braid
