#include "scheduler/partition_policy.h"

#include <algorithm>
#include <cstdio>

#include "graph/text.h"
#include "scheduler/heft_policy.h"

namespace braid {
namespace {

// Devices holding each value under `placement` (graph inputs: the host).
int HomeOfInput(const PlacementSpace& space, std::span<const SimPlacement> placement,
                const std::vector<int>& producer, int value) {
  const int p = producer[static_cast<size_t>(value)];
  (void)space;
  return p < 0 ? 0 : placement[static_cast<size_t>(p)].device;
}

std::vector<int> Producers(const SimGraph& g) {
  std::vector<int> producer(static_cast<size_t>(g.num_values), -1);
  for (int n = 0; n < g.num_nodes; ++n)
    for (int32_t i = g.out_begin[n]; i < g.out_begin[n + 1]; ++i)
      producer[static_cast<size_t>(g.out_values[static_cast<size_t>(i)])] = n;
  return producer;
}

double BalancedRatio(const PlacementSpace& space, std::span<const SimPlacement> placement,
                     const std::vector<int>& producer, int n, int d, int o) {
  const SimGraph& g = space.sim;
  const size_t D = static_cast<size_t>(space.num_devices);
  double in_d = 0, in_o = 0;
  for (int32_t i = g.in_begin[n]; i < g.in_begin[n + 1]; ++i) {
    const int v = g.in_values[static_cast<size_t>(i)];
    const int h = HomeOfInput(space, placement, producer, v);
    in_d = std::max(in_d, space.CopyUs(h, d, g.value_bytes[static_cast<size_t>(v)]));
    in_o = std::max(in_o, space.CopyUs(h, o, g.value_bytes[static_cast<size_t>(v)]));
  }
  double out_bytes = 0;
  for (int32_t i = g.out_begin[n]; i < g.out_begin[n + 1]; ++i)
    out_bytes += g.value_bytes[static_cast<size_t>(g.out_values[static_cast<size_t>(i)])];
  const size_t link = static_cast<size_t>(o) * D + static_cast<size_t>(d);
  const double back_latency = g.link_latency_us[link];  // a mapped link's: wake-up only
  const double back_per_share = g.link_mapped[link] ? 0 : out_bytes * g.link_us_per_byte[link];
  const size_t kd = static_cast<size_t>(n) * D + static_cast<size_t>(d);
  const size_t ko = static_cast<size_t>(n) * D + static_cast<size_t>(o);
  // in_d + ovh_d + r w_d = in_o + ovh_o + (1 - r)(w_o + back) + back_latency
  const double den = g.work_us[kd] + g.work_us[ko] + back_per_share;
  if (den <= 0) return 0.5;
  const double num = in_o - in_d + g.overhead_us[ko] - g.overhead_us[kd] + g.work_us[ko] +
                     back_per_share + back_latency;
  return std::clamp(num / den, 0.0, 1.0);
}

}  // namespace

double BalancedSliceRatio(const PlacementSpace& space, std::span<const SimPlacement> placement,
                          int node, int device, int other_device) {
  return BalancedRatio(space, placement, Producers(space.sim), node, device, other_device);
}

LocalSearchStats ImproveByLocalMoves(const PlacementSpace& space, Simulator& sim,
                                     std::vector<SimPlacement>& placement,
                                     int64_t max_evaluations) {
  LocalSearchStats stats;
  const int N = space.sim.num_nodes;
  const int D = space.num_devices;
  const std::vector<int> producer = Producers(space.sim);
  const SimResult& first = sim.Run(placement);
  double best_latency = first.latency_us, best_energy = first.energy_j;
  ++stats.evaluations;
  std::vector<SimPlacement> candidate = placement;
  std::vector<SimPlacement> moves;
  bool changed = true;
  while (changed && stats.evaluations < max_evaluations) {
    changed = false;
    ++stats.sweeps;
    for (int n = 0; n < N && stats.evaluations < max_evaluations; ++n) {
      // Single-node moves: other devices, and slices at the balanced bins.
      moves.clear();
      for (const SimPlacement& p : space.options[static_cast<size_t>(n)])
        if (p.other_device < 0) moves.push_back(p);
      if (space.Sliceable(n)) {
        for (int d = 0; d < D; ++d) {
          for (int o = 0; o < D; ++o) {
            if (d == o || !space.Allowed(n, d) || !space.Allowed(n, o)) continue;
            const double r = BalancedRatio(space, placement, producer, n, d, o);
            double below = -1, above = 2;
            for (double bin : space.slice_ratios) {
              if (bin <= r) below = std::max(below, bin);
              if (bin >= r) above = std::min(above, bin);
            }
            for (double bin : {below, above}) {
              if (bin < 0 || bin > 1 || (bin == above && above == below)) continue;
              SimPlacement s;
              s.device = static_cast<int16_t>(d);
              s.other_device = static_cast<int16_t>(o);
              s.ratio = static_cast<float>(bin);
              moves.push_back(s);
            }
          }
        }
      }
      int best_move = -1;
      double move_latency = best_latency, move_energy = best_energy;
      for (size_t m = 0; m < moves.size(); ++m) {
        if (SamePlacement(moves[m], placement[static_cast<size_t>(n)])) continue;
        candidate[static_cast<size_t>(n)] = moves[m];
        const SimResult& r = sim.Run(candidate);
        ++stats.evaluations;
        if (Better(r.latency_us, r.energy_j, move_latency, move_energy)) {
          best_move = static_cast<int>(m);
          move_latency = r.latency_us;
          move_energy = r.energy_j;
        }
      }
      candidate[static_cast<size_t>(n)] = placement[static_cast<size_t>(n)];
      // Segment moves: a run of nodes starting here onto one device.
      int best_run = 0, best_run_device = -1;
      for (int run : {2, 4, 8}) {
        if (n + run > N) break;
        for (int d = 0; d < D; ++d) {
          bool differs = false;
          for (int i = n; i < n + run; ++i) {
            if (!space.Allowed(i, d)) continue;
            SimPlacement p;
            p.device = static_cast<int16_t>(d);
            differs |= !SamePlacement(p, placement[static_cast<size_t>(i)]);
            candidate[static_cast<size_t>(i)] = p;
          }
          if (differs) {
            const SimResult& r = sim.Run(candidate);
            ++stats.evaluations;
            if (Better(r.latency_us, r.energy_j, move_latency, move_energy)) {
              best_move = -1;
              best_run = run;
              best_run_device = d;
              move_latency = r.latency_us;
              move_energy = r.energy_j;
            }
          }
          for (int i = n; i < n + run; ++i)
            candidate[static_cast<size_t>(i)] = placement[static_cast<size_t>(i)];
        }
      }
      if (best_run > 0) {
        for (int i = n; i < n + best_run; ++i) {
          if (!space.Allowed(i, best_run_device)) continue;
          SimPlacement p;
          p.device = static_cast<int16_t>(best_run_device);
          placement[static_cast<size_t>(i)] = candidate[static_cast<size_t>(i)] = p;
        }
      } else if (best_move >= 0) {
        placement[static_cast<size_t>(n)] = candidate[static_cast<size_t>(n)] =
            moves[static_cast<size_t>(best_move)];
      } else {
        continue;
      }
      best_latency = move_latency;
      best_energy = move_energy;
      ++stats.moves;
      changed = true;
    }
  }
  return stats;
}

PartitionResult PlacePartition(const PlacementSpace& space, int64_t max_evaluations) {
  Simulator sim(space.sim);
  PartitionResult out;
  std::vector<std::pair<std::string, std::vector<SimPlacement>>> starts;
  starts.emplace_back("cpu-only", space.SingleDevice(0));
  if (space.num_devices > 1) starts.emplace_back("gpu-only", space.SingleDevice(1));
  starts.emplace_back("heft", PlaceHeft(space).placement);
  double best_latency = 0, best_energy = 0;
  for (auto& [name, p] : starts) {
    const SimResult& r = sim.Run(p);
    if (out.placement.empty() || Better(r.latency_us, r.energy_j, best_latency, best_energy)) {
      out.start = name;
      out.placement = p;
      best_latency = r.latency_us;
      best_energy = r.energy_j;
    }
  }
  out.start_latency_us = best_latency;
  out.stats = ImproveByLocalMoves(space, sim, out.placement, max_evaluations);
  const SimResult& r = sim.Run(out.placement);
  out.latency_us = r.latency_us;
  out.energy_j = r.energy_j;
  return out;
}

StatusOr<Plan> PartitionPolicy::Place(const Graph& graph, const PlacementContext& context) const {
  ASSIGN_OR_RETURN(PlacementSpace space, BuildPlacementSpace(graph, context, "partition"));
  const PartitionResult r = PlacePartition(space);
  std::vector<std::string> reasons(r.placement.size());
  const std::string tail = " (from " + r.start + ", " + std::to_string(r.stats.moves) +
                           " moves; simulated " + FixedDigits(r.start_latency_us / 1e3, 3) + " -> " +
                           FixedDigits(r.latency_us / 1e3, 3) + " ms)";
  for (size_t n = 0; n < reasons.size(); ++n) {
    const SimPlacement& p = r.placement[n];
    const double share = SliceShare(space.sim, static_cast<int>(n), p);
    reasons[n] = p.other_device >= 0
                     ? "partition: split " + FixedDigits(share, 3) + " / " + FixedDigits(1 - share, 3) +
                           " so both parts finish together" + tail
                     : "partition: whole node here after local search" + tail;
  }
  return space.ToPlan(graph, r.placement, name(), reasons);
}

}  // namespace braid
