// braid calibrate [--out FILE] [--devices cpu] [--models a,b] [--iterations N] [--threads T]
#include <cstdio>
#include <map>
#include <ostream>
#include <tuple>

#include "scheduler/device_profile.h"
#include "tools/commands.h"
#include "tools/op_timer.h"

namespace braid::cli {
namespace {

constexpr char kCalibrateHelp[] =
    "Usage: braid calibrate [--out FILE] [--devices cpu] [--models A,B,...]\n"
    "                       [--iterations N] [--threads T]\n"
    "\n"
    "Measures this host: every op of a few built-in models alone (median of N\n"
    "runs), then fits the cost model to them: peak compute (best conv/GEMM\n"
    "throughput), memory bandwidth (best memory-bound op), dispatch overhead\n"
    "and per-op-class efficiencies. Power comes from RAPL / INA3221 / NVML\n"
    "when readable, else the built-in estimate (labelled). Writes a device\n"
    "profile (default ./host.json; `braid plan --profile host.json`).\n"
    "\n"
    "  --models L      built-in models to measure (default\n"
    "                  tiny_cnn,squeezenet1_1,mobilenet_v2,resnet18)\n"
    "  --devices L     cpu only in this build; a vgpu is shaped from its profile and\n"
    "                  CUDA calibration needs a GPU\n"
    "  --iterations N  timed runs per op (default 10)\n"
    "  --threads T     intra-op threads (default 0: all cores)\n";

}  // namespace

int RunCalibrate(Args args, std::ostream& out, std::ostream& err) {
  ArgScanner scan(args);
  if (scan.Flag("--help") || scan.Flag("-h")) {
    out << kCalibrateHelp;
    return kExitOk;
  }
  auto fail = [&](const Status& s) { return ReportError(err, "calibrate", s); };
  std::map<std::string, std::string> flags;
  for (const char* f : {"--out", "--devices", "--models", "--iterations", "--threads"}) {
    StatusOr<std::optional<std::string>> v = scan.Value(f);
    if (!v.ok()) return fail(v.status());
    if (*v) flags[f] = **v;
  }
  StatusOr<std::vector<std::string>> pos = scan.Positionals();
  if (!pos.ok()) return fail(pos.status());
  if (!pos->empty()) return fail(InvalidArgument("unexpected argument '" + (*pos)[0] + "'"));
  for (const std::string& d : SplitList(flags.count("--devices") ? flags["--devices"] : "cpu"))
    if (d != "cpu")
      return fail(Unimplemented("--devices: '" + d +
                                "' cannot be calibrated here (cpu only: the vgpu is shaped "
                                "from its profile, CUDA needs a GPU)"));
  OpTimerOptions options;
  options.measure_energy = true;
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
    StatusOr<ModelTimings> t = MeasureModel(model, options);
    if (!t.ok()) return fail(t.status());
    if (t->energy_j_per_inference >= 0) {
      joules += t->energy_j_per_inference;
      seconds += t->end_to_end_median_us * 1e-6;
      energy_from = t->energy_source;
    }
    all.push_back(std::move(*t));
  }
  std::vector<const ModelTimings*> refs;
  for (const ModelTimings& t : all) refs.push_back(&t);
  DeviceProfile profile = BuiltinHostProfile();
  profile.origin = "calibrated";
  profile.description = "this host, measured by braid calibrate";
  DeviceSpec cpu = CpuSpecFromTimings(refs);
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
  profile.devices[0] = cpu;
  const std::string path = flags.count("--out") ? flags["--out"] : "host.json";
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
                  "  %-16s compute %.3f  memory %.3f  overhead %.1f us  (%d ops)\n",
                  e.op_class.c_str(), e.compute, e.memory, e.overhead_us, e.samples);
    out << line;
  }
  out << "profile written to " << path << "\n";
  return kExitOk;
}

}  // namespace braid::cli
