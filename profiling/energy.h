// Energy sensors and a sampler that integrates them over a run.
//
//   std::vector<std::unique_ptr<braid::profiling::EnergySensor>> sensors =
//       braid::profiling::DiscoverEnergySensors();
//   if (sensors.empty()) { /* say so; report the cost model's estimate, labelled */ }
//   braid::profiling::EnergyMeter meter(std::move(sensors), std::chrono::milliseconds(20));
//   RETURN_IF_ERROR(meter.Start());
//   for (int i = 0; i < n; ++i) RETURN_IF_ERROR(session->Run());
//   ASSIGN_OR_RETURN(braid::profiling::EnergyReport report, meter.Stop());
//   double joules_per_inference = report.total_joules / n;
//
// Sensors read: Jetson INA3221 power rails through hwmon sysfs (on Orin
// VDD_IN, VDD_CPU_GPU_CV, VDD_SOC: inN_label, inN_input in mV, currN_input
// in mA), Intel RAPL through powercap (energy_uj, wrapping at
// max_energy_range_uj), and NVML's GPU energy counter, loaded with dlopen at
// run time (no link-time dependency). Readers take the sysfs root so tests
// run them on fake trees.
#ifndef BRAID_PROFILING_ENERGY_H_
#define BRAID_PROFILING_ENERGY_H_

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "graph/status.h"

namespace braid::profiling {

class EnergySensor {
 public:
  enum class Kind {
    kPower,    // Read() is instantaneous watts; the meter integrates samples
    kCounter,  // Read() is a monotonic energy counter in joules
  };
  virtual ~EnergySensor() = default;
  // "ina3221:VDD_IN", "rapl:package-0", "nvml:0".
  virtual std::string name() const = 0;
  virtual Kind kind() const = 0;
  // True when this sensor covers the whole board / module (Jetson VDD_IN):
  // the meter's total is then this sensor alone, not a sum.
  virtual bool whole_system() const { return false; }
  virtual StatusOr<double> Read() = 0;
};

// INA3221 rails under `sysfs_root`/class/hwmon/hwmon*/ whose `name` is
// "ina3221". Rails with an empty label or unreadable inputs are skipped.
std::vector<std::unique_ptr<EnergySensor>> FindIna3221Rails(const std::string& sysfs_root = "/sys");
// Top-level RAPL zones (intel-rapl:N, not the sub-zones intel-rapl:N:M that
// they already include) under `sysfs_root`/class/powercap/.
std::vector<std::unique_ptr<EnergySensor>> FindRaplZones(const std::string& sysfs_root = "/sys");
// One counter per NVML GPU; empty when libnvidia-ml.so.1 does not load or a
// GPU has no energy counter (pre-Volta). `why_not` says which.
std::vector<std::unique_ptr<EnergySensor>> FindNvmlCounters(std::string* why_not = nullptr);
// All of the above; `notes` gets one line per source that found nothing.
std::vector<std::unique_ptr<EnergySensor>> DiscoverEnergySensors(
    const std::string& sysfs_root = "/sys", std::vector<std::string>* notes = nullptr);

// A RAPL-style counter delta in microjoules, wrapping at `max_range_uj`.
double CounterDeltaUj(double before_uj, double after_uj, double max_range_uj);

struct PowerSample {
  double seconds = 0;
  double watts = 0;
};
// Trapezoid integral of power samples over time, in joules.
double IntegratePower(const std::vector<PowerSample>& samples);

struct SensorEnergy {
  std::string sensor;
  double joules = 0;
  double mean_watts = 0;
  int samples = 0;
};

struct EnergyReport {
  std::vector<SensorEnergy> sensors;
  double seconds = 0;
  double total_joules = 0;  // whole-system sensor, or the sum of the others
  std::string total_from;   // which sensor(s) the total is
  bool measured = false;    // false: no sensor (callers report an estimate)
};

// Samples every sensor on its own thread every `period` between Start and
// Stop. A meter without sensors still runs and reports measured = false.
class EnergyMeter {
 public:
  explicit EnergyMeter(std::vector<std::unique_ptr<EnergySensor>> sensors,
                       std::chrono::milliseconds period = std::chrono::milliseconds(20));
  ~EnergyMeter();
  EnergyMeter(const EnergyMeter&) = delete;
  EnergyMeter& operator=(const EnergyMeter&) = delete;

  bool has_sensors() const { return !sensors_.empty(); }
  Status Start();
  StatusOr<EnergyReport> Stop();

 private:
  void SampleAll(double seconds);
  void Loop();

  std::vector<std::unique_ptr<EnergySensor>> sensors_;
  std::chrono::milliseconds period_;
  std::vector<std::vector<PowerSample>> samples_;  // per sensor
  std::vector<std::string> errors_;
  std::chrono::steady_clock::time_point start_;
  std::atomic<bool> running_{false};
  std::thread thread_;
};

}  // namespace braid::profiling

#endif  // BRAID_PROFILING_ENERGY_H_
