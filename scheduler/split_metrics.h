// TempoRL's quantities for each split (sliced) layer of a plan: the time of
// each of its two parts, the timing gap between them, and the share of the
// layer's copy time hidden behind its own parts' compute. From a simulation
// (a SimResult with a timeline) here; from an engine run's measured steps in
// tools/cli_temporl.h, both through MeasureSplitLayer.
//
//   ASSIGN_OR_RETURN(braid::SimResult r, braid::SimulatePlan(sim_graph, plan, /*timeline=*/true));
//   ASSIGN_OR_RETURN(auto placement, braid::CompilePlacement(sim_graph, plan));
//   for (const braid::SplitLayerMetrics& m :
//        braid::SplitMetricsFromSim(sim_graph, placement, r))
//     std::cout << m.node << " gap " << m.gap_us << " us (simulated)\n";
//
// Definitions (docs/scheduler.md, "TempoRL"): a layer's parts a (its own
// device) and b (the slice's other device) run [start_a, end_a] and
// [start_b, end_b]. T_part = end - layer start, layer start = min(start_a,
// start_b), so the gap |T_a - T_b| = |end_a - end_b| is how long the join
// waits on the later part (queueing and input copies included). The layer's
// copies are those its issue caused: inputs copied to either part's device
// and part b's output copied back. hidden = the time of those copies that
// overlaps part a or part b running; hidden share = hidden / copy time.
#ifndef BRAID_SCHEDULER_SPLIT_METRICS_H_
#define BRAID_SCHEDULER_SPLIT_METRICS_H_

#include <span>
#include <string>
#include <vector>

#include "scheduler/simulator.h"

namespace braid {

struct TimeInterval {
  double start_us = 0, end_us = 0;
};

// One split layer as it ran (or was simulated).
struct SplitLayerTimeline {
  std::string node, device, other_device;
  double share = 0.5;  // of `device`'s part, as run (after the block rounding)
  TimeInterval part_a, part_b;
  std::vector<TimeInterval> copies;
};

struct SplitLayerMetrics {
  std::string node, device, other_device;
  double share = 0.5;
  double part_a_us = 0, part_b_us = 0;      // durations
  double finish_a_us = 0, finish_b_us = 0;  // T_part: end - layer start
  double gap_us = 0;                        // |finish_a - finish_b|
  double copy_us = 0;                       // the layer's copies, summed
  double hidden_copy_us = 0;                // of which overlapping part a or b
  // hidden / copy time; -1 when the layer copied nothing (mapped memory).
  double hidden_share = -1;
};

SplitLayerMetrics MeasureSplitLayer(const SplitLayerTimeline& layer);

// Every sliced node of `placement` in `result` (which Simulator::Run made
// with timeline = true from that placement). Empty without a timeline.
std::vector<SplitLayerTimeline> SplitTimelinesFromSim(const SimGraph& sim_graph,
                                                      std::span<const SimPlacement> placement,
                                                      const SimResult& result);
std::vector<SplitLayerMetrics> SplitMetricsFromSim(const SimGraph& sim_graph,
                                                   std::span<const SimPlacement> placement,
                                                   const SimResult& result);

struct SplitSummary {
  int layers = 0;
  double mean_gap_us = 0, max_gap_us = 0;
  double copy_us = 0, hidden_copy_us = 0;
  // Over all layers' copies: hidden / copy time; -1 when nothing was copied.
  double hidden_share = -1;
};
SplitSummary SummarizeSplits(std::span<const SplitLayerMetrics> layers);

}  // namespace braid

#endif  // BRAID_SCHEDULER_SPLIT_METRICS_H_
