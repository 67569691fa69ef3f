#include "profiling/energy.h"

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

namespace braid::profiling {
namespace {

namespace fs = std::filesystem;

std::string ReadTrimmed(const fs::path& path, bool* ok) {
  std::ifstream in(path);
  std::string s;
  *ok = static_cast<bool>(in) && static_cast<bool>(std::getline(in, s));
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

StatusOr<double> ReadNumber(const fs::path& path) {
  bool ok = false;
  const std::string s = ReadTrimmed(path, &ok);
  if (!ok) return Unavailable("cannot read " + path.string());
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v))
    return InvalidArgument(path.string() + ": not a number: '" + s + "'");
  return v;
}

// One INA3221 channel: power = bus voltage (mV) x current (mA).
class Ina3221Rail : public EnergySensor {
 public:
  Ina3221Rail(std::string label, fs::path voltage, fs::path current)
      : label_(std::move(label)), voltage_(std::move(voltage)), current_(std::move(current)) {}
  std::string name() const override { return "ina3221:" + label_; }
  Kind kind() const override { return Kind::kPower; }
  // VDD_IN is the module's input rail: everything else is inside it.
  bool whole_system() const override { return label_ == "VDD_IN"; }
  StatusOr<double> Read() override {
    ASSIGN_OR_RETURN(double mv, ReadNumber(voltage_));
    ASSIGN_OR_RETURN(double ma, ReadNumber(current_));
    return mv * ma * 1e-6;
  }

 private:
  std::string label_;
  fs::path voltage_, current_;
};

class RaplZone : public EnergySensor {
 public:
  RaplZone(std::string zone_name, fs::path energy, double max_range_uj)
      : name_(std::move(zone_name)), energy_(std::move(energy)), max_range_uj_(max_range_uj) {}
  std::string name() const override { return "rapl:" + name_; }
  Kind kind() const override { return Kind::kCounter; }
  // Accumulates deltas so a wrap between two reads is counted once.
  StatusOr<double> Read() override {
    ASSIGN_OR_RETURN(double uj, ReadNumber(energy_));
    if (last_uj_ >= 0) total_uj_ += CounterDeltaUj(last_uj_, uj, max_range_uj_);
    last_uj_ = uj;
    return total_uj_ * 1e-6;
  }

 private:
  std::string name_;
  fs::path energy_;
  double max_range_uj_;
  double last_uj_ = -1;
  double total_uj_ = 0;
};

// The NVML entry points braid uses, resolved with dlsym.
struct Nvml {
  using Init = int (*)();
  using Count = int (*)(unsigned*);
  using Handle = int (*)(unsigned, void**);
  using Energy = int (*)(void*, unsigned long long*);
  void* lib = nullptr;
  Init init = nullptr;
  Init shutdown = nullptr;
  Count count = nullptr;
  Handle handle = nullptr;
  Energy energy = nullptr;

  static std::shared_ptr<Nvml> Load(std::string* why_not) {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      if (why_not) *why_not = "NVML: libnvidia-ml.so.1 not found (no NVIDIA driver)";
      return nullptr;
    }
    auto n = std::shared_ptr<Nvml>(new Nvml, [](Nvml* p) {
      if (p->shutdown) p->shutdown();
      dlclose(p->lib);
      delete p;
    });
    n->lib = lib;
    n->init = reinterpret_cast<Init>(dlsym(lib, "nvmlInit_v2"));
    n->count = reinterpret_cast<Count>(dlsym(lib, "nvmlDeviceGetCount_v2"));
    n->handle = reinterpret_cast<Handle>(dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
    n->energy = reinterpret_cast<Energy>(dlsym(lib, "nvmlDeviceGetTotalEnergyConsumption"));
    Init shutdown = reinterpret_cast<Init>(dlsym(lib, "nvmlShutdown"));
    if (!n->init || !n->count || !n->handle || !n->energy || !shutdown) {
      if (why_not) *why_not = "NVML: libnvidia-ml.so.1 lacks the energy API";
      return nullptr;
    }
    if (n->init() != 0) {
      if (why_not) *why_not = "NVML: nvmlInit failed (driver not loaded?)";
      return nullptr;
    }
    n->shutdown = shutdown;
    return n;
  }
};

class NvmlCounter : public EnergySensor {
 public:
  NvmlCounter(std::shared_ptr<Nvml> nvml, void* device, unsigned index)
      : nvml_(std::move(nvml)), device_(device), index_(index) {}
  std::string name() const override { return "nvml:" + std::to_string(index_); }
  Kind kind() const override { return Kind::kCounter; }
  StatusOr<double> Read() override {
    unsigned long long mj = 0;
    if (nvml_->energy(device_, &mj) != 0)
      return Unavailable("nvmlDeviceGetTotalEnergyConsumption failed on GPU " +
                         std::to_string(index_));
    return static_cast<double>(mj) * 1e-3;
  }

 private:
  std::shared_ptr<Nvml> nvml_;
  void* device_;
  unsigned index_;
};

std::vector<fs::path> SortedChildren(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

double CounterDeltaUj(double before_uj, double after_uj, double max_range_uj) {
  if (after_uj >= before_uj) return after_uj - before_uj;
  // The counter wrapped: it ran from `before` up to the range, then from 0.
  return max_range_uj > before_uj ? (max_range_uj - before_uj) + after_uj : after_uj;
}

double IntegratePower(const std::vector<PowerSample>& samples) {
  double joules = 0;
  for (size_t i = 1; i < samples.size(); ++i)
    joules += 0.5 * (samples[i].watts + samples[i - 1].watts) *
              (samples[i].seconds - samples[i - 1].seconds);
  return joules;
}

std::vector<std::unique_ptr<EnergySensor>> FindIna3221Rails(const std::string& sysfs_root) {
  std::vector<std::unique_ptr<EnergySensor>> out;
  for (const fs::path& hwmon : SortedChildren(fs::path(sysfs_root) / "class/hwmon")) {
    bool ok = false;
    if (ReadTrimmed(hwmon / "name", &ok) != "ina3221" || !ok) continue;
    for (int ch = 1; ch <= 3; ++ch) {
      const std::string n = std::to_string(ch);
      const std::string label = ReadTrimmed(hwmon / ("in" + n + "_label"), &ok);
      if (!ok || label.empty() || label == "NC") continue;
      auto rail = std::make_unique<Ina3221Rail>(label, hwmon / ("in" + n + "_input"),
                                                hwmon / ("curr" + n + "_input"));
      if (rail->Read().ok()) out.push_back(std::move(rail));
    }
  }
  return out;
}

std::vector<std::unique_ptr<EnergySensor>> FindRaplZones(const std::string& sysfs_root) {
  std::vector<std::unique_ptr<EnergySensor>> out;
  for (const fs::path& zone : SortedChildren(fs::path(sysfs_root) / "class/powercap")) {
    const std::string dir = zone.filename().string();
    const std::string prefix = "intel-rapl:";
    if (dir.rfind(prefix, 0) != 0 || dir.find(':', prefix.size()) != std::string::npos) continue;
    bool ok = false;
    std::string name = ReadTrimmed(zone / "name", &ok);
    if (!ok || name.empty()) name = dir;
    StatusOr<double> range = ReadNumber(zone / "max_energy_range_uj");
    auto sensor = std::make_unique<RaplZone>(name, zone / "energy_uj", range.ok() ? *range : 0);
    // energy_uj is root-only on recent kernels: an unreadable zone is skipped.
    if (sensor->Read().ok()) out.push_back(std::move(sensor));
  }
  return out;
}

std::vector<std::unique_ptr<EnergySensor>> FindNvmlCounters(std::string* why_not) {
  std::vector<std::unique_ptr<EnergySensor>> out;
  std::shared_ptr<Nvml> nvml = Nvml::Load(why_not);
  if (!nvml) return out;
  unsigned count = 0;
  if (nvml->count(&count) != 0) {
    if (why_not) *why_not = "NVML: cannot count GPUs";
    return out;
  }
  for (unsigned i = 0; i < count; ++i) {
    void* device = nullptr;
    if (nvml->handle(i, &device) != 0) continue;
    auto sensor = std::make_unique<NvmlCounter>(nvml, device, i);
    if (sensor->Read().ok()) out.push_back(std::move(sensor));
  }
  if (out.empty() && why_not) *why_not = "NVML: no GPU with an energy counter";
  return out;
}

std::vector<std::unique_ptr<EnergySensor>> DiscoverEnergySensors(const std::string& sysfs_root,
                                                                 std::vector<std::string>* notes) {
  std::vector<std::unique_ptr<EnergySensor>> all = FindIna3221Rails(sysfs_root);
  if (all.empty() && notes) notes->push_back("INA3221: no hwmon device named ina3221 (not a Jetson)");
  std::vector<std::unique_ptr<EnergySensor>> rapl = FindRaplZones(sysfs_root);
  if (rapl.empty() && notes)
    notes->push_back("RAPL: no readable " + sysfs_root + "/class/powercap/intel-rapl:N/energy_uj");
  std::string why;
  std::vector<std::unique_ptr<EnergySensor>> nvml = FindNvmlCounters(&why);
  if (nvml.empty() && notes) notes->push_back(why);
  for (auto* list : {&rapl, &nvml})
    for (auto& s : *list) all.push_back(std::move(s));
  return all;
}

EnergyMeter::EnergyMeter(std::vector<std::unique_ptr<EnergySensor>> sensors,
                         std::chrono::milliseconds period)
    : sensors_(std::move(sensors)), period_(std::max(period, std::chrono::milliseconds(1))) {}

EnergyMeter::~EnergyMeter() {
  running_ = false;
  if (thread_.joinable()) thread_.join();
}

void EnergyMeter::SampleAll(double seconds) {
  for (size_t i = 0; i < sensors_.size(); ++i) {
    StatusOr<double> v = sensors_[i]->Read();
    if (v.ok()) {
      samples_[i].push_back({seconds, *v});
    } else if (errors_.size() < 8) {
      errors_.push_back(v.status().message());
    }
  }
}

void EnergyMeter::Loop() {
  auto next = start_ + period_;
  while (running_.load(std::memory_order_relaxed)) {
    std::this_thread::sleep_until(next);
    next += period_;
    if (!running_.load(std::memory_order_relaxed)) break;
    SampleAll(std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  }
}

Status EnergyMeter::Start() {
  if (running_) return FailedPrecondition("EnergyMeter: already started");
  samples_.assign(sensors_.size(), {});
  errors_.clear();
  start_ = std::chrono::steady_clock::now();
  SampleAll(0);
  running_ = true;
  if (!sensors_.empty()) thread_ = std::thread([this] { Loop(); });
  return Status::Ok();
}

StatusOr<EnergyReport> EnergyMeter::Stop() {
  if (!running_) return FailedPrecondition("EnergyMeter: not started");
  running_ = false;
  if (thread_.joinable()) thread_.join();
  EnergyReport report;
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  SampleAll(report.seconds);
  double sum = 0;
  std::string summed;
  for (size_t i = 0; i < sensors_.size(); ++i) {
    const std::vector<PowerSample>& s = samples_[i];
    if (s.size() < 2) continue;
    SensorEnergy e;
    e.sensor = sensors_[i]->name();
    e.samples = static_cast<int>(s.size());
    e.joules = sensors_[i]->kind() == EnergySensor::Kind::kPower ? IntegratePower(s)
                                                                 : s.back().watts - s.front().watts;
    const double span = s.back().seconds - s.front().seconds;
    e.mean_watts = span > 0 ? e.joules / span : 0;
    if (sensors_[i]->whole_system()) {
      report.total_joules = e.joules;
      report.total_from = e.sensor;
      report.measured = true;
    }
    // Rails inside a whole-system rail (Jetson) are shown, not summed.
    if (sensors_[i]->kind() == EnergySensor::Kind::kCounter ||
        sensors_[i]->name().rfind("ina3221:", 0) != 0) {
      sum += e.joules;
      summed += (summed.empty() ? "" : " + ") + e.sensor;
    }
    report.sensors.push_back(std::move(e));
  }
  if (!report.measured && !summed.empty()) {
    report.total_joules = sum;
    report.total_from = summed;
    report.measured = true;
  }
  if (!report.measured && !report.sensors.empty()) {
    // Jetson rails without VDD_IN: the sum of the rails found.
    for (const SensorEnergy& e : report.sensors) {
      report.total_joules += e.joules;
      report.total_from += (report.total_from.empty() ? "" : " + ") + e.sensor;
    }
    report.measured = true;
  }
  if (!errors_.empty() && report.sensors.empty())
    return Unavailable("energy sensors could not be read: " + errors_.front());
  return report;
}

}  // namespace braid::profiling
