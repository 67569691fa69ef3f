// Cost model vs real runs on this machine over the built-in zoo. Not a timed
// test: a report.
//
// 1. All-CPU plans. Per model, the CPU profile is fitted on the OTHER models'
//    per-op measurements (leave-one-model-out), then used to predict this
//    model's ops and to simulate its cpu-only plan; the table gives the median
//    absolute relative error per op class and end to end (against the
//    measured Session::Run median).
// 2. Shaped CPU + vgpu plans. The host-vgpu profile with that fitted CPU; the
//    vgpu is shaped (VgpuTimingFromProfile) to exactly its profile entry, so
//    its efficiencies are 1 and its overhead the launch overhead. The
//    threshold and partition policies place the model on {cpu, vgpu}; the
//    plan runs for real through the engine (per-step timeline, medians; in
//    --passes passes, the lowest pass median kept, as for the all-CPU side)
//    and is simulated; errors per device and op class, per copy, and end to
//    end, beside the classes' pass-to-pass spread ("repeat").
//    vgpu figures are braid's VIRTUAL GPU, never a GPU measurement.
//
//   braid_cost_model_check [--iterations N] [--vgpu-iterations M] [--threads T]
//                          [--models a,b,...] [--policies threshold,partition]
//                          [--skip-vgpu 1] [--suite 0] [--dump 1] [--stat median|min]
//                          [--per-op engine|isolated] [--passes P] [--pin-threads 0|1]
//                          [--dram-tier 0|1] [--compare-dram 1] [--compare-reclaim 1]
//
// The fit also uses braid calibrate's op suite (MeasureCalibrationSuite:
// synthetic single ops, no zoo model), as `braid calibrate` does; --suite 0
// fits on the other zoo models only. The CPU's DRAM tier (llc_bytes,
// dram_bandwidth_gbps: MeasureDramBandwidth, as calibrate measures it) is on
// unless --dram-tier 0; --compare-dram 1 prints the all-CPU report without
// it and with it, from the same measurements. --compare-reclaim 1 prints the
// CPU + vgpu table also without the stall for lines the vgpu's copy thread
// holds (DeviceSpec::reclaim_gbps 0), from the same measurements.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "profiling/calibration_suite.h"
#include "profiling/op_timer.h"
#include "profiling/plan_timer.h"
#include "profiling/probes.h"
#include "scheduler/cache_residency.h"
#include "scheduler/policies.h"
#include "scheduler/simulator.h"
#include "tools/cli_common.h"
#include "tools/profile_report.h"

using namespace braid;             // NOLINT: a report program
using namespace braid::cli;        // NOLINT
using namespace braid::profiling;  // NOLINT

namespace {

using ErrorsByKey = std::map<std::string, std::vector<double>>;

// One table: per key (an op class, or device:class) the median |pred - meas|
// / meas against the 15% target and the pass-to-pass spread, then the end to
// end row against 10%.
void PrintErrorTable(int width, const char* key_header, const char* count_header,
                     const ErrorsByKey& errors, const ErrorsByKey& repeats,
                     const std::vector<double>& end_to_end) {
  std::printf("%-*s %6s %10s %8s %9s\n", width, key_header, count_header, "median", "target",
              "repeat");
  for (const auto& [key, errs] : errors) {
    char repeat[16] = "-";
    if (const auto it = repeats.find(key); it != repeats.end())
      std::snprintf(repeat, sizeof(repeat), "%.1f%%", 100 * Median(it->second));
    std::printf("%-*s %6zu %9.1f%% %8s %9s\n", width, key.c_str(), errs.size(),
                100 * Median(errs), Median(errs) <= 0.15 ? "<=15% ok" : "MISSED", repeat);
  }
  std::printf("%-*s %6zu %9.1f%% %8s\n", width, "end-to-end", end_to_end.size(),
              100 * Median(end_to_end), Median(end_to_end) <= 0.10 ? "<=10% ok" : "MISSED");
}

// Keeps the lower of two measurements of the same thing (<= 0: none).
void KeepLower(double& best, double next) {
  if (next > 0 && (best <= 0 || next < best)) best = next;
}

// Two passes' disagreement: |a - b| / the lower of the two.
double PassSpread(double a, double b) { return std::abs(a - b) / std::min(a, b); }

// A CPU + vgpu step's row: "copy", or its device and op class ("cpu:conv").
std::string StepClass(const StepProfile& step) {
  return step.category == "copy" ? std::string("copy")
                                 : step.device + ":" + OpClassName(step.op_class);
}

}  // namespace

int main(int argc, char** argv) {
  OpTimerOptions options;
  options.iterations = 10;
  // Every engine run pins its threads (EngineOptions::pin_threads): the cpu
  // stream on its core, the vgpu's threads on the other. Unpinned, a cpu op
  // reading what the vgpu handed over took 2x to 11x its warm time depending
  // on where the OS woke the threads (bench: a 200 KB Add, 8 / 25 / 49 us).
  options.pin_threads = true;
  // The sparse kernels as BRAID_SPARSE / BRAID_SPARSE_CROSSOVER say, as the CLI runs them.
  StatusOr<SparseEnvironment> sparse_env = ReadSparseEnvironment();
  if (!sparse_env.ok()) {
    std::fprintf(stderr, "%s\n", sparse_env.status().ToString().c_str());
    return 1;
  }
  options.sparse_kernels = sparse_env->sparse;
  options.sparse_crossover = sparse_env->crossover;
  std::vector<std::string> models = {"tiny_cnn", "squeezenet1_1", "mobilenet_v2",
                                     "resnet18", "resnet50",      "vit_tiny"};
  std::vector<std::string> policies = {"threshold", "partition"};
  int vgpu_iterations = 5;
  bool skip_vgpu = false;
  bool dump = false;  // per-op rows and fitted efficiencies (stderr)
  bool suite = true;
  // "median" (default) or "min" of the timed runs, for per-op times (fit and
  // check) and end to end: on a shared, loaded machine the min is the
  // estimate of the unloaded time (noise only adds).
  std::string stat = "median";
  // "engine": per-op times are the steps of a cpu-only engine run of the
  // whole model (the layouts and caches of a real run); "isolated": each op
  // alone (MeasureModel), as before.
  std::string per_op = "engine";
  // Each model (and the suite) is measured in this many passes over the zoo;
  // per op and end to end the lowest pass median is kept. On a shared
  // machine a burst of load slows every op of whichever model is running
  // then (vit_tiny's LayerNorms read 1.5x slow in one run, normal in the
  // next); a second pass, seconds later, usually misses it.
  int passes = 2;
  bool dram_tier = true;
  bool compare_dram = false;
  bool compare_reclaim = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") != 0 && std::strcmp(argv[i], "-h") != 0) continue;
    std::printf(
        "Usage: braid_cost_model_check [--iterations N] [--vgpu-iterations M] [--threads T]\n"
        "           [--models a,b,...] [--policies threshold,partition] [--skip-vgpu 1]\n"
        "           [--suite 0] [--dump 1] [--stat median|min] [--per-op engine|isolated]\n"
        "           [--passes P] [--pin-threads 0|1] [--dram-tier 0|1] [--compare-dram 1]\n"
        "           [--compare-reclaim 1]\n\n"
        "Measures the built-in zoo on this machine (all-CPU plans, then shaped CPU + vgpu\n"
        "plans) and prints the cost model's median prediction error per op class and end\n"
        "to end (targets: 15%% per class, 10%% end to end); --dump 1 writes every op's\n"
        "measured and predicted time to stderr; --compare-dram 1 / --compare-reclaim 1 print\n"
        "the all-CPU / CPU + vgpu table also without the DRAM tier / the reclaim stall, from\n"
        "the same measurements. vgpu rows are braid's VIRTUAL GPU, not a GPU measurement.\n"
        "About 25 s with --iterations 7 --vgpu-iterations 5 --threads 1.\n");
    return 0;
  }
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--iterations")) options.iterations = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--vgpu-iterations")) vgpu_iterations = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--threads")) options.threads = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--models")) models = cli::SplitList(argv[i + 1]);
    if (!std::strcmp(argv[i], "--policies")) policies = cli::SplitList(argv[i + 1]);
    if (!std::strcmp(argv[i], "--skip-vgpu")) skip_vgpu = std::atoi(argv[i + 1]) != 0;
    if (!std::strcmp(argv[i], "--dump")) dump = std::atoi(argv[i + 1]) != 0;
    if (!std::strcmp(argv[i], "--suite")) suite = std::atoi(argv[i + 1]) != 0;
    if (!std::strcmp(argv[i], "--stat")) stat = argv[i + 1];
    if (!std::strcmp(argv[i], "--per-op")) per_op = argv[i + 1];
    if (!std::strcmp(argv[i], "--passes")) passes = std::max(1, std::atoi(argv[i + 1]));
    if (!std::strcmp(argv[i], "--pin-threads")) options.pin_threads = std::atoi(argv[i + 1]) != 0;
    if (!std::strcmp(argv[i], "--dram-tier")) dram_tier = std::atoi(argv[i + 1]) != 0;
    if (!std::strcmp(argv[i], "--compare-dram")) compare_dram = std::atoi(argv[i + 1]) != 0;
    if (!std::strcmp(argv[i], "--compare-reclaim"))
      compare_reclaim = std::atoi(argv[i + 1]) != 0;
  }
  // Keeps, per op and end to end, the lower of two measurements of the same
  // graph.
  auto keep_best = [](ModelTimings& best, const ModelTimings& next) {
    for (size_t i = 0; i < best.ops.size() && i < next.ops.size(); ++i) {
      KeepLower(best.ops[i].median_us, next.ops[i].median_us);
      KeepLower(best.ops[i].min_us, next.ops[i].min_us);
    }
    KeepLower(best.end_to_end_median_us, next.end_to_end_median_us);
    KeepLower(best.end_to_end_min_us, next.end_to_end_min_us);
  };
  if (stat != "median" && stat != "min") {
    std::fprintf(stderr, "--stat: median or min\n");
    return 1;
  }
  auto use_stat = [&](ModelTimings& t) {
    if (stat != "min") return;
    for (OpTiming& op : t.ops) op.median_us = op.min_us;
    if (t.end_to_end_min_us > 0) t.end_to_end_median_us = t.end_to_end_min_us;
  };
  double dram_gbps = 0;  // 0: no DRAM tier
  if (dram_tier) {
    std::string no_dram_tier;
    dram_gbps = DramTierBandwidth(options, &no_dram_tier);
    if (!(dram_gbps > 0)) std::fprintf(stderr, "no DRAM tier: %s\n", no_dram_tier.c_str());
  }
  std::vector<ModelTimings> suite_timings;
  if (suite) {
    std::fprintf(stderr, "measuring the calibration op suite ...\n");
    OpTimerOptions suite_options = options;
    suite_options.end_to_end = false;
    for (int pass = 0; pass < passes; ++pass) {
      StatusOr<std::vector<ModelTimings>> t = MeasureCalibrationSuite(suite_options);
      if (!t.ok()) {
        std::fprintf(stderr, "suite: %s\n", t.status().ToString().c_str());
        return 1;
      }
      if (pass == 0) {
        suite_timings = std::move(*t);
      } else {
        for (size_t k = 0; k < suite_timings.size() && k < t->size(); ++k)
          keep_best(suite_timings[k], (*t)[k]);
      }
    }
    for (ModelTimings& st : suite_timings) use_stat(st);
    if (dump)
      for (const ModelTimings& st : suite_timings)
        for (size_t i = 0; i < st.ops.size(); ++i)
          std::fprintf(stderr, "suite %s %s %s flops %.0f bytes %.0f measured %.2f (%s)\n",
                       st.ops[i].node.c_str(), st.ops[i].op_type.c_str(),
                       OpClassName(st.ops[i].op_class), st.ops[i].annotation.flops,
                       st.ops[i].annotation.bytes, st.ops[i].median_us,
                       st.ops[i].implementation.c_str());
  }
  std::vector<ModelTimings> all;
  // The measurement's own noise: per op class, |pass 2 - pass 1| / the lower
  // of the two (first two passes): what no model of this machine can beat.
  ErrorsByKey repeat_spread;
  for (int pass = 0; pass < passes; ++pass) {
    for (size_t k = 0; k < models.size(); ++k) {
      const std::string& m = models[k];
      std::fprintf(stderr, "measuring %s (pass %d) ...\n", m.c_str(), pass + 1);
      StatusOr<ModelTimings> t = per_op == "isolated"
                                     ? MeasureModel("builtin:" + m, options)
                                     : MeasureModelInEngine("builtin:" + m, options);
      if (!t.ok()) {
        std::fprintf(stderr, "%s: %s\n", m.c_str(), t.status().ToString().c_str());
        return 1;
      }
      use_stat(*t);
      if (pass == 0) {
        all.push_back(std::move(*t));
      } else {
        if (pass == 1)
          for (size_t i = 0; i < all[k].ops.size() && i < t->ops.size(); ++i) {
            const double a = all[k].ops[i].median_us, b = t->ops[i].median_us;
            if (a > 0 && b > 0)
              repeat_spread[OpClassName(all[k].ops[i].op_class)].push_back(PassSpread(a, b));
          }
        keep_best(all[k], *t);
      }
    }
  }
  // Leave-one-model-out: what model k's CPU profile is fitted on (the other
  // zoo models, or itself when alone, and the suite).
  auto fit_samples_without = [&](size_t k) {
    std::vector<const ModelTimings*> others;
    for (size_t j = 0; j < all.size(); ++j)
      if (j != k) others.push_back(&all[j]);
    if (others.empty()) others.push_back(&all[k]);
    for (const ModelTimings& st : suite_timings) others.push_back(&st);
    return others;
  };
  // --compare-dram 1: the all-CPU report first without the DRAM tier, then
  // with it, on the same measurements (side by side: the host is noisy).
  std::vector<double> report_dram_rates = {dram_gbps};
  if (compare_dram && dram_gbps > 0) report_dram_rates = {0, dram_gbps};
  for (const double report_dram_gbps : report_dram_rates) {
    if (report_dram_rates.size() > 1)
      std::printf("===== %s the DRAM tier =====\n", report_dram_gbps > 0 ? "with" : "without");
    ErrorsByKey class_errors;
    ErrorsByKey type_errors;  // "class/op_type"
    std::map<std::string, double> type_abs_us;                // sum |pred - meas|
    std::vector<double> e2e_errors;
    int views = 0;  // ops the engine ran as views (RunsAsView)
    std::printf("cost model check: all-CPU plans, leave-one-model-out fit%s, %d threads, %d runs, "
                "statistic %s (lowest of %d passes), per-op times %s\n\n",
                suite ? " (+ calibrate's op suite)" : "", all.empty() ? 0 : all[0].threads,
                options.iterations, stat.c_str(), passes,
                per_op == "isolated" ? "of each op alone" : "of the engine's steps in a whole run");
    std::printf("%-14s %6s %12s %12s %12s %9s %14s\n", "model", "ops", "measured ms",
                "sum ops ms", "simulated ms", "e2e err", "median op err");
    for (size_t k = 0; k < all.size(); ++k) {
      const std::vector<const ModelTimings*> others = fit_samples_without(k);
      DeviceProfile profile = BuiltinHostProfile();
      profile.devices[0] = CpuSpecFromTimings(others, report_dram_gbps);
      profile.devices[0].active_power_w = 1;
      if (dump) {
        std::fprintf(stderr, "fit without %s: peak %.1f GFLOP/s, bw %.1f GB/s, launch %.2f us\n",
                     models[k].c_str(), profile.devices[0].peak_gflops,
                     profile.devices[0].memory_bandwidth_gbps,
                     profile.devices[0].launch_overhead_us);
        for (const OpClassEfficiency& e : profile.devices[0].efficiency)
          std::fprintf(stderr, "  %s compute %.3f memory %.3f cache %.3f overhead %.2f (%d)\n",
                       e.op_class.c_str(), e.compute, e.memory,
                       e.cache_memory > 0 ? e.cache_memory : e.memory, e.overhead_us, e.samples);
        for (const OpTypeFactor& f : profile.devices[0].op_types)
          std::fprintf(stderr, "  type %s x%.3f (%d)\n", f.op_type.c_str(), f.factor, f.samples);
        std::fprintf(stderr, "  cache %.0f B at %.1f GB/s, last level %.0f B, then %.1f GB/s\n",
                     profile.devices[0].cache_bytes, profile.devices[0].cache_bandwidth_gbps,
                     profile.devices[0].llc_bytes, profile.devices[0].dram_bandwidth_gbps);
      }
      CostModel model(profile);
      const ModelTimings& t = all[k];
      std::vector<double> op_errors;
      double sum_ops = 0;
      const std::vector<ColdBytes> cold = ColdBytesPerNode(t.graph, profile.devices[0].cache_bytes,
                                                           profile.devices[0].llc_bytes);
      for (size_t i = 0; i < t.ops.size(); ++i) {
        OpWork work = OpWorkOf(t.graph.nodes()[i], &t.graph);
        AssignColdBytes(cold[i], work);
        work.view = t.ops[i].view;  // what the engine did (--per-op isolated copies)
        const double pred = model.Cost(work, 0).TotalUs();
        const double meas = t.ops[i].median_us;
        sum_ops += meas;
        if (work.view) {
          ++views;  // no kernel, predicted 0: not a prediction to check
          continue;
        }
        if (meas <= 0) continue;
        const double err = std::abs(pred - meas) / meas;
        op_errors.push_back(err);
        class_errors[OpClassName(t.ops[i].op_class)].push_back(err);
        const std::string type_key =
            std::string(OpClassName(t.ops[i].op_class)) + "/" + t.ops[i].op_type;
        type_errors[type_key].push_back(err);
        type_abs_us[type_key] += std::abs(pred - meas);
        if (dump)
          std::fprintf(stderr,
                       "op %s %s %s %s flops %.0f bytes %.0f measured %.2f predicted %.2f "
                       "cold %.0f dram %.0f\n",
                       models[k].c_str(), t.ops[i].node.c_str(), t.ops[i].op_type.c_str(),
                       OpClassName(t.ops[i].op_class), t.ops[i].annotation.flops,
                       t.ops[i].annotation.bytes, meas, pred, cold[i].beyond_cache,
                       cold[i].beyond_llc);
      }
      StatusOr<SimGraph> sg = BuildSimGraph(t.graph, model, {"cpu"});
      StatusOr<SimResult> sim =
          sg.ok() ? SimulatePlan(*sg, SingleDevicePlan(t.graph, "cpu", "cpu-only"))
                  : StatusOr<SimResult>(sg.status());
      if (!sim.ok()) {
        std::fprintf(stderr, "%s\n", sim.status().ToString().c_str());
        return 1;
      }
      const double e2e =
          std::abs(sim->latency_us - t.end_to_end_median_us) / t.end_to_end_median_us;
      e2e_errors.push_back(e2e);
      std::printf("%-14s %6zu %12.3f %12.3f %12.3f %8.1f%% %13.1f%%\n", models[k].c_str(),
                  t.ops.size(), t.end_to_end_median_us / 1e3, sum_ops / 1e3, sim->latency_us / 1e3,
                  100 * e2e, 100 * Median(op_errors));
    }
    std::printf("\nper op class (all models, leave-one-model-out): median |pred - meas| / meas; "
                "repeat: the median difference between two measurement passes (noise)\n");
    PrintErrorTable(16, "class", "ops", class_errors, repeat_spread, e2e_errors);
    std::printf("\nper op type: median error, and its share of all |pred - meas| microseconds\n");
    double total_abs = 0;
    for (const auto& [key, us] : type_abs_us) total_abs += us;
    std::printf("%-32s %6s %10s %8s\n", "class/op_type", "ops", "median", "share");
    for (const auto& [key, errs] : type_errors)
      std::printf("%-32s %6zu %9.1f%% %7.1f%%\n", key.c_str(), errs.size(), 100 * Median(errs),
                  total_abs > 0 ? 100 * type_abs_us[key] / total_abs : 0.0);
    std::printf("\n%d ops ran as views (output = input's buffer, no kernel; predicted 0) and are "
                "not in the table.\n", views);
    std::printf("\n(simulated = the cost model's prediction; measured = this machine's CPU, %s.)\n",
                per_op == "isolated" ? "ops timed one at a time"
                                     : "ops timed as engine steps of a whole cpu-only run");
    if (report_dram_rates.size() > 1) std::printf("\n");
  }
  if (skip_vgpu) return 0;

  // 2. Shaped CPU + vgpu plans.
  ErrorsByKey step_errors;  // "cpu:conv", "vgpu:gemm", "copy"
  ErrorsByKey without_reclaim_errors;  // --compare-reclaim: the same without the stall
  std::vector<double> vgpu_e2e;
  int step_views = 0;  // steps run as views: not in the table
  StatusOr<WakeLatency> measured_wake = MeasureWakeLatency(60, options.pin_threads);
  if (!measured_wake.ok()) {
    std::fprintf(stderr, "%s\n", measured_wake.status().ToString().c_str());
    return 1;
  }
  const WakeLatency wake = *measured_wake;
  // The handoff rates, as `braid calibrate` measures them: how fast a cpu
  // op takes back lines the vgpu's copy thread read (MeasureReclaimRate)
  // and how fast it reads what the copies wrote (the copied-read chains).
  // Five rounds now (the plans are made with their medians), then one right
  // after each run of a plan. This host's cross-core transfers change regime
  // from one plan to the next (the reclaim probe read 12.5 GB/s in one
  // regime, 1.9-2.6 in another, nothing at all in a third; the copied-read
  // probe 22-23 and 17-18): a plan is predicted, per rate, with the mean
  // cost of the rounds taken right after its runs.
  constexpr int kCopiedReadIterations = 20;
  struct HandoffRound {
    double reclaim_gbps = 0;  // 0: no cost
    CopiedReadRates copied_read;
  };
  auto measure_handoff_round = [&]() -> StatusOr<HandoffRound> {
    HandoffRound round;
    ASSIGN_OR_RETURN(round.reclaim_gbps, MeasureReclaimRate(options.pin_threads));
    ASSIGN_OR_RETURN(std::vector<CopiedReadRates> copied,
                     MeasureCopiedReadRounds(wake.resume_factor, options.pin_threads,
                                             kCopiedReadIterations, 1));
    round.copied_read = copied.front();
    return round;
  };
  auto cost_per_byte = [](double gbps) { return gbps > 0 ? 1.0 / gbps : 0.0; };  // 0: none
  std::vector<double> first_reclaim_costs;
  std::vector<CopiedReadRates> first_copied_reads;
  for (int r = 0; r < 5; ++r) {
    StatusOr<HandoffRound> round = measure_handoff_round();
    if (!round.ok()) {
      std::fprintf(stderr, "%s\n", round.status().ToString().c_str());
      return 1;
    }
    first_reclaim_costs.push_back(cost_per_byte(round->reclaim_gbps));
    first_copied_reads.push_back(round->copied_read);
  }
  const CopiedReadRates planned_copied_read = MedianRates(first_copied_reads);
  const double planned_reclaim_cost = Median(first_reclaim_costs);
  const double planned_reclaim = planned_reclaim_cost > 0 ? 1.0 / planned_reclaim_cost : 0.0;
  // Every (model, policy) plan: made with its zoo model's cost model (the
  // CPU fitted without that model, the handoff rates of the first rounds),
  // predicted with the same CPU and the rates of its own rounds.
  struct PlanCase {
    size_t model = 0;
    std::string policy;
    Plan plan;
    int on_vgpu = 0;
    PlanTimerOptions options;  // the vgpu shaped to the case's profile
    PlanTimings timings;
    std::vector<HandoffRound> rounds;  // one right after each pass's run
    std::unique_ptr<CostModel> predicted_by;  // with their mean costs
  };
  std::vector<std::unique_ptr<CostModel>> cost_models;  // per zoo model
  std::vector<DeviceProfile> case_profiles;              // theirs
  std::vector<PlanCase> cases;
  for (size_t k = 0; k < all.size(); ++k) {
    const std::vector<const ModelTimings*> others = fit_samples_without(k);
    StatusOr<DeviceProfile> loaded = LoadDeviceProfile("host-vgpu");
    if (!loaded.ok()) {
      std::fprintf(stderr, "%s\n", loaded.status().ToString().c_str());
      return 1;
    }
    DeviceProfile profile = *loaded;
    const double cpu_power = profile.devices[0].active_power_w;
    profile.devices[0] = CpuSpecFromTimings(others, dram_gbps);
    profile.devices[0].active_power_w = cpu_power;
    DeviceSpec& vgpu = profile.devices[1];
    // The vgpu's model is its shaping (efficiencies 1, overhead = launch:
    // DefaultEfficiency for kind vgpu), floored by the host kernels it runs.
    vgpu.efficiency.clear();
    vgpu.floor_device = "cpu";
    // Handoff wake-ups, measured here as `braid calibrate` does.
    profile.devices[0].sync_us = wake.to_caller_us;
    profile.devices[0].resume_factor = wake.resume_factor;
    profile.devices[0].copied_read_gbps = planned_copied_read.stream_gbps;
    profile.devices[0].copied_window_read_gbps = planned_copied_read.window_gbps;
    profile.devices[0].copied_depthwise_read_gbps = planned_copied_read.depthwise_gbps;
    profile.devices[0].reclaim_gbps = planned_reclaim;
    vgpu.sync_us = wake.to_worker_us;
    cost_models.push_back(std::make_unique<CostModel>(profile));
    case_profiles.push_back(profile);
    PlanTimerOptions plan_options;
    plan_options.threads = options.threads;
    plan_options.pin_threads = options.pin_threads;
    plan_options.sparse_kernels = options.sparse_kernels;
    plan_options.sparse_crossover = options.sparse_crossover;
    plan_options.iterations = vgpu_iterations;
    plan_options.devices = {"cpu", "vgpu"};
    StatusOr<VgpuTiming> timing = VgpuTimingFromProfile(profile);
    if (!timing.ok()) return 1;
    plan_options.vgpu_timing = *timing;
    StatusOr<Graph> graph = PlannedGraph("builtin:" + models[k]);
    if (!graph.ok()) return 1;
    PolicyRegistry registry;
    if (!RegisterPolicies(registry).ok()) return 1;
    PlacementContext ctx;
    ctx.devices = {"cpu", "vgpu"};
    ctx.cost_model = cost_models.back().get();
    for (const std::string& policy : policies) {
      StatusOr<Plan> plan = MakePlan(registry, policy, *graph, ctx);
      if (!plan.ok()) {
        std::fprintf(stderr, "%s %s: %s\n", models[k].c_str(), policy.c_str(),
                     plan.status().ToString().c_str());
        continue;
      }
      PlanCase c;
      c.model = k;
      c.policy = policy;
      c.plan = std::move(*plan);
      c.options = plan_options;
      for (const NodePlan& n : c.plan.nodes)
        c.on_vgpu += n.device == "vgpu" || (n.slice && n.slice->other_device == "vgpu");
      cases.push_back(std::move(c));
    }
  }

  // Every plan in `passes` passes over the zoo, as the all-CPU side: per step
  // and end to end the lowest pass median is kept (a burst of load slows the
  // steps of whichever plan runs then, and the next pass usually misses it).
  ErrorsByKey step_repeat;  // as repeat_spread
  for (int pass = 0; pass < passes; ++pass) {
    for (PlanCase& c : cases) {
      std::fprintf(stderr, "running %s / %s (pass %d) ...\n", models[c.model].c_str(),
                   c.policy.c_str(), pass + 1);
      StatusOr<PlanTimings> t = MeasurePlan("builtin:" + models[c.model], &c.plan, c.options);
      if (!t.ok()) {
        std::fprintf(stderr, "%s\n", t.status().ToString().c_str());
        return 1;
      }
      StatusOr<HandoffRound> round = measure_handoff_round();
      if (!round.ok()) {
        std::fprintf(stderr, "%s\n", round.status().ToString().c_str());
        return 1;
      }
      c.rounds.push_back(*round);
      if (pass == 0) {
        c.timings = std::move(*t);
        continue;
      }
      PlanTimings& best = c.timings;
      for (size_t i = 0; i < best.steps.size() && i < t->steps.size(); ++i) {
        StepProfile& b = best.steps[i];
        const StepProfile& n = t->steps[i];
        if (n.name != b.name || !(n.median_us > 0)) continue;
        if (pass == 1 && b.median_us > 0)
          step_repeat[StepClass(b)].push_back(PassSpread(n.median_us, b.median_us));
        KeepLower(b.median_us, n.median_us);
      }
      KeepLower(best.end_to_end_median_us, t->end_to_end_median_us);
      KeepLower(best.end_to_end_min_us, t->end_to_end_min_us);
    }
  }

  // Per plan and rate, the mean cost (time per byte) of the rounds taken
  // right after its runs: a reclaim round of 0 (no extra time) counts as no
  // cost. The cheapest round alone read the end of a regime a plan's steps
  // had mostly left (resnet50's joins half-way between the two).
  auto rate_of_mean_cost = [](double total_cost, size_t rounds) {
    return total_cost > 0 && rounds > 0 ? static_cast<double>(rounds) / total_cost : 0.0;
  };
  double lowest_reclaim = std::numeric_limits<double>::infinity(), highest_reclaim = 0;
  double lowest_read = lowest_reclaim, highest_read = 0;
  for (PlanCase& c : cases) {
    DeviceProfile profile = case_profiles[c.model];
    DeviceSpec& cpu = profile.devices[0];
    double reclaim = 0, stream = 0, window = 0, depthwise = 0;
    for (const HandoffRound& r : c.rounds) {
      reclaim += cost_per_byte(r.reclaim_gbps);
      stream += cost_per_byte(r.copied_read.stream_gbps);
      window += cost_per_byte(r.copied_read.window_gbps);
      depthwise += cost_per_byte(r.copied_read.depthwise_gbps);
      if (dump)
        std::fprintf(stderr, "handoff round %s %s reclaim %.1f copied-read %.1f %.1f %.1f GB/s\n",
                     models[c.model].c_str(), c.policy.c_str(), r.reclaim_gbps,
                     r.copied_read.stream_gbps, r.copied_read.window_gbps,
                     r.copied_read.depthwise_gbps);
    }
    cpu.reclaim_gbps = rate_of_mean_cost(reclaim, c.rounds.size());
    cpu.copied_read_gbps = rate_of_mean_cost(stream, c.rounds.size());
    cpu.copied_window_read_gbps = rate_of_mean_cost(window, c.rounds.size());
    cpu.copied_depthwise_read_gbps = rate_of_mean_cost(depthwise, c.rounds.size());
    lowest_reclaim = std::min(lowest_reclaim, cpu.reclaim_gbps);
    highest_reclaim = std::max(highest_reclaim, cpu.reclaim_gbps);
    lowest_read = std::min(lowest_read, cpu.copied_read_gbps);
    highest_read = std::max(highest_read, cpu.copied_read_gbps);
    c.predicted_by = std::make_unique<CostModel>(profile);
  }
  std::printf("\n\ncost model check: shaped CPU + vgpu plans (host-vgpu profile, CPU fitted "
              "leave-one-model-out; vgpu = braid's VIRTUAL GPU shaped to the profile, a model, "
              "not a GPU), %d runs, per-step medians (lowest of %d passes), threads %s; handoff "
              "wake-ups measured: vgpu %.1f us, cpu %.1f us, first cpu op after one x%.2f, "
              "handed-over data read at %.1f-%.1f GB/s, lines the copy thread holds taken back "
              "at %.1f-%.1f GB/s (0: no cost) by plan: the mean cost of the rounds right after "
              "its passes (the plans made at %.1f, %.1f in a window op, %.1f in a depthwise conv, "
              "and %.1f)\n\n",
              vgpu_iterations, passes, options.pin_threads ? "pinned" : "not pinned",
              wake.to_worker_us, wake.to_caller_us, wake.resume_factor,
              cases.empty() ? 0.0 : lowest_read, highest_read,
              cases.empty() ? 0.0 : lowest_reclaim, highest_reclaim,
              planned_copied_read.stream_gbps, planned_copied_read.window_gbps,
              planned_copied_read.depthwise_gbps, planned_reclaim);
  std::printf("%-14s %-10s %5s %6s %12s %12s %9s %14s\n", "model", "policy", "vgpu", "copies",
              "measured ms", "simulated ms", "e2e err", "median step err");
  for (const PlanCase& c : cases) {
    const PlanTimings& t = c.timings;
    const CostModel& model = *c.predicted_by;
    const char* model_name = models[c.model].c_str();
    const char* policy = c.policy.c_str();
    const std::vector<double> predicted = PredictSteps(t, model);
    std::vector<double> without_reclaim;
    if (compare_reclaim) {
      DeviceProfile no_reclaim = model.profile();
      for (DeviceSpec& d : no_reclaim.devices) d.reclaim_gbps = 0;
      without_reclaim = PredictSteps(t, CostModel(no_reclaim));
    }
    std::vector<double> errs;
    int copies = 0;
    for (size_t i = 0; i < t.steps.size(); ++i) {
      const StepProfile& s = t.steps[i];
      copies += s.category == "copy";
      step_views += s.view;
      if (s.view || s.runs == 0 || s.median_us <= 0 || predicted[i] < 0) continue;
      const double e = std::abs(predicted[i] - s.median_us) / s.median_us;
      errs.push_back(e);
      step_errors[StepClass(s)].push_back(e);
      if (compare_reclaim)
        without_reclaim_errors[StepClass(s)].push_back(
            std::abs(without_reclaim[i] - s.median_us) / s.median_us);
      if (dump)
        std::fprintf(stderr, "step %s %s %s %s %s %s bytes %.0f flops %.0f measured %.2f "
                     "predicted %.2f start %.2f copied %.0f\n",
                     model_name, policy, s.name.c_str(), s.device.c_str(), s.op_type.c_str(),
                     s.category == "copy" ? "copy" : OpClassName(s.op_class),
                     s.category == "copy" ? s.bytes : s.annotation.bytes, s.annotation.flops,
                     s.median_us, predicted[i], s.start_us, s.copied_bytes);
    }
    StatusOr<SimGraph> sg = BuildSimGraph(t.graph, model, {"cpu", "vgpu"});
    StatusOr<SimResult> sim =
        sg.ok() ? SimulatePlan(*sg, t.plan) : StatusOr<SimResult>(sg.status());
    if (!sim.ok()) {
      std::fprintf(stderr, "%s\n", sim.status().ToString().c_str());
      return 1;
    }
    if (dump)
      for (size_t d = 0; d < sim->devices.size(); ++d)
        std::fprintf(stderr, "sim %s %s device %zu busy %.1f us of %.1f\n", model_name, policy, d,
                     sim->devices[d].busy_us, sim->latency_us);
    const double measured_e2e = stat == "min" ? t.end_to_end_min_us : t.end_to_end_median_us;
    const double e2e = std::abs(sim->latency_us - measured_e2e) / measured_e2e;
    vgpu_e2e.push_back(e2e);
    std::printf("%-14s %-10s %5d %6d %12.3f %12.3f %8.1f%% %13.1f%%\n", model_name, policy,
                c.on_vgpu, copies, measured_e2e / 1e3, sim->latency_us / 1e3, 100 * e2e,
                100 * Median(errs));
  }
  if (compare_reclaim) {
    std::printf("\nper device and op class WITHOUT the reclaim stall (reclaim_gbps 0; the same "
                "measurements): median |pred - meas| / meas\n");
    PrintErrorTable(24, "device:class", "steps", without_reclaim_errors, step_repeat, vgpu_e2e);
  }
  std::printf("\nper device and op class (engine steps, all models and policies): "
              "median |pred - meas| / meas\n");
  PrintErrorTable(24, "device:class", "steps", step_errors, step_repeat, vgpu_e2e);
  std::printf("\n%d steps ran as views (no kernel, predicted 0) and are not in the table.\n",
              step_views);
  std::printf("\n(vgpu rows: braid's virtual GPU, CPU kernels padded to the profile's timing "
              "model; a check of the simulator against the engine, not a GPU measurement.)\n");
  return 0;
}
