// The league table (SIMULATED): for every built-in model and device profile,
// each registered policy's simulated latency and energy as a ratio to the
// optimal reference (scheduler/optimal.h), and its speedup over the best
// single device. Every figure is the cost model's prediction on the profile,
// not a measurement. All devices are allowed for every node (no kernel
// registry is consulted: the scheduler's view only).
//
//   braid_league_table [--csv] [--iterations N] [--seed S] [--exhaustive-limit N]
//                      [--models a,b] [--profiles p,q]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "graph/annotate.h"
#include "tools/cli_common.h"
#include "graph/passes/passes.h"
#include "models/builtin.h"
#include "scheduler/optimal.h"
#include "scheduler/simulator.h"
#include "scheduler/sparoa_policy.h"
#include "scheduler/threshold_policy.h"

using namespace braid;  // NOLINT: a report program
using braid::cli::SplitList;

namespace {

struct Row {
  std::string policy;
  double latency_us = 0, energy_j = 0;
};

[[noreturn]] void Die(const std::string& what, const Status& s) {
  std::fprintf(stderr, "league_table: %s: %s\n", what.c_str(), s.ToString().c_str());
  std::exit(1);
}

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
    } else {
      std::fprintf(stderr,
                   "usage: braid_league_table [--csv] [--iterations N] [--seed S] "
                   "[--exhaustive-limit N] [--models a,b] [--profiles p,q] [--sparoa-policy FILE]\n");
      return 2;
    }
  }

  PolicyRegistry registry;
  RegisterBasicPolicies(registry);
  RegisterCostModelPolicies(registry);
  RegisterBaselinePolicies(registry, optimal);
  RegisterSparoaPolicy(registry, sparoa);
  std::vector<std::string> policies;
  for (const std::string& name : registry.Names())
    if (name != "optimal") policies.push_back(name);

  if (csv) {
    std::printf("profile,model,nodes,policy,sim_latency_ms,latency_vs_optimal,sim_energy_mj,"
                "energy_vs_optimal,speedup_vs_best_single,optimal_kind,optimal_bound_ms,"
                "optimal_gap,co_execution\n");
  } else {
    std::printf("braid league table -- ALL FIGURES SIMULATED (cost model + discrete-event "
                "simulator on device profiles; no device was run)\n");
    std::printf("ratios are to the optimal reference (x1.000 = optimal; latency is what it "
                "optimises, energy is that plan's); speedup is over the faster of cpu-only and "
                "gpu-only. optimal: exhaustive up to %lld plans, else %lld annealing steps, seed %llu\n",
                static_cast<long long>(optimal.exhaustive_limit),
                static_cast<long long>(optimal.search_iterations),
                static_cast<unsigned long long>(optimal.seed));
  }
  std::map<std::string, std::vector<double>> log_latency_ratio, log_energy_ratio, log_speedup;
  for (const std::string& profile_name : profiles) {
    StatusOr<DeviceProfile> profile = LoadDeviceProfile(profile_name);
    if (!profile.ok()) Die(profile_name, profile.status());
    CostModel model(*profile);
    PlacementContext ctx;
    for (const DeviceSpec& d : profile->devices) ctx.devices.push_back(d.name);
    ctx.cost_model = &model;
    if (!csv) {
      std::printf("\n=== %s%s%s ===\n", profile_name.c_str(),
                  profile->power_mode.empty() ? "" : ", power mode ",
                  profile->power_mode.c_str());
    }
    for (const std::string& model_name : models) {
      StatusOr<Graph> graph = BuildBuiltinModel(model_name);
      if (!graph.ok()) Die(model_name, graph.status());
      if (Status s = RunDefaultPasses(*graph); !s.ok()) Die(model_name, s);
      if (Status s = Annotate(*graph); !s.ok()) Die(model_name, s);
      StatusOr<SimGraph> sim_graph = BuildSimGraph(*graph, model, ctx.devices);
      if (!sim_graph.ok()) Die(model_name, sim_graph.status());

      std::vector<Row> rows;
      for (const std::string& policy : policies) {
        StatusOr<Plan> plan = MakePlan(registry, policy, *graph, ctx);
        if (!plan.ok()) Die(model_name + " " + policy, plan.status());
        StatusOr<SimResult> r = SimulatePlan(*sim_graph, *plan);
        if (!r.ok()) Die(model_name + " " + policy, r.status());
        rows.push_back({policy, r->latency_us, r->energy_j});
      }
      const auto t0 = std::chrono::steady_clock::now();
      OptimalResult best;
      StatusOr<Plan> best_plan = FindOptimalPlan(*graph, ctx, optimal, &best);
      if (!best_plan.ok()) Die(model_name + " optimal", best_plan.status());
      const double search_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      rows.push_back({"optimal", best.latency_us, best.energy_j});

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
      } else {
        char buf[96];
        std::snprintf(buf, sizeof(buf), "co-execution helps: optimum %.1f%% below %s", 100 * gain,
                      best_single_name.c_str());
        verdict = buf;
      }
      if (csv) {
        for (const Row& r : rows)
          std::printf("%s,%s,%d,%s,%.4f,%.4f,%.4f,%.4f,%.4f,%s,%.4f,%.4f,\"%s\"\n",
                      profile_name.c_str(), model_name.c_str(), graph->num_nodes(),
                      r.policy.c_str(), r.latency_us / 1e3, r.latency_us / best.latency_us,
                      r.energy_j * 1e3, r.energy_j / best.energy_j, best_single / r.latency_us,
                      OptimalKindName(best.kind), best.lower_bound_us / 1e3, best.Gap(),
                      verdict.c_str());
      } else {
        std::printf("\n%s (%d nodes): optimal %.3f ms simulated, %s", model_name.c_str(),
                    graph->num_nodes(), best.latency_us / 1e3, OptimalKindName(best.kind));
        if (!best.exact())
          std::printf(", proven bound %.3f ms, gap %.1f%%", best.lower_bound_us / 1e3,
                      100 * best.Gap());
        std::printf(" [%lld plans simulated, %.2f s]\n  %s\n",
                    static_cast<long long>(best.evaluations), search_s, verdict.c_str());
        std::printf("  %-10s %14s %9s %14s %9s %16s\n", "policy", "sim latency ms", "vs opt",
                    "sim energy mJ", "vs opt", "speedup vs best1");
        for (const Row& r : rows)
          std::printf("  %-10s %14.3f %8.3fx %14.3f %8.3fx %15.3fx\n", r.policy.c_str(),
                      r.latency_us / 1e3, r.latency_us / best.latency_us, r.energy_j * 1e3,
                      r.energy_j / best.energy_j, best_single / r.latency_us);
      }
      for (const Row& r : rows) {
        log_latency_ratio[r.policy].push_back(std::log(r.latency_us / best.latency_us));
        log_energy_ratio[r.policy].push_back(std::log(r.energy_j / best.energy_j));
        log_speedup[r.policy].push_back(std::log(best_single / r.latency_us));
      }
    }
  }
  if (!csv) {
    std::printf("\nsummary over %zu (model, profile) pairs, geometric means, SIMULATED:\n",
                log_latency_ratio.begin()->second.size());
    std::printf("  %-10s %16s %16s %16s %12s\n", "policy", "latency vs opt", "energy vs opt",
                "speedup vs best1", "worst lat");
    for (const auto& [policy, logs] : log_latency_ratio) {
      auto gmean = [](const std::vector<double>& v) {
        double s = 0;
        for (double x : v) s += x;
        return std::exp(s / static_cast<double>(v.size()));
      };
      double worst = 0;
      for (double x : logs) worst = std::max(worst, std::exp(x));
      std::printf("  %-10s %15.3fx %15.3fx %15.3fx %11.3fx\n", policy.c_str(), gmean(logs),
                  gmean(log_energy_ratio[policy]), gmean(log_speedup[policy]), worst);
    }
  }
  return 0;
}
