#include "scheduler/split_metrics.h"

#include <algorithm>
#include <cmath>

namespace braid {
namespace {

double Overlap(const TimeInterval& x, double lo, double hi) {
  return std::max(0.0, std::min(x.end_us, hi) - std::max(x.start_us, lo));
}

}  // namespace

SplitLayerMetrics MeasureSplitLayer(const SplitLayerTimeline& layer) {
  SplitLayerMetrics m;
  m.node = layer.node;
  m.device = layer.device;
  m.other_device = layer.other_device;
  m.share = layer.share;
  const TimeInterval& a = layer.part_a;
  const TimeInterval& b = layer.part_b;
  m.part_a_us = std::max(0.0, a.end_us - a.start_us);
  m.part_b_us = std::max(0.0, b.end_us - b.start_us);
  const double start = std::min(a.start_us, b.start_us);
  m.finish_a_us = a.end_us - start;
  m.finish_b_us = b.end_us - start;
  m.gap_us = std::abs(m.finish_a_us - m.finish_b_us);
  // Overlap with the union of the parts: |c ^ a| + |c ^ b| - |c ^ a ^ b|.
  const double both_lo = std::max(a.start_us, b.start_us);
  const double both_hi = std::min(a.end_us, b.end_us);
  for (const TimeInterval& c : layer.copies) {
    m.copy_us += std::max(0.0, c.end_us - c.start_us);
    m.hidden_copy_us += Overlap(c, a.start_us, a.end_us) + Overlap(c, b.start_us, b.end_us) -
                        (both_hi > both_lo ? Overlap(c, both_lo, both_hi) : 0.0);
  }
  if (m.copy_us > 0) m.hidden_share = m.hidden_copy_us / m.copy_us;
  return m;
}

std::vector<SplitLayerTimeline> SplitTimelinesFromSim(const SimGraph& g,
                                                      std::span<const SimPlacement> placement,
                                                      const SimResult& result) {
  std::vector<SplitLayerTimeline> out;
  if (result.nodes.size() != static_cast<size_t>(g.num_nodes)) return out;
  std::vector<int> index(static_cast<size_t>(g.num_nodes), -1);
  for (size_t n = 0; n < placement.size() && n < result.nodes.size(); ++n) {
    const SimPlacement& p = placement[n];
    if (p.other_device < 0) continue;
    const SimNodeTime& t = result.nodes[n];
    SplitLayerTimeline layer;
    layer.node = g.node_names[n];
    layer.device = g.devices[static_cast<size_t>(p.device)];
    layer.other_device = g.devices[static_cast<size_t>(p.other_device)];
    layer.share = SliceShare(g, static_cast<int>(n), p);
    layer.part_a = {t.start_us, t.end_us};
    layer.part_b = {t.other_start_us, t.other_end_us};
    index[n] = static_cast<int>(out.size());
    out.push_back(std::move(layer));
  }
  for (const SimCopy& c : result.copy_log) {
    if (c.node < 0 || c.node >= g.num_nodes || index[static_cast<size_t>(c.node)] < 0) continue;
    out[static_cast<size_t>(index[static_cast<size_t>(c.node)])].copies.push_back(
        {c.start_us, c.end_us});
  }
  return out;
}

std::vector<SplitLayerMetrics> SplitMetricsFromSim(const SimGraph& sim_graph,
                                                   std::span<const SimPlacement> placement,
                                                   const SimResult& result) {
  std::vector<SplitLayerMetrics> out;
  for (const SplitLayerTimeline& t : SplitTimelinesFromSim(sim_graph, placement, result))
    out.push_back(MeasureSplitLayer(t));
  return out;
}

SplitSummary SummarizeSplits(std::span<const SplitLayerMetrics> layers) {
  SplitSummary s;
  s.layers = static_cast<int>(layers.size());
  for (const SplitLayerMetrics& m : layers) {
    s.mean_gap_us += m.gap_us;
    s.max_gap_us = std::max(s.max_gap_us, m.gap_us);
    s.copy_us += m.copy_us;
    s.hidden_copy_us += m.hidden_copy_us;
  }
  if (s.layers > 0) s.mean_gap_us /= s.layers;
  if (s.copy_us > 0) s.hidden_share = s.hidden_copy_us / s.copy_us;
  return s;
}

}  // namespace braid
