// braid profile MODEL [--devices cpu] [--plan PLAN.json] [--profile P]
//   [--iterations N] [--warmup W] [--threads T] [--trace F.json] [--svg F.svg] [--csv F.csv]
#include <algorithm>
#include <cstdio>
#include <map>
#include <fstream>
#include <ostream>
#include <sstream>
#include <tuple>

#include "runtime/trace.h"
#include "scheduler/simulator.h"
#include "tools/commands.h"
#include "tools/profile_report.h"

namespace braid::cli {
namespace {

constexpr char kProfileHelp[] =
    "Usage: braid profile MODEL [--devices cpu] [--plan PLAN.json] [--profile P]\n"
    "                     [--iterations N] [--warmup W] [--threads T]\n"
    "                     [--trace F.json] [--svg F.svg] [--csv F.csv]\n"
    "\n"
    "Measures every op of MODEL on the CPU (each op alone on the real inputs of\n"
    "a full run: W untimed and N timed runs, median) and the whole model end to\n"
    "end, puts the cost model's prediction (profile P) next to each op, and\n"
    "prints the top ops, time per op class, prediction error, bytes moved and\n"
    "energy per inference (from INA3221 / RAPL / NVML sensors when present;\n"
    "otherwise the profile's estimate, labelled as an estimate).\n"
    "\n"
    "  --devices L     cpu only in this build (vgpu/cuda per-op profiling needs the\n"
    "                  engine's per-step timeline; see docs/profiling.md)\n"
    "  --plan F        a plan JSON; must place every node on cpu for now\n"
    "  --profile P     device profile for predictions (default host; a profile\n"
    "                  written by `braid calibrate` predicts far better)\n"
    "  --iterations N  timed runs per op and end to end (default 10)\n"
    "  --warmup W      untimed runs first (default 2)\n"
    "  --threads T     intra-op threads (default 0: all cores)\n"
    "  --trace F       Chrome trace / Perfetto JSON\n"
    "  --svg F         timeline and per-op bar chart\n"
    "  --csv F         one row per op\n";

}  // namespace

int RunProfile(Args args, std::ostream& out, std::ostream& err) {
  ArgScanner scan(args);
  if (scan.Flag("--help") || scan.Flag("-h")) {
    out << kProfileHelp;
    return kExitOk;
  }
  auto fail = [&](const Status& s) { return ReportError(err, "profile", s); };
  std::map<std::string, std::string> flags;
  for (const char* f : {"--devices", "--plan", "--profile", "--iterations", "--warmup",
                        "--threads", "--trace", "--svg", "--csv"}) {
    StatusOr<std::optional<std::string>> v = scan.Value(f);
    if (!v.ok()) return fail(v.status());
    if (*v) flags[f] = **v;
  }
  StatusOr<std::vector<std::string>> pos = scan.Positionals();
  if (!pos.ok()) return fail(pos.status());
  if (pos->size() != 1) return fail(InvalidArgument("expected one MODEL (see --help)"));
  const std::string model = (*pos)[0];
  if (flags.count("--devices") && flags["--devices"] != "cpu")
    return fail(Unimplemented(
        "--devices '" + flags["--devices"] +
        "': braid profile measures the cpu only so far; per-op times on vgpu/cuda need the "
        "engine's per-step timeline, which this command does not read yet"));
  OpTimerOptions options;
  options.measure_energy = true;
  for (auto [flag, target, min] : {std::tuple{"--iterations", &options.iterations, 1},
                                   {"--warmup", &options.warmup, 0},
                                   {"--threads", &options.threads, 0}}) {
    if (!flags.count(flag)) continue;
    char* end = nullptr;
    const long v = std::strtol(flags[flag].c_str(), &end, 10);
    if (flags[flag].empty() || *end != '\0' || v < min || v > 100000)
      return fail(InvalidArgument(std::string(flag) + " expects an integer >= " +
                                  std::to_string(min) + ", got '" + flags[flag] + "'"));
    *target = static_cast<int>(v);
  }
  StatusOr<DeviceProfile> profile = LoadDeviceProfile(flags.count("--profile") ? flags["--profile"] : "host");
  if (!profile.ok()) return fail(profile.status());

  StatusOr<ModelTimings> timings = MeasureModel(model, options);
  if (!timings.ok()) return fail(timings.status());
  const ModelTimings& t = *timings;

  Plan plan = SingleDevicePlan(t.graph, "cpu", "cpu-only");
  if (flags.count("--plan")) {
    std::ifstream f(flags["--plan"]);
    std::stringstream text;
    text << f.rdbuf();
    if (!f) return fail(NotFound("cannot read plan '" + flags["--plan"] + "'"));
    StatusOr<Plan> loaded = PlanFromJson(text.str());
    if (!loaded.ok()) return fail(loaded.status().WithPrefix(flags["--plan"]));
    for (const NodePlan& p : loaded->nodes)
      if (p.device != "cpu" || p.slice)
        return fail(Unimplemented("plan places '" + p.node + "' on '" + p.device +
                                  "': braid profile measures cpu-only plans so far"));
    if (loaded->nodes.size() != t.graph.nodes().size())
      return fail(InvalidArgument("plan has " + std::to_string(loaded->nodes.size()) +
                                  " nodes, the model as planned has " +
                                  std::to_string(t.graph.nodes().size())));
  }
  CostModel cost(*profile);
  const int cpu = cost.DeviceIndex("cpu");
  StatusOr<SimGraph> sg = BuildSimGraph(t.graph, cost, {"cpu"});
  if (!sg.ok()) return fail(sg.status());
  StatusOr<SimResult> sim = SimulatePlan(*sg, plan, /*timeline=*/true);
  if (!sim.ok()) return fail(sim.status());

  ProfileData data;
  data.timings = &t;
  data.sim_graph = &*sg;
  data.simulated = &*sim;
  data.profile = profile->name;
  for (const Node& n : t.graph.nodes()) data.predicted_us.push_back(cost.OpTimeUs(n, cpu));

  // Text summary.
  char line[512];
  double sum_measured = 0;
  std::map<std::string, std::pair<double, double>> per_class;  // measured, predicted
  std::vector<double> abs_err;
  for (size_t i = 0; i < t.ops.size(); ++i) {
    sum_measured += t.ops[i].median_us;
    auto& c = per_class[OpClassName(t.ops[i].op_class)];
    c.first += t.ops[i].median_us;
    c.second += data.predicted_us[i];
    if (t.ops[i].median_us > 0)
      abs_err.push_back(std::abs(data.predicted_us[i] - t.ops[i].median_us) / t.ops[i].median_us);
  }
  out << "profile of " << model << " on cpu (" << t.threads << " threads, " << options.iterations
      << " timed runs per op, medians; predictions from profile '" << profile->name << "', "
      << profile->origin << ")\n\ntop ops (measured):\n";
  std::vector<size_t> order(t.ops.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return t.ops[a].median_us > t.ops[b].median_us; });
  std::snprintf(line, sizeof(line), "  %-36s %-14s %12s %12s %8s %10s\n", "node", "op",
                "measured us", "predicted us", "share", "impl");
  out << line;
  for (size_t k = 0; k < std::min<size_t>(10, order.size()); ++k) {
    const OpTiming& op = t.ops[order[k]];
    std::string name = op.node.size() > 36 ? "..." + op.node.substr(op.node.size() - 33) : op.node;
    std::snprintf(line, sizeof(line), "  %-36s %-14s %12.1f %12.1f %7.1f%% %10s\n", name.c_str(),
                  op.op_type.c_str(), op.median_us, data.predicted_us[order[k]],
                  100 * op.median_us / std::max(sum_measured, 1e-9), op.implementation.c_str());
    out << line;
  }
  out << "\ntime per op class:\n";
  for (const auto& [cls, mp] : per_class) {
    std::snprintf(line, sizeof(line), "  %-16s measured %10.1f us   predicted %10.1f us\n",
                  cls.c_str(), mp.first, mp.second);
    out << line;
  }
  std::snprintf(line, sizeof(line),
                "\nper device: cpu %.3f ms (sum of op medians); end to end %.3f ms median "
                "(Session::Run); bytes transferred 0 (one device)\n",
                sum_measured / 1e3, t.end_to_end_median_us / 1e3);
  out << line;
  std::snprintf(line, sizeof(line),
                "prediction: %.3f ms simulated end to end; median |error| per op %.1f%%\n",
                sim->latency_us / 1e3, 100 * Median(abs_err));
  out << line;
  if (t.energy_j_per_inference >= 0) {
    std::snprintf(line, sizeof(line), "energy: %.4f J per inference (measured: %s)\n",
                  t.energy_j_per_inference, t.energy_source.c_str());
    out << line;
  } else {
    std::snprintf(line, sizeof(line),
                  "energy: no sensor; %.4f J per inference is an ESTIMATE from profile '%s'\n",
                  sim->energy_j, profile->name.c_str());
    out << line;
    for (const std::string& note : t.energy_notes) out << "  (" << note << ")\n";
  }

  if (flags.count("--trace")) {
    TraceWriter trace;
    AppendProfileTrace(data, trace);
    Status s = trace.WriteFile(flags["--trace"]);
    if (!s.ok()) return fail(s);
    out << "trace written to " << flags["--trace"] << "\n";
  }
  if (flags.count("--svg")) {
    Status s = WriteTextFile(flags["--svg"], ProfileSvg(data));
    if (!s.ok()) return fail(s);
    out << "svg written to " << flags["--svg"] << "\n";
  }
  if (flags.count("--csv")) {
    Status s = WriteTextFile(flags["--csv"], ProfileCsv(data));
    if (!s.ok()) return fail(s);
    out << "csv written to " << flags["--csv"] << "\n";
  }
  return kExitOk;
}

}  // namespace braid::cli
