// Cost model vs real runs on this machine, for all-CPU plans over the
// built-in zoo. Per model, the CPU profile is fitted on the OTHER models'
// per-op measurements (leave-one-model-out), then used to predict this
// model's ops and to simulate its cpu-only plan; the table gives the median
// absolute relative error per op class and end to end (against the measured
// Session::Run median). Not a timed test: a report.
//
//   braid_cost_model_check [--iterations N] [--threads T] [--models a,b,...]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "scheduler/simulator.h"
#include "tools/op_timer.h"

using namespace braid;       // NOLINT: a report program
using namespace braid::cli;  // NOLINT

int main(int argc, char** argv) {
  OpTimerOptions options;
  options.iterations = 10;
  std::vector<std::string> models = {"tiny_cnn", "squeezenet1_1", "mobilenet_v2",
                                     "resnet18", "resnet50",      "vit_tiny"};
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--iterations")) options.iterations = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--threads")) options.threads = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--models")) {
      models.clear();
      std::string s = argv[i + 1];
      size_t start = 0;
      while (start <= s.size()) {
        const size_t c = std::min(s.find(',', start), s.size());
        if (c > start) models.push_back(s.substr(start, c - start));
        start = c + 1;
      }
    }
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
  std::printf("\n(simulated = the cost model's prediction; measured = this machine's CPU. "
              "Shaped CPU+vgpu plans are not checked here yet.)\n");
  return 0;
}
