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
//    plan runs for real through the engine (per-step timeline, medians) and
//    is simulated; errors per device and op class, per copy, and end to end.
//    vgpu figures are braid's VIRTUAL GPU, never a GPU measurement.
//
//   braid_cost_model_check [--iterations N] [--vgpu-iterations M] [--threads T]
//                          [--models a,b,...] [--policies threshold,partition]
//                          [--skip-vgpu 1]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "scheduler/optimal.h"
#include "scheduler/simulator.h"
#include "scheduler/threshold_policy.h"
#include "tools/cli_common.h"
#include "tools/op_timer.h"
#include "tools/profile_report.h"

using namespace braid;       // NOLINT: a report program
using namespace braid::cli;  // NOLINT

int main(int argc, char** argv) {
  OpTimerOptions options;
  options.iterations = 10;
  std::vector<std::string> models = {"tiny_cnn", "squeezenet1_1", "mobilenet_v2",
                                     "resnet18", "resnet50",      "vit_tiny"};
  std::vector<std::string> policies = {"threshold", "partition"};
  int vgpu_iterations = 5;
  bool skip_vgpu = false;
  bool dump = false;  // per-op rows and fitted efficiencies (stderr)
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--iterations")) options.iterations = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--vgpu-iterations")) vgpu_iterations = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--threads")) options.threads = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--models")) models = cli::SplitList(argv[i + 1]);
    if (!std::strcmp(argv[i], "--policies")) policies = cli::SplitList(argv[i + 1]);
    if (!std::strcmp(argv[i], "--skip-vgpu")) skip_vgpu = std::atoi(argv[i + 1]) != 0;
    if (!std::strcmp(argv[i], "--dump")) dump = std::atoi(argv[i + 1]) != 0;
  }
  std::vector<ModelTimings> all;
  for (const std::string& m : models) {
    std::fprintf(stderr, "measuring %s ...\n", m.c_str());
    StatusOr<ModelTimings> t = MeasureModel("builtin:" + m, options);
    if (!t.ok()) {
      std::fprintf(stderr, "%s: %s\n", m.c_str(), t.status().ToString().c_str());
      return 1;
    }
    all.push_back(std::move(*t));
  }
  std::map<std::string, std::vector<double>> class_errors;
  std::vector<double> e2e_errors;
  std::printf("cost model check: all-CPU plans, leave-one-model-out fit, %d threads, %d runs\n\n",
              all.empty() ? 0 : all[0].threads, options.iterations);
  std::printf("%-14s %6s %12s %12s %12s %9s %14s\n", "model", "ops", "measured ms",
              "sum ops ms", "simulated ms", "e2e err", "median op err");
  for (size_t k = 0; k < all.size(); ++k) {
    std::vector<const ModelTimings*> others;
    for (size_t j = 0; j < all.size(); ++j)
      if (j != k) others.push_back(&all[j]);
    if (others.empty()) others.push_back(&all[k]);
    DeviceProfile profile = BuiltinHostProfile();
    profile.devices[0] = CpuSpecFromTimings(others);
    profile.devices[0].active_power_w = 1;
    if (dump) {
      std::fprintf(stderr, "fit without %s: peak %.1f GFLOP/s, bw %.1f GB/s, launch %.2f us\n",
                   models[k].c_str(), profile.devices[0].peak_gflops,
                   profile.devices[0].memory_bandwidth_gbps, profile.devices[0].launch_overhead_us);
      for (const OpClassEfficiency& e : profile.devices[0].efficiency)
        std::fprintf(stderr, "  %s compute %.3f memory %.3f overhead %.2f (%d)\n",
                     e.op_class.c_str(), e.compute, e.memory, e.overhead_us, e.samples);
    }
    CostModel model(profile);
    const ModelTimings& t = all[k];
    std::vector<double> op_errors;
    double sum_ops = 0;
    for (size_t i = 0; i < t.ops.size(); ++i) {
      const double pred = model.OpTimeUs(t.graph.nodes()[i], 0);
      const double meas = t.ops[i].median_us;
      sum_ops += meas;
      if (meas <= 0) continue;
      const double err = std::abs(pred - meas) / meas;
      op_errors.push_back(err);
      class_errors[OpClassName(t.ops[i].op_class)].push_back(err);
      if (dump)
        std::fprintf(stderr, "op %s %s %s %s flops %.0f bytes %.0f measured %.2f predicted %.2f\n",
                     models[k].c_str(), t.ops[i].node.c_str(), t.ops[i].op_type.c_str(),
                     OpClassName(t.ops[i].op_class), t.ops[i].annotation.flops,
                     t.ops[i].annotation.bytes, meas, pred);
    }
    StatusOr<SimGraph> sg = BuildSimGraph(t.graph, model, {"cpu"});
    StatusOr<SimResult> sim =
        sg.ok() ? SimulatePlan(*sg, SingleDevicePlan(t.graph, "cpu", "cpu-only"))
                : StatusOr<SimResult>(sg.status());
    if (!sim.ok()) {
      std::fprintf(stderr, "%s\n", sim.status().ToString().c_str());
      return 1;
    }
    const double e2e = std::abs(sim->latency_us - t.end_to_end_median_us) / t.end_to_end_median_us;
    e2e_errors.push_back(e2e);
    std::printf("%-14s %6zu %12.3f %12.3f %12.3f %8.1f%% %13.1f%%\n", models[k].c_str(),
                t.ops.size(), t.end_to_end_median_us / 1e3, sum_ops / 1e3, sim->latency_us / 1e3,
                100 * e2e, 100 * Median(op_errors));
  }
  std::printf("\nper op class (all models, leave-one-model-out): median |pred - meas| / meas\n");
  std::printf("%-16s %6s %10s %8s\n", "class", "ops", "median", "target");
  for (const auto& [cls, errs] : class_errors)
    std::printf("%-16s %6zu %9.1f%% %8s\n", cls.c_str(), errs.size(), 100 * Median(errs),
                Median(errs) <= 0.15 ? "<=15% ok" : "MISSED");
  std::printf("%-16s %6zu %9.1f%% %8s\n", "end-to-end", e2e_errors.size(),
              100 * Median(e2e_errors), Median(e2e_errors) <= 0.10 ? "<=10% ok" : "MISSED");
  std::printf("\n(simulated = the cost model's prediction; measured = this machine's CPU, "
              "ops timed one at a time.)\n");
  if (skip_vgpu) return 0;

  // 2. Shaped CPU + vgpu plans.
  std::map<std::string, std::vector<double>> step_errors;  // "cpu:conv", "vgpu:gemm", "copy"
  std::vector<double> vgpu_e2e;
  std::printf("\n\ncost model check: shaped CPU + vgpu plans (host-vgpu profile, CPU fitted "
              "leave-one-model-out; vgpu = braid's VIRTUAL GPU shaped to the profile, a model, "
              "not a GPU), %d runs, per-step medians\n\n",
              vgpu_iterations);
  std::printf("%-14s %-10s %5s %6s %12s %12s %9s %14s\n", "model", "policy", "vgpu", "copies",
              "measured ms", "simulated ms", "e2e err", "median step err");
  for (size_t k = 0; k < all.size(); ++k) {
    std::vector<const ModelTimings*> others;
    for (size_t j = 0; j < all.size(); ++j)
      if (j != k) others.push_back(&all[j]);
    if (others.empty()) others.push_back(&all[k]);
    StatusOr<DeviceProfile> loaded = LoadDeviceProfile("host-vgpu");
    if (!loaded.ok()) {
      std::fprintf(stderr, "%s\n", loaded.status().ToString().c_str());
      return 1;
    }
    DeviceProfile profile = *loaded;
    const double cpu_power = profile.devices[0].active_power_w;
    profile.devices[0] = CpuSpecFromTimings(others);
    profile.devices[0].active_power_w = cpu_power;
    DeviceSpec& vgpu = profile.devices[1];
    vgpu.efficiency.clear();
    for (int c = 0; c < kNumOpClasses; ++c)
      vgpu.efficiency.push_back({OpClassName(static_cast<OpClass>(c)), 1.0, 1.0,
                                 vgpu.launch_overhead_us, 0});
    CostModel model(profile);
    PlanTimerOptions plan_options;
    plan_options.threads = options.threads;
    plan_options.iterations = vgpu_iterations;
    plan_options.devices = {"cpu", "vgpu"};
    StatusOr<VgpuTiming> timing = VgpuTimingFromProfile(profile);
    if (!timing.ok()) return 1;
    plan_options.vgpu_timing = *timing;
    const std::string name = "builtin:" + models[k];
    StatusOr<Graph> graph = PlannedGraph(name);
    if (!graph.ok()) return 1;
    PolicyRegistry registry;
    RegisterBasicPolicies(registry);
    RegisterCostModelPolicies(registry);
    RegisterBaselinePolicies(registry);
    PlacementContext ctx;
    ctx.devices = {"cpu", "vgpu"};
    ctx.cost_model = &model;
    for (const std::string& policy : policies) {
      StatusOr<Plan> plan = MakePlan(registry, policy, *graph, ctx);
      if (!plan.ok()) {
        std::fprintf(stderr, "%s %s: %s\n", models[k].c_str(), policy.c_str(),
                     plan.status().ToString().c_str());
        continue;
      }
      int on_vgpu = 0;
      for (const NodePlan& n : plan->nodes)
        on_vgpu += n.device == "vgpu" || (n.slice && n.slice->other_device == "vgpu");
      std::fprintf(stderr, "running %s / %s ...\n", models[k].c_str(), policy.c_str());
      StatusOr<PlanTimings> t = MeasurePlan(name, &*plan, plan_options);
      if (!t.ok()) {
        std::fprintf(stderr, "%s\n", t.status().ToString().c_str());
        return 1;
      }
      const std::vector<double> predicted = PredictSteps(*t, model);
      std::vector<double> errs;
      int copies = 0;
      for (size_t i = 0; i < t->steps.size(); ++i) {
        const StepProfile& s = t->steps[i];
        copies += s.category == "copy";
        if (s.runs == 0 || s.median_us <= 0 || predicted[i] < 0) continue;
        const double e = std::abs(predicted[i] - s.median_us) / s.median_us;
        errs.push_back(e);
        step_errors[s.category == "copy" ? std::string("copy")
                                         : s.device + ":" + OpClassName(s.op_class)]
            .push_back(e);
      }
      StatusOr<SimGraph> sg = BuildSimGraph(t->graph, model, {"cpu", "vgpu"});
      StatusOr<SimResult> sim =
          sg.ok() ? SimulatePlan(*sg, t->plan) : StatusOr<SimResult>(sg.status());
      if (!sim.ok()) {
        std::fprintf(stderr, "%s\n", sim.status().ToString().c_str());
        return 1;
      }
      const double e2e =
          std::abs(sim->latency_us - t->end_to_end_median_us) / t->end_to_end_median_us;
      vgpu_e2e.push_back(e2e);
      std::printf("%-14s %-10s %5d %6d %12.3f %12.3f %8.1f%% %13.1f%%\n", models[k].c_str(),
                  policy.c_str(), on_vgpu, copies, t->end_to_end_median_us / 1e3,
                  sim->latency_us / 1e3, 100 * e2e, 100 * Median(errs));
    }
  }
  std::printf("\nper device and op class (engine steps, all models and policies): "
              "median |pred - meas| / meas\n");
  std::printf("%-24s %6s %10s %8s\n", "device:class", "steps", "median", "target");
  for (const auto& [cls, errs] : step_errors)
    std::printf("%-24s %6zu %9.1f%% %8s\n", cls.c_str(), errs.size(), 100 * Median(errs),
                Median(errs) <= 0.15 ? "<=15% ok" : "MISSED");
  std::printf("%-24s %6zu %9.1f%% %8s\n", "end-to-end", vgpu_e2e.size(),
              100 * Median(vgpu_e2e), Median(vgpu_e2e) <= 0.10 ? "<=10% ok" : "MISSED");
  std::printf("\n(vgpu rows: braid's virtual GPU, CPU kernels padded to the profile's timing "
              "model; a check of the simulator against the engine, not a GPU measurement.)\n");
  return 0;
}
