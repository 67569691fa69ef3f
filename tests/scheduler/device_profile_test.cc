#include "scheduler/device_profile.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "graph/json.h"
#include "tests/fuzz/regression_inputs.h"
#include "tests/scheduler/sim_test_util.h"

namespace braid {
namespace {

const std::string kProfilesDir = std::string(BRAID_SOURCE_DIR) + "/profiles";

TEST(DeviceProfileTest, ShippedProfilesLoadAndSourceEveryNumber) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kProfilesDir)) {
    if (entry.path().extension() != ".json") continue;
    ++count;
    StatusOr<DeviceProfile> p = LoadDeviceProfile(entry.path().string());
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    EXPECT_EQ(p->name, entry.path().stem().string());
    for (const DeviceSpec& d : p->devices)
      for (const char* field : {"peak_gflops", "memory_bandwidth_gbps", "launch_overhead_us",
                                "active_power_w", "idle_power_w"})
        EXPECT_FALSE(d.sources.count(field) == 0 || d.sources.at(field).empty())
            << p->name << " " << d.name << " " << field;
  }
  EXPECT_GE(count, 4);
}

TEST(DeviceProfileTest, JetsonFiguresAreTheDatasheetOnes) {
  StatusOr<DeviceProfile> agx = LoadDeviceProfile("jetson-agx-orin-64gb");
  ASSERT_TRUE(agx.ok()) << agx.status().ToString();
  const DeviceSpec* gpu = agx->Find("cuda:0");
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->compute_units, 16);
  EXPECT_NEAR(gpu->peak_gflops, 2048 * 2 * 1.3, 0.1);
  EXPECT_DOUBLE_EQ(gpu->memory_bandwidth_gbps, 204.8);
  EXPECT_EQ(agx->Find("cpu")->compute_units, 12);
  const LinkSpec* link = agx->FindLink("cpu", "cuda:0");
  ASSERT_NE(link, nullptr);
  EXPECT_TRUE(link->mapped);
}

// Inputs fuzz_device_profile once failed on (tests/fuzz/regressions/): each
// either is an error or writes JSON that reads back and writes the same.
TEST(DeviceProfileTest, FuzzRegressionsRoundTrip) {
  int files = 0;
  for (const auto& [path, text] : test::FuzzRegressionInputs("fuzz_device_profile")) {
    StatusOr<DeviceProfile> read = DeviceProfileFromJson(text, path);
    ++files;
    if (!read.ok()) continue;
    const std::string json = DeviceProfileToJson(*read);
    StatusOr<DeviceProfile> again = DeviceProfileFromJson(json, "again.json");
    ASSERT_TRUE(again.ok()) << path << ": " << again.status().ToString();
    EXPECT_EQ(DeviceProfileToJson(*again), json) << path;
  }
  EXPECT_GE(files, 1);
}

TEST(DeviceProfileTest, JsonRoundTrip) {
  DeviceProfile p = testing::TwoDeviceProfile(12.5);
  p.devices[0].sources["peak_gflops"] = "measured";
  p.devices[1].efficiency.resize(2);
  p.devices[1].efficiency[1].samples = 9;
  StatusOr<DeviceProfile> again = DeviceProfileFromJson(DeviceProfileToJson(p), "mem");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(DeviceProfileToJson(*again), DeviceProfileToJson(p));
  EXPECT_EQ(again->links[0].latency_us, 12.5);
  EXPECT_EQ(again->devices[1].efficiency[1].samples, 9);
}

TEST(DeviceProfileTest, BadFilesGiveClearErrors) {
  const std::string good = DeviceProfileToJson(testing::TwoDeviceProfile());
  auto error_of = [](const std::string& text) {
    StatusOr<DeviceProfile> p = DeviceProfileFromJson(text, "bad.json");
    EXPECT_FALSE(p.ok());
    return p.ok() ? std::string() : p.status().message();
  };
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    const size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
  };
  EXPECT_NE(error_of("{").find("bad.json"), std::string::npos);
  EXPECT_NE(error_of("[]").find("not an object"), std::string::npos);
  EXPECT_NE(error_of(R"({"name":"x"})").find("missing \"devices\""), std::string::npos);
  EXPECT_NE(error_of(replace("\"peak_gflops\": 1", "\"peak_gflops\": -1")).find("peak_gflops must be > 0"),
            std::string::npos);
  EXPECT_NE(error_of(replace("\"peak_gflops\": 1", "\"peak_glops\": 1")).find("unknown key \"peak_glops\""),
            std::string::npos);
  EXPECT_NE(error_of(replace("\"peak_gflops\": 1", "\"peak_gflops\": \"fast\"")).find("peak_gflops"),
            std::string::npos);
  EXPECT_NE(error_of(replace("\"kind\": \"gpu\"", "\"kind\": \"npu\"")).find("kind 'npu'"),
            std::string::npos);
  EXPECT_NE(error_of(replace("\"to\": \"gpu\"", "\"to\": \"dsp\"")).find("does not list"),
            std::string::npos);
  EXPECT_NE(error_of(replace("\"name\": \"cpu\"", "\"name\": \"gpu\"")).find("listed twice"),
            std::string::npos);
  EXPECT_NE(error_of(replace("\"kind\": \"cpu\"", "\"kind\": \"gpu\"")).find("host cpu"),
            std::string::npos);
  EXPECT_NE(error_of(replace("\"clock_ghz\": 0", "\"clock_ghz\": 0, \"sources\": {\"speed\": \"x\"}"))
                .find("\"speed\", which is not a field"),
            std::string::npos);
  EXPECT_NE(error_of(replace("\"compute\": 1", "\"compute\": 0")).find("compute must be > 0"),
            std::string::npos);
}

TEST(DeviceProfileTest, NewFieldsRoundTripAndOldProfilesStillLoad) {
  DeviceProfile p = testing::TwoDeviceProfile();
  DeviceSpec& cpu = p.devices[0];
  cpu.cache_bytes = 2097152;
  cpu.cache_bandwidth_gbps = 95.5;
  cpu.llc_bytes = 33554432;
  cpu.dram_bandwidth_gbps = 22.5;
  cpu.op_types.push_back({"Concat", 7.25, 9});
  cpu.op_types.push_back({"Reshape", 0.125, 17});
  cpu.sparse.push_back({"conv1x1", 0.65, 0.1, 2.5, 5});
  cpu.sources["sparse"] = "measured";
  p.devices[1].floor_device = "cpu";
  p.devices[1].sync_us = 42.5;
  cpu.resume_factor = 1.75;
  cpu.copied_read_gbps = 12.5;
  cpu.copied_window_read_gbps = 9.25;
  cpu.reclaim_gbps = 12.75;
  cpu.copied_depthwise_read_gbps = 10.5;
  for (OpClassEfficiency& e : cpu.efficiency)
    if (e.op_class == "elementwise") e.cache_memory = 0.375;
  const std::string json = DeviceProfileToJson(p);
  StatusOr<DeviceProfile> again = DeviceProfileFromJson(json, "mem");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(DeviceProfileToJson(*again), json);
  const DeviceSpec& c = again->devices[0];
  EXPECT_EQ(c.cache_bytes, 2097152);
  EXPECT_EQ(c.cache_bandwidth_gbps, 95.5);
  EXPECT_EQ(c.llc_bytes, 33554432);
  EXPECT_EQ(c.dram_bandwidth_gbps, 22.5);
  EXPECT_EQ(again->devices[1].llc_bytes, 0);
  ASSERT_NE(c.OpType("Concat"), nullptr);
  EXPECT_EQ(c.OpType("Concat")->factor, 7.25);
  EXPECT_EQ(c.OpType("Concat")->samples, 9);
  EXPECT_EQ(c.OpType("Add"), nullptr);
  ASSERT_NE(c.Sparse("conv1x1"), nullptr);
  EXPECT_EQ(c.Sparse("conv1x1")->crossover, 0.65);
  EXPECT_EQ(c.Sparse("conv1x1")->per_density, 2.5);
  EXPECT_EQ(again->devices[1].floor_device, "cpu");
  EXPECT_EQ(again->devices[1].sync_us, 42.5);
  EXPECT_EQ(again->devices[0].sync_us, 0);
  EXPECT_EQ(c.resume_factor, 1.75);
  EXPECT_EQ(c.copied_read_gbps, 12.5);
  EXPECT_EQ(c.copied_window_read_gbps, 9.25);
  EXPECT_EQ(c.reclaim_gbps, 12.75);
  EXPECT_EQ(c.copied_depthwise_read_gbps, 10.5);
  EXPECT_EQ(again->devices[1].copied_depthwise_read_gbps, 0);
  EXPECT_EQ(again->devices[1].reclaim_gbps, 0);
  EXPECT_EQ(again->devices[1].copied_read_gbps, 0);
  EXPECT_EQ(again->devices[1].copied_window_read_gbps, 0);
  EXPECT_EQ(again->devices[1].resume_factor, 1);
  for (const OpClassEfficiency& e : c.efficiency)
    EXPECT_EQ(e.cache_memory, e.op_class == "elementwise" ? 0.375 : -1) << e.op_class;

  // A profile written before these fields existed: none of them, all off.
  const std::string old = DeviceProfileToJson(testing::TwoDeviceProfile());
  EXPECT_EQ(old.find("cache_bytes"), std::string::npos);
  StatusOr<DeviceProfile> loaded = DeviceProfileFromJson(old, "old.json");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->devices[0].cache_bytes, 0);
  EXPECT_EQ(old.find("llc_bytes"), std::string::npos);
  EXPECT_EQ(loaded->devices[0].llc_bytes, 0);
  EXPECT_EQ(loaded->devices[0].dram_bandwidth_gbps, 0);
  EXPECT_TRUE(loaded->devices[0].op_types.empty());
  EXPECT_TRUE(loaded->devices[0].sparse.empty());
  EXPECT_TRUE(loaded->devices[1].floor_device.empty());
  EXPECT_EQ(old.find("sync_us"), std::string::npos);
  EXPECT_EQ(loaded->devices[1].sync_us, 0);
  EXPECT_EQ(old.find("resume_factor"), std::string::npos);
  EXPECT_EQ(loaded->devices[0].resume_factor, 1);
  EXPECT_EQ(loaded->devices[0].copied_read_gbps, 0);
  EXPECT_EQ(loaded->devices[0].copied_window_read_gbps, 0);
  EXPECT_EQ(old.find("reclaim_gbps"), std::string::npos);
  EXPECT_EQ(loaded->devices[0].reclaim_gbps, 0);
  EXPECT_EQ(old.find("copied_depthwise_read_gbps"), std::string::npos);
  EXPECT_EQ(loaded->devices[0].copied_depthwise_read_gbps, 0);
  EXPECT_EQ(old.find("cache_memory"), std::string::npos);
  for (const OpClassEfficiency& e : loaded->devices[0].efficiency) EXPECT_LE(e.cache_memory, 0);
  for (const std::string& name : ListDeviceProfiles()) {
    StatusOr<DeviceProfile> shipped = LoadDeviceProfile(name);
    EXPECT_TRUE(shipped.ok()) << name << ": " << shipped.status().ToString();
  }
}

TEST(DeviceProfileTest, NewFieldsRejectBadValues) {
  DeviceProfile p = testing::TwoDeviceProfile();
  p.devices[0].op_types.push_back({"Concat", 2.0, 3});
  p.devices[0].sparse.push_back({"gemm", 0.5, 0.2, 1.0, 5});
  p.devices[0].cache_bytes = 1024;
  p.devices[0].cache_bandwidth_gbps = 10;
  p.devices[0].llc_bytes = 4096;
  p.devices[0].dram_bandwidth_gbps = 5;
  p.devices[0].sync_us = 30;
  p.devices[0].resume_factor = 1.5;
  p.devices[0].copied_read_gbps = 12;
  p.devices[0].copied_window_read_gbps = 8;
  p.devices[0].reclaim_gbps = 11;
  p.devices[0].copied_depthwise_read_gbps = 9;
  const std::string good = DeviceProfileToJson(p);
  auto error_of = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    const size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    s.replace(at, from.size(), to);
    StatusOr<DeviceProfile> bad = DeviceProfileFromJson(s, "bad.json");
    EXPECT_FALSE(bad.ok()) << to;
    return bad.ok() ? std::string() : bad.status().message();
  };
  EXPECT_NE(error_of("\"factor\": 2", "\"factor\": 0").find("factor must be > 0"),
            std::string::npos);
  EXPECT_NE(error_of("\"op_class\": \"gemm\", \"crossover\"",
                     "\"op_class\": \"conv5x5\", \"crossover\"")
                .find("conv1x1, conv3x3 or gemm"),
            std::string::npos);
  EXPECT_NE(error_of("\"crossover\": 0.5", "\"crossover\": 1.5").find("[0, 1]"),
            std::string::npos);
  EXPECT_NE(error_of("\"cache_bytes\": 1024", "\"cache_bytes\": -1").find("cache_bytes"),
            std::string::npos);
  EXPECT_NE(error_of("\"llc_bytes\": 4096", "\"llc_bytes\": -4096").find("llc_bytes"),
            std::string::npos);
  EXPECT_NE(error_of("\"dram_bandwidth_gbps\": 5", "\"dram_bandwidth_gbps\": -5")
                .find("dram_bandwidth_gbps"),
            std::string::npos);
  EXPECT_NE(error_of("\"sync_us\": 30", "\"sync_us\": -3").find("sync_us"), std::string::npos);
  EXPECT_NE(error_of("\"resume_factor\": 1.5", "\"resume_factor\": 0.5").find("resume_factor must be >= 1"),
            std::string::npos);
  EXPECT_NE(error_of("\"copied_read_gbps\": 12", "\"copied_read_gbps\": -1").find("copied_read_gbps"),
            std::string::npos);
  EXPECT_NE(error_of("\"copied_window_read_gbps\": 8", "\"copied_window_read_gbps\": -1")
                .find("copied_window_read_gbps"),
            std::string::npos);
  EXPECT_NE(error_of("\"reclaim_gbps\": 11", "\"reclaim_gbps\": -11").find("reclaim_gbps"),
            std::string::npos);
  EXPECT_NE(error_of("\"copied_depthwise_read_gbps\": 9", "\"copied_depthwise_read_gbps\": -9")
                .find("copied_depthwise_read_gbps"),
            std::string::npos);
  EXPECT_NE(error_of("\"factor\": 2", "\"factr\": 2").find("unknown key \"factr\""),
            std::string::npos);
  EXPECT_NE(error_of("\"concurrent_kernels\": 1,\n      \"cache_bytes\"",
                     "\"concurrent_kernels\": 1,\n      \"floor_device\": \"tpu\",\n      "
                     "\"cache_bytes\"")
                .find("floor_device 'tpu'"),
            std::string::npos);
}

TEST(DeviceProfileTest, LookupByNameAndBuiltinHost) {
  StatusOr<DeviceProfile> nano = LoadDeviceProfile("jetson-orin-nano-8gb");
  ASSERT_TRUE(nano.ok()) << nano.status().ToString();
  StatusOr<DeviceProfile> host = LoadDeviceProfile("host");
  ASSERT_TRUE(host.ok());
  EXPECT_TRUE(ValidateDeviceProfile(*host).ok());
  EXPECT_GE(host->devices[0].compute_units, 1);
  StatusOr<DeviceProfile> missing = LoadDeviceProfile("jetson-tx9");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("jetson-orin-nx-16gb"), std::string::npos);
  EXPECT_FALSE(LoadDeviceProfile("/nonexistent/p.json").ok());
  const std::vector<std::string> names = ListDeviceProfiles();
  EXPECT_NE(std::find(names.begin(), names.end(), "host-vgpu"), names.end());
}

TEST(DeviceProfileTest, SaveThenLoad) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "braid_profile_test.json").string();
  DeviceProfile p = testing::TwoDeviceProfile();
  ASSERT_TRUE(SaveDeviceProfile(p, path).ok());
  StatusOr<DeviceProfile> again = LoadDeviceProfile(path);
  std::filesystem::remove(path);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->devices.size(), 2u);
  p.devices[0].peak_gflops = 0;
  EXPECT_FALSE(SaveDeviceProfile(p, path).ok());
}

}  // namespace
}  // namespace braid
