#include "tools/cli_temporl.h"

#include <algorithm>
#include <cstdio>
#include <functional>
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

namespace braid::cli {
namespace {

// A plan's split layers, measured: per layer (by node) the gaps of each
// measurement, and the end-to-end medians.
struct MeasuredSeries {
  std::string label;
  Plan plan;
  std::vector<double> end_to_end_us, mean_gap_us;
  std::map<std::string, std::vector<double>> layer_gap_us;
};

StatusOr<std::vector<SplitLayerMetrics>> MeasureOnce(const Graph& graph,
                                                     const TemporlFineTuneConfig& c,
                                                     const Plan& plan, MeasuredSeries* series) {
  ASSIGN_OR_RETURN(profiling::PlanTimings t,
                   profiling::MeasurePlanOnGraph(graph, c.model, &plan, c.timer));
  std::vector<SplitLayerMetrics> layers = MeasuredSplitMetrics(t);
  if (series != nullptr) {
    series->end_to_end_us.push_back(t.end_to_end_median_us);
    series->mean_gap_us.push_back(SummarizeSplits(layers).mean_gap_us);
    for (const SplitLayerMetrics& m : layers) series->layer_gap_us[m.node].push_back(m.gap_us);
  }
  return layers;
}

Plan WithSliceRatios(Plan plan, const std::string& label,
                     const std::function<double(const NodePlan&)>& ratio) {
  plan.policy = label;
  for (NodePlan& p : plan.nodes)
    if (p.slice) p.slice->ratio = ratio(p);
  return plan;
}

}  // namespace

Status FineTuneTemporlMeasured(const TemporlFineTuneConfig& c, TemporlModel& model,
                               std::ostream& out) {
  ASSIGN_OR_RETURN(DeviceProfile profile, LoadDeviceProfile(ResolveProfileName(c.profile)));
  const CostModel cost(profile);
  ASSIGN_OR_RETURN(Graph graph, profiling::PlannedGraph(c.model));
  PolicyRegistry registry;
  RETURN_IF_ERROR(RegisterPolicies(registry));
  PlacementContext ctx;
  ctx.devices = c.timer.devices;
  ctx.cost_model = &cost;
  ASSIGN_OR_RETURN(Plan base, MakePlan(registry, c.base, graph, ctx));
  ASSIGN_OR_RETURN(std::unique_ptr<TemporlEnv> env, TemporlEnv::Create(graph, ctx, base));
  if (env->layers().empty())
    return FailedPrecondition("temporl fine-tuning: " + c.model + " has no layer worth splitting on " +
                              profile.name);
  bool vgpu = false;
  for (const std::string& d : c.timer.devices) vgpu |= d == "vgpu";
  const std::string label = vgpu ? "MEASURED, cpu + vgpu (virtual GPU, a model)" : "MEASURED";
  auto plan_of = [&](const TemporlModel& m, TemporlPass* pass_out) {
    TemporlPass pass = env->Run(GreedyChooser(m), c.guard, m.weights, &m.correction);
    Plan plan = env->ToPlan(base, pass, "temporl", c.base);
    if (pass_out != nullptr) *pass_out = std::move(pass);
    return plan;
  };
  const TemporlModel before_model = model;
  char line[512];
  std::snprintf(line, sizeof line,
                "fine-tuning temporl on %s, %s: %d rounds of %d runs (%d threads), plans from "
                "profile '%s' over %s\n",
                c.model.c_str(), label.c_str(), c.rounds, c.timer.iterations, c.timer.threads,
                profile.name.c_str(), c.base.c_str());
  out << line;
  std::vector<SplitLayerMetrics> first, last;
  std::map<std::string, double> first_share, last_share;
  for (int round = 0; round <= c.rounds; ++round) {
    TemporlPass pass;
    const Plan plan = plan_of(model, &pass);
    ASSIGN_OR_RETURN(std::vector<SplitLayerMetrics> layers, MeasureOnce(graph, c, plan, nullptr));
    const SplitSummary s = SummarizeSplits(layers);
    std::snprintf(line, sizeof line, "  round %d: %d split layers, mean |gap| %.1f us, max %.1f us (%s)\n",
                  round, s.layers, s.mean_gap_us, s.max_gap_us, label.c_str());
    out << line;
    if (round == 0) first = layers;
    last = layers;
    if (round == c.rounds) break;
    // Match the measured layers to the pass's steps (by node name).
    std::vector<TemporlMeasuredLayer> measured;
    for (size_t k = 0; k < env->layers().size(); ++k) {
      // A layer the guard gave back to the base still runs split when the
      // base split it: its measured times tune it from the base's ratio.
      const TemporlStep& step = pass.steps[k];
      const SimPlacement& p = pass.placement[static_cast<size_t>(step.node)];
      if (p.other_device < 0) continue;
      const double ran = step.kept ? step.asked_ratio : p.ratio;
      const std::string& node = env->space().sim.node_names[static_cast<size_t>(step.node)];
      for (const SplitLayerMetrics& m : layers)
        if (m.node == node)
          measured.push_back({env->LayerKey(k), env->PairKey(k), step.agent_ratio, ran, m});
    }
    FineTuneTemporl(measured, c.update, model.correction);
  }
  model.correction.measured_on = c.model + " on " + label;
  // Per layer, before and after.
  out << "split layers (" << label << "), first round -> last round:\n";
  std::snprintf(line, sizeof line, "  %-32s %15s %21s\n", "node", "share", "|gap| us");
  out << line;
  for (const SplitLayerMetrics& a : last) {
    const SplitLayerMetrics* b = nullptr;
    for (const SplitLayerMetrics& m : first)
      if (m.node == a.node) b = &m;
    const std::string name = a.node.size() > 32 ? "..." + a.node.substr(a.node.size() - 29) : a.node;
    std::snprintf(line, sizeof line, "  %-32s %6.3f -> %6.3f %9.1f -> %9.1f\n", name.c_str(),
                  b ? b->share : -1.0, a.share, b ? b->gap_us : -1.0, a.gap_us);
    out << line;
  }
  if (c.compare_rounds <= 0) return Status();

  // Side by side: the plans alternate run by run, medians over the rounds.
  const Plan tuned = plan_of(model, nullptr);
  std::vector<MeasuredSeries> series;
  series.push_back({c.base, base, {}, {}, {}});
  series.push_back({"temporl before fine-tuning", plan_of(before_model, nullptr), {}, {}, {}});
  series.push_back({"temporl fine-tuned", tuned, {}, {}, {}});
  series.push_back({"50/50, same layers",
                    WithSliceRatios(tuned, "half", [](const NodePlan&) { return 0.5; }), {}, {}, {}});
  series.push_back({"peak ratio, same layers",
                    WithSliceRatios(tuned, "peak",
                                    [&](const NodePlan& p) {
                                      return PeakRatio(cost, p.device, p.slice->other_device);
                                    }),
                    {}, {}, {}});
  for (int round = 0; round < c.compare_rounds; ++round)
    for (MeasuredSeries& s : series) RETURN_IF_ERROR(MeasureOnce(graph, c, s.plan, &s).status());
  std::snprintf(line, sizeof line,
                "side by side (%s; %d rounds, the plans alternating, each round %d runs per plan; "
                "medians over rounds):\n",
                label.c_str(), c.compare_rounds, c.timer.iterations);
  out << line;
  std::snprintf(line, sizeof line, "  %-28s %12s %14s %16s\n", "plan", "end to end", "split layers",
                "mean |gap| us");
  out << line;
  for (const MeasuredSeries& s : series) {
    std::snprintf(line, sizeof line, "  %-28s %9.3f ms %14zu %16.1f\n", s.label.c_str(),
                  profiling::Median(s.end_to_end_us) / 1e3, s.layer_gap_us.size(),
                  profiling::Median(s.mean_gap_us));
    out << line;
  }
  // The same layers: fine-tuned against 50/50 and peak, layer by layer.
  const MeasuredSeries &ft = series[2], &half = series[3], &peak = series[4];
  for (const MeasuredSeries* ref : {&half, &peak}) {
    double sum = 0, ref_sum = 0;
    int halved = 0, n = 0;
    for (const auto& [node, gaps] : ft.layer_gap_us) {
      auto it = ref->layer_gap_us.find(node);
      if (it == ref->layer_gap_us.end()) continue;
      const double g = profiling::Median(gaps), r = profiling::Median(it->second);
      sum += g, ref_sum += r, ++n;
      halved += g <= 0.5 * r ? 1 : 0;
    }
    std::snprintf(line, sizeof line,
                  "  fine-tuned vs %s: summed per-layer median |gap| %.3fx; %d of %d layers at "
                  "<= 0.5x; end to end %.3fx\n",
                  ref->label.c_str(), ref_sum > 0 ? sum / ref_sum : 1.0, halved, n,
                  profiling::Median(ft.end_to_end_us) / profiling::Median(ref->end_to_end_us));
    out << line;
  }
  std::snprintf(line, sizeof line, "  fine-tuned vs %s: end to end %.3fx\n", c.base.c_str(),
                profiling::Median(ft.end_to_end_us) / profiling::Median(series[0].end_to_end_us));
  out << line;
  return Status();
}

}  // namespace braid::cli
