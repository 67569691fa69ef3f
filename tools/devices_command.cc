// braid devices [--ops] [--json]
#include <cstdint>
#include <map>
#include <ostream>
#include <set>

#include "kernels/backend_registry.h"
#include "kernels/cuda/cuda_backend.h"
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
    "           and, after a device, the precisions its kernels compute in\n"
    "           when more than f32 (\"cpu (f32, bf16)\": braid convert --precision)\n"
    "  --json   print {\"devices\":[...],\"unavailable\":[...],\"ops\":{...},\n"
    "           \"precisions\":{\"bf16\":{OP:[devices]}}}\n";

struct DeviceRow {
  std::string name;
  std::string kind;
  std::string description;
  size_t memory_bytes = 0;
  int compute_units = 0;
  std::vector<std::pair<std::string, std::string>> extra;  // key, JSON value
  std::string units;  // Backend::compute_units_label
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

  // Every backend's devices, in the registry's order; op coverage from one
  // registry holding every backend's registrations.
  const BackendRegistry backends = BuiltinBackends();
  std::vector<DeviceRow> rows;
  std::vector<std::string> unavailable;
  KernelRegistry registry;
  std::map<std::string, std::set<std::string>> coverage;  // op -> backends
  // op -> backend -> the PrecisionBits any of its kernels computes in
  std::map<std::string, std::map<std::string, uint32_t>> precisions;
  for (const Backend* b : backends.backends()) {
    StatusOr<std::vector<DeviceListing>> listed = std::vector<DeviceListing>{};
    if (b->list) {
      listed = b->list();
    } else if (StatusOr<OpenedDevice> d = b->open({}); d.ok()) {
      listed->push_back({d->device->info(), {}});
    } else {
      listed = d.status();
    }
    if (!listed.ok()) unavailable.push_back(listed.status().message());
    for (const DeviceListing& l : listed.ok() ? *listed : std::vector<DeviceListing>{})
      rows.push_back({l.info.name, b->name, l.info.description, l.info.memory_bytes,
                      l.info.compute_units, l.extra, b->compute_units_label});
    b->register_kernels(registry, {});
    for (const std::string& op : registry.OpTypes(b->kind)) {
      coverage[op].insert(b->name);
      for (const KernelEntry* e : registry.Candidates(op, b->kind))
        precisions[op][b->name] |= e->precisions;
    }
  }
  constexpr ComputePrecision kReduced[] = {ComputePrecision::kBF16};
  // "cpu" or "cpu (f32, bf16)": the precisions, when more than f32.
  auto with_precisions = [&](const std::string& op, const std::string& backend) {
    const uint32_t bits = precisions[op][backend];
    if (bits == PrecisionBit(ComputePrecision::kF32)) return backend;
    std::string names;
    for (ComputePrecision p : {ComputePrecision::kF32, ComputePrecision::kBF16})
      if (bits & PrecisionBit(p))
        names += std::string(names.empty() ? "" : ", ") + ComputePrecisionName(p);
    return backend + " (" + names + ")";
  };

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
      out << "},\"precisions\":{";
      bool first_precision = true;
      for (ComputePrecision p : kReduced) {
        out << (first_precision ? "" : ",") << JsonString(ComputePrecisionName(p)) << ":{";
        first_precision = false;
        bool first_op = true;
        for (const auto& [op, by_backend] : precisions) {
          std::vector<std::string> backends_with;
          for (const auto& [backend, bits] : by_backend)
            if (bits & PrecisionBit(p)) backends_with.push_back(backend);
          if (backends_with.empty()) continue;
          out << (first_op ? "" : ",") << JsonString(op) << ":[";
          first_op = false;
          for (size_t i = 0; i < backends_with.size(); ++i)
            out << (i ? "," : "") << JsonString(backends_with[i]);
          out << "]";
        }
        out << "}";
      }
      out << "}";
    }
    out << "}\n";
    return kExitOk;
  }

  for (const DeviceRow& r : rows) {
    out << r.name << ": " << r.description << "; " << r.compute_units
        << " " << r.units << ", "
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
        line += (first ? "" : ", ") + with_precisions(op, k);
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
