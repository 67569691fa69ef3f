// braid profile MODEL [--devices cpu,vgpu] [--plan PLAN.json | --policy P] [--profile P]
//   [--vgpu-timing T] [--iterations N] [--warmup W] [--threads T]
//   [--trace F.json] [--svg F.svg] [--csv F.csv]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <ostream>
#include <sstream>
#include <tuple>

#include "runtime/trace.h"
#include "scheduler/policies.h"
#include "scheduler/simulator.h"
#include "scheduler/split_metrics.h"
#include "tools/cli_temporl.h"
#include "tools/commands.h"
#include "tools/profile_report.h"

namespace braid::cli {
namespace {

using profiling::MeasurePlan;
using profiling::Median;
using profiling::PlannedGraph;
using profiling::PlanTimerOptions;
using profiling::PlanTimings;
using profiling::StepProfile;
using profiling::VgpuTimingFromProfile;

constexpr char kProfileHelp[] =
    "Usage: braid profile MODEL [--devices cpu,vgpu] [--plan PLAN.json | --policy P]\n"
    "                     [--profile P] [--vgpu-timing T] [--iterations N] [--warmup W]\n"
    "                     [--threads T] [--pin-threads] [--trace F.json] [--svg F.svg]\n"
    "                     [--csv F.csv] [--policy-file F] [--temporl-base P]\n"
    "\n"
    "Runs MODEL under a plan through the heterogeneous engine on the devices\n"
    "given (W untimed and N timed runs) and reads the engine's per-step\n"
    "timeline: every kernel and copy step with its device, stream or copy\n"
    "track, bytes, and median start / duration over the runs. Puts the cost\n"
    "model's prediction (profile P) next to each step, simulates the same plan,\n"
    "and prints the top ops, time per device, bytes transferred, prediction\n"
    "error and energy per inference (from INA3221 / RAPL / NVML sensors when\n"
    "present; otherwise the profile's estimate, labelled as an estimate).\n"
    "vgpu is braid's VIRTUAL GPU: its figures are a model, never a GPU measurement.\n"
    "\n"
    "  --devices L     devices to open: cpu (always), vgpu, cuda[:K] (default cpu)\n"
    "  --plan F        a plan JSON (`braid plan --save`); its devices must be open\n"
    "  --policy P      placement policy when no --plan: cpu-only, gpu-only, threshold,\n"
    "                  heft, partition, optimal (default cpu-only with one device,\n"
    "                  threshold with more)\n"
    "  --policy-file F sparoa / temporl: the trained model (`braid train`)\n"
    "  --temporl-base P temporl: the policy that places every node (default partition)\n"
    "  --profile P     device profile for predictions and policies (default host,\n"
    "                  host-vgpu when vgpu is open; `braid calibrate` predicts better)\n"
    "  --vgpu-timing T vgpu shaping: profile (like the profile's vgpu device and link;\n"
    "                  the default when it has one), none, orin-like\n"
    "  --iterations N  timed runs (default 10)\n"
    "  --warmup W      untimed runs first (default 2)\n"
    "  --threads T     CPU intra-op threads (default 0: all cores)\n"
    "  --pin-threads   the CPU stream on its own cores, the devices' worker threads\n"
    "                  on the others (steadier steps after handoffs; see `braid\n"
    "                  calibrate --pin-threads`)\n"
    "  --trace F       Chrome trace / Perfetto JSON: a track per device stream and copy\n"
    "                  direction, plus the simulated plan\n"
    "  --svg F         timeline and per-op bar chart\n"
    "  --csv F         one row per step (ops and copies)\n"
    "Split layers get their part times, timing gap |T_a - T_b| and hidden copy share,\n"
    "simulated and measured (from the engine's steps).\n";

bool HasDevice(const DeviceProfile& p, const std::string& name) {
  return std::any_of(p.devices.begin(), p.devices.end(),
                     [&](const DeviceSpec& d) { return d.name == name; });
}

}  // namespace

int RunProfile(Args args, std::ostream& out, std::ostream& err) {
  ArgScanner scan(args);
  if (scan.Flag("--help") || scan.Flag("-h")) {
    out << kProfileHelp;
    return kExitOk;
  }
  auto fail = [&](const Status& s) { return ReportError(err, "profile", s); };
  const bool pin_threads = scan.Flag("--pin-threads");
  std::map<std::string, std::string> flags;
  for (const char* f : {"--devices", "--plan", "--policy", "--profile", "--vgpu-timing",
                        "--iterations", "--warmup", "--threads", "--trace", "--svg", "--csv",
                        "--policy-file", "--temporl-base"}) {
    StatusOr<std::optional<std::string>> v = scan.Value(f);
    if (!v.ok()) return fail(v.status());
    if (*v) flags[f] = **v;
  }
  StatusOr<std::vector<std::string>> pos = scan.Positionals();
  if (!pos.ok()) return fail(pos.status());
  if (pos->size() != 1) return fail(InvalidArgument("expected one MODEL (see --help)"));
  const std::string model = (*pos)[0];
  if (flags.count("--plan") && flags.count("--policy"))
    return fail(InvalidArgument("give --plan or --policy, not both"));

  PlanTimerOptions options;
  StatusOr<SparseEnvironment> sparse_env = ReadSparseEnvironment();
  if (!sparse_env.ok()) return fail(sparse_env.status());
  options.sparse_kernels = sparse_env->sparse;
  options.sparse_crossover = sparse_env->crossover;
  options.measure_energy = true;
  options.pin_threads = pin_threads;
  options.devices = {"cpu"};
  if (flags.count("--devices"))
    for (const std::string& d : SplitList(flags["--devices"]))
      if (d != "cpu") options.devices.push_back(d);
  const bool vgpu_open =
      std::find(options.devices.begin(), options.devices.end(), "vgpu") != options.devices.end();
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
  const std::string profile_name =
      flags.count("--profile") ? flags["--profile"] : (vgpu_open ? "host-vgpu" : "host");
  StatusOr<DeviceProfile> profile = LoadDeviceProfile(ResolveProfileName(profile_name));
  if (!profile.ok()) return fail(profile.status());
  const std::string vgpu_timing_name =
      flags.count("--vgpu-timing") ? flags["--vgpu-timing"]
                                   : (HasDevice(*profile, "vgpu") ? "profile" : "none");
  if (vgpu_timing_name == "profile") {
    StatusOr<VgpuTiming> timing = VgpuTimingFromProfile(*profile, "vgpu");
    if (!timing.ok()) return fail(timing.status().WithPrefix("--vgpu-timing profile"));
    options.vgpu_timing = *timing;
  } else {
    StatusOr<VgpuTiming> timing = VgpuTimingPreset(vgpu_timing_name);
    if (!timing.ok()) return fail(timing.status().WithPrefix("--vgpu-timing"));
    options.vgpu_timing = *timing;
  }
  CostModel cost(*profile);

  // The plan: a file, or a policy on the graph as planned.
  std::optional<Plan> plan;
  if (flags.count("--plan")) {
    std::ifstream f(flags["--plan"]);
    std::stringstream text;
    text << f.rdbuf();
    if (!f) return fail(NotFound("cannot read plan '" + flags["--plan"] + "'"));
    StatusOr<Plan> loaded = PlanFromJson(text.str());
    if (!loaded.ok()) return fail(loaded.status().WithPrefix(flags["--plan"]));
    plan = std::move(*loaded);
  } else {
    const std::string policy = flags.count("--policy")
                                   ? flags["--policy"]
                                   : (options.devices.size() > 1 ? "threshold" : "cpu-only");
    StatusOr<Graph> graph = PlannedGraph(model);
    if (!graph.ok()) return fail(graph.status());
    PolicySettings settings;
    if (flags.count("--policy-file")) {
      const std::string key = PolicyFileSetting(policy);
      if (key.empty())
        return fail(InvalidArgument("--policy-file applies to --policy sparoa or temporl only"));
      settings[key] = flags["--policy-file"];
    }
    if (flags.count("--temporl-base")) {
      if (policy != "temporl")
        return fail(InvalidArgument("--temporl-base applies to --policy temporl only"));
      settings["temporl.base"] = flags["--temporl-base"];
    }
    PolicyRegistry policies;
    if (Status s = RegisterPolicies(policies, settings); !s.ok()) return fail(s);
    PlacementContext ctx;
    ctx.devices = options.devices;
    ctx.cost_model = &cost;
    StatusOr<Plan> made = MakePlan(policies, policy, *graph, ctx);
    if (!made.ok()) return fail(made.status().WithPrefix("policy '" + policy + "'"));
    plan = std::move(*made);
  }

  StatusOr<PlanTimings> timings = MeasurePlan(model, &*plan, options);
  if (!timings.ok()) return fail(timings.status());
  const PlanTimings& t = *timings;

  ProfileData data;
  data.timings = &t;
  data.profile = profile->name;
  data.predicted_us = PredictSteps(t, cost);
  // Simulate the same plan when the profile knows every device.
  std::optional<SimGraph> sg;
  std::optional<SimResult> sim;
  std::string sim_note;
  bool profile_has_all = true;
  for (const std::string& d : t.devices) profile_has_all = profile_has_all && cost.DeviceIndex(d) >= 0;
  if (profile_has_all) {
    StatusOr<SimGraph> built = BuildSimGraph(t.graph, cost, t.devices);
    StatusOr<SimResult> simulated =
        built.ok() ? SimulatePlan(*built, t.plan, /*timeline=*/true) : built.status();
    if (simulated.ok()) {
      sg = std::move(*built);
      sim = std::move(*simulated);
      data.sim_graph = &*sg;
      data.simulated = &*sim;
    } else {
      sim_note = simulated.status().ToString();
    }
  } else {
    sim_note = "profile '" + profile->name + "' lacks one of the devices";
  }

  char line[512];
  out << "profile of " << model << ": plan '" << t.plan.policy << "' on ";
  for (size_t i = 0; i < t.devices.size(); ++i) out << (i ? "," : "") << t.devices[i];
  out << " through the engine (" << t.threads << " CPU threads, " << t.iterations
      << " timed runs, per-step medians; predictions from profile '" << profile->name << "', "
      << profile->origin << ")\n";
  for (const std::string& note : t.device_notes) out << "  " << note << "\n";
  for (const NodePlacement& p : t.placements)
    if (p.fallback) out << "  fallback: " << p.node << " on " << p.device << ": " << p.reason << "\n";

  // Top ops.
  std::vector<size_t> kernels;
  for (size_t i = 0; i < t.steps.size(); ++i)
    if (t.steps[i].category == "kernel" && t.steps[i].runs > 0) kernels.push_back(i);
  double sum_kernels = 0;
  for (size_t i : kernels) sum_kernels += t.steps[i].median_us;
  std::sort(kernels.begin(), kernels.end(),
            [&](size_t a, size_t b) { return t.steps[a].median_us > t.steps[b].median_us; });
  out << "\ntop ops (measured):\n";
  std::snprintf(line, sizeof(line), "  %-36s %-12s %-14s %12s %12s %7s %10s\n", "node", "op",
                "device", "measured us", "predicted us", "share", "impl");
  out << line;
  for (size_t k = 0; k < std::min<size_t>(10, kernels.size()); ++k) {
    const StepProfile& s = t.steps[kernels[k]];
    std::string name = s.name.size() > 36 ? "..." + s.name.substr(s.name.size() - 33) : s.name;
    const std::string dev = s.device + (s.virtual_device ? " (virtual)" : "");
    std::snprintf(line, sizeof(line), "  %-36s %-12s %-14s %12.1f %12.1f %6.1f%% %10s\n",
                  name.c_str(), s.op_type.c_str(), dev.c_str(), s.median_us,
                  data.predicted_us[kernels[k]], 100 * s.median_us / std::max(sum_kernels, 1e-9),
                  s.implementation.c_str());
    out << line;
  }

  // Per device and track; bytes per copy direction; error per op class.
  std::map<std::string, std::pair<double, double>> per_track;  // busy us, predicted us
  std::map<std::string, std::pair<double, int>> per_direction;  // bytes, copies
  std::map<std::string, std::vector<double>> class_err;
  std::vector<double> abs_err;
  double bytes_moved = 0;
  for (size_t i = 0; i < t.steps.size(); ++i) {
    const StepProfile& s = t.steps[i];
    if (s.runs == 0) continue;
    auto& tr = per_track[ProfileTrack(s)];
    tr.first += s.median_us;
    tr.second += std::max(0.0, data.predicted_us[i]);
    if (s.category == "copy") {
      auto& d = per_direction[s.from_device + " -> " + s.to_device];
      d.first += s.bytes;
      d.second += 1;
      bytes_moved += s.bytes;
    }
    if (data.predicted_us[i] >= 0 && s.median_us > 0) {
      const double e = std::abs(data.predicted_us[i] - s.median_us) / s.median_us;
      abs_err.push_back(e);
      class_err[s.category == "copy" ? "copy" : OpClassName(s.op_class)].push_back(e);
    }
  }
  out << "\ntime per device track (sum of step medians; virtual = a model, not a GPU):\n";
  for (const auto& [track, tp] : per_track) {
    std::snprintf(line, sizeof(line), "  %-28s measured %10.1f us   predicted %10.1f us\n",
                  track.c_str(), tp.first, tp.second);
    out << line;
  }
  std::snprintf(line, sizeof(line), "bytes transferred: %.0f", bytes_moved);
  out << line;
  for (const auto& [dir, bc] : per_direction)
    out << "; " << dir << " " << static_cast<long long>(bc.first) << " B in " << bc.second
        << " copies";
  out << (per_direction.empty() ? " (no copies)\n" : "\n");
  out << "median |prediction error| per class:";
  for (const auto& [cls, errs] : class_err) {
    std::snprintf(line, sizeof(line), " %s %.0f%% (%zu)", cls.c_str(), 100 * Median(errs), errs.size());
    out << line;
  }
  out << "\n";
  std::snprintf(line, sizeof(line), "end to end: %.3f ms measured (median Engine::Run)", t.end_to_end_median_us / 1e3);
  out << line;
  if (sim) {
    std::snprintf(line, sizeof(line), "; %.3f ms SIMULATED (error %.1f%%); median |error| per step %.1f%%\n",
                  sim->latency_us / 1e3,
                  100 * (sim->latency_us - t.end_to_end_median_us) / std::max(t.end_to_end_median_us, 1e-9),
                  100 * Median(abs_err));
    out << line;
  } else {
    out << "; not simulated (" << sim_note << ")\n";
  }
  // Split layers: simulated beside measured.
  if (sim && sg) {
    StatusOr<std::vector<SimPlacement>> placement = CompilePlacement(*sg, t.plan);
    if (placement.ok()) out << SplitMetricsTable(SplitMetricsFromSim(*sg, *placement, *sim), "simulated");
  }
  bool any_virtual = false;
  for (const StepProfile& s : t.steps) any_virtual |= s.virtual_device;
  out << SplitMetricsTable(MeasuredSplitMetrics(t),
                           any_virtual ? "MEASURED through the engine; vgpu = virtual GPU, a model"
                                       : "MEASURED through the engine");
  if (t.energy_j_per_inference >= 0) {
    std::snprintf(line, sizeof(line), "energy: %.4f J per inference (measured: %s)\n",
                  t.energy_j_per_inference, t.energy_source.c_str());
    out << line;
  } else if (sim) {
    std::snprintf(line, sizeof(line),
                  "energy: no sensor; %.4f J per inference is an ESTIMATE from profile '%s'\n",
                  sim->energy_j, profile->name.c_str());
    out << line;
    for (const std::string& note : t.energy_notes) out << "  (" << note << ")\n";
  } else {
    out << "energy: no sensor and no simulation; not reported\n";
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
