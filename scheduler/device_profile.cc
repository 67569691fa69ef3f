#include "scheduler/device_profile.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <span>
#include <sstream>
#include <thread>

#include "graph/json.h"

namespace braid {

// The profile format's device kinds: the host CPU, a GPU, and a virtual
// device padded to exactly its profile's roofline (kernels/vgpu).
constexpr DeviceKindTraits kDeviceKinds[] = {
    {.kind = "cpu", .host = true, .input_sparse_kernels = true},
    {.kind = "gpu"},
    {.kind = "vgpu", .exact_roofline = true},  // check_layers: profile data
};

const DeviceKindTraits* FindDeviceKindTraits(std::string_view kind) {
  for (const DeviceKindTraits& k : kDeviceKinds)
    if (k.kind == kind) return &k;
  return nullptr;
}

const OpClassEfficiency* DeviceSpec::Efficiency(std::string_view op_class) const {
  for (const OpClassEfficiency& e : efficiency)
    if (e.op_class == op_class) return &e;
  return nullptr;
}

const OpTypeFactor* DeviceSpec::OpType(std::string_view op_type) const {
  for (const OpTypeFactor& f : op_types)
    if (f.op_type == op_type) return &f;
  return nullptr;
}

const SparseKernelSpeed* DeviceSpec::Sparse(std::string_view sparse_class) const {
  for (const SparseKernelSpeed& s : sparse)
    if (s.op_class == sparse_class) return &s;
  return nullptr;
}

const DeviceSpec* DeviceProfile::Find(std::string_view device) const {
  for (const DeviceSpec& d : devices)
    if (d.name == device) return &d;
  return nullptr;
}

DeviceSpec* DeviceProfile::Find(std::string_view device) {
  for (DeviceSpec& d : devices)
    if (d.name == device) return &d;
  return nullptr;
}

const LinkSpec* DeviceProfile::FindLink(std::string_view from, std::string_view to) const {
  for (const LinkSpec& l : links)
    if (l.from == from && l.to == to) return &l;
  return nullptr;
}

namespace {

bool Finite(double v) { return std::isfinite(v); }

Status CheckPositive(double v, const std::string& what) {
  if (!Finite(v) || v <= 0) return InvalidArgument(what + " must be > 0, got " + JsonNumber(v));
  return Status::Ok();
}
Status CheckNonNegative(double v, const std::string& what) {
  if (!Finite(v) || v < 0) return InvalidArgument(what + " must be >= 0, got " + JsonNumber(v));
  return Status::Ok();
}

}  // namespace

Status ValidateDeviceProfile(const DeviceProfile& profile) {
  if (profile.name.empty()) return InvalidArgument("profile has no \"name\"");
  if (profile.devices.empty()) return InvalidArgument("profile lists no devices");
  RETURN_IF_ERROR(CheckNonNegative(profile.static_power_w, "static_power_w"));
  std::set<std::string> names;
  for (size_t i = 0; i < profile.devices.size(); ++i) {
    const DeviceSpec& d = profile.devices[i];
    const std::string where = "device " + std::to_string(i) + " ('" + d.name + "'): ";
    if (d.name.empty()) return InvalidArgument("device " + std::to_string(i) + " has no name");
    if (!names.insert(d.name).second) return InvalidArgument(where + "listed twice");
    const DeviceKindTraits* kind = FindDeviceKindTraits(d.kind);
    if (kind == nullptr) {
      std::string known;
      for (size_t k = 0; k < std::size(kDeviceKinds); ++k)
        known += (k == 0 ? "" : k + 1 == std::size(kDeviceKinds) ? " or " : ", ") +
                 std::string(kDeviceKinds[k].kind);
      return InvalidArgument(where + "kind '" + d.kind + "' (expected " + known + ")");
    }
    if (i == 0 && !kind->host)
      return InvalidArgument(where + "the first device must be the host cpu");
    if (d.compute_units < 1) return InvalidArgument(where + "compute_units must be >= 1");
    if (d.concurrent_kernels < 1) return InvalidArgument(where + "concurrent_kernels must be >= 1");
    RETURN_IF_ERROR(CheckPositive(d.peak_gflops, where + "peak_gflops"));
    RETURN_IF_ERROR(CheckPositive(d.memory_bandwidth_gbps, where + "memory_bandwidth_gbps"));
    RETURN_IF_ERROR(CheckNonNegative(d.clock_ghz, where + "clock_ghz"));
    RETURN_IF_ERROR(CheckNonNegative(d.launch_overhead_us, where + "launch_overhead_us"));
    RETURN_IF_ERROR(CheckNonNegative(d.sync_us, where + "sync_us"));
    if (!(d.resume_factor >= 1) || !Finite(d.resume_factor))
      return InvalidArgument(where + "resume_factor must be >= 1");
    RETURN_IF_ERROR(CheckNonNegative(d.copied_read_gbps, where + "copied_read_gbps"));
    RETURN_IF_ERROR(
        CheckNonNegative(d.copied_window_read_gbps, where + "copied_window_read_gbps"));
    RETURN_IF_ERROR(CheckNonNegative(d.copied_depthwise_read_gbps,
                                     where + "copied_depthwise_read_gbps"));
    RETURN_IF_ERROR(CheckNonNegative(d.reclaim_gbps, where + "reclaim_gbps"));
    RETURN_IF_ERROR(CheckNonNegative(d.active_power_w, where + "active_power_w"));
    RETURN_IF_ERROR(CheckNonNegative(d.idle_power_w, where + "idle_power_w"));
    std::set<std::string> classes;
    for (const OpClassEfficiency& e : d.efficiency) {
      const std::string ew = where + "efficiency '" + e.op_class + "': ";
      if (e.op_class.empty()) return InvalidArgument(where + "efficiency entry without op_class");
      if (!classes.insert(e.op_class).second) return InvalidArgument(ew + "listed twice");
      RETURN_IF_ERROR(CheckPositive(e.compute, ew + "compute"));
      RETURN_IF_ERROR(CheckPositive(e.memory, ew + "memory"));
      if (!Finite(e.cache_memory)) return InvalidArgument(ew + "cache_memory is not finite");
      if (!Finite(e.overhead_us)) return InvalidArgument(ew + "overhead_us is not finite");
    }
    RETURN_IF_ERROR(CheckNonNegative(d.cache_bytes, where + "cache_bytes"));
    RETURN_IF_ERROR(CheckNonNegative(d.cache_bandwidth_gbps, where + "cache_bandwidth_gbps"));
    RETURN_IF_ERROR(CheckNonNegative(d.llc_bytes, where + "llc_bytes"));
    RETURN_IF_ERROR(CheckNonNegative(d.dram_bandwidth_gbps, where + "dram_bandwidth_gbps"));
    if (d.llc_bytes > 0 && d.llc_bytes < d.cache_bytes)
      return InvalidArgument(where +
                             "llc_bytes (the last-level cache) is smaller than cache_bytes");
    if (!d.floor_device.empty() && d.floor_device == d.name)
      return InvalidArgument(where + "floor_device names the device itself");
    std::set<std::string> types;
    for (const OpTypeFactor& f : d.op_types) {
      if (f.op_type.empty()) return InvalidArgument(where + "op_types entry without op_type");
      if (!types.insert(f.op_type).second)
        return InvalidArgument(where + "op_types '" + f.op_type + "' listed twice");
      RETURN_IF_ERROR(CheckPositive(f.factor, where + "op_types '" + f.op_type + "': factor"));
    }
    std::set<std::string> sparse_classes;
    for (const SparseKernelSpeed& sp : d.sparse) {
      const std::string sw = where + "sparse '" + sp.op_class + "': ";
      if (sp.op_class != "conv1x1" && sp.op_class != "conv3x3" && sp.op_class != "gemm")
        return InvalidArgument(sw + "op_class must be conv1x1, conv3x3 or gemm");
      if (!sparse_classes.insert(sp.op_class).second) return InvalidArgument(sw + "listed twice");
      if (!Finite(sp.crossover) || sp.crossover < 0 || sp.crossover > 1)
        return InvalidArgument(sw + "crossover must lie in [0, 1], got " + JsonNumber(sp.crossover));
      RETURN_IF_ERROR(CheckNonNegative(sp.fixed, sw + "fixed"));
      RETURN_IF_ERROR(CheckNonNegative(sp.per_density, sw + "per_density"));
    }
  }
  for (const DeviceSpec& d : profile.devices)
    if (!d.floor_device.empty() && !names.count(d.floor_device))
      return InvalidArgument("device '" + d.name + "': floor_device '" + d.floor_device +
                             "' is not in the profile");
  for (size_t i = 0; i < profile.links.size(); ++i) {
    const LinkSpec& l = profile.links[i];
    const std::string where = "link " + std::to_string(i) + " (" + l.from + " -> " + l.to + "): ";
    if (!names.count(l.from) || !names.count(l.to))
      return InvalidArgument(where + "names a device the profile does not list");
    if (l.from == l.to) return InvalidArgument(where + "a link needs two devices");
    RETURN_IF_ERROR(CheckNonNegative(l.latency_us, where + "latency_us"));
    if (!l.mapped) RETURN_IF_ERROR(CheckPositive(l.bandwidth_gbps, where + "bandwidth_gbps"));
    if (l.copy_engines < 1) return InvalidArgument(where + "copy_engines must be >= 1");
    for (size_t j = 0; j < i; ++j)
      if (profile.links[j].from == l.from && profile.links[j].to == l.to)
        return InvalidArgument(where + "listed twice");
  }
  return Status::Ok();
}

namespace {

// Reads an object's members strictly: each known key once, unknown keys are
// errors naming the key and the keys allowed.
class ObjectReader {
 public:
  ObjectReader(const JsonValue& v, std::string where) : v_(v), where_(std::move(where)) {}

  Status CheckKeys(std::initializer_list<std::string_view> allowed) const {
    if (!v_.is_object()) return InvalidArgument(where_ + " is not an object");
    for (const auto& [key, value] : v_.object()) {
      if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
      std::string list;
      for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      return InvalidArgument(where_ + ": unknown key \"" + key + "\" (allowed: " + list + ")");
    }
    return Status::Ok();
  }
  StatusOr<double> Number(std::string_view key, double fallback, bool required = false) const {
    if (required && v_.Find(key) == nullptr)
      return InvalidArgument(where_ + ": missing \"" + std::string(key) + "\"");
    StatusOr<double> v = v_.GetNumber(key, fallback);
    if (!v.ok()) return v.status().WithPrefix(where_);
    return v;
  }
  StatusOr<int> Int(std::string_view key, int fallback) const {
    ASSIGN_OR_RETURN(double v, Number(key, fallback));
    if (v != std::floor(v) || v < -1e6 || v > 1e6)
      return InvalidArgument(where_ + ": \"" + std::string(key) + "\" must be an integer");
    return static_cast<int>(v);
  }
  StatusOr<std::string> String(std::string_view key, bool required = false) const {
    if (required && v_.Find(key) == nullptr)
      return InvalidArgument(where_ + ": missing \"" + std::string(key) + "\"");
    StatusOr<std::string> v = v_.GetString(key, "");
    if (!v.ok()) return v.status().WithPrefix(where_);
    return v;
  }
  StatusOr<bool> Bool(std::string_view key, bool fallback) const {
    StatusOr<bool> v = v_.GetBool(key, fallback);
    if (!v.ok()) return v.status().WithPrefix(where_);
    return v;
  }
  // "sources": {"field": "text"}; every field must be one of `fields`.
  StatusOr<std::map<std::string, std::string>> Sources(
      std::span<const std::string_view> fields) const {
    std::map<std::string, std::string> out;
    const JsonValue* s = v_.Find("sources");
    if (s == nullptr) return out;
    if (!s->is_object()) return InvalidArgument(where_ + ": \"sources\" is not an object");
    for (const auto& [key, value] : s->object()) {
      if (std::find(fields.begin(), fields.end(), key) == fields.end())
        return InvalidArgument(where_ + ": \"sources\" names \"" + key +
                               "\", which is not a field here");
      if (!value.is_string())
        return InvalidArgument(where_ + ": source of \"" + key + "\" is not a string");
      out[key] = value.string();
    }
    return out;
  }
  const JsonValue* Array(std::string_view key) const { return v_.Find(key); }
  const std::string& where() const { return where_; }

 private:
  const JsonValue& v_;
  std::string where_;
};

constexpr std::string_view kDeviceNumberFields[] = {
    "compute_units",   "clock_ghz",      "peak_gflops",   "memory_bandwidth_gbps",
    "launch_overhead_us", "active_power_w", "idle_power_w", "concurrent_kernels",
    "efficiency", "cache_bytes", "cache_bandwidth_gbps", "llc_bytes", "dram_bandwidth_gbps",
    "floor_device", "op_types", "sparse", "sync_us", "resume_factor", "copied_read_gbps",
    "copied_window_read_gbps", "copied_depthwise_read_gbps", "reclaim_gbps"};
constexpr std::string_view kLinkNumberFields[] = {
    "latency_us", "bandwidth_gbps", "mapped", "copy_engines"};
constexpr std::string_view kProfileNumberFields[] = {"static_power_w", "power_mode"};

StatusOr<DeviceSpec> DeviceFromJson(const JsonValue& v, const std::string& where) {
  ObjectReader r(v, where);
  RETURN_IF_ERROR(r.CheckKeys({"name", "kind", "description", "compute_units", "clock_ghz",
                               "peak_gflops", "memory_bandwidth_gbps", "launch_overhead_us",
                               "active_power_w", "idle_power_w", "concurrent_kernels",
                               "efficiency", "sources", "cache_bytes", "cache_bandwidth_gbps",
                               "llc_bytes", "dram_bandwidth_gbps", "floor_device", "op_types",
                               "sparse", "sync_us", "resume_factor", "copied_read_gbps",
                               "copied_window_read_gbps", "copied_depthwise_read_gbps",
                               "reclaim_gbps"}));
  DeviceSpec d;
  ASSIGN_OR_RETURN(d.name, r.String("name", true));
  ASSIGN_OR_RETURN(d.kind, r.String("kind", true));
  ASSIGN_OR_RETURN(d.description, r.String("description"));
  ASSIGN_OR_RETURN(d.compute_units, r.Int("compute_units", 1));
  ASSIGN_OR_RETURN(d.clock_ghz, r.Number("clock_ghz", 0));
  ASSIGN_OR_RETURN(d.peak_gflops, r.Number("peak_gflops", 0, true));
  ASSIGN_OR_RETURN(d.memory_bandwidth_gbps, r.Number("memory_bandwidth_gbps", 0, true));
  ASSIGN_OR_RETURN(d.launch_overhead_us, r.Number("launch_overhead_us", 0));
  ASSIGN_OR_RETURN(d.active_power_w, r.Number("active_power_w", 0));
  ASSIGN_OR_RETURN(d.idle_power_w, r.Number("idle_power_w", 0));
  ASSIGN_OR_RETURN(d.concurrent_kernels, r.Int("concurrent_kernels", 1));
  ASSIGN_OR_RETURN(d.sources, r.Sources(kDeviceNumberFields));
  // Optional fields (profiles written before they existed still load).
  ASSIGN_OR_RETURN(d.cache_bytes, r.Number("cache_bytes", 0));
  ASSIGN_OR_RETURN(d.cache_bandwidth_gbps, r.Number("cache_bandwidth_gbps", 0));
  ASSIGN_OR_RETURN(d.llc_bytes, r.Number("llc_bytes", 0));
  ASSIGN_OR_RETURN(d.dram_bandwidth_gbps, r.Number("dram_bandwidth_gbps", 0));
  ASSIGN_OR_RETURN(d.floor_device, r.String("floor_device"));
  ASSIGN_OR_RETURN(d.sync_us, r.Number("sync_us", 0));
  ASSIGN_OR_RETURN(d.resume_factor, r.Number("resume_factor", 1));
  ASSIGN_OR_RETURN(d.copied_read_gbps, r.Number("copied_read_gbps", 0));
  ASSIGN_OR_RETURN(d.copied_window_read_gbps, r.Number("copied_window_read_gbps", 0));
  ASSIGN_OR_RETURN(d.copied_depthwise_read_gbps, r.Number("copied_depthwise_read_gbps", 0));
  ASSIGN_OR_RETURN(d.reclaim_gbps, r.Number("reclaim_gbps", 0));
  if (const JsonValue* types = r.Array("op_types"); types != nullptr) {
    if (!types->is_array()) return InvalidArgument(where + ": \"op_types\" is not an array");
    for (size_t i = 0; i < types->array().size(); ++i) {
      ObjectReader e(types->array()[i], where + " op_types[" + std::to_string(i) + "]");
      RETURN_IF_ERROR(e.CheckKeys({"op_type", "factor", "samples"}));
      OpTypeFactor f;
      ASSIGN_OR_RETURN(f.op_type, e.String("op_type", true));
      ASSIGN_OR_RETURN(f.factor, e.Number("factor", 0, true));
      ASSIGN_OR_RETURN(f.samples, e.Int("samples", 0));
      d.op_types.push_back(std::move(f));
    }
  }
  if (const JsonValue* sparse = r.Array("sparse"); sparse != nullptr) {
    if (!sparse->is_array()) return InvalidArgument(where + ": \"sparse\" is not an array");
    for (size_t i = 0; i < sparse->array().size(); ++i) {
      ObjectReader e(sparse->array()[i], where + " sparse[" + std::to_string(i) + "]");
      RETURN_IF_ERROR(e.CheckKeys({"op_class", "crossover", "fixed", "per_density", "samples"}));
      SparseKernelSpeed sp;
      ASSIGN_OR_RETURN(sp.op_class, e.String("op_class", true));
      ASSIGN_OR_RETURN(sp.crossover, e.Number("crossover", 0, true));
      ASSIGN_OR_RETURN(sp.fixed, e.Number("fixed", 1));
      ASSIGN_OR_RETURN(sp.per_density, e.Number("per_density", 0));
      ASSIGN_OR_RETURN(sp.samples, e.Int("samples", 0));
      d.sparse.push_back(std::move(sp));
    }
  }
  if (const JsonValue* eff = r.Array("efficiency"); eff != nullptr) {
    if (!eff->is_array()) return InvalidArgument(where + ": \"efficiency\" is not an array");
    for (size_t i = 0; i < eff->array().size(); ++i) {
      ObjectReader e(eff->array()[i], where + " efficiency[" + std::to_string(i) + "]");
      RETURN_IF_ERROR(e.CheckKeys(
          {"op_class", "compute", "memory", "cache_memory", "overhead_us", "samples"}));
      OpClassEfficiency c;
      ASSIGN_OR_RETURN(c.op_class, e.String("op_class", true));
      ASSIGN_OR_RETURN(c.compute, e.Number("compute", 1));
      ASSIGN_OR_RETURN(c.memory, e.Number("memory", 1));
      ASSIGN_OR_RETURN(c.cache_memory, e.Number("cache_memory", -1));
      ASSIGN_OR_RETURN(c.overhead_us, e.Number("overhead_us", -1));
      ASSIGN_OR_RETURN(c.samples, e.Int("samples", 0));
      d.efficiency.push_back(std::move(c));
    }
  }
  return d;
}

StatusOr<LinkSpec> LinkFromJson(const JsonValue& v, const std::string& where) {
  ObjectReader r(v, where);
  RETURN_IF_ERROR(r.CheckKeys(
      {"from", "to", "latency_us", "bandwidth_gbps", "mapped", "copy_engines", "sources"}));
  LinkSpec l;
  ASSIGN_OR_RETURN(l.from, r.String("from", true));
  ASSIGN_OR_RETURN(l.to, r.String("to", true));
  ASSIGN_OR_RETURN(l.latency_us, r.Number("latency_us", 0));
  ASSIGN_OR_RETURN(l.bandwidth_gbps, r.Number("bandwidth_gbps", 0));
  ASSIGN_OR_RETURN(l.mapped, r.Bool("mapped", false));
  ASSIGN_OR_RETURN(l.copy_engines, r.Int("copy_engines", 1));
  ASSIGN_OR_RETURN(l.sources, r.Sources(kLinkNumberFields));
  return l;
}

void WriteSources(std::ostream& out, const std::map<std::string, std::string>& sources,
                  const char* indent) {
  if (sources.empty()) return;
  out << ",\n" << indent << "\"sources\": {";
  bool first = true;
  for (const auto& [k, v] : sources) {
    out << (first ? "\n" : ",\n") << indent << "  " << JsonString(k) << ": " << JsonString(v);
    first = false;
  }
  out << "\n" << indent << "}";
}

}  // namespace

StatusOr<DeviceProfile> DeviceProfileFromJson(std::string_view json, std::string_view where) {
  const std::string w(where);
  StatusOr<JsonValue> doc = ParseJson(json);
  if (!doc.ok()) return doc.status().WithPrefix(w);
  ObjectReader r(*doc, w);
  RETURN_IF_ERROR(r.CheckKeys({"name", "description", "origin", "power_mode", "static_power_w",
                               "devices", "links", "sources"}));
  DeviceProfile p;
  ASSIGN_OR_RETURN(p.name, r.String("name", true));
  ASSIGN_OR_RETURN(p.description, r.String("description"));
  ASSIGN_OR_RETURN(p.origin, r.String("origin"));
  ASSIGN_OR_RETURN(p.power_mode, r.String("power_mode"));
  ASSIGN_OR_RETURN(p.static_power_w, r.Number("static_power_w", 0));
  ASSIGN_OR_RETURN(p.sources, r.Sources(kProfileNumberFields));
  const JsonValue* devices = r.Array("devices");
  if (devices == nullptr || !devices->is_array())
    return InvalidArgument(w + ": missing \"devices\" array");
  for (size_t i = 0; i < devices->array().size(); ++i) {
    ASSIGN_OR_RETURN(DeviceSpec d,
                     DeviceFromJson(devices->array()[i], w + ": devices[" + std::to_string(i) + "]"));
    p.devices.push_back(std::move(d));
  }
  if (const JsonValue* links = r.Array("links"); links != nullptr) {
    if (!links->is_array()) return InvalidArgument(w + ": \"links\" is not an array");
    for (size_t i = 0; i < links->array().size(); ++i) {
      ASSIGN_OR_RETURN(LinkSpec l,
                       LinkFromJson(links->array()[i], w + ": links[" + std::to_string(i) + "]"));
      p.links.push_back(std::move(l));
    }
  }
  Status valid = ValidateDeviceProfile(p);
  if (!valid.ok()) return valid.WithPrefix(w);
  return p;
}

std::string DeviceProfileToJson(const DeviceProfile& p) {
  std::ostringstream out;
  out << "{\n  \"name\": " << JsonString(p.name);
  if (!p.description.empty()) out << ",\n  \"description\": " << JsonString(p.description);
  if (!p.origin.empty()) out << ",\n  \"origin\": " << JsonString(p.origin);
  if (!p.power_mode.empty()) out << ",\n  \"power_mode\": " << JsonString(p.power_mode);
  out << ",\n  \"static_power_w\": " << JsonNumber(p.static_power_w);
  WriteSources(out, p.sources, "  ");
  out << ",\n  \"devices\": [";
  for (size_t i = 0; i < p.devices.size(); ++i) {
    const DeviceSpec& d = p.devices[i];
    const char* in = "      ";
    out << (i ? ",\n" : "\n") << "    {\n" << in << "\"name\": " << JsonString(d.name)
        << ",\n" << in << "\"kind\": " << JsonString(d.kind);
    if (!d.description.empty()) out << ",\n" << in << "\"description\": " << JsonString(d.description);
    out << ",\n" << in << "\"compute_units\": " << d.compute_units
        << ",\n" << in << "\"clock_ghz\": " << JsonNumber(d.clock_ghz)
        << ",\n" << in << "\"peak_gflops\": " << JsonNumber(d.peak_gflops)
        << ",\n" << in << "\"memory_bandwidth_gbps\": " << JsonNumber(d.memory_bandwidth_gbps)
        << ",\n" << in << "\"launch_overhead_us\": " << JsonNumber(d.launch_overhead_us)
        << ",\n" << in << "\"active_power_w\": " << JsonNumber(d.active_power_w)
        << ",\n" << in << "\"idle_power_w\": " << JsonNumber(d.idle_power_w)
        << ",\n" << in << "\"concurrent_kernels\": " << d.concurrent_kernels;
    if (d.cache_bytes > 0 || d.cache_bandwidth_gbps > 0)
      out << ",\n" << in << "\"cache_bytes\": " << JsonNumber(d.cache_bytes)
          << ",\n" << in << "\"cache_bandwidth_gbps\": " << JsonNumber(d.cache_bandwidth_gbps);
    if (d.llc_bytes > 0 || d.dram_bandwidth_gbps > 0)
      out << ",\n" << in << "\"llc_bytes\": " << JsonNumber(d.llc_bytes)
          << ",\n" << in << "\"dram_bandwidth_gbps\": " << JsonNumber(d.dram_bandwidth_gbps);
    if (!d.floor_device.empty())
      out << ",\n" << in << "\"floor_device\": " << JsonString(d.floor_device);
    if (d.sync_us > 0) out << ",\n" << in << "\"sync_us\": " << JsonNumber(d.sync_us);
    if (d.resume_factor != 1)
      out << ",\n" << in << "\"resume_factor\": " << JsonNumber(d.resume_factor);
    if (d.copied_read_gbps > 0)
      out << ",\n" << in << "\"copied_read_gbps\": " << JsonNumber(d.copied_read_gbps);
    if (d.copied_window_read_gbps > 0)
      out << ",\n" << in << "\"copied_window_read_gbps\": "
          << JsonNumber(d.copied_window_read_gbps);
    if (d.copied_depthwise_read_gbps > 0)
      out << ",\n" << in << "\"copied_depthwise_read_gbps\": "
          << JsonNumber(d.copied_depthwise_read_gbps);
    if (d.reclaim_gbps > 0)
      out << ",\n" << in << "\"reclaim_gbps\": " << JsonNumber(d.reclaim_gbps);
    if (!d.efficiency.empty()) {
      out << ",\n" << in << "\"efficiency\": [";
      for (size_t k = 0; k < d.efficiency.size(); ++k) {
        const OpClassEfficiency& e = d.efficiency[k];
        out << (k ? ",\n" : "\n") << in << "  {\"op_class\": " << JsonString(e.op_class)
            << ", \"compute\": " << JsonNumber(e.compute) << ", \"memory\": " << JsonNumber(e.memory);
        if (e.cache_memory > 0) out << ", \"cache_memory\": " << JsonNumber(e.cache_memory);
        out << ", \"overhead_us\": " << JsonNumber(e.overhead_us) << ", \"samples\": " << e.samples
            << "}";
      }
      out << "\n" << in << "]";
    }
    if (!d.op_types.empty()) {
      out << ",\n" << in << "\"op_types\": [";
      for (size_t k = 0; k < d.op_types.size(); ++k) {
        const OpTypeFactor& f = d.op_types[k];
        out << (k ? ",\n" : "\n") << in << "  {\"op_type\": " << JsonString(f.op_type)
            << ", \"factor\": " << JsonNumber(f.factor) << ", \"samples\": " << f.samples << "}";
      }
      out << "\n" << in << "]";
    }
    if (!d.sparse.empty()) {
      out << ",\n" << in << "\"sparse\": [";
      for (size_t k = 0; k < d.sparse.size(); ++k) {
        const SparseKernelSpeed& sp = d.sparse[k];
        out << (k ? ",\n" : "\n") << in << "  {\"op_class\": " << JsonString(sp.op_class)
            << ", \"crossover\": " << JsonNumber(sp.crossover)
            << ", \"fixed\": " << JsonNumber(sp.fixed)
            << ", \"per_density\": " << JsonNumber(sp.per_density)
            << ", \"samples\": " << sp.samples << "}";
      }
      out << "\n" << in << "]";
    }
    WriteSources(out, d.sources, in);
    out << "\n    }";
  }
  out << "\n  ],\n  \"links\": [";
  for (size_t i = 0; i < p.links.size(); ++i) {
    const LinkSpec& l = p.links[i];
    out << (i ? ",\n" : "\n") << "    {\"from\": " << JsonString(l.from)
        << ", \"to\": " << JsonString(l.to) << ", \"latency_us\": " << JsonNumber(l.latency_us)
        << ", \"bandwidth_gbps\": " << JsonNumber(l.bandwidth_gbps)
        << ", \"mapped\": " << (l.mapped ? "true" : "false")
        << ", \"copy_engines\": " << l.copy_engines;
    WriteSources(out, l.sources, "      ");
    out << "}";
  }
  out << (p.links.empty() ? "]" : "\n  ]") << "\n}\n";
  return out.str();
}

DeviceProfile BuiltinHostProfile() {
  DeviceProfile p;
  p.name = "host";
  p.description = "this machine, generic estimates (run `braid calibrate` for measured figures)";
  p.origin = "builtin";
  DeviceSpec cpu;
  cpu.name = "cpu";
  cpu.kind = "cpu";
  cpu.description = "host CPU";
  cpu.compute_units = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  // A modest per-core FP32 rate (one 256-bit FMA pipe at ~2.5 GHz, half of it
  // reached) and a laptop-class DRAM bandwidth: estimates, not measurements.
  cpu.clock_ghz = 2.5;
  cpu.peak_gflops = 20.0 * cpu.compute_units;
  cpu.memory_bandwidth_gbps = 20;
  cpu.launch_overhead_us = 2;
  cpu.active_power_w = 5.0 * cpu.compute_units;
  cpu.idle_power_w = 2;
  const std::string estimate = "estimate: generic host figure (braid built-in), not measured";
  for (const char* f : {"clock_ghz", "peak_gflops", "memory_bandwidth_gbps", "launch_overhead_us",
                        "active_power_w", "idle_power_w"})
    cpu.sources[f] = estimate;
  cpu.sources["compute_units"] = "std::thread::hardware_concurrency() on this host";
  p.devices.push_back(std::move(cpu));
  return p;
}

std::vector<std::string> DeviceProfileSearchPath() {
  std::vector<std::string> candidates;
#ifdef BRAID_SOURCE_PROFILES_DIR
  candidates.push_back(BRAID_SOURCE_PROFILES_DIR);
#endif
#ifdef BRAID_INSTALL_PROFILES_DIR
  candidates.push_back(BRAID_INSTALL_PROFILES_DIR);
#endif
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) candidates.push_back((exe.parent_path().parent_path() / "share/braid/profiles").string());
  std::vector<std::string> dirs;
  for (const std::string& c : candidates) {
    if (!std::filesystem::is_directory(c, ec)) continue;
    if (std::find(dirs.begin(), dirs.end(), c) == dirs.end()) dirs.push_back(c);
  }
  return dirs;
}

std::vector<std::string> ListDeviceProfiles(const std::vector<std::string>& extra_dirs) {
  std::set<std::string> names = {"host"};
  std::vector<std::string> dirs = extra_dirs;
  for (const std::string& dir : DeviceProfileSearchPath()) dirs.push_back(dir);
  for (const std::string& dir : dirs) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
      if (entry.path().extension() == ".json") names.insert(entry.path().stem().string());
  }
  return {names.begin(), names.end()};
}

namespace {

StatusOr<DeviceProfile> LoadProfileFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot open device profile '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  return DeviceProfileFromJson(text.str(), path);
}

}  // namespace

bool IsDeviceProfilePath(const std::string& name_or_path) {
  return name_or_path.find('/') != std::string::npos ||
         (name_or_path.size() > 5 && name_or_path.ends_with(".json"));
}

std::string FindDeviceProfileFile(const std::string& name, const std::vector<std::string>& dirs) {
  for (const std::string& dir : dirs) {
    const std::string path = dir + "/" + name + ".json";
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec)) return path;
  }
  return "";
}

StatusOr<DeviceProfile> LoadDeviceProfile(const std::string& name_or_path) {
  if (name_or_path.empty()) return InvalidArgument("empty device profile name");
  if (IsDeviceProfilePath(name_or_path)) return LoadProfileFile(name_or_path);
  const std::vector<std::string> dirs = DeviceProfileSearchPath();
  if (std::string path = FindDeviceProfileFile(name_or_path, dirs); !path.empty())
    return LoadProfileFile(path);
  if (name_or_path == "host") return BuiltinHostProfile();
  std::string searched, known;
  for (const std::string& d : dirs) searched += (searched.empty() ? "" : ", ") + d;
  for (const std::string& n : ListDeviceProfiles()) known += (known.empty() ? "" : ", ") + n;
  return NotFound("no device profile '" + name_or_path + "' (searched: " +
                  (searched.empty() ? "no profile directory found" : searched) +
                  "; known: " + known +
                  "; give a file path, or with the braid CLI set BRAID_PROFILE_PATH)");
}

Status SaveDeviceProfile(const DeviceProfile& profile, const std::string& path) {
  RETURN_IF_ERROR(ValidateDeviceProfile(profile));
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return NotFound("cannot write device profile '" + path + "'");
  out << DeviceProfileToJson(profile);
  out.close();
  if (!out) return Internal("writing device profile '" + path + "' failed");
  return Status::Ok();
}

}  // namespace braid
