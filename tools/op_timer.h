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
//
// MeasurePlan instead runs a whole Plan through the heterogeneous engine
// (runtime/engine.h) on the devices it names and reads the engine's per-step
// timeline (start/end, device, stream or copy track, bytes) of every timed
// run; each step's figures are medians over the runs:
//
//   braid::cli::PlanTimerOptions o;
//   o.devices = {"cpu", "vgpu"};
//   o.vgpu_timing = braid::cli::VgpuTimingFromProfile(profile);   // shaped like the profile
//   ASSIGN_OR_RETURN(braid::cli::PlanTimings t, braid::cli::MeasurePlan("builtin:resnet18", &plan, o));
#ifndef BRAID_TOOLS_OP_TIMER_H_
#define BRAID_TOOLS_OP_TIMER_H_

#include <span>
#include <string>
#include <vector>

#include "braid/braid.h"
#include "graph/ir.h"
#include "kernels/cpu/cpu_device.h"
#include "kernels/cpu/sparse/crossover.h"
#include "kernels/vgpu/vgpu_device.h"
#include "scheduler/cost_model.h"
#include "scheduler/device_profile.h"
#include "scheduler/plan.h"

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
  // Engine runs pin their threads (EngineOptions::pin_threads).
  bool pin_threads = false;
  // Nodes timed alone (MeasureGraph): before each run, walk this many bytes of
  // other memory, then read the node's inputs. The caches then hold what they
  // hold inside a model run, the inputs just produced and the destination
  // and older data evicted, instead of everything the op touched on its last
  // repeat. 0: off (each op warm).
  size_t evict_bytes = 0;
};

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

// Per-op times as the ops run inside the whole model: a cpu-only plan
// through the engine (MeasurePlan), each node's step median over the runs;
// end to end is the Engine::Run median / min. Unlike MeasureModel's
// isolated ops these include the layouts the graph runs in (channels-last
// between kernels) and producer-warm caches. min_us = median_us here.
StatusOr<ModelTimings> MeasureModelInEngine(const std::string& model,
                                            const OpTimerOptions& options);
StatusOr<ModelTimings> MeasureGraphInEngine(Graph graph, const std::string& model,
                                            const OpTimerOptions& options);

// Times every node of `graph` (inferred, annotated, static shapes) alone, as
// MeasureModel does; no end-to-end run. `label` names it in ModelTimings.
// `kernels`: the CPU kernels to register (default: RegisterCpuKernels'
// defaults, environment overrides included).
StatusOr<ModelTimings> MeasureGraph(Graph graph, const std::string& label,
                                    const OpTimerOptions& options,
                                    const CpuKernelOptions* kernels = nullptr);

// braid calibrate's op suite (tools/cli_calibration_suite.cc): ops of every
// common type (elementwise, Concat / Reshape / Transpose / Flatten / Gather,
// pooling, normalization, 3x3 / depthwise Conv, Gemm, MatMul) on feature
// maps of ~25 KB to ~5 MB and ViT-like token matrices. It gives every op
// type samples of several sizes, so per-op-type factors and the cache tier
// are fitted on it rather than on the models checked.
// `maps`: the 4-D part, timed as the steps of engine runs (one per section)
// (MeasureGraphInEngine) and built as inside a CNN: chains of ReLU 1x1
// convs, each timed op reading the conv just before it, nodes ordered depth
// first; else the token part (timed one op at a time, inputs warm as after
// their producer).
// `only_section` >= 0 (maps only): just that map section, of
// kCalibrationMapSections (each its own input, chain and samples).
inline constexpr int kCalibrationMapSections = 10;
StatusOr<Graph> CalibrationSuiteGraph(bool maps, int only_section = -1);
StatusOr<std::vector<ModelTimings>> MeasureCalibrationSuite(const OpTimerOptions& options);

// The sparse CPU kernels against the dense ones, per sparse class (conv1x1,
// conv3x3, gemm): a mid-network-sized op timed with the dense kernels and
// with the sparse kernel forced (crossover 0) at weight sparsities
// 0.5 ... 0.95; the time ratios are fitted (FitSparseKernelSpeed). `notes`
// gets one line per probe.
StatusOr<std::vector<SparseKernelSpeed>> MeasureSparseSpeeds(const OpTimerOptions& options,
                                                             std::vector<std::string>* notes);
// The crossover table (kernels/cpu/sparse) of measured speeds; classes not
// measured keep the kernels' defaults.
SparseCrossover CrossoverOf(const std::vector<SparseKernelSpeed>& speeds);

// L2 cache bytes per core (sysconf, else sysfs), 0 when unknown.
double CacheBytesPerCore();
// The last-level cache's bytes (sysfs: the highest level's data or unified
// cache under cache_dir/indexN/{level,type,size}) when it is an L3 or beyond;
// 0 when unknown or the L2 is the last.
double LastLevelCacheBytes(
    const std::string& cache_dir = "/sys/devices/system/cpu/cpu0/cache");
// The host's DRAM traffic bandwidth (GB/s): the better of two Adds
// over vectors of 2x `llc_bytes` (64 MB at least) in one engine run at
// `options.threads`, bytes read plus twice the bytes written (read for
// ownership, written back) over time.
StatusOr<double> MeasureDramBandwidth(const OpTimerOptions& options, double llc_bytes);
// The DRAM tier's bandwidth for CpuSpecFromTimings: MeasureDramBandwidth
// over this host's last-level cache when it is larger than the L2, else 0
// with `*why_none` saying why (the tier is optional: a failed probe is not
// an error).
double DramTierBandwidth(const OpTimerOptions& options, std::string* why_none);

struct PlanTimerOptions : OpTimerOptions {
  // Devices to open: "cpu" (always, first), "vgpu", "cuda" / "cuda:K".
  std::vector<std::string> devices = {"cpu"};
  // The vgpu's timing shaping (a model, never a GPU figure); default none.
  VgpuTiming vgpu_timing;
};

// One engine step, medians over the timed runs (times from the Run's start).
struct StepProfile {
  std::string name;      // node ("conv1", slice parts "conv1#0"), or "copy V -> D"
  std::string category;  // "kernel" or "copy"
  std::string device;    // the device that executed it
  std::string track;     // "cpu/stream0", "vgpu/stream0", "vgpu/h2d", ...
  bool virtual_device = false;  // vgpu: its times are a model, not a GPU
  // Kernels: the node of the engine graph (after slice expansion).
  std::string op_type;
  OpClass op_class = OpClass::kOther;
  Annotation annotation;
  std::string implementation;
  // The cost model's view of the node (OpWorkOf with the engine graph): the
  // per-op-type key, sparse class and work bytes.
  std::string op_key;
  std::string sparse_class;
  double work_bytes = -1;
  double copied_bytes = 0;  // of its inputs, made on another device
  bool view = false;        // run as a view (RunsAsView): no kernel, no bytes
  std::string from_device, to_device;  // copies
  double bytes = 0;      // copies: bytes moved; kernels: bytes written
  double start_us = 0;   // median start
  double end_us = 0;     // median start + median duration
  double median_us = 0;  // median duration
  int runs = 0;          // timed runs in which it ran
};

struct PlanTimings {
  std::string model;
  Graph graph;  // annotated, as planned (batch 1), before slice expansion
  Plan plan;
  std::vector<std::string> devices;  // opened, devices[0] = "cpu"
  std::vector<std::string> device_notes;  // "vgpu: virtual GPU, timing ..."
  std::vector<StepProfile> steps;    // engine order
  std::vector<NodePlacement> placements;  // incl. fallbacks and their reasons
  double end_to_end_median_us = 0;   // Engine::Run wall time
  double end_to_end_min_us = 0;
  int threads = 1;
  int iterations = 0;
  double energy_j_per_inference = -1;  // as in ModelTimings
  std::string energy_source;
  std::vector<std::string> energy_notes;
};

// `plan` == nullptr: every node on the CPU. The plan must match the model's
// graph as planned (the one `braid plan --save` saw) and use only `devices`.
StatusOr<PlanTimings> MeasurePlan(const std::string& model, const Plan* plan,
                                  const PlanTimerOptions& options);
// The same on a graph already planned (PlannedGraph-like: inferred, batch 1,
// annotated); `model` labels it.
StatusOr<PlanTimings> MeasurePlanOnGraph(Graph graph, const std::string& model, const Plan* plan,
                                         const PlanTimerOptions& options);

// The model graph as MeasureModel / MeasurePlan plan it (loaded, batch 1,
// annotated): what a policy should place.
StatusOr<Graph> PlannedGraph(const std::string& model);

// A VgpuTiming ("profile:NAME") matching the profile's `device` spec (peak,
// bandwidth, launch overhead) and its host link (latency, bandwidth), so a
// shaped vgpu run can be compared with the profile's simulation. NotFound
// when the profile has no such device.
StatusOr<VgpuTiming> VgpuTimingFromProfile(const DeviceProfile& profile,
                                           const std::string& device = "vgpu");

// How long the engine's cross-thread handoffs take on this host (medians of
// `rounds`, microseconds): a worker stream (the vgpu's, its copy streams)
// blocked on an event until the calling thread signals it (`to_worker_us`),
// and the calling thread (the CPU stream) blocked on a worker stream's event
// (`to_caller_us`). The profile's DeviceSpec::sync_us of vgpu and cpu.
// `resume_factor`: the worker hands over two 100 KB vectors (written as the
// vgpu's copies write, just before its event); once woken, the calling
// thread adds the first to a vector of its own, then the second: the first
// add's median time over the second's (>= 1; both read handed-over, cold
// data, which the cost model already prices, so the ratio is the wake's
// alone: the cpu's DeviceSpec::resume_factor).
struct WakeLatency {
  double to_worker_us = 0;
  double to_caller_us = 0;
  double resume_factor = 1;
};
// `pin_threads`: the calling thread and the vgpu's pinned apart, as
// EngineOptions::pin_threads pins the engine's.
StatusOr<WakeLatency> MeasureWakeLatency(int rounds = 60, bool pin_threads = false);
// How fast the cpu stream reads an input the vgpu just handed over, in the
// engine (GB/s): chains of 200 KB ops, a vgpu one shaped to 300 us per
// kernel then one to three on the cpu (one thread), against the same chain
// all on the cpu; the rate that makes the cost model's copied-input stall
// (with `resume_factor`) match the cpu ops that read a copied input, in
// total; the median of `rounds` such rounds (one round's rate swung 10-16
// GB/s between runs). `pin_threads`: the engine runs pin their threads.
struct CopiedReadRates {
  double stream_gbps = 0;     // Adds: DeviceSpec::copied_read_gbps
  double window_gbps = 0;     // 3x3 depthwise convs, 64 x 28 x 28: copied_window_read_gbps
  double depthwise_gbps = 0;  // the same and 256 x 14 x 14: copied_depthwise_read_gbps
};
// The steps whose output lands on lines the copy thread still holds
// (ColdBytes::written_held_elsewhere) are left out: they pay for taking
// those lines back too (DeviceSpec::reclaim_gbps); an error if no other
// step remains.
StatusOr<CopiedReadRates> MeasureCopiedReadRates(double resume_factor, bool pin_threads = false,
                                                 int iterations = 20, int rounds = 5);
// One rate pair per round, for a caller that spreads its rounds over a
// longer session (the cost model check: one round after each plan it times,
// since a host can read 16 GB/s in one minute and 10 in the next).
StatusOr<std::vector<CopiedReadRates>> MeasureCopiedReadRounds(double resume_factor,
                                                               bool pin_threads, int iterations,
                                                               int rounds);
// Per rate, the median over the rounds.
CopiedReadRates MedianRates(std::span<const CopiedReadRates> rounds);

// How fast the cpu stream writes over bytes the vgpu's copy thread has
// just read on its own core (GB/s; DeviceSpec::reclaim_gbps): the lines are
// shared with that core until the write takes them back. Per round the
// calling thread adds two 200 KB vectors into a destination and into a
// second buffer, the vgpu's stream (a worker thread, pinned apart with
// `pin_threads`) copies one of the two out as its copies do, and the calling
// thread adds into the destination again: the median extra time when the
// copy read the destination, over the median when it read the other
// buffer. 0 when the extra is within 2% of the add (no stall to model).
StatusOr<double> MeasureReclaimRate(bool pin_threads = false, int rounds = 41);
// The rate from the probe's medians: `bytes` over the extra time of the add
// into the held buffer (GB/s), 0 when that extra is within 2% of the other.
double ReclaimRateGbps(double held_us, double apart_us, double bytes);

// OpMeasurement rows for FitEfficiency.
std::vector<OpMeasurement> ToMeasurements(const ModelTimings& t);

double Median(std::vector<double> v);

// The host CPU as a DeviceSpec fitted to measured timings: peak_gflops is the
// best conv/GEMM throughput seen; cache_bytes the L2 per core, with
// cache_bandwidth_gbps the best streaming-op throughput within it and
// memory_bandwidth_gbps the best beyond 2x it (one tier when either side has
// no sample); per-class efficiencies and per-op-type factors fitted to every
// op (FitDevice). With `dram_bandwidth_gbps` (MeasureDramBandwidth) and a
// last-level cache to go with it, also the DRAM tier (llc_bytes,
// dram_bandwidth_gbps) the fit then prices. Every number's source says
// "measured".
DeviceSpec CpuSpecFromTimings(const std::vector<const ModelTimings*>& timings,
                              double dram_bandwidth_gbps = 0);

}  // namespace braid::cli

#endif  // BRAID_TOOLS_OP_TIMER_H_
