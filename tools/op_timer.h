// Per-op and end-to-end CPU timings of a model on this machine: what
// `braid calibrate`, `braid profile` and bench/cost_model_check measure.
//
//   braid::cli::OpTimerOptions o;
//   o.iterations = 10;
//   ASSIGN_OR_RETURN(braid::cli::ModelTimings t, braid::cli::MeasureModel("builtin:resnet18", o));
//   for (const braid::cli::OpTiming& op : t.ops) std::cout << op.node << " " << op.median_us << "\n";
//
// Each node is timed in isolation: the model runs once with every value kept,
// then every node runs alone in its own executor on those real inputs,
// `warmup` times untimed and `iterations` times timed (median reported).
// End to end runs through the public Session API. Batch 1 (symbols = 1).
#ifndef BRAID_TOOLS_OP_TIMER_H_
#define BRAID_TOOLS_OP_TIMER_H_

#include <string>
#include <vector>

#include "graph/ir.h"
#include "scheduler/cost_model.h"
#include "scheduler/device_profile.h"

namespace braid::cli {

struct OpTimerOptions {
  int threads = 0;      // 0 = all cores
  int iterations = 10;  // timed runs per op and end to end
  int warmup = 2;
  uint64_t seed = 1;    // random inputs
  bool end_to_end = true;
  // Sample the energy sensors (runtime/energy.h) during the timed end-to-end
  // runs.
  bool measure_energy = false;
};

struct OpTiming {
  std::string node;
  std::string op_type;
  OpClass op_class = OpClass::kOther;
  Annotation annotation;       // FLOPs, bytes, intensity, sparsity
  std::string implementation;  // the kernel that ran ("onednn", ...)
  double median_us = 0;
  double min_us = 0;
};

struct ModelTimings {
  std::string model;
  Graph graph;  // annotated, as planned (batch specialised to 1)
  std::vector<OpTiming> ops;   // one per graph node, graph order
  double end_to_end_median_us = -1;  // Session::Run, -1 when not measured
  double end_to_end_min_us = -1;
  int threads = 1;
  // With measure_energy: joules per inference from the sensors, or < 0 with
  // the reasons in energy_notes when there is no sensor.
  double energy_j_per_inference = -1;
  std::string energy_source;
  std::vector<std::string> energy_notes;
};

StatusOr<ModelTimings> MeasureModel(const std::string& model, const OpTimerOptions& options);

// OpMeasurement rows for FitEfficiency.
std::vector<OpMeasurement> ToMeasurements(const ModelTimings& t);

double Median(std::vector<double> v);

// The host CPU as a DeviceSpec fitted to measured timings: peak_gflops is the
// best conv/GEMM throughput seen, memory_bandwidth_gbps the best throughput
// of a memory-bound op, and the per-class efficiencies are fitted to every
// op (FitEfficiency). Every number's source says "measured".
DeviceSpec CpuSpecFromTimings(const std::vector<const ModelTimings*>& timings);

}  // namespace braid::cli

#endif  // BRAID_TOOLS_OP_TIMER_H_
