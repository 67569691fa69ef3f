#include "scheduler/simulator.h"

#include <algorithm>
#include <cmath>

#include "graph/op_schema.h"
#include "scheduler/cache_residency.h"

namespace braid {

StatusOr<SimGraph> BuildSimGraph(const Graph& graph, const CostModel& model,
                                 const std::vector<std::string>& devices) {
  if (devices.empty()) return InvalidArgument("simulator: no devices given");
  SimGraph g;
  g.devices = devices;
  g.num_devices = static_cast<int>(devices.size());
  g.num_nodes = graph.num_nodes();
  const size_t D = devices.size();
  std::vector<int> profile_index(D);
  std::string known;
  for (const DeviceSpec& d : model.profile().devices) known += (known.empty() ? "" : ", ") + d.name;
  for (size_t i = 0; i < D; ++i) {
    profile_index[i] = model.DeviceIndex(devices[i]);
    if (profile_index[i] < 0)
      return NotFound("device '" + devices[i] + "' is not in profile '" + model.profile().name +
                      "' (it has: " + known + ")");
    for (size_t j = 0; j < i; ++j)
      if (devices[j] == devices[i]) return InvalidArgument("device '" + devices[i] + "' listed twice");
  }

  // Per device.
  g.concurrent_kernels.resize(D);
  g.active_power_w.resize(D);
  g.idle_power_w.resize(D);
  for (size_t i = 0; i < D; ++i) {
    const DeviceSpec& spec = model.profile().devices[static_cast<size_t>(profile_index[i])];
    g.concurrent_kernels[i] = spec.concurrent_kernels;
    g.active_power_w[i] = spec.active_power_w;
    g.idle_power_w[i] = spec.idle_power_w;
  }
  g.static_power_w = model.profile().static_power_w;

  // Links.
  g.link_latency_us.assign(D * D, 0);
  g.link_us_per_byte.assign(D * D, 0);
  g.link_mapped.assign(D * D, 1);
  g.copy_engines.assign(D * D, 1);
  for (size_t a = 0; a < D; ++a) {
    for (size_t b = 0; b < D; ++b) {
      if (a == b || profile_index[a] == profile_index[b]) continue;
      const LinkSpec* l = model.profile().FindLink(
          model.profile().devices[static_cast<size_t>(profile_index[a])].name,
          model.profile().devices[static_cast<size_t>(profile_index[b])].name);
      if (l == nullptr)
        return NotFound("profile '" + model.profile().name + "' has no link " + devices[a] +
                        " -> " + devices[b]);
      const size_t k = a * D + b;
      // A handoff wakes the stream that copies (the accelerator's, as the
      // engine's copy streams are) and the reader's (DeviceSpec::sync_us).
      const auto& spec = model.profile().devices;
      const double reader_wake = spec[static_cast<size_t>(profile_index[b])].sync_us;
      const double copier_wake =
          l->mapped ? 0 : spec[static_cast<size_t>(profile_index[a == 0 ? b : a])].sync_us;
      g.link_mapped[k] = l->mapped ? 1 : 0;
      g.link_latency_us[k] = (l->mapped ? 0 : l->latency_us) + copier_wake + reader_wake;
      g.link_us_per_byte[k] = l->mapped ? 0 : 1.0 / (l->bandwidth_gbps * 1e3);
      g.copy_engines[k] = l->copy_engines;
    }
  }

  // Values: graph inputs and node outputs that are not constants.
  std::vector<int32_t> sim_value(static_cast<size_t>(graph.num_values()), -1);
  auto add_value = [&](ValueId id) {
    sim_value[static_cast<size_t>(id)] = g.num_values;
    g.value_root.push_back(g.num_values++);
    g.value_bytes.push_back(ValueBytes(graph, id));
  };
  for (ValueId id : graph.inputs()) {
    if (graph.IsConstant(id) || sim_value[static_cast<size_t>(id)] >= 0) continue;
    add_value(id);
    g.graph_input_values.push_back(sim_value[static_cast<size_t>(id)]);
  }
  g.overhead_us.resize(static_cast<size_t>(g.num_nodes) * D);
  g.work_us.resize(static_cast<size_t>(g.num_nodes) * D);
  g.copied_work_us.resize(static_cast<size_t>(g.num_nodes) * D);
  g.join_us.resize(static_cast<size_t>(g.num_nodes) * D);
  g.in_begin.push_back(0);
  g.out_begin.push_back(0);
  // Cold bytes per device as if it ran the nodes in graph order (the
  // all-on-one-device order; costs here do not depend on the placement).
  std::vector<std::vector<ColdBytes>> cold_bytes(D);
  for (size_t d = 0; d < D; ++d) {
    const DeviceSpec& spec = model.profile().devices[static_cast<size_t>(profile_index[d])];
    cold_bytes[d] = ColdBytesPerNode(graph, spec.cache_bytes, spec.llc_bytes);
  }
  for (NodeId n = 0; n < graph.num_nodes(); ++n) {
    const Node& node = graph.node(n);
    g.node_names.push_back(node.name);
    g.op_types.push_back(node.op_type);
    for (auto [axis, extents] : {std::pair{SliceAxis::kOutputChannels, &g.channel_extent},
                                 std::pair{SliceAxis::kBatch, &g.batch_extent},
                                 std::pair{SliceAxis::kRows, &g.row_extent}})
      extents->push_back(IsSliceable(node, axis) && !node.outputs.empty() &&
                                 node.outputs[0] != kNoValue &&
                                 graph.value(node.outputs[0]).has_shape
                             ? static_cast<int32_t>(SliceExtent(graph, node, axis))
                             : -1);
    OpWork work = OpWorkOf(node, &graph);
    double activation_input_bytes = 0;  // distinct non-constant inputs
    for (size_t i = 0; i < node.inputs.size(); ++i)
      if (node.inputs[i] != kNoValue && !graph.IsConstant(node.inputs[i]) &&
          !RepeatsEarlierInput(node, i))
        activation_input_bytes += ValueBytes(graph, node.inputs[i]);
    for (size_t d = 0; d < D; ++d) {
      const ColdBytes& cb = cold_bytes[d][static_cast<size_t>(n)];
      AssignColdBytes(cb, work);
      work.copied_bytes = 0;
      const OpCost c = model.Cost(work, profile_index[d]);
      g.overhead_us[static_cast<size_t>(n) * D + d] = c.overhead_us;
      g.work_us[static_cast<size_t>(n) * D + d] = std::max(c.compute_us, c.memory_us);
      // All its inputs copied in: they pay the copied read, not a cold one;
      // its output's bytes keep their history.
      work.copied_bytes = activation_input_bytes;
      AssignColdBytes(cb.Written(), work);
      const OpCost cold = model.Cost(work, profile_index[d]);
      g.copied_work_us[static_cast<size_t>(n) * D + d] = std::max(cold.compute_us, cold.memory_us);
    }
    // The join: the engine's "#join" Concat of a channel split (the slices
    // policies make), priced as OpWorkOf prices that node.
    const OpWork join = JoinWork(graph, node, SliceAxis::kOutputChannels);
    for (size_t d = 0; d < D; ++d)
      g.join_us[static_cast<size_t>(n) * D + d] = model.Cost(join, profile_index[d]).TotalUs();
    for (ValueId in : node.inputs) {
      if (in == kNoValue || graph.IsConstant(in)) continue;
      const int32_t v = sim_value[static_cast<size_t>(in)];
      if (v < 0)
        return InvalidArgument("simulator: node '" + node.name + "' reads '" +
                               graph.value(in).name + "' before it is produced");
      // A node reading one value twice needs it once.
      if (std::find(g.in_values.begin() + g.in_begin.back(), g.in_values.end(), v) ==
          g.in_values.end())
        g.in_values.push_back(v);
    }
    g.in_begin.push_back(static_cast<int32_t>(g.in_values.size()));
    for (ValueId out : node.outputs) {
      if (out == kNoValue || graph.IsConstant(out)) continue;
      add_value(out);
      g.out_values.push_back(sim_value[static_cast<size_t>(out)]);
      if (out == node.outputs[0] && RunsAsView(graph, node)) {
        const int32_t in = sim_value[static_cast<size_t>(node.inputs[0])];
        if (in >= 0) g.value_root.back() = g.value_root[static_cast<size_t>(in)];
      }
    }
    g.out_begin.push_back(static_cast<int32_t>(g.out_values.size()));
  }
  for (ValueId out : graph.outputs()) {
    if (graph.IsConstant(out)) continue;
    const int32_t v = sim_value[static_cast<size_t>(out)];
    if (v >= 0) g.graph_output_values.push_back(v);
  }
  return g;
}

StatusOr<std::vector<SimPlacement>> CompilePlacement(const SimGraph& g, const Plan& plan) {
  if (static_cast<int>(plan.nodes.size()) != g.num_nodes)
    return InvalidArgument("plan has " + std::to_string(plan.nodes.size()) +
                           " node entries, the graph has " + std::to_string(g.num_nodes));
  auto index = [&](const std::string& name) -> int {
    for (size_t i = 0; i < g.devices.size(); ++i)
      if (g.devices[i] == name) return static_cast<int>(i);
    return -1;
  };
  std::vector<SimPlacement> out(plan.nodes.size());
  for (size_t i = 0; i < plan.nodes.size(); ++i) {
    const NodePlan& p = plan.nodes[i];
    const std::string where = "plan entry " + std::to_string(i) + " ('" + p.node + "')";
    if (p.node != g.node_names[i])
      return InvalidArgument(where + " does not match graph node '" + g.node_names[i] + "'");
    const int d = index(p.device);
    if (d < 0) return InvalidArgument(where + ": device '" + p.device + "' is not simulated");
    if (p.stream < 0 || p.stream > 1024) return InvalidArgument(where + ": bad stream");
    out[i].device = static_cast<int16_t>(d);
    out[i].stream = static_cast<int16_t>(p.stream);
    if (p.slice) {
      const int o = index(p.slice->other_device);
      if (o < 0 || o == d)
        return InvalidArgument(where + ": bad slice device '" + p.slice->other_device + "'");
      if (!(p.slice->ratio > 0 && p.slice->ratio < 1))
        return InvalidArgument(where + ": slice ratio must be in (0, 1)");
      out[i].other_device = static_cast<int16_t>(o);
      out[i].axis = p.slice->axis;
      // The engine's split of the double ratio (runtime/slicing.cc), stored
      // as split / extent: a float of the ratio itself could round to the
      // other side of a half (batch 10 at 0.35: 4 items, 3 from the float).
      // split / extent survives the float and SliceShare's re-split exactly.
      const int32_t extent = g.SliceExtentOf(static_cast<int>(i), p.slice->axis);
      out[i].ratio = static_cast<float>(
          extent >= 2 ? static_cast<double>(SliceSplitIndex(extent, p.slice->ratio,
                                                            p.slice->axis)) /
                            extent
                      : p.slice->ratio);
    }
  }
  return out;
}

int32_t SimGraph::SliceExtentOf(int node, SliceAxis axis) const {
  const std::vector<int32_t>& extents = axis == SliceAxis::kBatch  ? batch_extent
                                        : axis == SliceAxis::kRows ? row_extent
                                                                   : channel_extent;
  return node >= 0 && static_cast<size_t>(node) < extents.size()
             ? extents[static_cast<size_t>(node)]
             : -1;
}

double SliceShare(const SimGraph& g, int node, const SimPlacement& p) {
  if (p.other_device < 0) return 1.0;
  const int32_t extent = g.SliceExtentOf(node, p.axis);
  if (extent < 2) return static_cast<double>(p.ratio);
  return static_cast<double>(SliceSplitIndex(extent, static_cast<double>(p.ratio), p.axis)) /
         static_cast<double>(extent);
}

Simulator::Simulator(const SimGraph& graph) : g_(graph) {
  const size_t D = static_cast<size_t>(g_.num_devices);
  for (int32_t k : g_.concurrent_kernels) max_slots_ = std::max(max_slots_, static_cast<int>(k));
  for (int32_t e : g_.copy_engines) max_engines_ = std::max(max_engines_, static_cast<int>(e));
  value_ready_.resize(static_cast<size_t>(g_.num_values) * D);
  value_home_.resize(static_cast<size_t>(g_.num_values));
  stream_free_.resize(D * static_cast<size_t>(max_streams_));
  slot_free_.resize(D * static_cast<size_t>(max_slots_));
  engine_free_.resize(D * D * static_cast<size_t>(max_engines_));
  device_last_end_.resize(D);
  result_.devices.resize(D);
}

double Simulator::Copy(int value, int from, int to, double ready_us, double bytes) {
  const size_t D = static_cast<size_t>(g_.num_devices);
  const size_t link = static_cast<size_t>(from) * D + static_cast<size_t>(to);
  if (g_.link_mapped[link]) {
    result_.bytes_mapped += bytes;
    const double end = ready_us + g_.link_latency_us[link];  // the reader's wake-up only
    result_.latency_us = std::max(result_.latency_us, end);
    return end;
  }
  // The engine of this direction that frees first.
  double* engines = &engine_free_[link * static_cast<size_t>(max_engines_)];
  double* engine = engines;
  for (int e = 1; e < g_.copy_engines[link]; ++e)
    if (engines[e] < *engine) engine = &engines[e];
  const double start = std::max(ready_us, *engine);
  const double end = start + g_.link_latency_us[link] + bytes * g_.link_us_per_byte[link];
  *engine = end;
  result_.bytes_moved += bytes;
  ++result_.copies;
  result_.latency_us = std::max(result_.latency_us, end);
  if (timeline_)
    result_.copy_log.push_back({value, current_node_, static_cast<int16_t>(from),
                                static_cast<int16_t>(to), bytes, start, end});
  return end;
}

double Simulator::Available(int value, int device) {
  const size_t D = static_cast<size_t>(g_.num_devices);
  double& here = value_ready_[static_cast<size_t>(value) * D + static_cast<size_t>(device)];
  if (here >= 0) return here;
  const int home = value_home_[static_cast<size_t>(value)];
  const double ready = value_ready_[static_cast<size_t>(value) * D + static_cast<size_t>(home)];
  here = Copy(value, home, device, ready, g_.value_bytes[static_cast<size_t>(value)]);
  return here;
}

bool Simulator::CopiedIn(int value, int device) const {
  const size_t D = static_cast<size_t>(g_.num_devices);
  // A view's bytes were made where its root was.
  const int home = value_home_[static_cast<size_t>(g_.value_root[static_cast<size_t>(value)])];
  return home != device && !g_.link_mapped[static_cast<size_t>(home) * D + static_cast<size_t>(device)];
}

double Simulator::RunKernel(int device, int stream, double ready_us, double duration_us) {
  const size_t d = static_cast<size_t>(device);
  double& stream_free = stream_free_[d * static_cast<size_t>(max_streams_) + static_cast<size_t>(stream)];
  double* slots = &slot_free_[d * static_cast<size_t>(max_slots_)];
  double* slot = slots;
  for (int s = 1; s < g_.concurrent_kernels[d]; ++s)
    if (slots[s] < *slot) slot = &slots[s];
  const double start = std::max({ready_us, stream_free, *slot});
  const double end = start + duration_us;
  stream_free = end;
  *slot = end;
  SimDeviceStats& stats = result_.devices[d];
  stats.busy_us += duration_us;
  ++stats.kernels;
  if (start > device_last_end_[d] && stats.kernels > 1) {
    ++stats.idle_gaps;
    stats.largest_gap_us = std::max(stats.largest_gap_us, start - device_last_end_[d]);
  }
  device_last_end_[d] = std::max(device_last_end_[d], end);
  result_.latency_us = std::max(result_.latency_us, end);
  return end;
}

const SimResult& Simulator::Run(std::span<const SimPlacement> placement, bool timeline) {
  const size_t D = static_cast<size_t>(g_.num_devices);
  int streams = 1;
  for (const SimPlacement& p : placement) streams = std::max(streams, p.stream + 1);
  if (streams > max_streams_) {
    max_streams_ = streams;
    stream_free_.resize(D * static_cast<size_t>(max_streams_));
  }
  std::fill(value_ready_.begin(), value_ready_.end(), -1.0);
  std::fill(stream_free_.begin(), stream_free_.end(), 0.0);
  std::fill(slot_free_.begin(), slot_free_.end(), 0.0);
  std::fill(engine_free_.begin(), engine_free_.end(), 0.0);
  std::fill(device_last_end_.begin(), device_last_end_.end(), 0.0);
  for (SimDeviceStats& s : result_.devices) s = SimDeviceStats{};
  result_.latency_us = result_.energy_j = result_.bytes_moved = result_.bytes_mapped = 0;
  result_.copies = 0;
  timeline_ = timeline;
  result_.copy_log.clear();
  if (timeline) {
    result_.nodes.assign(static_cast<size_t>(g_.num_nodes), SimNodeTime{});
  } else {
    result_.nodes.clear();
  }
  for (int32_t v : g_.graph_input_values) {
    value_home_[static_cast<size_t>(v)] = 0;
    value_ready_[static_cast<size_t>(v) * D] = 0;
  }

  const size_t n_nodes = std::min(placement.size(), static_cast<size_t>(g_.num_nodes));
  for (size_t n = 0; n < n_nodes; ++n) {
    const SimPlacement& p = placement[n];
    current_node_ = static_cast<int32_t>(n);
    const int d = p.device;
    const bool sliced = p.other_device >= 0;
    const double share = sliced ? SliceShare(g_, static_cast<int>(n), p) : 1.0;
    double ready = 0, other_ready = 0;
    // Bytes of the inputs, and of those that came over a copying link.
    double input_bytes = 0, copied = 0, other_copied = 0;
    const bool cold_known = !g_.copied_work_us.empty();
    for (int32_t i = g_.in_begin[n]; i < g_.in_begin[n + 1]; ++i) {
      const int v = g_.in_values[static_cast<size_t>(i)];
      const double bytes = g_.value_bytes[static_cast<size_t>(v)];
      input_bytes += bytes;
      ready = std::max(ready, Available(v, d));
      if (cold_known && CopiedIn(v, d)) copied += bytes;
      if (sliced) {
        other_ready = std::max(other_ready, Available(v, p.other_device));
        if (cold_known && CopiedIn(v, p.other_device)) other_copied += bytes;
      }
    }
    // copied_work_us has every input copied in; with some, the share of
    // their bytes (exact while one roofline term bounds both ends).
    auto work_of = [&](size_t k, double copied_bytes) {
      if (copied_bytes <= 0) return g_.work_us[k];
      if (!(input_bytes > copied_bytes)) return g_.copied_work_us[k];
      return g_.work_us[k] + (g_.copied_work_us[k] - g_.work_us[k]) * copied_bytes / input_bytes;
    };
    const size_t k = n * D + static_cast<size_t>(d);
    const double work_main = work_of(k, copied);
    const double end_main = RunKernel(d, p.stream, ready, g_.overhead_us[k] + share * work_main);
    double done = end_main;
    double other_start = 0, other_end = 0;
    if (sliced) {
      const size_t ko = n * D + static_cast<size_t>(p.other_device);
      const double dur = g_.overhead_us[ko] +
                         (1.0 - share) * work_of(ko, other_copied);
      other_end = RunKernel(p.other_device, 0, other_ready, dur);
      other_start = other_end - dur;
      // The other device's part of the output joins the node's output.
      double out_bytes = 0;
      for (int32_t o = g_.out_begin[n]; o < g_.out_begin[n + 1]; ++o)
        out_bytes += g_.value_bytes[static_cast<size_t>(g_.out_values[static_cast<size_t>(o)])];
      const int first_out = g_.out_begin[n] < g_.out_begin[n + 1]
                                ? g_.out_values[static_cast<size_t>(g_.out_begin[n])]
                                : -1;
      const double parts_here =
          std::max(done, Copy(first_out, p.other_device, d, other_end, (1.0 - share) * out_bytes));
      done = RunKernel(d, p.stream, parts_here, g_.join_us[k]);
    }
    for (int32_t o = g_.out_begin[n]; o < g_.out_begin[n + 1]; ++o) {
      const size_t v = static_cast<size_t>(g_.out_values[static_cast<size_t>(o)]);
      value_home_[v] = static_cast<int16_t>(d);
      value_ready_[v * D + static_cast<size_t>(d)] = done;
    }
    if (timeline) {
      SimNodeTime& t = result_.nodes[n];
      t.device = static_cast<int16_t>(d);
      t.end_us = end_main;
      t.start_us = end_main - (g_.overhead_us[k] + share * work_main);
      t.other_device = p.other_device;
      t.other_start_us = other_start;
      t.other_end_us = other_end;
      t.done_us = done;
    }
  }
  current_node_ = -1;
  for (int32_t v : g_.graph_output_values) Available(v, 0);

  const double span = result_.latency_us;
  double energy = g_.static_power_w * span * 1e-6;
  for (size_t d = 0; d < D; ++d) {
    SimDeviceStats& s = result_.devices[d];
    s.idle_us = std::max(0.0, span - s.busy_us);
    s.energy_j = (g_.active_power_w[d] * s.busy_us + g_.idle_power_w[d] * s.idle_us) * 1e-6;
    energy += s.energy_j;
  }
  result_.energy_j = energy;
  return result_;
}

StatusOr<SimResult> SimulatePlan(const SimGraph& sim_graph, const Plan& plan, bool timeline) {
  ASSIGN_OR_RETURN(std::vector<SimPlacement> placement, CompilePlacement(sim_graph, plan));
  Simulator sim(sim_graph);
  return sim.Run(placement, timeline);
}

}  // namespace braid
