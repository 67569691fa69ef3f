#include "tools/profile_report.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <numeric>
#include <optional>
#include <sstream>

#include "graph/json.h"
#include "graph/text.h"
#include "runtime/slicing.h"
#include "scheduler/cache_residency.h"

namespace braid::cli {

using profiling::PlanTimings;
using profiling::StepProfile;

namespace {

std::string Num(double v, int digits = 3) { return FixedDigits(v, digits); }

std::string XmlEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// A colour per op class, so the timeline reads at a glance.
const char* ClassColour(OpClass c) {
  switch (c) {
    case OpClass::kConv: return "#4e79a7";
    case OpClass::kDepthwiseConv: return "#76b7b2";
    case OpClass::kGemm: return "#f28e2b";
    case OpClass::kPool: return "#59a14f";
    case OpClass::kElementwise: return "#edc948";
    case OpClass::kNormalization: return "#b07aa1";
    case OpClass::kReduce: return "#ff9da7";
    case OpClass::kDataMovement: return "#9c755f";
    case OpClass::kOther: return "#bab0ac";
  }
  return "#bab0ac";
}

const char* const kVirtualNote = "virtual device (vgpu): its times are a model, not a GPU measurement";

}  // namespace

std::vector<double> PredictSteps(const PlanTimings& timings, const CostModel& model) {
  // Per device, its nodes' cold bytes in its own run order. The engine runs
  // the graph with its slices expanded (runtime/slicing.h): parts and joins
  // are nodes of their own there, with arena buffers of their own.
  const Graph* graph = &timings.graph;
  std::vector<std::string> device_of;  // per node of *graph
  std::optional<SlicedGraph> sliced;
  const bool plan_matches = timings.plan.nodes.size() == static_cast<size_t>(graph->num_nodes());
  if (plan_matches) {
    bool any_slice = false;
    for (const NodePlan& p : timings.plan.nodes) any_slice = any_slice || p.slice.has_value();
    if (any_slice)
      if (StatusOr<SlicedGraph> expanded = ExpandSlices(*graph, timings.plan); expanded.ok())
        sliced = std::move(*expanded);
    if (sliced) {
      graph = &sliced->graph;
      for (const SlicedNode& n : sliced->nodes) device_of.push_back(n.device);
    } else {
      // No slices; or ones the engine could not have expanded, whose nodes
      // then count as running nowhere here.
      for (const NodePlan& p : timings.plan.nodes) device_of.push_back(p.slice ? "" : p.device);
    }
  }
  std::map<std::string, std::vector<ColdBytes>> cold_by_device;
  std::map<std::string, NodeId> node_of;
  if (device_of.size() == static_cast<size_t>(graph->num_nodes()))
    for (NodeId n = 0; n < graph->num_nodes(); ++n) node_of[graph->node(n).name] = n;
  auto cold_bytes = [&](const StepProfile& s) {
    auto node = node_of.find(s.name);
    const int d = model.DeviceIndex(s.device);
    if (node == node_of.end() || d < 0) return ColdBytes{};
    auto [it, added] = cold_by_device.try_emplace(s.device);
    if (added) {
      // Its nodes, and the others' that run on the host's other cores (the
      // vgpu's: the lines their copies read stay held there).
      std::vector<uint8_t> here(device_of.size(), 0), other_cores(device_of.size(), 0);
      for (size_t i = 0; i < here.size(); ++i) {
        here[i] = device_of[i] == s.device;
        const int k = model.DeviceIndex(device_of[i]);
        other_cores[i] = !here[i] && k >= 0 &&
                         model.profile().devices[static_cast<size_t>(k)].kind == "vgpu";
      }
      const DeviceSpec& spec = model.profile().devices[static_cast<size_t>(d)];
      it->second = ColdBytesPerNode(*graph, spec.cache_bytes, spec.llc_bytes, here, other_cores);
    }
    return it->second[static_cast<size_t>(node->second)];
  };
  std::vector<double> out;
  for (const StepProfile& s : timings.steps) {
    if (s.category == "copy") {
      const int from = model.DeviceIndex(s.from_device), to = model.DeviceIndex(s.to_device);
      out.push_back(from < 0 || to < 0 ? -1 : model.TransferUs(from, to, s.bytes));
    } else {
      const int d = model.DeviceIndex(s.device);
      OpWork w;  // with the op type, so its fitted factor applies
      w.op_class = s.op_class;
      w.op_type = s.op_key.empty() ? s.op_type : s.op_key;
      w.flops = s.annotation.flops;
      w.bytes = s.work_bytes >= 0 ? s.work_bytes : s.annotation.bytes;
      w.weight_sparsity = s.annotation.weight_sparsity;
      w.sparse_class = s.sparse_class;
      w.copied_bytes = s.copied_bytes;
      AssignColdBytes(cold_bytes(s), w);
      w.view = s.view;
      out.push_back(d < 0 ? -1 : model.Cost(w, d).TotalUs());
    }
  }
  return out;
}

std::string ProfileTrack(const StepProfile& step) {
  return step.virtual_device ? step.track + " (virtual)" : step.track;
}

void AppendProfileTrace(const ProfileData& data, TraceWriter& trace) {
  const PlanTimings& t = *data.timings;
  for (size_t i = 0; i < t.steps.size(); ++i) {
    const StepProfile& s = t.steps[i];
    if (s.runs == 0) continue;
    const double pred = i < data.predicted_us.size() ? data.predicted_us[i] : -1.0;
    TraceEvent& e = trace.Add({s.name, s.category, ProfileTrack(s), s.start_us, s.median_us, {}});
    if (s.category == "copy") {
      e.Arg("bytes", s.bytes).Arg("from", s.from_device).Arg("to", s.to_device);
    } else {
      e.Arg("op", s.op_type)
          .Arg("class", OpClassName(s.op_class))
          .Arg("implementation", s.implementation)
          .Arg("flops", s.annotation.flops)
          .Arg("bytes", s.annotation.bytes)
          .Arg("intensity", s.annotation.intensity)
          .Arg("weight_sparsity", s.annotation.weight_sparsity);
    }
    e.Arg("device", s.device)
        .Arg("measured_us", s.median_us)
        .Arg("predicted_us", pred)
        .Arg("runs", static_cast<double>(s.runs))
        .Arg("profile", data.profile);
    if (s.virtual_device) e.Arg("note", kVirtualNote);
  }
  if (data.simulated == nullptr || data.sim_graph == nullptr) return;
  const SimGraph& g = *data.sim_graph;
  for (size_t i = 0; i < data.simulated->nodes.size(); ++i) {
    const SimNodeTime& n = data.simulated->nodes[i];
    const std::string dev = g.devices[static_cast<size_t>(n.device)];
    trace.Add({g.node_names[i], "simulated", "simulated:" + dev + "/stream0", n.start_us,
               n.end_us - n.start_us, {}})
        .Arg("op", g.op_types[i])
        .Arg("device", dev)
        .Arg("predicted_us", n.end_us - n.start_us)
        .Arg("note", "simulated by the cost model, not measured");
    if (n.other_device >= 0)
      trace.Add({g.node_names[i] + " (slice)", "simulated",
                 "simulated:" + g.devices[static_cast<size_t>(n.other_device)] + "/stream0",
                 n.other_start_us, n.other_end_us - n.other_start_us, {}});
  }
  for (const SimCopy& c : data.simulated->copy_log)
    trace.Add({"copy " + std::to_string(c.value), "simulated-copy",
               "simulated:" + g.devices[static_cast<size_t>(c.from)] + "->" +
                   g.devices[static_cast<size_t>(c.to)],
               c.start_us, c.end_us - c.start_us, {}})
        .Arg("bytes", c.bytes);
}

std::string ProfileSvg(const ProfileData& data) {
  const PlanTimings& t = *data.timings;
  const double width = 1000, left = 170, right = 20, plot = width - left - right;
  // Measured tracks in order of first use.
  std::vector<std::string> tracks;
  double measured_span = 0;
  for (const StepProfile& s : t.steps) {
    if (s.runs == 0) continue;
    if (std::find(tracks.begin(), tracks.end(), ProfileTrack(s)) == tracks.end())
      tracks.push_back(ProfileTrack(s));
    measured_span = std::max(measured_span, s.end_us);
  }
  const double sim_total = data.simulated ? data.simulated->latency_us : 0;
  const double span = std::max({measured_span, sim_total, 1e-9});
  std::vector<size_t> order;
  for (size_t i = 0; i < t.steps.size(); ++i)
    if (t.steps[i].runs > 0) order.push_back(i);
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return t.steps[a].median_us > t.steps[b].median_us; });
  const size_t bars = std::min<size_t>(order.size(), 25);
  const double row = 18, timeline_top = 50;
  const int sim_rows = data.simulated && data.sim_graph ? data.sim_graph->num_devices : 0;
  const double bars_top =
      timeline_top + static_cast<double>(tracks.size() + static_cast<size_t>(sim_rows)) * 30 + 60;
  const double height = bars_top + static_cast<double>(bars) * row + 40;
  bool any_virtual = false;
  for (const StepProfile& s : t.steps) any_virtual = any_virtual || s.virtual_device;
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
    << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << "<text x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\">" << XmlEscape(t.model)
    << ": measured engine timeline (median of " << t.iterations << " runs, policy "
    << XmlEscape(t.plan.policy) << ") vs simulated on profile " << XmlEscape(data.profile)
    << "</text>\n"
    << "<text x=\"10\" y=\"38\">span " << Num(span / 1e3) << " ms; colours = op class; copies grey"
    << (any_virtual ? "; (virtual) rows are braid's virtual GPU: a model, not a GPU measurement"
                    : "")
    << "</text>\n";
  auto x_of = [&](double us) { return left + plot * us / span; };
  double y = timeline_top;
  for (const std::string& track : tracks) {
    s << "<text x=\"10\" y=\"" << y + 14 << "\">" << XmlEscape(track) << "</text>\n";
    for (const StepProfile& st : t.steps) {
      if (st.runs == 0 || ProfileTrack(st) != track) continue;
      const bool copy = st.category == "copy";
      s << "<rect x=\"" << Num(x_of(st.start_us)) << "\" y=\"" << y << "\" width=\""
        << Num(std::max(0.5, plot * st.median_us / span)) << "\" height=\"20\" fill=\""
        << (copy ? "#888888" : ClassColour(st.op_class)) << "\"><title>" << XmlEscape(st.name)
        << (copy ? "" : " (" + st.op_type + ")") << " " << Num(st.median_us) << " us measured"
        << (st.virtual_device ? " (virtual device)" : "") << "</title></rect>\n";
    }
    y += 30;
  }
  for (int d = 0; d < sim_rows; ++d) {
    s << "<text x=\"10\" y=\"" << y + 14 << "\">simulated "
      << XmlEscape(data.sim_graph->devices[static_cast<size_t>(d)]) << "</text>\n";
    for (size_t i = 0; i < data.simulated->nodes.size(); ++i) {
      const SimNodeTime& n = data.simulated->nodes[i];
      if (n.device != d) continue;
      const OpClass c = i < t.graph.nodes().size() ? ClassifyOp(t.graph.nodes()[i]) : OpClass::kOther;
      s << "<rect x=\"" << Num(x_of(n.start_us)) << "\" y=\"" << y << "\" width=\""
        << Num(std::max(0.5, plot * (n.end_us - n.start_us) / span))
        << "\" height=\"20\" fill=\"" << ClassColour(c) << "\" fill-opacity=\"0.6\"><title>"
        << XmlEscape(data.sim_graph->node_names[i]) << " " << Num(n.end_us - n.start_us)
        << " us simulated</title></rect>\n";
    }
    y += 30;
  }
  // Per-step bars: measured (solid) and predicted (outline), top steps.
  auto pred_of = [&](size_t i) { return i < data.predicted_us.size() ? data.predicted_us[i] : -1.0; };
  double longest = 1e-9;
  for (size_t k = 0; k < bars; ++k)
    longest = std::max({longest, t.steps[order[k]].median_us, pred_of(order[k])});
  s << "<text x=\"10\" y=\"" << bars_top - 12 << "\" font-size=\"13\" font-weight=\"bold\">top "
    << bars << " steps: measured median (solid) vs predicted by the cost model (outline), us</text>\n";
  for (size_t k = 0; k < bars; ++k) {
    const size_t i = order[k];
    const StepProfile& st = t.steps[i];
    const double by = bars_top + static_cast<double>(k) * row;
    std::string label = st.name.size() > 26 ? "..." + st.name.substr(st.name.size() - 23) : st.name;
    if (st.virtual_device) label += " [v]";
    s << "<text x=\"10\" y=\"" << by + 12 << "\">" << XmlEscape(label) << "</text>\n"
      << "<rect x=\"" << left << "\" y=\"" << by + 2 << "\" width=\""
      << Num(plot * 0.85 * st.median_us / longest) << "\" height=\"12\" fill=\""
      << (st.category == "copy" ? "#888888" : ClassColour(st.op_class)) << "\"/>\n";
    if (pred_of(i) >= 0)
      s << "<rect x=\"" << left << "\" y=\"" << by + 1 << "\" width=\""
        << Num(plot * 0.85 * pred_of(i) / longest)
        << "\" height=\"14\" fill=\"none\" stroke=\"black\"/>\n";
    s << "<text x=\"" << Num(left + plot * 0.85 * std::max(st.median_us, pred_of(i)) / longest + 4)
      << "\" y=\"" << by + 12 << "\">" << Num(st.median_us, 1) << " / "
      << (pred_of(i) >= 0 ? Num(pred_of(i), 1) : std::string("-")) << " ("
      << XmlEscape(st.device) << ")</text>\n";
  }
  s << "</svg>\n";
  return s.str();
}

std::string ProfileCsv(const ProfileData& data) {
  std::ostringstream s;
  s << "index,name,category,op,class,device,virtual,track,implementation,flops,bytes,intensity,"
       "weight_sparsity,start_us,end_us,measured_median_us,predicted_us,error_pct\n";
  const PlanTimings& t = *data.timings;
  for (size_t i = 0; i < t.steps.size(); ++i) {
    const StepProfile& st = t.steps[i];
    const double pred = i < data.predicted_us.size() ? data.predicted_us[i] : -1;
    const bool copy = st.category == "copy";
    s << i << "," << CsvField(st.name) << "," << st.category << "," << st.op_type << ","
      << (copy ? "copy" : OpClassName(st.op_class)) << "," << st.device << ","
      << (st.virtual_device ? "yes" : "no") << "," << CsvField(st.track) << ","
      << CsvField(st.implementation) << "," << JsonNumber(st.annotation.flops) << ","
      << JsonNumber(copy ? st.bytes : st.annotation.bytes) << ","
      << JsonNumber(st.annotation.intensity) << "," << JsonNumber(st.annotation.weight_sparsity)
      << "," << Num(st.start_us) << "," << Num(st.end_us) << "," << Num(st.median_us) << ","
      << Num(pred) << ","
      << (pred >= 0 && st.median_us > 0 ? Num(100.0 * (pred - st.median_us) / st.median_us, 1)
                                        : std::string())
      << "\n";
  }
  return s.str();
}

Status WriteTextFile(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return NotFound("cannot open '" + path + "' for writing");
  f << text;
  f.close();
  if (!f) return Internal("writing '" + path + "' failed");
  return Status::Ok();
}

}  // namespace braid::cli
