// Energy sensor readers against fake sysfs trees laid out like the real ones
// (Jetson Orin INA3221 hwmon, Intel RAPL powercap).
#include "profiling/energy.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace braid::profiling {
namespace {

namespace fs = std::filesystem;

class FakeSysfs : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("braid_sysfs_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
             "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void Write(const std::string& rel, const std::string& text) {
    const fs::path p = root_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text << "\n";
  }
  // The Orin layout: /sys/class/hwmon/hwmonN/{name,inK_label,inK_input,currK_input}.
  void OrinRails() {
    Write("class/hwmon/hwmon0/name", "cpu_thermal");
    const std::string h = "class/hwmon/hwmon1/";
    Write(h + "name", "ina3221");
    Write(h + "in1_label", "VDD_IN");
    Write(h + "in1_input", "5000");   // mV
    Write(h + "curr1_input", "1200");  // mA -> 6 W
    Write(h + "in2_label", "VDD_CPU_GPU_CV");
    Write(h + "in2_input", "5000");
    Write(h + "curr2_input", "400");
    Write(h + "in3_label", "VDD_SOC");
    Write(h + "in3_input", "5000");
    Write(h + "curr3_input", "300");
  }
  std::string root() const { return root_.string(); }

  fs::path root_;
};

TEST_F(FakeSysfs, Ina3221RailsOnOrin) {
  OrinRails();
  std::vector<std::unique_ptr<EnergySensor>> rails = FindIna3221Rails(root());
  ASSERT_EQ(rails.size(), 3u);
  EXPECT_EQ(rails[0]->name(), "ina3221:VDD_IN");
  EXPECT_TRUE(rails[0]->whole_system());
  EXPECT_FALSE(rails[1]->whole_system());
  EXPECT_EQ(rails[0]->kind(), EnergySensor::Kind::kPower);
  StatusOr<double> w = rails[0]->Read();
  ASSERT_TRUE(w.ok());
  EXPECT_DOUBLE_EQ(*w, 6.0);
  EXPECT_DOUBLE_EQ(*rails[2]->Read(), 1.5);
  // A garbled value is an error naming the file, not a crash.
  Write("class/hwmon/hwmon1/curr1_input", "n/a");
  StatusOr<double> bad = rails[0]->Read();
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("curr1_input"), std::string::npos);
}

TEST_F(FakeSysfs, RaplTopLevelZonesAndWraparound) {
  Write("class/powercap/intel-rapl/enabled", "1");
  Write("class/powercap/intel-rapl:0/name", "package-0");
  Write("class/powercap/intel-rapl:0/energy_uj", "999000000");
  Write("class/powercap/intel-rapl:0/max_energy_range_uj", "1000000000");
  Write("class/powercap/intel-rapl:0:0/name", "core");  // inside package-0
  Write("class/powercap/intel-rapl:0:0/energy_uj", "5");
  std::vector<std::unique_ptr<EnergySensor>> zones = FindRaplZones(root());
  ASSERT_EQ(zones.size(), 1u);
  EXPECT_EQ(zones[0]->name(), "rapl:package-0");
  EXPECT_EQ(zones[0]->kind(), EnergySensor::Kind::kCounter);
  const double first = *zones[0]->Read();
  Write("class/powercap/intel-rapl:0/energy_uj", "500000");  // wrapped
  const double second = *zones[0]->Read();
  EXPECT_NEAR(second - first, 1.5, 1e-9);  // 1,000,000 + 500,000 uJ
  EXPECT_DOUBLE_EQ(CounterDeltaUj(10, 30, 100), 20);
  EXPECT_DOUBLE_EQ(CounterDeltaUj(90, 5, 100), 15);
}

TEST_F(FakeSysfs, NothingFoundIsSaidSo) {
  Write("class/hwmon/hwmon0/name", "coretemp");
  EXPECT_TRUE(FindIna3221Rails(root()).empty());
  EXPECT_TRUE(FindRaplZones(root()).empty());
  std::vector<std::string> notes;
  std::vector<std::unique_ptr<EnergySensor>> all = DiscoverEnergySensors(root(), &notes);
  // NVML may exist on a machine with a driver; the sysfs readers found nothing.
  for (const auto& s : all) EXPECT_EQ(s->name().rfind("nvml:", 0), 0u) << s->name();
  ASSERT_GE(notes.size(), 2u);
  EXPECT_NE(notes[0].find("INA3221"), std::string::npos);
  EXPECT_NE(notes[1].find("RAPL"), std::string::npos);
  EnergyMeter meter({});
  ASSERT_TRUE(meter.Start().ok());
  StatusOr<EnergyReport> r = meter.Stop();
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->measured);
}

TEST_F(FakeSysfs, MeterIntegratesConstantPower) {
  OrinRails();
  EnergyMeter meter(FindIna3221Rails(root()), std::chrono::milliseconds(2));
  ASSERT_TRUE(meter.Start().ok());
  EXPECT_FALSE(meter.Start().ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  StatusOr<EnergyReport> r = meter.Stop();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->measured);
  EXPECT_EQ(r->total_from, "ina3221:VDD_IN");  // the module rail, not a sum of rails
  ASSERT_EQ(r->sensors.size(), 3u);
  const double span = r->seconds;
  EXPECT_GT(span, 0);
  EXPECT_GE(r->sensors[0].samples, 2);
  // Constant 6 W over the sampled span (first sample at 0, last at Stop).
  EXPECT_NEAR(r->total_joules, 6.0 * span, 1e-9 * 6.0 * span + 1e-12);
  EXPECT_NEAR(r->sensors[0].mean_watts, 6.0, 1e-9);
}

TEST(EnergyTest, TrapezoidIntegral) {
  EXPECT_DOUBLE_EQ(IntegratePower({{0, 2}, {1, 4}, {3, 4}}), 3 + 8);
  EXPECT_DOUBLE_EQ(IntegratePower({{0, 2}}), 0);
}

}  // namespace
}  // namespace braid::profiling
