// braid calibrate [--out FILE] [--devices cpu[,vgpu]] [--models a,b] [--iterations N]
//                 [--threads T] [--suite 0|1] [--sparse 0|1]
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <tuple>

#include "profiling/calibration_suite.h"
#include "profiling/op_timer.h"
#include "profiling/plan_timer.h"
#include "profiling/probes.h"
#include "scheduler/device_profile.h"
#include "tools/commands.h"

namespace braid::cli {
namespace {

using profiling::CopiedReadRates;
using profiling::CpuSpecFromTimings;
using profiling::CrossoverOf;
using profiling::DramTierBandwidth;
using profiling::MeasureCalibrationSuite;
using profiling::MeasureCopiedReadRates;
using profiling::MeasureModelInEngine;
using profiling::MeasurePaddingDelayUs;
using profiling::MeasureReclaimRate;
using profiling::MeasureSparseSpeeds;
using profiling::MeasureWakeLatency;
using profiling::ModelTimings;
using profiling::OpTimerOptions;
using profiling::WakeLatency;

constexpr char kCalibrateHelp[] =
    "Usage: braid calibrate [--out FILE] [--devices cpu[,vgpu]] [--models A,B,...]\n"
    "                       [--iterations N] [--threads T] [--suite 0|1] [--sparse 0|1]\n"
    "                       [--pin-threads]\n"
    "\n"
    "Measures this host: every op of a few built-in models and of an op suite\n"
    "(ops of every common type and several sizes) as they run inside a whole\n"
    "cpu-only engine run, median of N runs, then fits the cost model to them:\n"
    "peak compute (best conv/GEMM throughput), cache and memory bandwidth (best\n"
    "streaming ops inside and beyond the L2), DRAM bandwidth (two Adds over twice\n"
    "the last-level cache: for the bytes that cache no longer holds), dispatch\n"
    "overhead, per-op-class efficiencies and per-op-type factors. Also times\n"
    "the sparse CPU kernels against the dense ones (conv1x1, conv3x3, gemm) and\n"
    "stores their speed and crossover, and\n"
    "the wake-up of a stream waiting for another thread's event (sync_us: the\n"
    "simulator adds it to every handoff between devices) and how much slower\n"
    "the op after such a wake runs (resume_factor: an op reading another\n"
    "device's output pays it) and how fast it reads that output\n"
    "(copied_read_gbps; in a window op, copied_window_read_gbps; in a depthwise\n"
    "conv, copied_depthwise_read_gbps) or writes over\n"
    "lines the vgpu's copy thread still holds on its core (reclaim_gbps). Power\n"
    "comes from RAPL / INA3221 / NVML when readable, else the built-in\n"
    "estimate (labelled). Writes a device profile (default ./host.json;\n"
    "`braid plan --profile host.json`).\n"
    "\n"
    "  --models L      built-in models to measure (default\n"
    "                  tiny_cnn,squeezenet1_1,mobilenet_v2,resnet18)\n"
    "  --devices L     cpu, or cpu,vgpu: also the virtual GPU, shaped as the\n"
    "                  host-vgpu profile's entry (its kernels are the host's, so\n"
    "                  it gets floor_device cpu); its padding's wake-up delay on\n"
    "                  this host is measured and reported. CUDA needs a GPU.\n"
    "  --iterations N  timed runs per op (default 10)\n"
    "  --threads T     intra-op threads (default 0: all cores)\n"
    "  --suite 0|1     measure the op suite too (default 1)\n"
    "  --sparse 0|1    measure the sparse kernels' crossover (default 1)\n"
    "  --pin-threads   measure with the engine's threads pinned, as `braid run /\n"
    "                  profile --pin-threads` run (the CPU stream on its own core,\n"
    "                  worker threads on the others): the handoff figures differ\n";

}  // namespace

int RunCalibrate(Args args, std::ostream& out, std::ostream& err) {
  ArgScanner scan(args);
  if (scan.Flag("--help") || scan.Flag("-h")) {
    out << kCalibrateHelp;
    return kExitOk;
  }
  auto fail = [&](const Status& s) { return ReportError(err, "calibrate", s); };
  const bool pin_threads = scan.Flag("--pin-threads");
  std::map<std::string, std::string> flags;
  for (const char* f :
       {"--out", "--devices", "--models", "--iterations", "--threads", "--suite", "--sparse"}) {
    StatusOr<std::optional<std::string>> v = scan.Value(f);
    if (!v.ok()) return fail(v.status());
    if (*v) flags[f] = **v;
  }
  StatusOr<std::vector<std::string>> pos = scan.Positionals();
  if (!pos.ok()) return fail(pos.status());
  if (!pos->empty()) return fail(InvalidArgument("unexpected argument '" + (*pos)[0] + "'"));
  bool with_vgpu = false;
  for (const std::string& d : SplitList(flags.count("--devices") ? flags["--devices"] : "cpu")) {
    if (d == "vgpu") {
      with_vgpu = true;
    } else if (d != "cpu") {
      return fail(Unimplemented("--devices: '" + d +
                                "' cannot be calibrated here (cpu and vgpu; CUDA needs a GPU)"));
    }
  }
  bool with_suite = true, with_sparse = true;
  for (auto [flag, target] : {std::pair{"--suite", &with_suite}, {"--sparse", &with_sparse}}) {
    if (!flags.count(flag)) continue;
    if (flags[flag] != "0" && flags[flag] != "1")
      return fail(InvalidArgument(std::string(flag) + " expects 0 or 1, got '" + flags[flag] + "'"));
    *target = flags[flag] == "1";
  }
  OpTimerOptions options;
  StatusOr<SparseEnvironment> sparse_env = ReadSparseEnvironment();
  if (!sparse_env.ok()) return fail(sparse_env.status());
  options.sparse_kernels = sparse_env->sparse;
  options.sparse_crossover = sparse_env->crossover;
  options.measure_energy = true;
  options.pin_threads = pin_threads;
  for (auto [flag, target, min] : {std::tuple{"--iterations", &options.iterations, 1},
                                   {"--threads", &options.threads, 0}}) {
    if (!flags.count(flag)) continue;
    char* end = nullptr;
    const long v = std::strtol(flags[flag].c_str(), &end, 10);
    if (flags[flag].empty() || *end != '\0' || v < min || v > 100000)
      return fail(InvalidArgument(std::string(flag) + " expects an integer >= " +
                                  std::to_string(min) + ", got '" + flags[flag] + "'"));
    *target = static_cast<int>(v);
  }
  const std::vector<std::string> models =
      SplitList(flags.count("--models") ? flags["--models"]
                                    : "tiny_cnn,squeezenet1_1,mobilenet_v2,resnet18");
  std::vector<ModelTimings> all;
  double joules = 0, seconds = 0;
  std::string energy_from;
  for (const std::string& name : models) {
    const std::string model = name.find(':') == std::string::npos && name.find('.') == std::string::npos
                                  ? "builtin:" + name : name;
    out << "measuring " << model << " ...\n" << std::flush;
    // Per-op times as the ops run inside the whole model (the engine's
    // layouts and warm caches), which is what the simulator predicts.
    StatusOr<ModelTimings> t = MeasureModelInEngine(model, options);
    if (!t.ok()) return fail(t.status());
    if (t->energy_j_per_inference >= 0) {
      joules += t->energy_j_per_inference;
      seconds += t->end_to_end_median_us * 1e-6;
      energy_from = t->energy_source;
    }
    all.push_back(std::move(*t));
  }
  if (with_suite) {
    out << "measuring the op suite ...\n" << std::flush;
    OpTimerOptions suite_options = options;
    suite_options.measure_energy = false;
    StatusOr<std::vector<ModelTimings>> t = MeasureCalibrationSuite(suite_options);
    if (!t.ok()) return fail(t.status());
    for (ModelTimings& st : *t) all.push_back(std::move(st));
  }
  std::vector<const ModelTimings*> refs;
  for (const ModelTimings& t : all) refs.push_back(&t);
  std::vector<SparseKernelSpeed> sparse;
  std::vector<std::string> sparse_notes;
  if (with_sparse) {
    out << "measuring the sparse kernels against the dense ones ...\n" << std::flush;
    StatusOr<std::vector<SparseKernelSpeed>> s = MeasureSparseSpeeds(options, &sparse_notes);
    if (!s.ok()) return fail(s.status());
    sparse = std::move(*s);
  }
  DeviceProfile profile = BuiltinHostProfile();
  profile.origin = "calibrated";
  profile.description = "this host, measured by braid calibrate";
  // The DRAM tier is optional: without a last-level cache to size it, or
  // when its probe fails, the profile goes without it (said so).
  out << "measuring DRAM bandwidth ...\n" << std::flush;
  std::string no_dram_tier;
  const double dram_gbps = DramTierBandwidth(options, &no_dram_tier);
  if (!(dram_gbps > 0)) out << "  no DRAM tier: " << no_dram_tier << "\n";
  DeviceSpec cpu = CpuSpecFromTimings(refs, dram_gbps);
  const DeviceSpec& builtin = profile.devices[0];
  if (seconds > 0) {
    cpu.active_power_w = joules / seconds;
    cpu.sources["active_power_w"] = "measured mean power while running (" + energy_from + ")";
    cpu.idle_power_w = builtin.idle_power_w;
    cpu.sources["idle_power_w"] = builtin.sources.at("idle_power_w");
  } else {
    cpu.active_power_w = builtin.active_power_w;
    cpu.idle_power_w = builtin.idle_power_w;
    cpu.sources["active_power_w"] = "no power sensor readable: " + builtin.sources.at("active_power_w");
    cpu.sources["idle_power_w"] = builtin.sources.at("idle_power_w");
  }
  cpu.clock_ghz = 0;
  cpu.sparse = sparse;
  if (!sparse.empty())
    cpu.sources["sparse"] = "sparse vs dense kernel time at sparsity 0.5-0.95, fitted; measured "
                            "by braid calibrate (" + std::to_string(cpu.compute_units) +
                            " threads)";
  // Handoff wake-ups through the engine's own streams and events: the CPU
  // stream's when it waits for another device, the vgpu's below.
  StatusOr<WakeLatency> wake = MeasureWakeLatency(60, options.pin_threads);
  if (!wake.ok()) return fail(wake.status());
  cpu.sync_us = wake->to_caller_us;
  cpu.sources["sync_us"] =
      "measured by braid calibrate: the calling thread's wake-up after a worker stream's event";
  cpu.resume_factor = wake->resume_factor;
  cpu.sources["resume_factor"] =
      "measured by braid calibrate: a 300 KB Add on a vector a worker stream just handed over, "
      "right after the wake, over the same Add on a second handed-over vector next";
  StatusOr<double> reclaim = MeasureReclaimRate(options.pin_threads);
  if (!reclaim.ok()) return fail(reclaim.status());
  cpu.reclaim_gbps = *reclaim;
  cpu.sources["reclaim_gbps"] =
      "measured by braid calibrate: a 200 KB Add into a buffer a vgpu stream's copy just read "
      "on its thread, over the same Add after the copy read another buffer (0: no extra time)";
  StatusOr<CopiedReadRates> copied_read =
      MeasureCopiedReadRates(cpu.resume_factor, options.pin_threads);
  if (!copied_read.ok()) return fail(copied_read.status());
  cpu.copied_read_gbps = copied_read->stream_gbps;
  cpu.copied_window_read_gbps = copied_read->window_gbps;
  cpu.copied_depthwise_read_gbps = copied_read->depthwise_gbps;
  const std::string threads = options.pin_threads ? "pinned" : "not pinned";
  cpu.sources["copied_read_gbps"] =
      "measured by braid calibrate: 200 KB Adds on the cpu stream, the first after each 300 us "
      "vgpu kernel reading what it handed over, against the same Adds all on the cpu; threads " +
      threads;
  cpu.sources["copied_window_read_gbps"] =
      "measured by braid calibrate: as copied_read_gbps with 3x3 depthwise convs of 200 KB "
      "maps; threads " + threads;
  cpu.sources["copied_depthwise_read_gbps"] =
      "measured by braid calibrate: as copied_window_read_gbps over 3x3 depthwise convs of two "
      "200 KB maps, 64 x 28 x 28 and 256 x 14 x 14; threads " + threads;
  profile.devices[0] = cpu;
  std::optional<double> padding_delay_us;  // measured with the vgpu
  if (with_vgpu) {
    StatusOr<DeviceProfile> shaped = LoadDeviceProfile(ResolveProfileName("host-vgpu"));
    if (!shaped.ok()) return fail(shaped.status().WithPrefix("--devices vgpu"));
    const DeviceSpec* vgpu = shaped->Find("vgpu");
    if (vgpu == nullptr) return fail(NotFound("profile host-vgpu has no vgpu device"));
    DeviceSpec v = *vgpu;
    v.floor_device = "cpu";
    v.sources["floor_device"] = "the virtual GPU runs the host's CPU kernels on its own thread";
    padding_delay_us = MeasurePaddingDelayUs();
    v.sync_us = wake->to_worker_us;
    v.sources["sync_us"] = "measured by braid calibrate: a vgpu stream's wake-up after the "
                           "calling thread's event (its copy streams pay it too)";
    char note[200];
    std::snprintf(note, sizeof(note),
                  "; on this host a padded step ends a median %.1f us after its deadline "
                  "(measured by braid calibrate; not part of the model)",
                  *padding_delay_us);
    v.sources["launch_overhead_us"] += note;
    profile.devices.push_back(std::move(v));
    for (const LinkSpec& l : shaped->links) profile.links.push_back(l);
    profile.description += ", plus braid's virtual GPU shaped as host-vgpu (a model, not a GPU)";
  }
  const std::string path = flags.count("--out") ? flags["--out"] : "host.json";
  // Named after its file, as profiles are looked up (`--profile NAME` finds
  // NAME.json): one written to my-board.json is "my-board", not "host".
  if (const std::string stem = std::filesystem::path(path).stem().string(); !stem.empty())
    profile.name = stem;
  Status s = SaveDeviceProfile(profile, path);
  if (!s.ok()) return fail(s);
  char line[256];
  std::snprintf(line, sizeof(line),
                "cpu: %.1f GFLOP/s best conv/GEMM, %.1f GB/s best memory-bound op, %.1f us "
                "small-op time, %d threads\n",
                cpu.peak_gflops, cpu.memory_bandwidth_gbps, cpu.launch_overhead_us,
                cpu.compute_units);
  out << line;
  for (const OpClassEfficiency& e : cpu.efficiency) {
    std::snprintf(line, sizeof(line),
                  "  %-16s compute %.3f  memory %.3f  cache %.3f  overhead %.1f us  (%d ops)\n",
                  e.op_class.c_str(), e.compute, e.memory,
                  e.cache_memory > 0 ? e.cache_memory : e.memory, e.overhead_us, e.samples);
    out << line;
  }
  if (cpu.cache_bytes > 0) {
    std::snprintf(line, sizeof(line), "  cache tier: %.0f KB at %.1f GB/s, then %.1f GB/s\n",
                  cpu.cache_bytes / 1024, cpu.cache_bandwidth_gbps, cpu.memory_bandwidth_gbps);
    out << line;
  }
  if (cpu.llc_bytes > 0) {
    std::snprintf(line, sizeof(line),
                  "  DRAM tier: beyond a %.0f KB last-level cache, %.1f GB/s of traffic\n",
                  cpu.llc_bytes / 1024, cpu.dram_bandwidth_gbps);
    out << line;
  }
  for (const OpTypeFactor& f : cpu.op_types) {
    std::snprintf(line, sizeof(line), "  op type %-18s x%.3f  (%d ops)\n", f.op_type.c_str(),
                  f.factor, f.samples);
    out << line;
  }
  for (const std::string& n : sparse_notes) out << "  " << n << "\n";
  for (const SparseKernelSpeed& sp : cpu.sparse) {
    std::snprintf(line, sizeof(line),
                  "  sparse %-8s crossover %.2f  time ratio %.3f + %.3f x density\n",
                  sp.op_class.c_str(), sp.crossover, sp.fixed, sp.per_density);
    out << line;
  }
  if (with_sparse)
    out << "  sparse crossover for the runtime: " << SparseCrossoverToString(CrossoverOf(sparse))
        << " (BRAID_SPARSE_CROSSOVER)\n";
  std::snprintf(line, sizeof(line),
                "handoff wake-up: cpu stream %.1f us (first op after it x%.2f, reading the "
                "handed-over data at %.1f GB/s, %.1f GB/s in a window op, %.1f in a depthwise "
                "conv, taking back lines the copy thread holds at %.1f GB/s)",
                cpu.sync_us, cpu.resume_factor, cpu.copied_read_gbps,
                cpu.copied_window_read_gbps, cpu.copied_depthwise_read_gbps, cpu.reclaim_gbps);
  out << line;
  if (padding_delay_us) {
    std::snprintf(line, sizeof(line), ", vgpu streams %.1f us", wake->to_worker_us);
    out << line;
  }
  out << "\n";
  if (padding_delay_us) {
    std::snprintf(line, sizeof(line),
                  "vgpu (virtual, shaped as host-vgpu): padded steps end a median %.1f us after "
                  "their deadline on this host\n",
                  *padding_delay_us);
    out << line;
  }
  out << "profile written to " << path << "\n";
  return kExitOk;
}

}  // namespace braid::cli
