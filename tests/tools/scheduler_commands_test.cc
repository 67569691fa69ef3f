// braid plan / profile / calibrate end to end, in process, on tiny_cnn.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "graph/json.h"
#include "scheduler/device_profile.h"
#include "scheduler/plan.h"
#include "tests/tools/cli_test_util.h"
#include "tools/commands.h"

namespace braid::cli {
namespace {

namespace fs = std::filesystem;

using Result = CliResult;

Result Braid(std::vector<std::string> args) { return RunCli(std::move(args)); }

fs::path TempDir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("braid_sched_cmd_" + name + "_" +
                                                    std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

TEST(PlanCommandTest, JsonHasThePlanAndSimulatedFigures) {
  const fs::path dir = TempDir("plan");
  const std::string saved = (dir / "plan.json").string();
  Result r = Braid({"plan", "builtin:tiny_cnn", "--profile", "host-vgpu", "--policy", "threshold",
                    "--intensity-threshold", "4", "--json", "--save", saved});
  ASSERT_EQ(r.status, 0) << r.err;
  StatusOr<JsonValue> doc = ParseJson(r.out);
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  const JsonValue* sim = doc->Find("simulated");
  ASSERT_NE(sim, nullptr);
  EXPECT_GT(*sim->GetNumber("latency_ms", 0), 0);
  EXPECT_GT(*sim->GetNumber("energy_j", 0), 0);
  StatusOr<Plan> plan = PlanFromJson(ReadTextFile(saved));
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->policy, "threshold");
  bool any_vgpu = false;
  for (const NodePlan& p : plan->nodes) any_vgpu = any_vgpu || p.device == "vgpu";
  EXPECT_TRUE(any_vgpu);
  fs::remove_all(dir);
}

TEST(PlanCommandTest, TableIsLabelledSimulatedAndErrorsAreClear) {
  Result r = Braid({"plan", "builtin:tiny_cnn", "--profile", "jetson-orin-nano-8gb", "--policy",
                    "gpu-only"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("(simulated)"), std::string::npos);
  EXPECT_NE(r.out.find("cuda:0"), std::string::npos);
  Result bad = Braid({"plan", "builtin:tiny_cnn", "--profile", "no-such-board"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("jetson-orin-nano-8gb"), std::string::npos);  // lists known profiles
  Result bad_policy = Braid({"plan", "builtin:tiny_cnn", "--policy", "magic"});
  EXPECT_EQ(bad_policy.status, 2);
  EXPECT_NE(bad_policy.err.find("threshold"), std::string::npos);
  Result bad_device =
      Braid({"plan", "builtin:tiny_cnn", "--profile", "host-vgpu", "--devices", "cpu,tpu"});
  EXPECT_EQ(bad_device.status, 2);
  EXPECT_NE(bad_device.err.find("'tpu'"), std::string::npos);
}

TEST(ProfileCommandTest, WritesAPerfettoTraceCsvAndSvg) {
  const fs::path dir = TempDir("profile");
  Result r = Braid({"profile", "builtin:tiny_cnn", "--iterations", "2", "--warmup", "0",
                    "--threads", "1", "--trace", (dir / "t.json").string(), "--csv",
                    (dir / "ops.csv").string(), "--svg", (dir / "p.svg").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("top ops"), std::string::npos);
  EXPECT_NE(r.out.find("energy:"), std::string::npos);
  // Trace Event Format: {"traceEvents":[{"name","ph","ts","pid","tid",...}]}.
  StatusOr<JsonValue> trace = ParseJson(ReadTextFile(dir / "t.json"));
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  const JsonValue* events = trace->Find("traceEvents");
  ASSERT_NE(events, nullptr);
  ASSERT_TRUE(events->is_array());
  int measured_ops = 0, simulated_ops = 0;
  for (const JsonValue& e : events->array()) {
    ASSERT_TRUE(e.is_object());
    const std::string ph = *e.GetString("ph", "");
    ASSERT_TRUE(ph == "X" || ph == "M") << ph;
    ASSERT_NE(e.Find("pid"), nullptr);
    ASSERT_NE(e.Find("tid"), nullptr);
    if (ph != "X") continue;
    ASSERT_TRUE(e.Find("ts") && e.Find("ts")->is_number());
    ASSERT_TRUE(e.Find("dur") && e.Find("dur")->is_number());
    EXPECT_GE(e.Find("dur")->number(), 0);
    const JsonValue* args = e.Find("args");
    if (*e.GetString("cat", "") == "kernel") {
      ++measured_ops;
      ASSERT_NE(args, nullptr);
      for (const char* key : {"op", "flops", "intensity", "weight_sparsity", "device",
                              "predicted_us", "measured_us"})
        EXPECT_NE(args->Find(key), nullptr) << key;
    } else if (*e.GetString("cat", "") == "simulated") {
      ++simulated_ops;
    }
  }
  EXPECT_GT(measured_ops, 0);
  EXPECT_EQ(measured_ops, simulated_ops);  // cpu-only: one kernel step per node
  const std::string csv = ReadTextFile(dir / "ops.csv");
  EXPECT_EQ(static_cast<int>(std::count(csv.begin(), csv.end(), '\n')), measured_ops + 1);
  const std::string svg = ReadTextFile(dir / "p.svg");
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  Result bad = Braid({"profile", "builtin:tiny_cnn", "--devices", "tpu"});
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.err.find("tpu"), std::string::npos);
  fs::remove_all(dir);
}

// Everything on the virtual GPU: the trace has one track per vgpu stream and
// copy direction, marked virtual; kernel events on it carry the op fields.
TEST(ProfileCommandTest, ProfilesAVgpuPlanOnRealTracks) {
  const fs::path dir = TempDir("profile_vgpu");
  Result r = Braid({"profile", "builtin:tiny_cnn", "--devices", "cpu,vgpu", "--policy",
                    "gpu-only", "--vgpu-timing", "none", "--iterations", "1", "--warmup", "0",
                    "--threads", "1", "--trace", (dir / "t.json").string(), "--csv",
                    (dir / "steps.csv").string(), "--svg", (dir / "p.svg").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("VIRTUAL GPU"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bytes transferred"), std::string::npos);
  EXPECT_EQ(r.out.find("GPU measurement:"), std::string::npos);
  StatusOr<JsonValue> trace = ParseJson(ReadTextFile(dir / "t.json"));
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  std::vector<std::string> tracks;
  int vgpu_kernels = 0, copies = 0, steps = 0;
  for (const JsonValue& e : trace->Find("traceEvents")->array()) {
    const std::string ph = *e.GetString("ph", "");
    if (ph == "M") {
      if (const JsonValue* args = e.Find("args")) tracks.push_back(*args->GetString("name", ""));
      continue;
    }
    const std::string cat = *e.GetString("cat", "");
    if (cat != "kernel" && cat != "copy") continue;
    ++steps;
    const JsonValue* args = e.Find("args");
    ASSERT_NE(args, nullptr);
    for (const char* key : {"device", "measured_us", "predicted_us"})
      EXPECT_NE(args->Find(key), nullptr) << key;
    if (cat == "copy") {
      ++copies;
      EXPECT_NE(args->Find("bytes"), nullptr);
    } else if (*args->GetString("device", "") == "vgpu") {
      ++vgpu_kernels;
      for (const char* key : {"op", "flops", "intensity", "weight_sparsity", "note"})
        EXPECT_NE(args->Find(key), nullptr) << key;
    }
  }
  EXPECT_GT(vgpu_kernels, 0);
  EXPECT_GE(copies, 2);  // the input up, the output down
  auto has = [&](const std::string& t) {
    return std::find(tracks.begin(), tracks.end(), t) != tracks.end();
  };
  EXPECT_TRUE(has("vgpu/stream0 (virtual)"));
  EXPECT_TRUE(has("vgpu/h2d (virtual)"));
  EXPECT_TRUE(has("vgpu/d2h (virtual)"));
  const std::string csv = ReadTextFile(dir / "steps.csv");
  EXPECT_EQ(static_cast<int>(std::count(csv.begin(), csv.end(), '\n')), steps + 1);
  EXPECT_NE(ReadTextFile(dir / "p.svg").find("(virtual)"), std::string::npos);
  // A plan naming a device that is not open is refused clearly.
  const std::string plan_path = (dir / "plan.json").string();
  ASSERT_EQ(Braid({"plan", "builtin:tiny_cnn", "--profile", "host-vgpu", "--policy", "gpu-only",
                   "--save", plan_path}).status, 0);
  Result closed = Braid({"profile", "builtin:tiny_cnn", "--plan", plan_path, "--iterations", "1"});
  EXPECT_NE(closed.status, 0);
  EXPECT_NE(closed.err.find("--devices"), std::string::npos) << closed.err;
  fs::remove_all(dir);
}

TEST(CalibrateCommandTest, WritesALoadableMeasuredProfile) {
  const fs::path dir = TempDir("calibrate");
  const std::string path = (dir / "my-board.json").string();
  Result r = Braid({"calibrate", "--models", "tiny_cnn", "--iterations", "2", "--threads", "1",
                    "--out", path});
  ASSERT_EQ(r.status, 0) << r.err;
  StatusOr<DeviceProfile> p = LoadDeviceProfile(path);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->origin, "calibrated");
  EXPECT_EQ(p->name, "my-board");  // named after its file, not "host"
  EXPECT_GT(p->devices[0].peak_gflops, 0);
  EXPECT_NE(p->devices[0].sources.at("peak_gflops").find("measured"), std::string::npos);
  // The CPU stream's handoff wake-up, measured and sourced.
  EXPECT_GT(p->devices[0].sync_us, 0);
  EXPECT_NE(p->devices[0].sources.at("sync_us").find("measured"), std::string::npos);
  EXPECT_NE(r.out.find("handoff wake-up: cpu stream"), std::string::npos) << r.out;
  EXPECT_GE(p->devices[0].resume_factor, 1.0);
  EXPECT_NE(p->devices[0].sources.at("resume_factor").find("measured"), std::string::npos);
  EXPECT_GT(p->devices[0].copied_read_gbps, 0);
  EXPECT_NE(p->devices[0].sources.at("copied_read_gbps").find("measured"), std::string::npos);
  EXPECT_GT(p->devices[0].copied_window_read_gbps, 0);
  EXPECT_NE(p->devices[0].sources.at("copied_window_read_gbps").find("depthwise"),
            std::string::npos);
  EXPECT_GT(p->devices[0].copied_depthwise_read_gbps, 0);
  EXPECT_NE(p->devices[0].sources.at("copied_depthwise_read_gbps").find("256 x 14 x 14"),
            std::string::npos);
  EXPECT_NE(p->devices[0].sources.at("reclaim_gbps").find("measured"), std::string::npos);
  EXPECT_GE(p->devices[0].reclaim_gbps, 0);
  Result bad = Braid({"calibrate", "--devices", "cuda"});
  EXPECT_NE(bad.status, 0);
  fs::remove_all(dir);
}

TEST(TrainCommandTest, WritesAPolicyAndALearningCurve) {
  const fs::path dir = TempDir("train");
  const std::string policy = (dir / "sparoa.bin").string();
  const std::string csv = (dir / "curve.csv").string();
  const std::string svg = (dir / "curve.svg").string();
  Result r = Braid({"train", "--policy", "sparoa", "--profiles", "jetson-orin-nano-8gb",
                    "--episodes", "6", "--random-graphs", "4", "--out", policy, "--csv", csv,
                    "--svg", svg});
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("SIMULATED"), std::string::npos) << r.out;
  EXPECT_GT(fs::file_size(policy), 0u);
  const std::string curve = ReadTextFile(csv);
  EXPECT_EQ(std::count(curve.begin(), curve.end(), '\n'), 7) << curve;  // header + 6 episodes
  EXPECT_NE(ReadTextFile(svg).find("<svg"), std::string::npos);
  EXPECT_NE(r.out.find("MLP baseline"), std::string::npos) << r.out;
  // braid plan reads the trained file; a bad one is a clear error.
  Result plan = Braid({"plan", "builtin:tiny_cnn", "--profile", "jetson-orin-nano-8gb",
                       "--policy", "sparoa", "--policy-file", policy});
  ASSERT_EQ(plan.status, 0) << plan.err;
  EXPECT_NE(plan.out.find("predicted S*="), std::string::npos) << plan.out;
  Result nopolish = Braid({"plan", "builtin:tiny_cnn", "--profile", "jetson-orin-nano-8gb",
                           "--policy", "sparoa", "--policy-file", policy, "--no-polish"});
  ASSERT_EQ(nopolish.status, 0) << nopolish.err;
  EXPECT_EQ(nopolish.out.find("local search"), std::string::npos) << nopolish.out;
  Result missing = Braid({"plan", "builtin:tiny_cnn", "--profile", "jetson-orin-nano-8gb",
                          "--policy", "sparoa", "--policy-file", (dir / "nope.bin").string()});
  EXPECT_NE(missing.status, 0);
  EXPECT_NE(missing.err.find("nope.bin"), std::string::npos) << missing.err;
  Result wrong = Braid({"plan", "builtin:tiny_cnn", "--policy", "heft", "--policy-file", policy});
  EXPECT_NE(wrong.status, 0);
  Result bad = Braid({"train", "--policy", "heft", "--out", policy});
  EXPECT_EQ(bad.status, 2) << bad.out;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace braid::cli
