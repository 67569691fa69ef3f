// braid plan MODEL [--profile NAME|FILE] [--policy NAME] [--devices A,B]
//   [--intensity-threshold X] [--sparsity-threshold Y] [--json] [--save PLAN.json]
//   [--policy-file POLICY.bin] [--no-polish]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <ostream>

#include "api/model_loader.h"
#include "graph/annotate.h"
#include "scheduler/policies.h"
#include "scheduler/simulator.h"
#include "scheduler/split_metrics.h"
#include "tools/cli_temporl.h"
#include "tools/commands.h"

namespace braid::cli {
namespace {

constexpr char kPlanHelp[] =
    "Usage: braid plan MODEL [--profile NAME|FILE] [--policy NAME] [--devices A,B]\n"
    "                  [--intensity-threshold X] [--sparsity-threshold Y]\n"
    "                  [--json] [--save PLAN.json] [--policy-file POLICY.bin]\n"
    "                  [--no-polish]\n"
    "\n"
    "Runs a placement policy on MODEL for the devices of a device profile and\n"
    "prints the placement table (node, op, device, slice, predicted time, why)\n"
    "and the plan's SIMULATED latency, per-device busy time, bytes moved and\n"
    "energy. Nothing runs on a device: every figure is the cost model's\n"
    "prediction on the profile, labelled simulated. Split layers get their part\n"
    "times, timing gap and hidden copy share (simulated).\n"
    "\n"
    "  --profile P   a profile name (braid plan --list-profiles) or a .json file\n"
    "                (default host: this machine, generic estimates)\n"
    "  --policy P    cpu-only (default), gpu-only, threshold, heft, partition\n"
    "                optimal, sparoa, worl or temporl (docs/scheduler.md)\n"
    "  --policy-file F  sparoa: a trained model from `braid train` (default: none,\n"
    "                grid-searched thresholds and no SAC step); temporl: the agent from\n"
    "                `braid train --policy temporl` (required)\n"
    "  --temporl-base P  temporl: the policy that places every node (default partition)\n"
    "  --no-polish   sparoa: skip the final simulator local search (not RL), i.e.\n"
    "                the predictor + SAC plan alone\n"
    "  --devices L   comma-separated plan devices, host first (default: all of\n"
    "                the profile's devices)\n"
    "  --intensity-threshold X  threshold policy: FLOP/byte at or above which a\n"
    "                dense op goes to the accelerator (default 8)\n"
    "  --sparsity-threshold Y   threshold policy: sparsity at or above which an\n"
    "                op stays on the CPU (default 0.5)\n"
    "  --json        print {\"plan\":PLAN,\"simulated\":{...}} instead\n"
    "  --save F      write the plan JSON to F (braid run --plan / SessionOptions::plan_file)\n"
    "  --list-profiles  print the profiles found and where braid looks\n";

std::string Ms(double us) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3f", us / 1e3);
  return buf;
}

}  // namespace

int RunPlan(Args args, std::ostream& out, std::ostream& err) {
  ArgScanner scan(args);
  if (scan.Flag("--help") || scan.Flag("-h")) {
    out << kPlanHelp;
    return kExitOk;
  }
  if (scan.Flag("--list-profiles")) {
    for (const std::string& n : ListDeviceProfiles(ProfileDirsFromEnvironment()))
      out << n << "\n";
    out << "searched:";
    for (const std::string& d : ProfileDirsFromEnvironment()) out << " " << d;
    for (const std::string& d : DeviceProfileSearchPath()) out << " " << d;
    out << "\n";
    return kExitOk;
  }
  const bool json = scan.Flag("--json");
  const bool no_polish = scan.Flag("--no-polish");
  auto value = [&](const char* flag, std::string fallback) -> StatusOr<std::string> {
    ASSIGN_OR_RETURN(std::optional<std::string> v, scan.Value(flag));
    return v ? *v : fallback;
  };
  auto fail = [&](const Status& s) { return ReportError(err, "plan", s); };
  StatusOr<std::string> profile_name = value("--profile", "host");
  StatusOr<std::string> policy_name = value("--policy", "cpu-only");
  StatusOr<std::string> devices_flag = value("--devices", "");
  StatusOr<std::string> intensity = value("--intensity-threshold", "");
  StatusOr<std::string> sparsity = value("--sparsity-threshold", "");
  StatusOr<std::string> save = value("--save", "");
  StatusOr<std::string> policy_file = value("--policy-file", "");
  StatusOr<std::string> temporl_base = value("--temporl-base", "");
  for (const auto* s : {&profile_name, &policy_name, &devices_flag, &intensity, &sparsity, &save,
                        &policy_file, &temporl_base})
    if (!s->ok()) return fail(s->status());
  StatusOr<std::vector<std::string>> pos = scan.Positionals();
  if (!pos.ok()) return fail(pos.status());
  if (pos->size() != 1) return fail(InvalidArgument("expected one MODEL (see --help)"));
  const bool temporl = *policy_name == "temporl";
  if (no_polish && *policy_name != "sparoa")
    return fail(InvalidArgument("--no-polish applies to --policy sparoa only"));
  const std::string policy_file_key = PolicyFileSetting(*policy_name);
  if (!policy_file->empty() && policy_file_key.empty())
    return fail(InvalidArgument("--policy-file applies to --policy sparoa or temporl only"));
  if (!temporl_base->empty() && !temporl)
    return fail(InvalidArgument("--temporl-base applies to --policy temporl only"));

  PolicySettings settings;
  if (!intensity->empty()) {
    StatusOr<double> v = ParseDouble("--intensity-threshold", *intensity);
    if (!v.ok()) return fail(v.status());
    settings["threshold.intensity"] = *intensity;
  }
  if (!sparsity->empty()) {
    StatusOr<double> v = ParseDouble("--sparsity-threshold", *sparsity);
    if (!v.ok()) return fail(v.status());
    settings["threshold.sparsity"] = *sparsity;
  }
  if (!policy_file->empty()) settings[policy_file_key] = *policy_file;
  if (!temporl_base->empty()) settings["temporl.base"] = *temporl_base;
  if (no_polish) settings["sparoa.polish"] = "0";

  StatusOr<DeviceProfile> profile = LoadDeviceProfile(ResolveProfileName(*profile_name));
  if (!profile.ok()) return fail(profile.status());
  StatusOr<Graph> graph = LoadGraphForExecution((*pos)[0]);
  if (!graph.ok()) return fail(graph.status());

  CostModel model(*profile);
  std::vector<std::string> devices = SplitList(*devices_flag);
  if (devices.empty())
    for (const DeviceSpec& d : profile->devices) devices.push_back(d.name);
  StatusOr<SimGraph> sim_graph = BuildSimGraph(*graph, model, devices);
  if (!sim_graph.ok()) return fail(sim_graph.status());

  PolicyRegistry policies;
  if (Status s = RegisterPolicies(policies, settings); !s.ok()) return fail(s);
  PlacementContext ctx;
  ctx.devices = devices;
  ctx.cost_model = &model;
  StatusOr<Plan> plan = MakePlan(policies, *policy_name, *graph, ctx);
  if (!plan.ok()) return fail(plan.status());
  // Per-node predictions on the chosen device (slices: the slower part).
  for (size_t i = 0; i < plan->nodes.size(); ++i) {
    NodePlan& p = plan->nodes[i];
    const Node& n = graph->nodes()[i];
    const int d = model.DeviceIndex(p.device);
    const OpWork work = OpWorkOf(n, &*graph);  // with the graph: views cost nothing
    if (!p.slice) {
      p.predicted_ms = model.Cost(work, d).TotalUs() / 1e3;
    } else {
      const int o = model.DeviceIndex(p.slice->other_device);
      p.predicted_ms = std::max(model.Cost(work, d).TotalUs(p.slice->ratio),
                                model.Cost(work, o).TotalUs(1 - p.slice->ratio)) / 1e3;
    }
  }
  StatusOr<SimResult> sim = SimulatePlan(*sim_graph, *plan, /*timeline=*/true);
  if (!sim.ok()) return fail(sim.status());
  StatusOr<std::vector<SimPlacement>> placement = CompilePlacement(*sim_graph, *plan);
  if (!placement.ok()) return fail(placement.status());
  const std::vector<SplitLayerMetrics> splits = SplitMetricsFromSim(*sim_graph, *placement, *sim);

  if (!save->empty()) {
    std::ofstream f(*save, std::ios::binary | std::ios::trunc);
    f << PlanToJson(*plan);
    f.close();
    if (!f) {
      err << "braid plan: error: cannot write '" << *save << "'\n";
      return kExitFailure;
    }
  }

  if (json) {
    out << "{\"plan\":" << PlanToJson(*plan) << ",\"simulated\":{\"profile\":"
        << JsonString(profile->name) << ",\"latency_ms\":" << JsonNumber(sim->latency_us / 1e3)
        << ",\"energy_j\":" << JsonNumber(sim->energy_j)
        << ",\"bytes_moved\":" << JsonNumber(sim->bytes_moved) << ",\"copies\":" << sim->copies
        << ",\"devices\":[";
    for (size_t d = 0; d < devices.size(); ++d) {
      const SimDeviceStats& s = sim->devices[d];
      out << (d ? "," : "") << "{\"device\":" << JsonString(devices[d])
          << ",\"busy_ms\":" << JsonNumber(s.busy_us / 1e3)
          << ",\"idle_ms\":" << JsonNumber(s.idle_us / 1e3) << ",\"kernels\":" << s.kernels
          << ",\"idle_gaps\":" << s.idle_gaps << ",\"energy_j\":" << JsonNumber(s.energy_j) << "}";
    }
    out << "],\"split_layers\":[";
    for (size_t i = 0; i < splits.size(); ++i) {
      const SplitLayerMetrics& m = splits[i];
      out << (i ? "," : "") << "{\"node\":" << JsonString(m.node)
          << ",\"share\":" << JsonNumber(m.share) << ",\"t_a_us\":" << JsonNumber(m.finish_a_us)
          << ",\"t_b_us\":" << JsonNumber(m.finish_b_us) << ",\"gap_us\":" << JsonNumber(m.gap_us)
          << ",\"copy_us\":" << JsonNumber(m.copy_us)
          << ",\"hidden_share\":" << JsonNumber(m.hidden_share) << "}";
    }
    out << "]}}\n";
    return kExitOk;
  }

  char line[512];
  out << "plan for " << (*pos)[0] << ": policy " << plan->policy << ", profile " << profile->name
      << " (" << profile->origin << ")\n";
  std::snprintf(line, sizeof(line), "%-4s %-36s %-14s %-8s %-22s %12s  %s\n", "#", "node", "op",
                "device", "slice", "pred. ms", "why");
  out << line;
  for (size_t i = 0; i < plan->nodes.size(); ++i) {
    const NodePlan& p = plan->nodes[i];
    std::string slice = "-";
    if (p.slice) {
      char s[64];
      std::snprintf(s, sizeof(s), "%s %.0f%% + %s", SliceAxisName(p.slice->axis),
                    p.slice->ratio * 100, p.slice->other_device.c_str());
      slice = s;
    }
    std::string name = p.node.size() > 36 ? "..." + p.node.substr(p.node.size() - 33) : p.node;
    std::snprintf(line, sizeof(line), "%-4zu %-36s %-14s %-8s %-22s %12.4f  %s\n", i, name.c_str(),
                  graph->nodes()[i].op_type.c_str(), p.device.c_str(), slice.c_str(),
                  p.predicted_ms, p.reason.empty() ? "-" : p.reason.c_str());
    out << line;
  }
  out << "\nsimulated on profile '" << profile->name << "' (a prediction, not a measurement):\n"
      << "  latency        " << Ms(sim->latency_us) << " ms (simulated)\n";
  const bool has_power = profile->static_power_w > 0 ||
                         std::any_of(profile->devices.begin(), profile->devices.end(),
                                     [](const DeviceSpec& d) { return d.active_power_w > 0; });
  if (has_power) {
    std::snprintf(line, sizeof(line), "  energy         %.4f J per inference (simulated)\n",
                  sim->energy_j);
    out << line;
  } else {
    out << "  energy         unknown: profile has no power figures\n";
  }
  std::snprintf(line, sizeof(line), "  bytes moved    %.3f MB in %d copies (%.3f MB read over mapped memory)\n",
                sim->bytes_moved / 1e6, sim->copies, sim->bytes_mapped / 1e6);
  out << line;
  for (size_t d = 0; d < devices.size(); ++d) {
    const SimDeviceStats& s = sim->devices[d];
    std::snprintf(line, sizeof(line),
                  "  %-12s   busy %.3f ms, idle %.3f ms (%d gaps), %d kernels (simulated)\n",
                  devices[d].c_str(), s.busy_us / 1e3, s.idle_us / 1e3, s.idle_gaps, s.kernels);
    out << line;
  }
  out << SplitMetricsTable(splits, "simulated");
  if (!save->empty()) out << "plan saved to " << *save << "\n";
  return kExitOk;
}

}  // namespace braid::cli
