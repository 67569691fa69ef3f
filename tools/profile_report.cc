#include "tools/profile_report.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <sstream>

#include "graph/json.h"

namespace braid::cli {
namespace {

std::string Num(double v, int digits = 3) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

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

}  // namespace

void AppendProfileTrace(const ProfileData& data, TraceWriter& trace) {
  const ModelTimings& t = *data.timings;
  double at = 0;
  for (size_t i = 0; i < t.ops.size(); ++i) {
    const OpTiming& op = t.ops[i];
    TraceEvent& e = trace.Add({op.node, "kernel", "measured:" + data.device + "/stream0", at,
                               op.median_us, {}});
    e.Arg("op", op.op_type)
        .Arg("class", OpClassName(op.op_class))
        .Arg("device", data.device)
        .Arg("implementation", op.implementation)
        .Arg("flops", op.annotation.flops)
        .Arg("bytes", op.annotation.bytes)
        .Arg("intensity", op.annotation.intensity)
        .Arg("weight_sparsity", op.annotation.weight_sparsity)
        .Arg("measured_us", op.median_us)
        .Arg("predicted_us", i < data.predicted_us.size() ? data.predicted_us[i] : -1.0)
        .Arg("profile", data.profile);
    at += op.median_us;
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
  const ModelTimings& t = *data.timings;
  const double width = 1000, left = 170, right = 20, plot = width - left - right;
  const double measured_total =
      std::accumulate(t.ops.begin(), t.ops.end(), 0.0,
                      [](double s, const OpTiming& o) { return s + o.median_us; });
  const double sim_total = data.simulated ? data.simulated->latency_us : 0;
  const double span = std::max({measured_total, sim_total, 1e-9});
  std::vector<size_t> order(t.ops.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return t.ops[a].median_us > t.ops[b].median_us; });
  const size_t bars = std::min<size_t>(order.size(), 25);
  const double row = 18, timeline_top = 50;
  const int sim_rows = data.sim_graph ? data.sim_graph->num_devices : 0;
  const double bars_top = timeline_top + (1 + sim_rows) * 30 + 60;
  const double height = bars_top + static_cast<double>(bars) * row + 40;
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
    << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << "<text x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\">" << XmlEscape(t.model)
    << ": measured per-op medians on " << data.device << " (ops timed one at a time, laid end to end) vs "
    << "simulated plan on profile " << XmlEscape(data.profile) << "</text>\n"
    << "<text x=\"10\" y=\"38\">timeline span " << Num(span / 1e3) << " ms; colours = op class</text>\n";
  auto x_of = [&](double us) { return left + plot * us / span; };
  // Timeline rows.
  double y = timeline_top;
  s << "<text x=\"10\" y=\"" << y + 14 << "\">measured " << data.device << "</text>\n";
  double at = 0;
  for (const OpTiming& op : t.ops) {
    s << "<rect x=\"" << Num(x_of(at)) << "\" y=\"" << y << "\" width=\""
      << Num(std::max(0.5, plot * op.median_us / span)) << "\" height=\"20\" fill=\""
      << ClassColour(op.op_class) << "\"><title>" << XmlEscape(op.node) << " (" << op.op_type
      << ") " << Num(op.median_us) << " us measured</title></rect>\n";
    at += op.median_us;
  }
  if (data.simulated && data.sim_graph) {
    for (int d = 0; d < sim_rows; ++d) {
      y += 30;
      s << "<text x=\"10\" y=\"" << y + 14 << "\">simulated " << XmlEscape(data.sim_graph->devices[static_cast<size_t>(d)])
        << "</text>\n";
      for (size_t i = 0; i < data.simulated->nodes.size(); ++i) {
        const SimNodeTime& n = data.simulated->nodes[i];
        if (n.device != d) continue;
        const OpClass c = i < t.ops.size() ? t.ops[i].op_class : OpClass::kOther;
        s << "<rect x=\"" << Num(x_of(n.start_us)) << "\" y=\"" << y << "\" width=\""
          << Num(std::max(0.5, plot * (n.end_us - n.start_us) / span))
          << "\" height=\"20\" fill=\"" << ClassColour(c) << "\" fill-opacity=\"0.7\"><title>"
          << XmlEscape(data.sim_graph->node_names[i]) << " " << Num(n.end_us - n.start_us)
          << " us simulated</title></rect>\n";
      }
    }
  }
  // Per-op bars: measured (solid) and predicted (outline), top ops.
  double longest = 1e-9;
  for (size_t k = 0; k < bars; ++k) {
    const size_t i = order[k];
    longest = std::max({longest, t.ops[i].median_us,
                        i < data.predicted_us.size() ? data.predicted_us[i] : 0.0});
  }
  s << "<text x=\"10\" y=\"" << bars_top - 12 << "\" font-size=\"13\" font-weight=\"bold\">top "
    << bars << " ops: measured median (solid) vs predicted by the cost model (outline), us</text>\n";
  for (size_t k = 0; k < bars; ++k) {
    const size_t i = order[k];
    const OpTiming& op = t.ops[i];
    const double by = bars_top + static_cast<double>(k) * row;
    std::string label = op.node.size() > 26 ? "..." + op.node.substr(op.node.size() - 23) : op.node;
    s << "<text x=\"10\" y=\"" << by + 12 << "\">" << XmlEscape(label) << "</text>\n"
      << "<rect x=\"" << left << "\" y=\"" << by + 2 << "\" width=\""
      << Num(plot * 0.85 * op.median_us / longest) << "\" height=\"12\" fill=\""
      << ClassColour(op.op_class) << "\"/>\n";
    if (i < data.predicted_us.size() && data.predicted_us[i] >= 0)
      s << "<rect x=\"" << left << "\" y=\"" << by + 1 << "\" width=\""
        << Num(plot * 0.85 * data.predicted_us[i] / longest)
        << "\" height=\"14\" fill=\"none\" stroke=\"black\"/>\n";
    s << "<text x=\"" << Num(left + plot * 0.85 * std::max(op.median_us, i < data.predicted_us.size() ? data.predicted_us[i] : 0.0) / longest + 4)
      << "\" y=\"" << by + 12 << "\">" << Num(op.median_us, 1) << " / "
      << (i < data.predicted_us.size() ? Num(data.predicted_us[i], 1) : std::string("-"))
      << "</text>\n";
  }
  s << "</svg>\n";
  return s.str();
}

std::string ProfileCsv(const ProfileData& data) {
  std::ostringstream s;
  s << "index,node,op,class,device,implementation,flops,bytes,intensity,weight_sparsity,"
       "measured_median_us,measured_min_us,predicted_us,error_pct\n";
  const ModelTimings& t = *data.timings;
  for (size_t i = 0; i < t.ops.size(); ++i) {
    const OpTiming& op = t.ops[i];
    const double pred = i < data.predicted_us.size() ? data.predicted_us[i] : -1;
    s << i << "," << CsvField(op.node) << "," << op.op_type << "," << OpClassName(op.op_class)
      << "," << data.device << "," << CsvField(op.implementation) << ","
      << JsonNumber(op.annotation.flops) << "," << JsonNumber(op.annotation.bytes) << ","
      << JsonNumber(op.annotation.intensity) << "," << JsonNumber(op.annotation.weight_sparsity)
      << "," << Num(op.median_us) << "," << Num(op.min_us) << "," << Num(pred) << ","
      << (pred >= 0 && op.median_us > 0 ? Num(100.0 * (pred - op.median_us) / op.median_us, 1)
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
