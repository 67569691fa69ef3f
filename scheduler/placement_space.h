// The space the search-based policies (heft, partition, optimal) work in: per
// node, the placements it may take (each allowed device, and for sliceable
// Conv/Gemm/MatMul a split between two allowed devices at a few ratio bins),
// with the graph flattened once for the simulator. Pins and allowed devices
// are folded in, so every placement in the space passes MakePlan.
//
//   ASSIGN_OR_RETURN(braid::PlacementSpace space,
//                    braid::BuildPlacementSpace(graph, ctx, "heft"));
//   braid::Simulator sim(space.sim);
//   std::vector<braid::SimPlacement> p = space.SingleDevice(0);   // all on the host
//   double us = sim.Run(p).latency_us;                             // simulated
//   braid::Plan plan = space.ToPlan(graph, p, "heft", reasons);
#ifndef BRAID_SCHEDULER_PLACEMENT_SPACE_H_
#define BRAID_SCHEDULER_PLACEMENT_SPACE_H_

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "graph/ir.h"
#include "graph/status.h"
#include "scheduler/plan.h"
#include "scheduler/policy.h"
#include "scheduler/simulator.h"

namespace braid {

// The split ratios (share of the node's own device) slices are chosen from.
inline constexpr double kSliceRatioBins[] = {0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875};

struct PlacementSpace {
  SimGraph sim;  // devices = context.devices
  int num_devices = 0;
  // [node * num_devices + device]: the node may run there (kernel + pin).
  std::vector<uint8_t> allowed;
  // Per node: every placement it may take, single devices first (in device
  // order), then slices (device, other device, ratio bin).
  std::vector<std::vector<SimPlacement>> options;
  std::vector<double> slice_ratios;

  bool Allowed(int node, int device) const {
    return allowed[static_cast<size_t>(node) * static_cast<size_t>(num_devices) +
                   static_cast<size_t>(device)] != 0;
  }
  bool Sliceable(int node) const {
    return options[static_cast<size_t>(node)].back().other_device >= 0;
  }
  // Every node on `device` where allowed, else on its first allowed device.
  std::vector<SimPlacement> SingleDevice(int device) const;
  // Kernel time (overhead + share of work) of one placement's parts.
  double MainUs(int node, const SimPlacement& p) const;
  double OtherUs(int node, const SimPlacement& p) const;  // 0 when not sliced
  // Copy time of `bytes` from -> to (0 on the same device or a mapped link).
  double CopyUs(int from, int to, double bytes) const;
  // A plan with `reasons[n]` (may be empty) per node; predicted_ms is the
  // slower part's kernel time.
  Plan ToPlan(const Graph& graph, std::span<const SimPlacement> placement, std::string policy,
              std::span<const std::string> reasons = {}) const;
};

// Needs context.cost_model (FailedPrecondition naming `who` otherwise) and at
// least one device. `ratios` defaults to kSliceRatioBins; an empty span with
// `allow_slices` false gives device-only options.
StatusOr<PlacementSpace> BuildPlacementSpace(const Graph& graph, const PlacementContext& context,
                                             std::string_view who, bool allow_slices = true,
                                             std::span<const double> ratios = kSliceRatioBins);

// Simulated latency first, energy to break ties (relative tolerance 1e-9).
bool Better(double latency_us, double energy_j, double best_latency_us, double best_energy_j);

}  // namespace braid

#endif  // BRAID_SCHEDULER_PLACEMENT_SPACE_H_
