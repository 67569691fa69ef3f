// The league table (SIMULATED, with an optional reality check): for every
// built-in model and a set of generated graphs held out from training, on
// each device profile, every registered policy's simulated latency and
// energy as a ratio to the optimal reference (scheduler/optimal.h), and its
// speedup over the best single device. All devices are allowed for every
// node (no kernel registry is consulted: the scheduler's view only).
//
// Multi-model sets ("a+b+c", --sets): the models as one combined DAG
// (scheduler/worl_multi_model.h) sharing every device; latency = makespan.
//
// Held-out graphs: braid train's random CNN-like generator
// (tools/cli_random_graph.h) with seeds from HeldOutGraphSeed, a range no
// training seed reaches.
//
// Reality check (--real-runs N, slow): on profiles whose devices are cpu +
// vgpu (host-vgpu, or a `braid calibrate --devices cpu,vgpu` file), every
// policy's plan for each zoo model also runs for real through the
// heterogeneous engine on the host CPU + braid's VIRTUAL GPU (CPU kernels
// on their own thread and memory, padded to a timing model: the profile's
// vgpu entry by default, or orin-like), N timed runs; the table gives the
// measured median next to the simulated latency and their ratio. vgpu
// figures are never a GPU measurement.
//
// Per policy and graph also its split layers (issue 30's metrics,
// scheduler/split_metrics.h): how many, their mean timing gap |T_a - T_b| and
// the hidden share of their copies, simulated, and measured with the reality
// check.
//
//   braid_league_table [--csv] [--iterations N] [--seed S] [--exhaustive-limit N]
//                      [--models a,b] [--profiles p,q] [--sparoa-policy FILE]
//                      [--sets a+b+c,d+e|none] [--random-graphs N] [--real-runs N] [--real-threads T]
//                      [--vgpu-timing profile|orin-like|none] [--sac-samples K]
//                      [--temporl-model FILE]
//
// temporl joins the table when --temporl-model names an agent from `braid
// train --policy temporl` (it has no untrained mode).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "profiling/plan_timer.h"
#include "scheduler/optimal.h"
#include "scheduler/simulator.h"
#include "scheduler/split_metrics.h"
#include "scheduler/sparoa_options.h"
#include "scheduler/temporl_options.h"
#include "scheduler/threshold_policy.h"
#include "scheduler/worl_multi_model.h"
#include "scheduler/worl_options.h"
#include "tools/cli_common.h"
#include "tools/cli_random_graph.h"
#include "tools/cli_temporl.h"

using namespace braid;  // NOLINT: a report program
using braid::cli::SplitList;

namespace {

struct Row {
  std::string policy;
  double latency_us = 0, energy_j = 0;
  double measured_us = -1;  // reality check: engine median, -1 = not run
  Plan plan;
  // Split layers: their timing gap and copies' hidden share (split_metrics.h),
  // simulated, and measured when the plan ran (layers 0: nothing split).
  SplitSummary sim_split, measured_split;
};

// The split-layer summary of `plan` on the simulator.
SplitSummary SimulatedSplits(const SimGraph& sim_graph, const Plan& plan) {
  StatusOr<std::vector<SimPlacement>> placement = CompilePlacement(sim_graph, plan);
  if (!placement.ok()) return {};
  Simulator sim(sim_graph);
  const SimResult& r = sim.Run(*placement, /*timeline=*/true);
  const std::vector<SplitLayerMetrics> layers = SplitMetricsFromSim(sim_graph, *placement, r);
  return SummarizeSplits(layers);
}

// "N splits, gap G us, H% hidden" (or "-" without splits).
std::string SplitText(const SplitSummary& s) {
  if (s.layers == 0) return "-";
  char buf[96];
  std::snprintf(buf, sizeof(buf), "%d, %.1f us", s.layers, s.mean_gap_us);
  std::string text = buf;
  if (s.hidden_share >= 0) {
    std::snprintf(buf, sizeof(buf), ", %.0f%% hid", 100 * s.hidden_share);
    text += buf;
  }
  return text;
}

struct Instance {
  std::string name;
  bool held_out = false;  // generated graph, never trained on
  Graph graph;
  bool multi_model = false;  // a set planned jointly: no reality check (not a builtin)
};

[[noreturn]] void Die(const std::string& what, const Status& s) {
  std::fprintf(stderr, "league_table: %s: %s\n", what.c_str(), s.ToString().c_str());
  std::exit(1);
}

double GeoMean(const std::vector<double>& logs) {
  if (logs.empty()) return 0;
  double s = 0;
  for (double x : logs) s += x;
  return std::exp(s / static_cast<double>(logs.size()));
}

constexpr char kUsage[] =
    "usage: braid_league_table [--csv] [--iterations N] [--seed S] [--exhaustive-limit N]\n"
    "                          [--models a,b] [--profiles p,q] [--sparoa-policy FILE]\n"
    "                          [--sets a+b+c,d+e|none] [--random-graphs N] [--real-runs N] [--real-threads T]\n"
    "                          [--vgpu-timing profile|orin-like|none] [--sac-samples K]\n"
    "                          [--temporl-model FILE]\n";

}  // namespace

int main(int argc, char** argv) {
  bool csv = false;
  OptimalOptions optimal;
  optimal.search_iterations = 50'000;
  // tiny_cnn's 4.2M plans (4 sliceable ops x 16 placements, 6 others x 2)
  // enumerate in a few seconds: worth an exact answer.
  optimal.exhaustive_limit = int64_t{1} << 23;
  std::vector<std::string> models = {"tiny_cnn", "squeezenet1_1", "mobilenet_v2",
                                     "resnet18", "resnet50",      "vit_tiny"};
  std::vector<std::string> profiles = {"jetson-orin-nano-8gb", "jetson-orin-nx-16gb",
                                       "jetson-agx-orin-64gb", "host-vgpu"};
  SparoaOptions sparoa;
  TemporlOptions temporl;
  int random_graphs = 6;
  // Multi-model sets (scheduler/worl_multi_model.h): built-in stand-ins for
  // a detector + segmenter + classifier sharing CPU and GPU.
  std::vector<std::string> model_sets = {"mobilenet_v2+squeezenet1_1+resnet18",
                                         "resnet18+vit_tiny"};
  int real_runs = 0;
  int real_threads = 1;
  std::string vgpu_timing = "profile";
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (!std::strcmp(argv[i], "--csv")) {
      csv = true;
    } else if (!std::strcmp(argv[i], "--iterations") && has_value) {
      optimal.search_iterations = std::atoll(argv[++i]);
    } else if (!std::strcmp(argv[i], "--exhaustive-limit") && has_value) {
      optimal.exhaustive_limit = std::atoll(argv[++i]);
    } else if (!std::strcmp(argv[i], "--seed") && has_value) {
      optimal.seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (!std::strcmp(argv[i], "--models") && has_value) {
      models = SplitList(argv[++i]);
    } else if (!std::strcmp(argv[i], "--sparoa-policy") && has_value) {
      sparoa.policy_file = argv[++i];  // from `braid train`; default: untrained sparoa
    } else if (!std::strcmp(argv[i], "--profiles") && has_value) {
      profiles = SplitList(argv[++i]);
    } else if (!std::strcmp(argv[i], "--sets") && has_value) {
      model_sets = SplitList(argv[++i]);
      if (model_sets.size() == 1 && model_sets[0] == "none") model_sets.clear();
    } else if (!std::strcmp(argv[i], "--random-graphs") && has_value) {
      random_graphs = std::clamp(std::atoi(argv[++i]), 0, 1000);
    } else if (!std::strcmp(argv[i], "--real-runs") && has_value) {
      real_runs = std::clamp(std::atoi(argv[++i]), 0, 1000);
    } else if (!std::strcmp(argv[i], "--real-threads") && has_value) {
      real_threads = std::clamp(std::atoi(argv[++i]), 0, 256);
    } else if (!std::strcmp(argv[i], "--sac-samples") && has_value) {
      sparoa.sac_samples = std::clamp(std::atoi(argv[++i]), 0, 10000);
    } else if (!std::strcmp(argv[i], "--temporl-model") && has_value) {
      temporl.model_file = argv[++i];
    } else if (!std::strcmp(argv[i], "--vgpu-timing") && has_value) {
      vgpu_timing = argv[++i];
    } else {
      std::fputs(kUsage, stderr);
      return 2;
    }
  }

  PolicyRegistry registry;
  RegisterBasicPolicies(registry);
  RegisterCostModelPolicies(registry);
  RegisterBaselinePolicies(registry, optimal);
  RegisterSparoaPolicy(registry, sparoa);
  SparoaOptions unpolished = sparoa;
  unpolished.polish = false;
  RegisterSparoaPolicy(registry, unpolished, "sparoa-nopolish");
  RegisterWorlPolicy(registry);
  if (!temporl.model_file.empty())
    RegisterTemporlPolicy(registry, temporl, std::make_shared<const PolicyRegistry>(registry));
  std::vector<std::string> policies;
  for (const std::string& name : registry.Names())
    if (name != "optimal" && name.rfind("random-", 0) != 0) policies.push_back(name);

  // The graphs: the zoo as MeasurePlan plans it (batch 1, annotated), then
  // the held-out generated graphs.
  std::vector<Instance> instances;
  for (const std::string& m : models) {
    StatusOr<Graph> g = profiling::PlannedGraph("builtin:" + m);
    if (!g.ok()) Die(m, g.status());
    instances.push_back({m, false, std::move(*g)});
  }
  for (int i = 0; i < random_graphs; ++i) {
    StatusOr<Graph> g = cli::RandomTrainingGraph(cli::HeldOutGraphSeed(static_cast<uint64_t>(i)));
    if (!g.ok()) Die("held-out graph", g.status());
    instances.push_back({"heldout_" + std::to_string(i), true, std::move(*g)});
  }
  for (const std::string& set : model_sets) {
    std::vector<Graph> parts;
    std::vector<NamedGraph> named;
    for (const std::string& m : SplitList(set, '+')) {
      StatusOr<Graph> g = profiling::PlannedGraph("builtin:" + m);
      if (!g.ok()) Die(set, g.status());
      parts.push_back(std::move(*g));
    }
    const std::vector<std::string> names = SplitList(set, '+');
    for (size_t k = 0; k < parts.size(); ++k) named.push_back({names[k], &parts[k]});
    StatusOr<Graph> joint = CombineGraphs(named);
    if (!joint.ok()) Die(set, joint.status());
    instances.push_back({set, false, std::move(*joint), true});
  }

  if (csv) {
    std::printf("profile,model,held_out,nodes,policy,sim_latency_ms,latency_vs_optimal,"
                "sim_energy_mj,energy_vs_optimal,speedup_vs_best_single,optimal_kind,"
                "optimal_bound_ms,optimal_gap,co_execution,measured_ms_virtual,"
                "measured_vs_simulated,split_layers,sim_mean_split_gap_us,sim_hidden_copy_share,"
                "measured_mean_split_gap_us,measured_hidden_copy_share\n");
  } else {
    std::printf("braid league table -- ALL FIGURES SIMULATED (cost model + discrete-event "
                "simulator on device profiles) unless marked MEASURED\n");
    std::printf("ratios are to the optimal reference (x1.000 = optimal; latency is what it "
                "optimises, energy is that plan's); speedup is over the faster of cpu-only and "
                "gpu-only. optimal: exhaustive up to %lld plans, else %lld annealing steps, seed "
                "%llu. heldout_K: generated graphs never trained on.\n",
                static_cast<long long>(optimal.exhaustive_limit),
                static_cast<long long>(optimal.search_iterations),
                static_cast<unsigned long long>(optimal.seed));
    std::printf("sparoa = predictor + SAC + fallback, then a simulator local search (not RL); "
                "sparoa-nopolish = the same without the local search.\n");
    std::printf("worl = WORL-RTGS (WOA + DDQN + running time gap strategy, start population with "
                "heft's and partition's plans). a+b+c: models planned jointly as one combined DAG "
                "(makespan; simulated only, counted under \"zoo only\").\n");
    if (real_runs > 0)
      std::printf("reality check: on cpu + vgpu profiles, zoo models' plans run %d times through "
                  "the engine on CPU + braid's VIRTUAL GPU (timing: %s; a model, never a GPU "
                  "figure)\n",
                  real_runs, vgpu_timing.c_str());
  }
  std::map<std::string, std::vector<double>> log_latency_ratio, log_energy_ratio, log_speedup;
  std::map<std::string, std::vector<double>> heldout_log_latency, zoo_log_latency;
  std::map<std::string, std::vector<double>> log_measured_vs_sim, log_measured_speedup;
  std::map<std::string, int> worse_than_single;
  std::vector<std::string> no_gain_pairs;
  for (const std::string& profile_name : profiles) {
    StatusOr<DeviceProfile> profile = LoadDeviceProfile(profile_name);
    if (!profile.ok()) Die(profile_name, profile.status());
    CostModel model(*profile);
    PlacementContext ctx;
    for (const DeviceSpec& d : profile->devices) ctx.devices.push_back(d.name);
    ctx.cost_model = &model;
    const bool real = real_runs > 0 && ctx.devices.size() == 2 && ctx.devices[1] == "vgpu";
    profiling::PlanTimerOptions timer;
    if (real) {
      // The sparse kernels as BRAID_SPARSE / BRAID_SPARSE_CROSSOVER say, as the CLI runs them.
      StatusOr<cli::SparseEnvironment> sparse_env = cli::ReadSparseEnvironment();
      if (!sparse_env.ok()) Die("BRAID_SPARSE", sparse_env.status());
      timer.sparse_kernels = sparse_env->sparse;
      timer.sparse_crossover = sparse_env->crossover;
      timer.devices = ctx.devices;
      timer.iterations = real_runs;
      timer.threads = real_threads;
      StatusOr<VgpuTiming> t = vgpu_timing == "profile" ? profiling::VgpuTimingFromProfile(*profile)
                                                        : VgpuTimingPreset(vgpu_timing);
      if (!t.ok()) Die("--vgpu-timing", t.status());
      timer.vgpu_timing = *t;
    }
    if (!csv) {
      std::printf("\n=== %s%s%s ===\n", profile_name.c_str(),
                  profile->power_mode.empty() ? "" : ", power mode ",
                  profile->power_mode.c_str());
    }
    for (const Instance& inst : instances) {
      const Graph& graph = inst.graph;
      StatusOr<SimGraph> sim_graph = BuildSimGraph(graph, model, ctx.devices);
      if (!sim_graph.ok()) Die(inst.name, sim_graph.status());

      std::vector<Row> rows;
      for (const std::string& policy : policies) {
        StatusOr<Plan> plan = MakePlan(registry, policy, graph, ctx);
        if (!plan.ok()) Die(inst.name + " " + policy, plan.status());
        StatusOr<SimResult> r = SimulatePlan(*sim_graph, *plan);
        if (!r.ok()) Die(inst.name + " " + policy, r.status());
        rows.push_back({policy, r->latency_us, r->energy_j, -1, std::move(*plan), {}, {}});
        rows.back().sim_split = SimulatedSplits(*sim_graph, rows.back().plan);
      }
      const auto t0 = std::chrono::steady_clock::now();
      OptimalResult best;
      StatusOr<Plan> best_plan = FindOptimalPlan(graph, ctx, optimal, &best);
      if (!best_plan.ok()) Die(inst.name + " optimal", best_plan.status());
      const double search_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      rows.push_back({"optimal", best.latency_us, best.energy_j, -1, std::move(*best_plan), {}, {}});
      rows.back().sim_split = SimulatedSplits(*sim_graph, rows.back().plan);

      // Reality check: the same plans through the engine (zoo models only).
      double measured_best_single = -1;
      if (real && !inst.held_out && !inst.multi_model) {
        for (Row& r : rows) {
          if (!csv) std::fprintf(stderr, "running %s / %s ...\n", inst.name.c_str(),
                                 r.policy.c_str());
          StatusOr<profiling::PlanTimings> t =
              profiling::MeasurePlan("builtin:" + inst.name, &r.plan, timer);
          if (!t.ok()) Die(inst.name + " " + r.policy + " (real run)", t.status());
          r.measured_us = t->end_to_end_median_us;
          r.measured_split = SummarizeSplits(cli::MeasuredSplitMetrics(*t));
        }
        for (const Row& r : rows)
          if ((r.policy == "cpu-only" || r.policy == "gpu-only") &&
              (measured_best_single < 0 || r.measured_us < measured_best_single))
            measured_best_single = r.measured_us;
      }

      double best_single = 0;
      std::string best_single_name;
      for (const Row& r : rows)
        if ((r.policy == "cpu-only" || r.policy == "gpu-only") &&
            (best_single_name.empty() || r.latency_us < best_single)) {
          best_single = r.latency_us;
          best_single_name = r.policy;
        }
      // Co-execution verdict from the cost model's point of view.
      const double gain = 1 - best.latency_us / best_single;
      const double bound_gain = 1 - best.lower_bound_us / best_single;
      std::string verdict;
      if (gain < 0.005) {
        verdict = best.exact() ? "co-execution cannot help (exact optimum = best single device)"
                               : "no co-execution gain found (bound allows at most " +
                                     std::to_string(static_cast<int>(std::round(100 * bound_gain))) +
                                     "%)";
        no_gain_pairs.push_back(inst.name + " on " + profile_name + ": " + verdict);
      } else {
        char buf[96];
        std::snprintf(buf, sizeof(buf), "co-execution helps: optimum %.1f%% below %s", 100 * gain,
                      best_single_name.c_str());
        verdict = buf;
      }
      if (csv) {
        for (const Row& r : rows) {
          std::printf("%s,%s,%d,%d,%s,%.4f,%.4f,%.4f,%.4f,%.4f,%s,%.4f,%.4f,\"%s\",",
                      profile_name.c_str(), inst.name.c_str(), inst.held_out ? 1 : 0,
                      graph.num_nodes(), r.policy.c_str(), r.latency_us / 1e3,
                      r.latency_us / best.latency_us, r.energy_j * 1e3, r.energy_j / best.energy_j,
                      best_single / r.latency_us, OptimalKindName(best.kind),
                      best.lower_bound_us / 1e3, best.Gap(), verdict.c_str());
          if (r.measured_us > 0)
            std::printf("%.4f,%.4f,", r.measured_us / 1e3, r.measured_us / r.latency_us);
          else
            std::printf(",,");
          std::printf("%d,%.2f,%.4f,", r.sim_split.layers, r.sim_split.mean_gap_us,
                      r.sim_split.hidden_share);
          if (r.measured_split.layers > 0)
            std::printf("%.2f,%.4f\n", r.measured_split.mean_gap_us, r.measured_split.hidden_share);
          else
            std::printf(",\n");
        }
      } else {
        std::printf("\n%s%s (%d nodes): optimal %.3f ms simulated, %s", inst.name.c_str(),
                    inst.held_out ? " [held out]" : "", graph.num_nodes(), best.latency_us / 1e3,
                    OptimalKindName(best.kind));
        if (!best.exact())
          std::printf(", proven bound %.3f ms, gap %.1f%%", best.lower_bound_us / 1e3,
                      100 * best.Gap());
        std::printf(" [%lld plans simulated, %.2f s]\n  %s\n",
                    static_cast<long long>(best.evaluations), search_s, verdict.c_str());
        std::printf("  %-16s %14s %9s %14s %9s %16s", "policy", "sim latency ms", "vs opt",
                    "sim energy mJ", "vs opt", "speedup vs best1");
        std::printf("  %-26s", "splits, sim gap, hidden");
        if (measured_best_single > 0)
          std::printf(" %16s %9s %14s  %-22s", "MEASURED ms (v)", "meas/sim", "meas. speedup",
                      "MEASURED splits, gap");
        std::printf("\n");
        for (const Row& r : rows) {
          std::printf("  %-16s %14.3f %8.3fx %14.3f %8.3fx %15.3fx", r.policy.c_str(),
                      r.latency_us / 1e3, r.latency_us / best.latency_us, r.energy_j * 1e3,
                      r.energy_j / best.energy_j, best_single / r.latency_us);
          std::printf("  %-26s", SplitText(r.sim_split).c_str());
          if (r.measured_us > 0)
            std::printf(" %16.3f %8.3fx %13.3fx  %-22s", r.measured_us / 1e3,
                        r.measured_us / r.latency_us, measured_best_single / r.measured_us,
                        SplitText(r.measured_split).c_str());
          std::printf("\n");
        }
      }
      for (const Row& r : rows) {
        const double lr = std::log(r.latency_us / best.latency_us);
        log_latency_ratio[r.policy].push_back(lr);
        (inst.held_out ? heldout_log_latency : zoo_log_latency)[r.policy].push_back(lr);
        log_energy_ratio[r.policy].push_back(std::log(r.energy_j / best.energy_j));
        log_speedup[r.policy].push_back(std::log(best_single / r.latency_us));
        worse_than_single[r.policy] += r.latency_us > best_single * (1 + 1e-9);
        if (r.measured_us > 0) {
          log_measured_vs_sim[r.policy].push_back(std::log(r.measured_us / r.latency_us));
          log_measured_speedup[r.policy].push_back(std::log(measured_best_single / r.measured_us));
        }
      }
    }
  }
  if (!csv) {
    std::printf("\nsummary over %zu (graph, profile) pairs, geometric means, SIMULATED:\n",
                log_latency_ratio.begin()->second.size());
    std::printf("  %-16s %15s %12s %14s %15s %16s %10s %12s\n", "policy", "latency vs opt",
                "zoo only", "held-out only", "energy vs opt", "speedup vs best1", "worst lat",
                "> best1 on");
    // "-" where a subset has no pairs.
    auto subset = [](const std::vector<double>& logs) {
      char buf[32];
      if (logs.empty()) return std::string("-");
      std::snprintf(buf, sizeof buf, "%.3fx", GeoMean(logs));
      return std::string(buf);
    };
    for (const auto& [policy, logs] : log_latency_ratio) {
      double worst = 0;
      for (double x : logs) worst = std::max(worst, std::exp(x));
      std::printf("  %-16s %14.3fx %12s %14s %14.3fx %15.3fx %9.3fx %8d/%zu\n", policy.c_str(),
                  GeoMean(logs), subset(zoo_log_latency[policy]).c_str(),
                  subset(heldout_log_latency[policy]).c_str(), GeoMean(log_energy_ratio[policy]),
                  GeoMean(log_speedup[policy]), worst, worse_than_single[policy], logs.size());
    }
    std::printf("  (\"> best1 on\": pairs where the policy is slower than the better of cpu-only "
                "and gpu-only)\n");
    if (no_gain_pairs.empty()) {
      std::printf("\nthe cost model finds a co-execution gain (>= 0.5%%) on every pair\n");
    } else {
      std::printf("\nwhere the cost model says co-execution cannot help (or found no gain):\n");
      for (const std::string& p : no_gain_pairs) std::printf("  %s\n", p.c_str());
    }
    if (!log_measured_vs_sim.empty()) {
      std::printf("\nreality check (cpu + vgpu profiles, zoo models, MEASURED on CPU + VIRTUAL "
                  "GPU, %d runs each, median; geometric means):\n",
                  real_runs);
      std::printf("  %-16s %16s %22s\n", "policy", "measured / sim", "measured speedup vs best1");
      for (const auto& [policy, logs] : log_measured_vs_sim)
        std::printf("  %-16s %15.3fx %21.3fx\n", policy.c_str(), GeoMean(logs),
                    GeoMean(log_measured_speedup[policy]));
    }
  }
  return 0;
}
