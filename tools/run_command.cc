// braid run MODEL [--input NAME=FILE.npy]... [--output-dir DIR] [--threads T]
//   [--iterations N] [--warmup W] [--seed S] [--batch B] [--json]
//   [--devices cpu,vgpu|cpu,cuda] [--policy NAME] [--plan PLAN.json]
//   [--trace FILE.json] [--vgpu-timing none|orin-like] [--profile P] [--adapt]
//   [--policy-file POLICY.bin] [--fixed-threads]
//   [--throughput [--latency-bound MS] [--max-batch N]]
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <ostream>
#include <random>
#include <set>
#include <thread>
#include <type_traits>

#include "api/model_loader.h"
#include "api/session_open.h"
#include "braid/braid.h"
#include "kernels/params/elementwise.h"
#include "scheduler/batch_size.h"
#include "scheduler/cost_model.h"
#include "scheduler/policies.h"
#include "tools/commands.h"
#include "tools/npy.h"

namespace braid::cli {
namespace {

constexpr char kRunHelp[] =
    "Usage: braid run MODEL [--input NAME=FILE.npy]... [--output-dir DIR]\n"
    "                 [--threads T] [--iterations N] [--warmup W] [--seed S]\n"
    "                 [--batch B] [--devices cpu,vgpu|cpu,cuda] [--policy NAME]\n"
    "                 [--plan PLAN.json] [--policy-file POLICY.bin] [--trace FILE.json]\n"
    "                 [--vgpu-timing none|orin-like] [--profile P] [--adapt] [--pin-threads]\n"
    "                 [--fixed-threads]\n"
    "                 [--throughput [--latency-bound MS] [--max-batch N]] [--json]\n"
    "\n"
    "Opens MODEL in a Session (CPU), runs it W times untimed and N times\n"
    "timed, and prints the latency (min/median/p90), the planned peak memory\n"
    "of intermediate tensors, where every node ran (counts per\n"
    "implementation and every fallback with its reason) and per output its\n"
    "shape, min/max/mean and first values.\n"
    "\n"
    "  MODEL                a .onnx file, a .braid file, or builtin:NAME\n"
    "  --input NAME=FILE    feed input NAME from a .npy file (repeatable);\n"
    "                       inputs not given are random: f32/f16 uniform in\n"
    "                       [-1,1), integers in [0,4), bool 0/1\n"
    "  --seed S             seed of the random inputs (default 1)\n"
    "  --batch B            extent of symbolic dimensions of random inputs\n"
    "                       (default 1)\n"
    "  --threads T          intra-op threads (default 0: all cores). On the CPU\n"
    "                       alone, runs use T threads or 1, whichever is faster\n"
    "                       now, probing the other now and then (1 wins while\n"
    "                       other processes keep the cores busy; a notice says)\n"
    "  --fixed-threads      always T threads, even under contention\n"
    "  --iterations N       timed runs (default 10)\n"
    "  --warmup W           untimed runs first (default 2; the first run plans\n"
    "                       and allocates)\n"
    "  --output-dir DIR     write each output as DIR/NAME.npy\n"
    "  --devices D,...      devices to use (also --device): cpu, vgpu (the\n"
    "                       virtual GPU: CPU kernels on their own threads and\n"
    "                       memory; a test/demo device, never a GPU figure),\n"
    "                       cuda or cuda:K. Without a usable GPU, cuda exits 2\n"
    "                       with the CUDA reason. Default cpu\n"
    "  --policy NAME        placement policy (default cpu-only; gpu-only, ...)\n"
    "  --plan PLAN.json     run this plan (braid plan --save); wins over --policy\n"
    "  --policy-file F      sparoa or temporl: a trained model from `braid train`\n"
    "  --trace FILE.json    write the last run's per-step timeline as a Chrome\n"
    "                       trace (chrome://tracing, ui.perfetto.dev)\n"
    "  --vgpu-timing T      pad vgpu kernels and copies to a timing model:\n"
    "                       none (default) or orin-like (a model, not a GPU)\n"
    "  --profile P          device profile the cost-model policies (threshold,\n"
    "                       heft, partition, optimal), --adapt and --throughput\n"
    "                       predict with (default: this host's generic CPU\n"
    "                       figures plus the vgpu's timing model); its cpu\n"
    "                       entry's sparse crossovers (braid calibrate) pick\n"
    "                       dense or sparse kernels\n"
    "  --pin-threads        keep the calling thread (CPU stream) and the devices'\n"
    "                       worker threads on separate cores (more than one\n"
    "                       device; no effect with one core)\n"
    "  --adapt              online adaptation: compare each run's measured kernel\n"
    "                       time per device with the plan's prediction and\n"
    "                       re-plan when a device drifts (printed as notices)\n"
    "  --throughput         choose the batch (1, 2, 4, ... --max-batch, default\n"
    "                       32) with the most images/s within --latency-bound MS\n"
    "                       (default none) by SIMULATING the policy's plan on the\n"
    "                       profile; with several devices also each device alone\n"
    "                       on its own batch, concurrently. Runs the choice and\n"
    "                       prints predicted and measured images/s. The model's\n"
    "                       batch dimension must be symbolic (a fixed one is\n"
    "                       said and used)\n"
    "  --json               print {\"latency_ms\":{\"min\",\"median\",\"p90\"},\n"
    "                       \"iterations\",\"threads\",\"seed\",\"peak_bytes\",\n"
    "                       \"placements\":{IMPL:COUNT},\"fallbacks\":[{\"node\",\n"
    "                       \"op\",\"implementation\",\"reason\"}],\"outputs\":[{\"name\",\n"
    "                       \"shape\",\"dtype\",\"min\",\"max\",\"mean\"}]} instead\n"
    "\n"
    "Exit status: 0 success, 1 the run failed or an output could not be\n"
    "written, 2 bad arguments, bad model or bad input.\n";

constexpr int kShownValues = 5;

struct RunFlags {
  std::string model;
  std::vector<std::pair<std::string, std::string>> inputs;  // name, file
  std::string output_dir;
  int threads = 0;
  int iterations = 10;
  int warmup = 2;
  uint64_t seed = 1;
  int64_t batch = 1;
  bool json = false;
  std::vector<std::string> devices = {"cpu"};
  std::string policy = "cpu-only";
  std::string plan;
  std::string trace;
  std::string vgpu_timing = "none";
  std::string profile;
  std::string policy_file;
  bool adapt = false;
  bool pin_threads = false;
  bool fixed_threads = false;
  bool throughput = false;
  SparseEnvironment sparse;  // BRAID_SPARSE, BRAID_SPARSE_CROSSOVER
  double latency_bound_ms = 0;  // 0 = none
  int64_t max_batch = 32;
};

StatusOr<int64_t> ParseInt(const std::string& flag, const std::string& text,
                           int64_t min_value) {
  size_t used = 0;
  int64_t v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (...) {
    used = 0;
  }
  if (used != text.size() || text.empty())
    return InvalidArgument(flag + " expects an integer, got '" + text + "'");
  if (v < min_value)
    return InvalidArgument(std::string(flag).append(" must be >= ")
                               .append(std::to_string(min_value)));
  return v;
}

StatusOr<RunFlags> ParseFlags(ArgScanner& scan) {
  RunFlags f;
  ASSIGN_OR_RETURN(f.sparse, ReadSparseEnvironment());
  f.json = scan.Flag("--json");
  f.adapt = scan.Flag("--adapt");
  f.pin_threads = scan.Flag("--pin-threads");
  f.fixed_threads = scan.Flag("--fixed-threads");
  f.throughput = scan.Flag("--throughput");
  while (true) {
    ASSIGN_OR_RETURN(std::optional<std::string> in, scan.Value("--input"));
    if (!in) break;
    const size_t eq = in->find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == in->size())
      return InvalidArgument("--input expects NAME=FILE.npy, got '" + *in + "'");
    f.inputs.emplace_back(in->substr(0, eq), in->substr(eq + 1));
  }
  for (size_t i = 0; i < f.inputs.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (f.inputs[i].first == f.inputs[j].first)
        return InvalidArgument("--input " + f.inputs[i].first + " given twice");
  for (const char* flag : {"--device", "--devices"}) {
    ASSIGN_OR_RETURN(std::optional<std::string> d, scan.Value(flag));
    if (!d) continue;
    f.devices = SplitList(*d);
  }
  for (auto [flag, target] : {std::pair{"--policy", &f.policy}, std::pair{"--plan", &f.plan},
                              std::pair{"--trace", &f.trace},
                              std::pair{"--vgpu-timing", &f.vgpu_timing},
                              std::pair{"--profile", &f.profile},
                              std::pair{"--policy-file", &f.policy_file}}) {
    ASSIGN_OR_RETURN(std::optional<std::string> v, scan.Value(flag));
    if (v) *target = *v;
  }
  auto int_flag = [&](const char* name, int64_t min_value,
                      auto& target) -> Status {
    ASSIGN_OR_RETURN(std::optional<std::string> v, scan.Value(name));
    if (!v) return Status::Ok();
    ASSIGN_OR_RETURN(int64_t parsed, ParseInt(name, *v, min_value));
    if (parsed > std::numeric_limits<int32_t>::max())
      return InvalidArgument(std::string(name).append(" is too large"));
    target = static_cast<std::remove_reference_t<decltype(target)>>(parsed);
    return Status::Ok();
  };
  RETURN_IF_ERROR(int_flag("--threads", 0, f.threads));
  RETURN_IF_ERROR(int_flag("--iterations", 1, f.iterations));
  RETURN_IF_ERROR(int_flag("--warmup", 0, f.warmup));
  RETURN_IF_ERROR(int_flag("--batch", 1, f.batch));
  RETURN_IF_ERROR(int_flag("--max-batch", 1, f.max_batch));
  {
    ASSIGN_OR_RETURN(std::optional<std::string> v, scan.Value("--latency-bound"));
    if (v) {
      char* end = nullptr;
      f.latency_bound_ms = std::strtod(v->c_str(), &end);
      if (v->empty() || *end != '\0' || !std::isfinite(f.latency_bound_ms) ||
          f.latency_bound_ms <= 0)
        return InvalidArgument("--latency-bound expects milliseconds > 0, got '" + *v + "'");
    }
  }
  if (!f.throughput && (f.latency_bound_ms > 0 || f.max_batch != 32))
    return InvalidArgument("--latency-bound and --max-batch need --throughput");
  if (!f.policy_file.empty() && PolicyFileSetting(f.policy).empty())
    return InvalidArgument("--policy-file applies to --policy sparoa or temporl only");
  {
    ASSIGN_OR_RETURN(std::optional<std::string> v, scan.Value("--seed"));
    if (v) {
      ASSIGN_OR_RETURN(int64_t s, ParseInt("--seed", *v, 0));
      f.seed = static_cast<uint64_t>(s);
    }
  }
  ASSIGN_OR_RETURN(std::optional<std::string> dir, scan.Value("--output-dir"));
  if (dir) f.output_dir = *dir;
  ASSIGN_OR_RETURN(std::vector<std::string> pos, scan.Positionals());
  if (pos.size() != 1) return InvalidArgument("expected one MODEL (see --help)");
  f.model = pos[0];
  return f;
}

std::string DimsToString(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s.append(i ? "," : "").append(std::to_string(dims[i]));
  return s + "]";
}

// An input's data: read from a .npy file or generated.
struct InputData {
  std::string name;
  std::string source;  // "FILE.npy" or "random"
  npy::Array array;
};

// Matches a .npy array against what the model expects (symbolic dims accept
// any extent).
Status CheckAgainst(const TensorInfo& info, const npy::Array& a,
                    const std::string& file) {
  if (a.dtype != info.dtype)
    return InvalidArgument(std::string(file).append(": dtype ")
                               .append(DataTypeName(a.dtype))
                               .append(", model expects ")
                               .append(info.ToString()));
  bool match = a.dims.size() == info.dims.size();
  for (size_t i = 0; match && i < a.dims.size(); ++i)
    match = info.dims[i] < 0 || info.dims[i] == a.dims[i];
  if (!match)
    return InvalidArgument(std::string(file).append(": shape ")
                               .append(DimsToString(a.dims))
                               .append(", model expects ")
                               .append(info.ToString()));
  return Status::Ok();
}

npy::Array RandomInput(const TensorInfo& info, int64_t batch,
                       std::mt19937_64& rng) {
  npy::Array a;
  a.dtype = info.dtype;
  for (int64_t d : info.dims) a.dims.push_back(d < 0 ? batch : d);
  const auto n = static_cast<size_t>(a.elements());
  a.data.resize(n * DataTypeSize(a.dtype));
  std::uniform_real_distribution<float> real(-1.0f, 1.0f);
  std::uniform_int_distribution<int> small(0, 3);
  for (size_t i = 0; i < n; ++i) {
    void* p = a.data.data() + i * DataTypeSize(a.dtype);
    switch (a.dtype) {
      case DataType::kF32: *static_cast<float*>(p) = real(rng); break;
      case DataType::kF16: *static_cast<uint16_t*>(p) = npy::FloatToHalf(real(rng)); break;
      case DataType::kI64: *static_cast<int64_t*>(p) = small(rng); break;
      case DataType::kI32: *static_cast<int32_t*>(p) = small(rng); break;
      case DataType::kI8: *static_cast<int8_t*>(p) = static_cast<int8_t>(small(rng)); break;
      case DataType::kU8: *static_cast<uint8_t*>(p) = static_cast<uint8_t>(small(rng)); break;
      case DataType::kBool: *static_cast<uint8_t*>(p) = static_cast<uint8_t>(small(rng) & 1); break;
      case DataType::kF64: *static_cast<double*>(p) = real(rng); break;
      case DataType::kBF16: *static_cast<uint16_t*>(p) = FloatToBFloat16(real(rng)); break;
      case DataType::kI16: *static_cast<int16_t*>(p) = static_cast<int16_t>(small(rng)); break;
      case DataType::kU16: *static_cast<uint16_t*>(p) = static_cast<uint16_t>(small(rng)); break;
      case DataType::kU32: *static_cast<uint32_t*>(p) = static_cast<uint32_t>(small(rng)); break;
      case DataType::kU64: *static_cast<uint64_t*>(p) = static_cast<uint64_t>(small(rng)); break;
      case DataType::kUndefined: break;
    }
  }
  return a;
}

double ElementAsDouble(const Tensor& t, int64_t i) {
  return ReadScalarAsDouble(static_cast<const std::byte*>(t.raw_data()) +
                                static_cast<size_t>(i) * DataTypeSize(t.dtype()),
                            t.dtype());
}

struct OutputSummary {
  std::string name;
  DataType dtype = DataType::kUndefined;
  std::vector<int64_t> dims;
  double min = 0, max = 0, mean = 0;  // NaN when empty
  std::vector<double> first;
};

OutputSummary Summarize(const std::string& name, const Tensor& t) {
  OutputSummary s;
  s.name = name;
  s.dtype = t.dtype();
  s.dims = t.dims();
  const int64_t n = t.elements();
  if (n == 0) {
    s.min = s.max = s.mean = std::nan("");
    return s;
  }
  s.min = std::numeric_limits<double>::infinity();
  s.max = -s.min;
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double v = ElementAsDouble(t, i);
    // NaN poisons mean (visible); min/max skip it.
    if (v < s.min) s.min = v;
    if (v > s.max) s.max = v;
    sum += v;
    if (i < kShownValues) s.first.push_back(v);
  }
  s.mean = sum / static_cast<double>(n);
  return s;
}

struct Latency {
  double min = 0, median = 0, p90 = 0;
};

Latency Summarize(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  const size_t n = ms.size();
  Latency l;
  l.min = ms.front();
  l.median = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
  // Nearest rank: the smallest value with at least 90% at or below it.
  const size_t rank = static_cast<size_t>(std::ceil(0.9 * static_cast<double>(n)));
  l.p90 = ms[std::max<size_t>(rank, 1) - 1];
  return l;
}

// A file name for an output: anything but [A-Za-z0-9._-] becomes '_'.
std::string FileNameFor(const std::string& name) {
  std::string s = name.empty() ? "output" : name;
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_')
      c = '_';
  if (s == "." || s == "..") s = "_";
  return s;
}

// "CPU", or "cpu + vgpu [virtual device; timing: none]" when more devices run.
std::string DevicesLabel(const RunFlags& f, const std::vector<NodePlacement>& placements) {
  std::set<std::string> used;
  for (const NodePlacement& p : placements) used.insert(p.device);
  if (used.size() <= 1 && (used.empty() || *used.begin() == "cpu")) return "CPU";
  std::string label;
  for (const std::string& d : used) label += (label.empty() ? "" : " + ") + d;
  if (used.count("vgpu"))
    label += " [vgpu is a virtual device; timing model: " + f.vgpu_timing + "]";
  return label;
}

void PrintText(std::ostream& out, const RunFlags& f, int threads,
               const std::vector<InputData>& inputs, const Latency& lat,
               size_t peak, const std::vector<NodePlacement>& placements,
               const std::vector<OutputSummary>& outputs,
               const std::vector<std::string>& notices) {
  const std::string devices_label = DevicesLabel(f, placements);
  out << "model: " << f.model << "\n";
  for (const InputData& in : inputs)
    out << "input: " << in.name << " " << DataTypeName(in.array.dtype)
        << DimsToString(in.array.dims) << " from " << in.source << "\n";
  out << "threads: " << threads << ", warmup " << f.warmup << ", iterations "
      << f.iterations << "\n";
  out << "latency (" << devices_label << "): min " << Format("%.3f", lat.min) << " ms, median "
      << Format("%.3f", lat.median) << " ms, p90 " << Format("%.3f", lat.p90)
      << " ms\n";
  out << "planned peak memory: " << Format("%.2f", static_cast<double>(peak) / 1e6)
      << " MB (" << peak << " bytes)\n";
  std::map<std::string, int> counts;
  for (const NodePlacement& p : placements) ++counts[p.device + "/" + p.implementation];
  out << "placements: " << placements.size() << " nodes:";
  for (const auto& [impl, n] : counts) out << " " << impl << " " << n;
  out << "\n";
  int fallbacks = 0;
  for (const NodePlacement& p : placements) {
    if (!p.fallback) continue;
    ++fallbacks;
    out << "  fallback: node '" << p.node << "' (" << p.op_type << ") -> "
        << p.implementation << ": " << p.reason << "\n";
  }
  out << "  " << fallbacks << " fallbacks\n";
  if (devices_label != "CPU") {
    // Several devices: where every node ran.
    for (const NodePlacement& p : placements) {
      out << "  node '" << p.node << "' (" << p.op_type << ") -> " << p.device
          << (p.device == "vgpu" ? " (virtual)" : "") << " " << p.implementation;
      if (!p.slice.empty()) out << " [" << p.slice << "]";
      out << "\n";
    }
  }
  for (const std::string& n : notices) out << "notice: " << n << "\n";
  out << "outputs:\n";
  for (const OutputSummary& o : outputs) {
    out << "  " << o.name << " " << DataTypeName(o.dtype) << DimsToString(o.dims)
        << "  min " << Format("%.6g", o.min) << " max " << Format("%.6g", o.max)
        << " mean " << Format("%.6g", o.mean) << "  first:";
    for (double v : o.first) out << " " << Format("%.6g", v);
    out << "\n";
  }
}

void PrintJson(std::ostream& out, const RunFlags& f, int threads,
               const Latency& lat, size_t peak,
               const std::vector<NodePlacement>& placements,
               const std::vector<OutputSummary>& outputs,
               const std::vector<std::string>& notices) {
  std::map<std::string, int> counts;
  for (const NodePlacement& p : placements) ++counts[p.implementation];
  out << "{\"model\":" << JsonString(f.model) << ",\"latency_ms\":{\"min\":"
      << JsonNumber(lat.min) << ",\"median\":" << JsonNumber(lat.median)
      << ",\"p90\":" << JsonNumber(lat.p90) << "},\"iterations\":" << f.iterations
      << ",\"warmup\":" << f.warmup << ",\"threads\":" << threads
      << ",\"batch\":" << f.batch << ",\"seed\":" << f.seed
      << ",\"peak_bytes\":" << peak << ",\"placements\":{";
  bool first = true;
  for (const auto& [impl, n] : counts) {
    out << (first ? "" : ",") << JsonString(impl) << ":" << n;
    first = false;
  }
  out << "},\"fallbacks\":[";
  first = true;
  for (const NodePlacement& p : placements) {
    if (!p.fallback) continue;
    out << (first ? "" : ",") << "{\"node\":" << JsonString(p.node)
        << ",\"op\":" << JsonString(p.op_type) << ",\"device\":"
        << JsonString(p.device) << ",\"implementation\":"
        << JsonString(p.implementation) << ",\"reason\":" << JsonString(p.reason)
        << "}";
    first = false;
  }
  out << "],\"nodes\":[";
  for (size_t i = 0; i < placements.size(); ++i) {
    const NodePlacement& p = placements[i];
    out << (i ? "," : "") << "{\"node\":" << JsonString(p.node) << ",\"op\":"
        << JsonString(p.op_type) << ",\"device\":" << JsonString(p.device)
        << ",\"virtual\":" << (p.device == "vgpu" ? "true" : "false")
        << ",\"implementation\":" << JsonString(p.implementation)
        << ",\"slice\":" << JsonString(p.slice) << "}";
  }
  out << "],\"notices\":[";
  for (size_t i = 0; i < notices.size(); ++i) out << (i ? "," : "") << JsonString(notices[i]);
  out << "],\"vgpu_timing\":" << JsonString(f.vgpu_timing);
  out << ",\"outputs\":[";
  for (size_t i = 0; i < outputs.size(); ++i) {
    const OutputSummary& o = outputs[i];
    out << (i ? "," : "") << "{\"name\":" << JsonString(o.name) << ",\"shape\":[";
    for (size_t d = 0; d < o.dims.size(); ++d) out << (d ? "," : "") << o.dims[d];
    out << "],\"dtype\":" << JsonString(DataTypeName(o.dtype))
        << ",\"min\":" << JsonNumber(o.min) << ",\"max\":" << JsonNumber(o.max)
        << ",\"mean\":" << JsonNumber(o.mean) << "}";
  }
  out << "]}\n";
}

// Throughput mode: random inputs at `batch`, `warmup` + `iterations` runs;
// the timed runs' milliseconds.
StatusOr<std::vector<double>> TimeRuns(Session& session, int64_t batch, const RunFlags& f) {
  std::mt19937_64 rng(f.seed);
  std::vector<npy::Array> arrays;
  for (const TensorInfo& info : session.inputs()) arrays.push_back(RandomInput(info, batch, rng));
  for (size_t k = 0; k < arrays.size(); ++k)
    RETURN_IF_ERROR(session.SetInput(
        session.inputs()[k].name,
        Tensor::Borrow(arrays[k].dtype, arrays[k].dims, arrays[k].data.data())));
  std::vector<double> ms;
  for (int i = 0; i < f.warmup + f.iterations; ++i) {
    const auto start = std::chrono::steady_clock::now();
    RETURN_IF_ERROR(session.Run());
    const auto stop = std::chrono::steady_clock::now();
    if (i >= f.warmup)
      ms.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
  }
  return ms;
}

SessionOptions LaneOptions(const RunFlags& f, std::vector<std::string> devices,
                           std::string policy) {
  SessionOptions o;
  o.num_threads = f.threads;
  o.devices = std::move(devices);
  o.policy = std::move(policy);
  o.vgpu_timing = f.vgpu_timing;
  o.profile = ResolveProfileName(f.profile);
  o.sparse_kernels = f.sparse.sparse;
  o.sparse_crossover = f.sparse.crossover;
  // The lanes of --throughput run their own cpu-only / gpu-only policies.
  if (o.policy == f.policy && !f.policy_file.empty())
    o.policy_settings[PolicyFileSetting(o.policy)] = f.policy_file;
  // sparoa without a profile plans on host / host-vgpu: also from
  // BRAID_PROFILE_PATH, which only the CLI reads.
  if (o.policy == "sparoa" && o.profile.empty()) {
    const bool vgpu = std::count(o.devices.begin(), o.devices.end(), "vgpu") > 0;
    o.policy_settings["sparoa.fallback_profile"] = ResolveProfileName(vgpu ? "host-vgpu" : "host");
  }
  o.adapt = f.adapt;
  o.adapt_threads = !f.fixed_threads;
  o.pin_threads = f.pin_threads;
  return o;
}

void PrintLane(std::ostream& out, const LaneChoice& lane) {
  char line[160];
  for (const BatchCandidate& c : lane.candidates) {
    if (c.latency_us < 0) {
      out << "    batch " << c.batch << ": " << c.error << "\n";
      continue;
    }
    std::snprintf(line, sizeof(line), "    batch %-5lld %10.3f ms %12.1f images/s%s%s\n",
                  static_cast<long long>(c.batch), c.latency_us / 1e3, c.images_per_s,
                  c.within_bound ? "" : "  (over the bound)", c.batch == lane.batch ? "  <-" : "");
    out << line;
  }
}

// `braid run --throughput`: choose the batch by simulation, run it, report.
int RunThroughput(const RunFlags& f, std::ostream& out, std::ostream& err) {
  auto fail = [&](const Status& s) { return ReportError(err, "run", s); };
  if (!f.inputs.empty() || !f.plan.empty() || !f.trace.empty() || !f.output_dir.empty())
    return fail(InvalidArgument(
        "--throughput runs random inputs at the chosen batch with a policy; it takes no "
        "--input, --plan, --trace or --output-dir"));
  SessionOptions options = LaneOptions(f, f.devices, f.policy);
  if (Status s = ValidateSessionOptions(options); !s.ok()) return fail(s);
  StatusOr<DeviceProfile> profile = SessionProfileFor(options);
  if (!profile.ok()) return fail(profile.status());
  StatusOr<Graph> graph = LoadGraphForExecution(f.model);
  if (!graph.ok()) return fail(graph.status());
  const CostModel model(*profile);
  PlacementContext ctx;
  ctx.devices = {"cpu"};
  for (const std::string& d : f.devices)
    if (d != "cpu") ctx.devices.push_back(d);
  ctx.cost_model = &model;
  BatchSizeOptions batch_options;
  batch_options.latency_bound_us = f.latency_bound_ms * 1e3;
  batch_options.max_batch = f.max_batch;
  // The policies with this run's settings (a trained sparoa, ...).
  PolicyRegistry policies;
  if (Status s = RegisterPolicies(policies, LaneOptions(f, f.devices, f.policy).policy_settings);
      !s.ok())
    return fail(s);
  StatusOr<ThroughputChoice> choice =
      ChooseThroughputBatches(*graph, policies, f.policy, ctx, batch_options);
  if (!choice.ok()) return fail(choice.status());
  const bool vgpu = std::count(ctx.devices.begin(), ctx.devices.end(), "vgpu") > 0;

  out << "model: " << f.model << "\n";
  if (!choice->batch_dim.symbol.empty())
    out << "batch dimension: symbol '" << choice->batch_dim.symbol << "'\n";
  else
    out << "batch dimension: fixed (" << choice->batch_dim.why << "); the batch cannot be chosen\n";
  out << "throughput mode: batch candidates SIMULATED on profile '" << profile->name << "'"
      << (f.latency_bound_ms > 0 ? ", latency bound " + Format("%.3f", f.latency_bound_ms) + " ms"
                                 : std::string(", no latency bound"))
      << (vgpu ? " (vgpu figures are a model of a virtual device, not a GPU)" : "") << "\n";
  out << "  one batch over the plan: " << choice->shared.lane << "\n";
  PrintLane(out, choice->shared);
  for (const LaneChoice& lane : choice->per_device) {
    out << "  " << lane.lane << " alone (its own batch, concurrently with the other lanes):\n";
    PrintLane(out, lane);
  }
  if (!choice->note.empty()) out << "  note: " << choice->note << "\n";

  // The lanes to run: the shared plan, or every device on its own batch.
  struct Lane {
    std::string label;
    int64_t batch = 1;
    double predicted_images_per_s = 0;
    SessionOptions options;
    std::unique_ptr<Session> session;
    std::vector<double> ms;
    Status status;
  };
  std::vector<Lane> lanes;
  if (choice->use_per_device) {
    for (size_t d = 0; d < choice->per_device.size(); ++d) {
      const LaneChoice& c = choice->per_device[d];
      Lane lane;
      lane.label = c.lane;
      lane.batch = c.batch;
      lane.predicted_images_per_s = c.images_per_s;
      lane.options = d == 0 ? LaneOptions(f, {"cpu"}, "cpu-only")
                            : LaneOptions(f, {"cpu", c.lane}, "gpu-only");
      lanes.push_back(std::move(lane));
    }
  } else {
    Lane lane;
    lane.label = choice->shared.lane;
    lane.batch = choice->shared.batch;
    lane.predicted_images_per_s = choice->shared.images_per_s;
    lane.options = options;
    lanes.push_back(std::move(lane));
  }
  out << "chosen: ";
  for (size_t i = 0; i < lanes.size(); ++i)
    out << (i ? " + " : "") << lanes[i].label << " at batch " << lanes[i].batch;
  out << " (" << Format("%.1f", choice->images_per_s) << " images/s predicted, simulated)\n";
  for (Lane& lane : lanes) {
    StatusOr<std::unique_ptr<Session>> s = Session::Open(f.model, lane.options);
    if (!s.ok()) return fail(s.status().WithPrefix(lane.label));
    lane.session = std::move(*s);
  }
  // Concurrent lanes: one thread each; the wall time covers them all.
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (Lane& lane : lanes)
    threads.emplace_back([&lane, &f] {
      StatusOr<std::vector<double>> ms = TimeRuns(*lane.session, lane.batch, f);
      if (ms.ok()) lane.ms = std::move(*ms);
      lane.status = ms.status();
    });
  for (std::thread& t : threads) t.join();
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double measured = 0;
  for (Lane& lane : lanes) {
    if (!lane.status.ok()) {
      err << "braid run: error: " << lane.label << ": " << lane.status.message() << "\n";
      return kExitFailure;
    }
    const Latency lat = Summarize(lane.ms);
    const double images_per_s = static_cast<double>(lane.batch) / (lat.median * 1e-3);
    measured += images_per_s;
    out << "measured " << lane.label << " at batch " << lane.batch << ": median "
        << Format("%.3f", lat.median) << " ms per batch, " << Format("%.1f", images_per_s)
        << " images/s (predicted " << Format("%.1f", lane.predicted_images_per_s) << ")\n";
    for (const std::string& n : lane.session->notices()) out << "notice: " << n << "\n";
  }
  out << "measured throughput: " << Format("%.1f", measured) << " images/s ("
      << f.iterations << " timed runs per lane, " << Format("%.2f", wall_s) << " s wall"
      << (vgpu ? "; vgpu runs CPU kernels padded to its timing model: a virtual figure" : "")
      << ")\n";
  return kExitOk;
}

}  // namespace

int RunRun(Args args, std::ostream& out, std::ostream& err) {
  ArgScanner scan(args);
  if (scan.Flag("--help") || scan.Flag("-h")) {
    out << kRunHelp;
    return kExitOk;
  }
  StatusOr<RunFlags> parsed = ParseFlags(scan);
  if (!parsed.ok()) return ReportError(err, "run", parsed.status());
  const RunFlags& f = *parsed;
  if (f.throughput) return RunThroughput(f, out, err);

  SessionOptions options = LaneOptions(f, f.devices, f.policy);
  options.plan_file = f.plan;
  options.trace = !f.trace.empty();
  StatusOr<std::unique_ptr<Session>> opened = Session::Open(f.model, options);
  if (!opened.ok()) return ReportError(err, "run", opened.status());
  Session& session = **opened;
  const int threads =
      f.threads > 0 ? f.threads
                    : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));

  // Inputs: every --input must name a model input; the rest are random.
  std::string expected;
  for (const TensorInfo& info : session.inputs())
    expected.append(expected.empty() ? "" : ", ").append(info.ToString());
  for (const auto& [name, file] : f.inputs) {
    const bool known = std::any_of(session.inputs().begin(), session.inputs().end(),
                                   [&](const TensorInfo& i) { return i.name == name; });
    if (!known)
      return ReportError(err, "run", InvalidArgument("--input: model has no input '" + name +
                                                     "' (inputs: " + expected + ")"));
  }
  std::mt19937_64 rng(f.seed);
  std::vector<InputData> inputs;
  for (const TensorInfo& info : session.inputs()) {
    InputData in;
    in.name = info.name;
    auto given = std::find_if(f.inputs.begin(), f.inputs.end(),
                              [&](const auto& p) { return p.first == info.name; });
    if (given != f.inputs.end()) {
      StatusOr<npy::Array> a = npy::ReadFile(given->second);
      if (!a.ok()) return ReportError(err, "run", a.status());
      if (Status s = CheckAgainst(info, *a, given->second); !s.ok())
        return ReportError(err, "run", s);
      in.array = std::move(*a);
      in.source = given->second;
    } else {
      in.array = RandomInput(info, f.batch, rng);
      in.source = "random (seed " + std::to_string(f.seed) + ")";
    }
    inputs.push_back(std::move(in));
  }
  for (InputData& in : inputs) {
    Tensor t = Tensor::Borrow(in.array.dtype, in.array.dims, in.array.data.data());
    if (Status s = session.SetInput(in.name, t); !s.ok())
      return ReportError(err, "run", s);
  }

  std::vector<double> ms;
  for (int i = 0; i < f.warmup + f.iterations; ++i) {
    const auto start = std::chrono::steady_clock::now();
    Status s = session.Run();
    const auto stop = std::chrono::steady_clock::now();
    if (!s.ok()) {
      err << "braid run: error: " << s.message() << "\n";
      return kExitFailure;
    }
    if (i >= f.warmup)
      ms.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
  }
  const Latency lat = Summarize(ms);

  std::vector<OutputSummary> outputs;
  if (!f.output_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(f.output_dir, ec);
    if (ec) {
      err << "braid run: error: " << f.output_dir << ": " << ec.message() << "\n";
      return kExitFailure;
    }
  }
  for (const TensorInfo& info : session.outputs()) {
    StatusOr<Tensor> t = session.GetOutput(info.name);
    if (!t.ok()) {
      err << "braid run: error: " << t.status().message() << "\n";
      return kExitFailure;
    }
    outputs.push_back(Summarize(info.name, *t));
    if (!f.output_dir.empty()) {
      const std::string path =
          (std::filesystem::path(f.output_dir) / (FileNameFor(info.name) + ".npy")).string();
      if (Status s = npy::WriteFile(path, t->dtype(), t->dims(), t->raw_data()); !s.ok()) {
        err << "braid run: error: " << s.message() << "\n";
        return kExitFailure;
      }
    }
  }
  const std::vector<NodePlacement> placements = session.placements();
  const size_t peak = session.planned_peak_bytes();
  if (!f.trace.empty()) {
    if (Status s = session.WriteTrace(f.trace); !s.ok()) {
      err << "braid run: error: " << s.message() << "\n";
      return kExitFailure;
    }
  }
  if (f.json) {
    PrintJson(out, f, threads, lat, peak, placements, outputs, session.notices());
  } else {
    PrintText(out, f, threads, inputs, lat, peak, placements, outputs, session.notices());
  }
  return kExitOk;
}

}  // namespace braid::cli
