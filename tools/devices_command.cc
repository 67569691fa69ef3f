// braid devices [--ops] [--json]
#include <map>
#include <ostream>
#include <set>

#include "kernels/cpu/cpu_device.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/vgpu/vgpu_device.h"
#include "tools/commands.h"

namespace braid::cli {
namespace {

constexpr char kDevicesHelp[] =
    "Usage: braid devices [--ops] [--json]\n"
    "\n"
    "Lists every device braid can use with its properties: the CPU always,\n"
    "each CUDA GPU, or 'cuda: unavailable: <reason>' when there is none\n"
    "(no driver, no device, or a build without CUDA).\n"
    "\n"
    "  --ops    also list, per op type, which devices have a kernel for it\n"
    "           (ops without a cuda kernel run on the CPU, reported as fallbacks)\n"
    "  --json   print {\"devices\":[...],\"unavailable\":[...],\"ops\":{...}}\n";

struct DeviceRow {
  std::string name;
  std::string kind;
  std::string description;
  size_t memory_bytes = 0;
  int compute_units = 0;
  std::vector<std::pair<std::string, std::string>> extra;  // key, JSON value
};

}  // namespace

int RunDevices(Args args, std::ostream& out, std::ostream& err) {
  ArgScanner scan(args);
  if (scan.Flag("--help") || scan.Flag("-h")) {
    out << kDevicesHelp;
    return kExitOk;
  }
  const bool ops = scan.Flag("--ops");
  const bool json = scan.Flag("--json");
  StatusOr<std::vector<std::string>> rest = scan.Positionals();
  if (!rest.ok()) return ReportError(err, "devices", rest.status());
  if (!rest->empty()) {
    err << "braid devices: error: unexpected argument '" << (*rest)[0] << "'\n" << kDevicesHelp;
    return kExitBadInput;
  }

  std::vector<DeviceRow> rows;
  std::vector<std::string> unavailable;
  {
    const DeviceInfo cpu = CreateCpuDevice()->info();
    rows.push_back({cpu.name, "cpu", cpu.description, cpu.memory_bytes, cpu.compute_units, {}});
  }
  StatusOr<std::vector<CudaDeviceProperties>> gpus = QueryCudaDevices();
  if (gpus.ok()) {
    for (const CudaDeviceProperties& p : *gpus) {
      DeviceRow r{"cuda:" + std::to_string(p.ordinal), "cuda", p.name + " (" + p.Summary() + ")",
                  p.total_memory, p.multiprocessors, {}};
      r.extra = {{"compute_capability", JsonString(std::to_string(p.cc_major) + "." +
                                                   std::to_string(p.cc_minor))},
                 {"integrated", p.integrated ? "true" : "false"},
                 {"unified_addressing", p.unified_addressing ? "true" : "false"},
                 {"can_map_host_memory", p.can_map_host_memory ? "true" : "false"},
                 {"clock_khz", std::to_string(p.clock_khz)},
                 {"driver_version", std::to_string(p.driver_version)},
                 {"runtime_version", std::to_string(p.runtime_version)}};
      rows.push_back(std::move(r));
    }
  } else {
    unavailable.push_back(gpus.status().message());
  }
  {
    // The virtual GPU: always there, always labelled virtual (a test / demo
    // device backed by CPU kernels; its timings are a model).
    const DeviceInfo vgpu = CreateVgpuDevice()->info();
    DeviceRow r{vgpu.name, "vgpu", vgpu.description, rows.front().memory_bytes,
                vgpu.compute_units, {{"virtual", "true"}}};
    rows.push_back(std::move(r));
  }

  // Op coverage from one registry holding every backend's registrations.
  KernelRegistry registry;
  RegisterCpuKernels(registry);  // also the reference kernels
  RegisterCudaKernels(registry);
  RegisterVgpuKernels(registry);
  std::map<std::string, std::set<std::string>> coverage;  // op -> device kinds
  for (DeviceKind kind : {DeviceKind::kCpu, DeviceKind::kCuda, DeviceKind::kVirtualGpu})
    for (const std::string& op : registry.OpTypes(kind)) coverage[op].insert(DeviceKindName(kind));

  if (json) {
    out << "{\"devices\":[";
    for (size_t i = 0; i < rows.size(); ++i) {
      const DeviceRow& r = rows[i];
      out << (i ? "," : "") << "{\"name\":" << JsonString(r.name)
          << ",\"kind\":" << JsonString(r.kind) << ",\"description\":" << JsonString(r.description)
          << ",\"memory_bytes\":" << r.memory_bytes << ",\"compute_units\":" << r.compute_units;
      for (const auto& [key, value] : r.extra) out << "," << JsonString(key) << ":" << value;
      out << "}";
    }
    out << "],\"unavailable\":[";
    for (size_t i = 0; i < unavailable.size(); ++i)
      out << (i ? "," : "") << JsonString(unavailable[i]);
    out << "],\"cuda_backend_compiled\":" << (CudaBackendCompiled() ? "true" : "false");
    if (ops) {
      out << ",\"ops\":{";
      bool first = true;
      for (const auto& [op, kinds] : coverage) {
        out << (first ? "" : ",") << JsonString(op) << ":[";
        first = false;
        bool first_kind = true;
        for (const std::string& k : kinds) {
          out << (first_kind ? "" : ",") << JsonString(k);
          first_kind = false;
        }
        out << "]";
      }
      out << "}";
    }
    out << "}\n";
    return kExitOk;
  }

  for (const DeviceRow& r : rows) {
    out << r.name << ": " << r.description << "; " << r.compute_units
        << (r.kind == "cpu" ? " cores" : r.kind == "vgpu" ? " worker thread(s) (virtual)" : " SMs")
        << ", "
        << static_cast<double>(r.memory_bytes) / (1024.0 * 1024.0 * 1024.0) << " GiB\n";
  }
  for (const std::string& reason : unavailable) out << reason << "\n";
  if (ops) {
    out << "\nop kernels per device (cuda-less ops fall back to the cpu, reported):\n";
    std::vector<std::string> not_on_cuda;
    for (const auto& [op, kinds] : coverage) {
      std::string line = "  " + op;
      line.resize(std::max<size_t>(line.size() + 1, 24), ' ');
      bool first = true;
      for (const std::string& k : kinds) {
        line += (first ? "" : ", ") + k;
        first = false;
      }
      out << line << "\n";
      if (!kinds.count("cuda")) not_on_cuda.push_back(op);
    }
    out << "not on cuda (" << not_on_cuda.size() << "):";
    for (const std::string& op : not_on_cuda) out << " " << op;
    out << "\n";
  }
  return kExitOk;
}

}  // namespace braid::cli
