// Per-op CPU timings of a model on this machine, each node timed in
// isolation: what `braid calibrate` and bench/cost_model_check measure.
//
//   braid::profiling::OpTimerOptions o;
//   o.iterations = 10;
//   ASSIGN_OR_RETURN(braid::profiling::ModelTimings t,
//                    braid::profiling::MeasureModel("builtin:resnet18", o));
//   for (const braid::profiling::OpTiming& op : t.ops)
//     std::cout << op.node << " " << op.median_us << "\n";
//
// Each node is timed in isolation: the model runs once with every value kept,
// then every node runs alone in its own sequential engine on those real inputs,
// `warmup` times untimed and `iterations` times timed (median reported).
// End to end runs through the public Session API. Batch 1 (symbols = 1).
// Per-op times inside whole engine runs: profiling/plan_timer.h
// (MeasureModelInEngine). The library reads no environment: the caller
// passes the sparse-kernel settings in the options.
#ifndef BRAID_PROFILING_OP_TIMER_H_
#define BRAID_PROFILING_OP_TIMER_H_

#include <string>
#include <vector>

#include "braid/braid.h"
#include "graph/ir.h"
#include "kernels/cpu/cpu_device.h"
#include "scheduler/cost_model.h"
#include "scheduler/device_profile.h"

namespace braid::profiling {

struct OpTimerOptions {
  int threads = 0;      // 0 = all cores
  int iterations = 10;  // timed runs per op and end to end
  int warmup = 2;
  uint64_t seed = 1;    // random inputs
  bool end_to_end = true;
  // Sample the energy sensors (profiling/energy.h) during the timed end-to-end
  // runs.
  bool measure_energy = false;
  // Engine runs pin their threads (EngineOptions::pin_threads).
  bool pin_threads = false;
  // Nodes timed alone (MeasureGraph): before each run, walk this many bytes of
  // other memory, then read the node's inputs. The caches then hold what they
  // hold inside a model run, the inputs just produced and the destination
  // and older data evicted, instead of everything the op touched on its last
  // repeat. 0: off (each op warm).
  size_t evict_bytes = 0;
  // The weight-sparse CPU kernels, as SessionOptions takes them
  // (docs/sparse.md): registered or not, and a crossover table
  // ("conv1x1=F,...", "" = the kernels' defaults). The CLI fills them from
  // BRAID_SPARSE / BRAID_SPARSE_CROSSOVER.
  bool sparse_kernels = true;
  std::string sparse_crossover;
};

// The CPU kernel options `options` asks for; InvalidArgument on a malformed
// crossover table.
StatusOr<CpuKernelOptions> CpuKernelOptionsOf(const OpTimerOptions& options);

struct OpTiming {
  std::string node;
  std::string op_type;
  OpClass op_class = OpClass::kOther;
  Annotation annotation;       // FLOPs, bytes, intensity, sparsity
  std::string implementation;  // the kernel that ran ("onednn", ...; "view": none)
  double median_us = 0;
  double min_us = 0;
  bool view = false;  // the engine ran it as a view (RunsAsView): no kernel, no bytes
};

struct ModelTimings {
  std::string model;
  Graph graph;  // annotated, as planned (batch specialised to 1)
  std::vector<OpTiming> ops;   // one per graph node, graph order
  // The ops ran one after another in graph order, in whole runs (engine
  // steps): their caches held what the ops before them left
  // (ToMeasurements then derives each op's cold input bytes).
  bool in_run_order = false;
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

// Times every node of `graph` (inferred, annotated, static shapes) alone, as
// MeasureModel does; no end-to-end run. `label` names it in ModelTimings.
// `kernels`: the CPU kernels to register (default: CpuKernelOptionsOf(options)).
StatusOr<ModelTimings> MeasureGraph(Graph graph, const std::string& label,
                                    const OpTimerOptions& options,
                                    const CpuKernelOptions* kernels = nullptr);

// The model graph as MeasureModel / MeasurePlan plan it (loaded, batch 1,
// annotated): what a policy should place.
StatusOr<Graph> PlannedGraph(const std::string& model);

// OpMeasurement rows for FitEfficiency / FitCpuSpec (scheduler/profile_fit.h);
// with the graph and in_run_order, each row's cold bytes under this host's
// caches (profiling/cache_info.h).
std::vector<OpMeasurement> ToMeasurements(const ModelTimings& t);

double Median(std::vector<double> v);

// The host CPU as a DeviceSpec fitted to measured timings: FitCpuSpec
// (scheduler/profile_fit.h) on their ToMeasurements rows and this host's
// caches (sysfs). With `dram_bandwidth_gbps` (MeasureDramBandwidth,
// profiling/probes.h) and a last-level cache to go with it, also the DRAM
// tier.
DeviceSpec CpuSpecFromTimings(const std::vector<const ModelTimings*>& timings,
                              double dram_bandwidth_gbps = 0);

}  // namespace braid::profiling

#endif  // BRAID_PROFILING_OP_TIMER_H_
