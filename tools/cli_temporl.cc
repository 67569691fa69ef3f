#include "tools/cli_temporl.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "graph/annotate.h"
#include "graph/passes/passes.h"
#include "models/builtin.h"
#include "scheduler/device_profile.h"
#include "scheduler/policies.h"
#include "tools/cli_common.h"
#include "tools/cli_random_graph.h"

namespace braid::cli {

std::vector<TemporlEnv*> TemporlTrainSet::Envs(bool held_out) const {
  std::vector<TemporlEnv*> out;
  for (const Item& item : items)
    if (item.held_out == held_out) out.push_back(item.env.get());
  return out;
}

StatusOr<TemporlTrainSet> BuildTemporlTrainSet(const std::vector<std::string>& profiles,
                                               const std::vector<std::string>& zoo_models,
                                               int random_graphs, uint64_t seed,
                                               const std::string& base) {
  TemporlTrainSet set;
  std::vector<std::pair<std::string, bool>> names;  // graph name, held out
  std::vector<std::string> zoo = zoo_models;
  if (zoo.empty())
    for (const BuiltinModelInfo& info : ListBuiltinModels()) zoo.push_back(info.name);
  for (const std::string& name : zoo) {
    ASSIGN_OR_RETURN(Graph g, BuildBuiltinModel(name));
    RETURN_IF_ERROR(RunDefaultPasses(g));
    RETURN_IF_ERROR(Annotate(g));
    set.graphs.push_back(std::make_unique<Graph>(std::move(g)));
    names.push_back({name, false});
  }
  for (int i = 0; i < random_graphs; ++i) {
    ASSIGN_OR_RETURN(Graph g,
                     RandomTrainingGraph(TrainingGraphSeed(seed, static_cast<uint64_t>(i))));
    set.graphs.push_back(std::make_unique<Graph>(std::move(g)));
    names.push_back({"random_" + std::to_string(i), i % 4 == 3});
  }
  PolicyRegistry registry;
  RETURN_IF_ERROR(RegisterPolicies(registry));
  for (const std::string& profile_name : profiles) {
    ASSIGN_OR_RETURN(DeviceProfile profile, LoadDeviceProfile(ResolveProfileName(profile_name)));
    if (profile.devices.size() < 2)
      return InvalidArgument("profile " + profile_name + " has no second device to split onto");
    set.models.push_back(std::make_unique<CostModel>(profile));
    const CostModel* model = set.models.back().get();
    PlacementContext ctx;
    for (const DeviceSpec& d : profile.devices) ctx.devices.push_back(d.name);
    ctx.cost_model = model;
    for (size_t g = 0; g < set.graphs.size(); ++g) {
      TemporlTrainSet::Item item;
      item.graph_name = names[g].first;
      item.profile_name = profile_name;
      item.held_out = names[g].second;
      item.graph = set.graphs[g].get();
      item.model = model;
      ASSIGN_OR_RETURN(item.base_plan, MakePlan(registry, base, *item.graph, ctx));
      ASSIGN_OR_RETURN(item.env, TemporlEnv::Create(*item.graph, ctx, item.base_plan));
      if (item.env->layers().empty()) continue;
      set.items.push_back(std::move(item));
    }
  }
  return set;
}

namespace {

// "copy V -> D": V.
std::string CopiedValue(const std::string& step_name) {
  if (step_name.rfind("copy ", 0) != 0) return "";
  const size_t arrow = step_name.rfind(" -> ");
  return arrow == std::string::npos ? "" : step_name.substr(5, arrow - 5);
}

}  // namespace

std::vector<SplitLayerMetrics> MeasuredSplitMetrics(const profiling::PlanTimings& t) {
  std::vector<SplitLayerMetrics> out;
  std::map<std::string, const profiling::StepProfile*> kernels;
  for (const profiling::StepProfile& s : t.steps)
    if (s.category == "kernel" && s.runs > 0) kernels[s.name] = &s;
  const Graph& g = t.graph;
  for (size_t i = 0; i < t.plan.nodes.size() && i < static_cast<size_t>(g.num_nodes()); ++i) {
    const NodePlan& p = t.plan.nodes[i];
    if (!p.slice) continue;
    const Node& node = g.node(static_cast<NodeId>(i));
    auto a = kernels.find(p.node + "#0"), b = kernels.find(p.node + "#1");
    if (a == kernels.end() || b == kernels.end()) continue;
    SplitLayerTimeline layer;
    layer.node = p.node;
    layer.device = p.device;
    layer.other_device = p.slice->other_device;
    const int64_t extent = SliceExtent(g, node, p.slice->axis);
    layer.share = extent >= 2 ? static_cast<double>(SliceSplitIndex(extent, p.slice->ratio,
                                                                    p.slice->axis)) /
                                    static_cast<double>(extent)
                              : p.slice->ratio;
    layer.part_a = {a->second->start_us, a->second->end_us};
    layer.part_b = {b->second->start_us, b->second->end_us};
    // The node's inputs, unless an earlier node on the same device read them.
    std::map<std::string, std::set<std::string>> inputs;  // value -> part devices
    for (ValueId in : node.inputs) {
      if (in == kNoValue || g.IsConstant(in)) continue;
      for (const std::string& dev : {p.device, p.slice->other_device}) {
        bool earlier = false;
        for (size_t m = 0; m < i && !earlier; ++m) {
          const NodePlan& q = t.plan.nodes[m];
          const bool there = q.device == dev || (q.slice && q.slice->other_device == dev);
          if (!there) continue;
          for (ValueId v : g.node(static_cast<NodeId>(m)).inputs) earlier |= v == in;
        }
        if (!earlier) inputs[g.value(in).name].insert(dev);
      }
    }
    const std::string y = node.outputs.empty() ? "" : g.value(node.outputs[0]).name;
    const std::string sliced_tag = "#" + p.node + "#";
    for (const profiling::StepProfile& s : t.steps) {
      if (s.category != "copy" || s.runs == 0) continue;
      const std::string v = CopiedValue(s.name);
      const bool part_output = !y.empty() && (v == y + "#0" || v == y + "#1");
      const bool sliced_input = v.find(sliced_tag) != std::string::npos;
      auto it = inputs.find(v);
      const bool input = it != inputs.end() && it->second.count(s.to_device) > 0;
      if (part_output || sliced_input || input) layer.copies.push_back({s.start_us, s.end_us});
    }
    out.push_back(MeasureSplitLayer(layer));
  }
  return out;
}

std::string SplitMetricsTable(const std::vector<SplitLayerMetrics>& layers,
                              const std::string& label) {
  if (layers.empty()) return "";
  std::ostringstream out;
  char line[512];
  out << "split layers (" << label << "): T = part finish time from the layer's start; gap = "
         "|T_a - T_b|; hidden = the layer's copy time under its parts' compute\n";
  std::snprintf(line, sizeof line, "  %-32s %-12s %7s %10s %10s %10s %10s %8s\n", "node",
                "devices", "share", "T_a us", "T_b us", "|gap| us", "copy us", "hidden");
  out << line;
  for (const SplitLayerMetrics& m : layers) {
    const std::string name = m.node.size() > 32 ? "..." + m.node.substr(m.node.size() - 29) : m.node;
    const std::string devices = m.device + "+" + m.other_device;
    char hidden[32] = "-";
    if (m.hidden_share >= 0) std::snprintf(hidden, sizeof hidden, "%.0f%%", 100 * m.hidden_share);
    std::snprintf(line, sizeof line, "  %-32s %-12s %7.3f %10.1f %10.1f %10.1f %10.1f %8s\n",
                  name.c_str(), devices.c_str(), m.share, m.finish_a_us, m.finish_b_us, m.gap_us,
                  m.copy_us, hidden);
    out << line;
  }
  const SplitSummary s = SummarizeSplits(layers);
  char hidden[32] = "- (no copies)";
  if (s.hidden_share >= 0) std::snprintf(hidden, sizeof hidden, "%.1f%%", 100 * s.hidden_share);
  std::snprintf(line, sizeof line,
                "  %d split layers: mean |gap| %.1f us, max %.1f us; copies %.1f us, %s hidden "
                "(%s)\n",
                s.layers, s.mean_gap_us, s.max_gap_us, s.copy_us, hidden, label.c_str());
  out << line;
  return out.str();
}

std::string TemporlCurveSvg(const std::vector<TemporlCurvePoint>& curve) {
  const double w = 720, h = 400, pad = 60;
  std::vector<std::pair<double, double>> reward, gap, latency;
  double acc = 0;
  const size_t window = std::max<size_t>(1, curve.size() / 20);
  std::vector<double> rewards;
  for (const TemporlCurvePoint& p : curve) {
    if (p.episode > 0) {
      rewards.push_back(p.train_reward);
      acc += p.train_reward;
      if (rewards.size() > window) acc -= rewards[rewards.size() - 1 - window];
      reward.push_back({static_cast<double>(p.episode), acc / static_cast<double>(std::min(rewards.size(), window))});
    }
    if (p.eval_gap_vs_half >= 0) gap.push_back({static_cast<double>(p.episode), p.eval_gap_vs_half});
    if (p.eval_latency_vs_base >= 0) latency.push_back({static_cast<double>(p.episode), p.eval_latency_vs_base});
  }
  const double episodes = std::max(1, curve.empty() ? 1 : curve.back().episode);
  double rlo = 0, rhi = 0;
  for (auto& [e, r] : reward) rlo = std::min(rlo, r), rhi = std::max(rhi, r);
  if (!(rhi > rlo)) rhi = rlo + 1;
  double ghi = 1.2;
  for (auto& [e, v] : gap) ghi = std::max(ghi, v);
  for (auto& [e, v] : latency) ghi = std::max(ghi, v);
  auto px = [&](double e) { return pad + (w - 2 * pad) * e / episodes; };
  auto py_r = [&](double r) { return h - pad - (h - 2 * pad) * (r - rlo) / (rhi - rlo); };
  auto py_g = [&](double v) { return h - pad - (h - 2 * pad) * v / ghi; };
  std::ostringstream out;
  char buf[128];
  out << "<svg xmlns='http://www.w3.org/2000/svg' width='" << w << "' height='" << h << "'>\n"
      << "<rect width='100%' height='100%' fill='white'/>\n"
      << "<text x='" << pad << "' y='22' font-size='13'>braid temporl learning curve (SIMULATED: "
      << "cost model + simulator)</text>\n"
      << "<line x1='" << pad << "' y1='" << h - pad << "' x2='" << w - pad << "' y2='" << h - pad
      << "' stroke='black'/>\n<line x1='" << pad << "' y1='" << pad << "' x2='" << pad
      << "' y2='" << h - pad << "' stroke='black'/>\n<line x1='" << w - pad << "' y1='" << pad
      << "' x2='" << w - pad << "' y2='" << h - pad << "' stroke='black'/>\n";
  for (double r : {rlo, rhi}) {
    std::snprintf(buf, sizeof buf, "%.3f", r);
    out << "<text x='4' y='" << py_r(r) + 4 << "' font-size='11' fill='steelblue'>" << buf
        << "</text>\n";
  }
  for (double v : {0.0, 0.5, 1.0}) {
    std::snprintf(buf, sizeof buf, "%.1fx", v);
    out << "<text x='" << w - pad + 4 << "' y='" << py_g(v) + 4
        << "' font-size='11' fill='darkorange'>" << buf << "</text>\n"
        << "<line x1='" << pad << "' y1='" << py_g(v) << "' x2='" << w - pad << "' y2='"
        << py_g(v) << "' stroke='#ddd'/>\n";
  }
  std::snprintf(buf, sizeof buf, "episode (of %.0f)", episodes);
  out << "<text x='" << w / 2 - 40 << "' y='" << h - 20 << "' font-size='11'>" << buf
      << "</text>\n";
  auto polyline = [&](const std::vector<std::pair<double, double>>& pts, const char* color,
                      auto&& y) {
    out << "<polyline fill='none' stroke='" << color << "' stroke-width='2' points='";
    for (auto& [e, v] : pts) out << px(e) << "," << y(v) << " ";
    out << "'/>\n";
  };
  polyline(reward, "steelblue", py_r);
  polyline(gap, "darkorange", py_g);
  polyline(latency, "seagreen", py_g);
  out << "<text x='" << pad + 10 << "' y='" << pad - 18
      << "' font-size='11' fill='steelblue'>mean reward per layer, training episodes (moving mean, "
         "left axis)</text>\n"
      << "<text x='" << pad + 10 << "' y='" << pad - 5
      << "' font-size='11' fill='darkorange'>greedy agent (no guard), held-out graphs: split-layer "
         "gap / 50-50 split's (right)</text>\n"
      << "<text x='" << pad + 10 << "' y='" << pad + 8
      << "' font-size='11' fill='seagreen'>greedy agent (no guard): latency / base plan's (right)</text>\n"
      << "</svg>\n";
  return out.str();
}

}  // namespace braid::cli
