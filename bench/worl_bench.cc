// WORL-RTGS figures (ALL SIMULATED: cost model + discrete-event simulator on
// device profiles; no device runs), side by side in one run:
//  1. exact references: worl against optimal.cc where it is exact (chain DP
//     or exhaustive: tiny_cnn, seeded synthetic CNN-like chains of 16-64
//     layers, and the generated held-out graphs that are chains or small),
//     with heft and partition; worl must be within 3%.
//  2. multi-model sets (scheduler/worl_multi_model.h), planned jointly:
//     every policy's makespan, worl against heft and partition, and each
//     policy's planning time beside simulated annealing's (optimal.cc's
//     search: partition start + annealing + local polish, the scheduler's
//     only SA) at the same seed.
//  3. plan distance vs finish-time gap: StudyPlanDistance around worl's plan
//     (Pearson / Spearman of SPD and FTG, FTG per moved node) and the
//     population's correlation during the search.
//  4. ablation: worl without the DDQN, without RTGS, and plain WOA.
//
//   braid_worl_bench [--profiles a,b] [--models a,b] [--sets a+b+c,d+e]
//                    [--random-graphs N] [--chains N] [--whales W] [--iterations T]
//                    [--seed S] [--samples K] [--sa-iterations N] [--skip 1,2,3,4]
//                    [--no-partition-seed]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "profiling/op_timer.h"
#include "scheduler/heft_policy.h"
#include "scheduler/optimal.h"
#include "scheduler/partition_policy.h"
#include "scheduler/policies.h"
#include "scheduler/simulator.h"
#include "scheduler/sparoa_options.h"
#include "scheduler/threshold_policy.h"
#include "scheduler/worl_multi_model.h"
#include "scheduler/worl_policy.h"
#include "tools/cli_common.h"
#include "tools/cli_random_graph.h"

using namespace braid;  // NOLINT: a report program
using braid::cli::SplitList;

namespace {

[[noreturn]] void Die(const std::string& what, const Status& s) {
  std::fprintf(stderr, "worl_bench: %s: %s\n", what.c_str(), s.ToString().c_str());
  std::exit(1);
}

template <typename T>
T Must(StatusOr<T> v, const std::string& what) {
  if (!v.ok()) Die(what, v.status());
  return std::move(*v);
}

double Seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct Timed {
  double latency_us = 0, seconds = 0;
  int64_t evaluations = -1;  // plans simulated, -1 unknown
};

// Options product, saturating above `limit`.
bool SmallEnough(const PlacementSpace& space, int64_t limit) {
  int64_t product = 1;
  for (const auto& o : space.options) {
    const int64_t k = static_cast<int64_t>(o.size());
    if (product > limit / k) return false;
    product *= k;
  }
  return true;
}

struct Setup {
  std::unique_ptr<CostModel> model;
  PlacementContext ctx;
};
Setup MakeSetup(const DeviceProfile& profile) {
  Setup s;
  s.model = std::make_unique<CostModel>(profile);
  for (const DeviceSpec& d : profile.devices) s.ctx.devices.push_back(d.name);
  s.ctx.cost_model = s.model.get();
  return s;
}

Timed RunWorl(const PlacementSpace& space, const WorlOptions& o, WorlResult* keep = nullptr) {
  const auto t0 = std::chrono::steady_clock::now();
  WorlResult r = Must(PlaceWorl(space, o), "worl");
  Timed t{r.latency_us, Seconds(t0), r.stats.evaluations};
  if (keep != nullptr) *keep = std::move(r);
  return t;
}

// A registered policy through MakePlan, simulated.
Timed RunPolicy(const PolicyRegistry& registry, const std::string& name, const Graph& graph,
                const Setup& s, const SimGraph& sim_graph) {
  const auto t0 = std::chrono::steady_clock::now();
  Plan plan = Must(MakePlan(registry, name, graph, s.ctx), name);
  const double seconds = Seconds(t0);
  return {Must(SimulatePlan(sim_graph, plan), name).latency_us, seconds, -1};
}

// A seeded chain of `nodes` CNN-like layers on [1, C, H, W] values (the
// chain DP is exact on it): 3x3 / 1x1 / depthwise convs, ReLU, pooling that
// halves H and W, a Gemm head; annotations from the shapes (f32).
Graph SyntheticChain(uint64_t seed, int nodes) {
  std::mt19937_64 rng(seed);
  Graph g;
  int64_t c = 16, hw = 112;
  auto value = [&](const std::string& name) {
    Value v;
    v.name = name;
    v.dtype = DataType::kF32;
    v.has_shape = true;
    v.shape = StaticShape(std::vector<int64_t>{1, c, hw, hw});
    return g.AddValue(std::move(v));
  };
  ValueId x = g.AddInput("x", DataType::kF32, StaticShape(std::vector<int64_t>{1, c, hw, hw}));
  for (int i = 0; i < nodes; ++i) {
    Node n;
    n.name = "l" + std::to_string(i);
    const double in_bytes = 4.0 * static_cast<double>(c * hw * hw);
    const int kind = i + 1 == nodes ? 4 : static_cast<int>(rng() % 5);
    double flops = 0, weights = 0;
    const int64_t cin = c;
    if (kind == 0 || kind == 1) {  // conv 3x3 / 1x1, channels may grow
      n.op_type = "Conv";
      if (c < 256 && rng() % 3 == 0) c *= 2;
      const int64_t k = kind == 0 ? 3 : 1;
      weights = static_cast<double>(cin * c * k * k);
      flops = 2 * weights * static_cast<double>(hw * hw);
    } else if (kind == 2) {  // depthwise 3x3
      n.op_type = "Conv";
      n.attrs.Set("group", static_cast<int64_t>(c));
      weights = static_cast<double>(c * 9);
      flops = 2 * weights * static_cast<double>(hw * hw);
    } else if (kind == 3) {
      if (hw > 7 && rng() % 2 == 0) {
        n.op_type = "MaxPool";
        hw /= 2;
      } else {
        n.op_type = "Relu";
      }
      flops = static_cast<double>(c * hw * hw);
    } else {  // Gemm head on the flattened features, 1000 outputs
      n.op_type = "Gemm";
      weights = static_cast<double>(c * hw * hw) * 1000;
      flops = 2 * weights;
      c = 1000;
      hw = 1;
    }
    n.inputs = {x};
    ValueId out;
    if (n.op_type == "Gemm") {
      Value v;
      v.name = n.name + "_out";
      v.dtype = DataType::kF32;
      v.has_shape = true;
      v.shape = StaticShape(std::vector<int64_t>{1, 1000});
      out = g.AddValue(std::move(v));
    } else {
      out = value(n.name + "_out");
    }
    n.outputs = {out};
    n.annotation.flops = flops;
    n.annotation.bytes = in_bytes + 4.0 * weights + 4.0 * static_cast<double>(c * hw * hw);
    n.annotation.intensity = flops / n.annotation.bytes;
    n.annotation.params = static_cast<int64_t>(weights);
    g.AddNode(std::move(n));
    x = out;
  }
  g.outputs().push_back(x);
  return g;
}

constexpr char kUsage[] =
    "usage: braid_worl_bench [--profiles a,b] [--models a,b] [--sets a+b+c,d+e]\n"
    "                        [--random-graphs N] [--chains N] [--whales W] [--iterations T] [--seed S]\n"
    "                        [--samples K] [--sa-iterations N] [--skip 1,2,3,4]\n"
    "                        [--no-partition-seed]\n";

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> profiles = {"jetson-orin-nano-8gb", "jetson-orin-nx-16gb",
                                       "jetson-agx-orin-64gb", "host-vgpu"};
  std::vector<std::string> models = {"tiny_cnn", "squeezenet1_1", "mobilenet_v2", "resnet18",
                                     "vit_tiny"};
  // Built-in stand-ins for a detector / segmenter / classifier set (the
  // zoo's YOLO and segmentation exports need bench/python_env.sh).
  std::vector<std::string> sets = {"mobilenet_v2+squeezenet1_1+resnet18", "resnet18+vit_tiny",
                                   "tiny_cnn+squeezenet1_1+mobilenet_v2"};
  int random_graphs = 40;
  int chains = 9;
  int samples = 400;
  WorlOptions worl;
  OptimalOptions sa;
  sa.method = OptimalMethod::kSearch;
  sa.search_iterations = 50'000;
  std::vector<std::string> skip;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (!std::strcmp(argv[i], "--profiles") && has_value) {
      profiles = SplitList(argv[++i]);
    } else if (!std::strcmp(argv[i], "--models") && has_value) {
      models = SplitList(argv[++i]);
    } else if (!std::strcmp(argv[i], "--sets") && has_value) {
      sets = SplitList(argv[++i]);
    } else if (!std::strcmp(argv[i], "--random-graphs") && has_value) {
      random_graphs = std::clamp(std::atoi(argv[++i]), 0, 10000);
    } else if (!std::strcmp(argv[i], "--chains") && has_value) {
      chains = std::clamp(std::atoi(argv[++i]), 0, 10000);
    } else if (!std::strcmp(argv[i], "--whales") && has_value) {
      worl.whales = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--iterations") && has_value) {
      worl.iterations = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--seed") && has_value) {
      worl.seed = std::strtoull(argv[++i], nullptr, 10);
      sa.seed = worl.seed;
    } else if (!std::strcmp(argv[i], "--samples") && has_value) {
      samples = std::clamp(std::atoi(argv[++i]), 1, 1'000'000);
    } else if (!std::strcmp(argv[i], "--sa-iterations") && has_value) {
      sa.search_iterations = std::atoll(argv[++i]);
    } else if (!std::strcmp(argv[i], "--no-partition-seed")) {
      worl.seed_partition = false;
    } else if (!std::strcmp(argv[i], "--skip") && has_value) {
      skip = SplitList(argv[++i]);
    } else {
      std::fputs(kUsage, stderr);
      return 2;
    }
  }
  if (Status s = ValidateWorlOptions(worl); !s.ok()) Die("options", s);
  auto run_section = [&](const char* n) { return std::find(skip.begin(), skip.end(), n) == skip.end(); };

  std::map<std::string, Graph> zoo;
  auto model_graph = [&](const std::string& m) -> const Graph& {
    auto it = zoo.find(m);
    if (it == zoo.end())
      it = zoo.emplace(m, Must(profiling::PlannedGraph("builtin:" + m), m)).first;
    return it->second;
  };
  std::vector<DeviceProfile> loaded;
  for (const std::string& p : profiles) loaded.push_back(Must(LoadDeviceProfile(p), p));

  std::printf("braid WORL-RTGS bench -- ALL FIGURES SIMULATED (cost model + discrete-event "
              "simulator on device profiles), planning times measured on this host's CPU\n");
  std::printf("worl: %d whales x %d iterations, DDQN episode of %d nodes per iteration, RTGS on, "
              "seed %llu, partition's plan %sin the start population\n",
              worl.whales, worl.iterations, worl.episode_nodes,
              static_cast<unsigned long long>(worl.seed), worl.seed_partition ? "" : "NOT ");

  // ---- 1. exact references ------------------------------------------------------
  if (run_section("1")) {
    std::printf("\n== 1. worl vs the EXACT optimum (chain DP or exhaustive), simulated ==\n");
    std::printf("%-22s %-22s %6s %-18s %10s %8s %8s %8s %8s %8s\n", "profile", "graph", "nodes",
                "optimal kind", "opt ms", "worl", "heft", "partit.", "worl s", "opt s");
    int within = 0, total = 0;
    double worst = 1, log_sum = 0;
    for (const DeviceProfile& profile : loaded) {
      Setup s = MakeSetup(profile);
      std::vector<std::pair<std::string, Graph>> graphs;
      graphs.emplace_back("tiny_cnn", model_graph("tiny_cnn"));
      for (int i = 0; i < chains; ++i) {
        const int length = 16 << (i % 3);  // 16, 32, 64 layers
        graphs.emplace_back("chain" + std::to_string(length) + "_" + std::to_string(i),
                            SyntheticChain(static_cast<uint64_t>(i) + 1, length));
      }
      for (int i = 0; i < random_graphs; ++i)
        graphs.emplace_back("heldout_" + std::to_string(i),
                            Must(cli::RandomTrainingGraph(cli::HeldOutGraphSeed(static_cast<uint64_t>(i))),
                                 "held-out graph"));
      for (const auto& [name, graph] : graphs) {
        PlacementSpace space = Must(BuildPlacementSpace(graph, s.ctx, "worl"), name);
        const bool chain = IsChain(space.sim);
        if (!chain && !SmallEnough(space, int64_t{1} << 23)) continue;
        OptimalOptions exact;
        exact.method = chain ? OptimalMethod::kChainDp : OptimalMethod::kExhaustive;
        exact.exhaustive_limit = int64_t{1} << 23;
        const auto t0 = std::chrono::steady_clock::now();
        OptimalResult best = Must(FindOptimal(space, exact), name);
        const double opt_s = Seconds(t0);
        const Timed w = RunWorl(space, worl);
        Simulator sim(space.sim);
        const double heft = sim.Run(PlaceHeft(space).placement).latency_us;
        const double partition = PlacePartition(space).latency_us;
        const double ratio = w.latency_us / best.latency_us;
        within += ratio <= 1.03 ? 1 : 0;
        ++total;
        worst = std::max(worst, ratio);
        log_sum += std::log(ratio);
        std::printf("%-22s %-22s %6d %-18s %10.3f %7.4fx %7.4fx %7.4fx %8.2f %8.2f\n",
                    profile.name.c_str(), name.c_str(), graph.num_nodes(),
                    OptimalKindName(best.kind), best.latency_us / 1e3, ratio,
                    heft / best.latency_us, partition / best.latency_us, w.seconds, opt_s);
      }
    }
    if (total > 0)
      std::printf("worl within 3%% of the exact optimum on %d of %d (graph, profile) pairs; "
                  "geomean %.4fx, worst %.4fx (simulated)\n",
                  within, total, std::exp(log_sum / total), worst);
  }

  // ---- 2. multi-model sets -------------------------------------------------------
  if (run_section("2")) {
    std::printf("\n== 2. multi-model sets planned jointly: makespan (simulated ms) and planning "
                "time (s, this host) ==\n");
    std::printf("SA = optimal.cc's search (partition start + %lld annealing steps + local polish, "
                "seed %llu); its proven lower bound in brackets\n",
                static_cast<long long>(sa.search_iterations),
                static_cast<unsigned long long>(sa.seed));
    PolicyRegistry registry;
    RegisterBasicPolicies(registry);
    RegisterCostModelPolicies(registry);
    RegisterBaselinePolicies(registry);
    RegisterSparoaPolicy(registry);
    RegisterWorlPolicy(registry, worl);
    const std::vector<std::string> policies = {"cpu-only", "gpu-only", "threshold", "heft",
                                               "partition", "sparoa", "worl"};
    int no_worse = 0, total = 0;
    std::vector<double> unseeded_vs_partition;
    for (const DeviceProfile& profile : loaded) {
      Setup s = MakeSetup(profile);
      for (const std::string& set : sets) {
        std::vector<std::string> names = SplitList(set, '+');
        std::vector<NamedGraph> parts;
        for (const std::string& m : names) parts.push_back({m, &model_graph(m)});
        const Graph joint = Must(CombineGraphs(parts), set);
        const SimGraph sim_graph = Must(BuildSimGraph(joint, *s.model, s.ctx.devices), set);
        std::map<std::string, Timed> rows;
        for (const std::string& p : policies) rows[p] = RunPolicy(registry, p, joint, s, sim_graph);
        PlacementSpace space = Must(BuildPlacementSpace(joint, s.ctx, "sa"), set);
        const auto t0 = std::chrono::steady_clock::now();
        OptimalResult annealed = Must(FindOptimal(space, sa), set + " SA");
        const Timed sa_row{annealed.latency_us, Seconds(t0), annealed.evaluations};
        WorlResult wr;
        const Timed w = RunWorl(space, worl, &wr);
        WorlOptions unseeded = worl;
        unseeded.seed_partition = false;
        const Timed wu = RunWorl(space, unseeded);
        std::printf("\n%s on %s (%d nodes):\n", set.c_str(), profile.name.c_str(), joint.num_nodes());
        std::printf("  %-12s %12s %10s %10s %12s\n", "policy", "makespan ms", "vs worl", "plan s",
                    "plans sim.");
        for (const std::string& p : policies)
          std::printf("  %-12s %12.3f %9.3fx %10.3f %12s\n", p.c_str(), rows[p].latency_us / 1e3,
                      rows[p].latency_us / rows["worl"].latency_us, rows[p].seconds,
                      p == "worl" ? std::to_string(w.evaluations).c_str() : "-");
        std::printf("  %-12s %12.3f %9.3fx %10.3f %12lld  [bound %.3f ms]\n", "SA", sa_row.latency_us / 1e3,
                    sa_row.latency_us / rows["worl"].latency_us, sa_row.seconds,
                    static_cast<long long>(sa_row.evaluations), annealed.lower_bound_us / 1e3);
        std::printf("  %-12s %12.3f %9.3fx %10.3f %12lld  (start population without partition's plan)\n",
                    "worl-nopart", wu.latency_us / 1e3, wu.latency_us / rows["worl"].latency_us,
                    wu.seconds, static_cast<long long>(wu.evaluations));
        std::printf("  worl: leader from DDQN %d times, whale moves %d, RTGS %d; start %.3f ms\n",
                    wr.stats.ddqn_leads, wr.stats.woa_leads, wr.stats.rtgs_leads,
                    wr.stats.start_us / 1e3);
        unseeded_vs_partition.push_back(wu.latency_us / rows["partition"].latency_us);
        const double wl = rows["worl"].latency_us;
        const bool ok = wl <= rows["heft"].latency_us * (1 + 1e-9) &&
                        wl <= rows["partition"].latency_us * (1 + 1e-9);
        no_worse += ok ? 1 : 0;
        ++total;
      }
    }
    if (total > 0)
      std::printf("\nworl no worse than both heft and partition on %d of %d (set, profile) pairs "
                  "(simulated)\n",
                  no_worse, total);
    if (!unseeded_vs_partition.empty()) {
      std::sort(unseeded_vs_partition.begin(), unseeded_vs_partition.end());
      int better = 0;
      for (double r : unseeded_vs_partition) better += r <= 1 + 1e-9 ? 1 : 0;
      std::printf("worl-nopart (no partition plan in the start population) / partition: min %.3fx, "
                  "median %.3fx, max %.3fx; no worse on %d of %zu\n",
                  unseeded_vs_partition.front(),
                  unseeded_vs_partition[unseeded_vs_partition.size() / 2],
                  unseeded_vs_partition.back(), better, unseeded_vs_partition.size());
    }
  }

  // ---- 3. plan distance vs finish-time gap ----------------------------------------
  if (run_section("3")) {
    std::printf("\n== 3. scheduling-plan distance (SPD, nodes placed differently) vs finish-time "
                "gap (FTG, simulated) ==\n");
    std::printf("around worl's plan: %d plans at SPD uniform in [1, movable nodes]; population: "
                "worl's whales against the leader, averaged over iterations\n",
                samples);
    std::printf("%-22s %-40s %6s %9s %9s %14s %12s\n", "profile", "graph", "nodes", "Pearson",
                "Spearman", "FTG us/node", "population r");
    std::vector<double> all_r;
    for (const DeviceProfile& profile : loaded) {
      Setup s = MakeSetup(profile);
      std::vector<std::pair<std::string, Graph>> graphs;
      for (const std::string& m : models) graphs.emplace_back(m, model_graph(m));
      if (!sets.empty()) {
        std::vector<NamedGraph> parts;
        for (const std::string& m : SplitList(sets[0], '+')) parts.push_back({m, &model_graph(m)});
        graphs.emplace_back(sets[0], Must(CombineGraphs(parts), sets[0]));
      }
      for (const auto& [name, graph] : graphs) {
        PlacementSpace space = Must(BuildPlacementSpace(graph, s.ctx, "worl"), name);
        WorlResult wr;
        RunWorl(space, worl, &wr);
        PlanDistanceStudy study = StudyPlanDistance(space, wr.placement, samples, worl.seed);
        all_r.push_back(study.pearson);
        std::printf("%-22s %-40s %6d %9.3f %9.3f %14.2f %12.3f\n", profile.name.c_str(),
                    name.c_str(), graph.num_nodes(), study.pearson, study.spearman,
                    study.slope_us_per_node, wr.stats.spd_ftg_pearson);
      }
    }
    if (!all_r.empty()) {
      std::sort(all_r.begin(), all_r.end());
      std::printf("SPD/FTG Pearson over %zu (graph, profile) pairs: min %.3f, median %.3f, max "
                  "%.3f\n",
                  all_r.size(), all_r.front(), all_r[all_r.size() / 2], all_r.back());
    }
  }

  // ---- 4. ablation ------------------------------------------------------------------
  if (run_section("4")) {
    std::printf("\n== 4. ablation: simulated latency relative to full worl (lower is better), "
                "same seed and budget ==\n");
    std::printf("%-22s %-40s %10s %10s %10s %10s\n", "profile", "graph", "worl ms", "-DDQN",
                "-RTGS", "WOA only");
    std::vector<double> logs[3];
    for (const DeviceProfile& profile : loaded) {
      Setup s = MakeSetup(profile);
      std::vector<std::pair<std::string, Graph>> graphs;
      for (const std::string& m : models) graphs.emplace_back(m, model_graph(m));
      for (const std::string& set : sets) {
        std::vector<NamedGraph> parts;
        for (const std::string& m : SplitList(set, '+')) parts.push_back({m, &model_graph(m)});
        graphs.emplace_back(set, Must(CombineGraphs(parts), set));
      }
      for (const auto& [name, graph] : graphs) {
        PlacementSpace space = Must(BuildPlacementSpace(graph, s.ctx, "worl"), name);
        const double full = RunWorl(space, worl).latency_us;
        double v[3];
        for (int k = 0; k < 3; ++k) {
          WorlOptions o = worl;
          o.ddqn = k == 1;  // -DDQN: k = 0; -RTGS: k = 1; WOA only: k = 2
          o.rtgs = k == 0;
          v[k] = RunWorl(space, o).latency_us / full;
          logs[k].push_back(std::log(v[k]));
        }
        std::printf("%-22s %-40s %10.3f %9.3fx %9.3fx %9.3fx\n", profile.name.c_str(),
                    name.c_str(), full / 1e3, v[0], v[1], v[2]);
      }
    }
    if (!logs[0].empty()) {
      auto geo = [](const std::vector<double>& l) {
        double sum = 0;
        for (double x : l) sum += x;
        return std::exp(sum / static_cast<double>(l.size()));
      };
      std::printf("geomean vs full worl: -DDQN %.3fx, -RTGS %.3fx, WOA only %.3fx\n",
                  geo(logs[0]), geo(logs[1]), geo(logs[2]));
    }
  }
  return 0;
}
