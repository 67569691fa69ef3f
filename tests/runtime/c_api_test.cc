// The C API (include/braid/braid_c.h) on builtin:tiny_cnn: every option
// field reaching the session, the size-prefixed growth rule (older, newer and
// bad struct sizes), outputs equal to the C++ Session's on random inputs,
// placements with slices, notices, traces, plans saved and reloaded, and
// errors as status objects naming the bad argument. c_api_header_c.c is the
// same header compiled as C.
#include "braid/braid_c.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "api/c_api_internal.h"
#include "braid/braid.h"
#include "braid/slimmable.h"
#include "scheduler/plan.h"

extern "C" {
size_t braid_c_test_sizeof_options(void);
size_t braid_c_test_sizeof_placement(void);
size_t braid_c_test_options_min_size(void);
size_t braid_c_test_offsetof_policy_setting_count(void);
int braid_c_test_run_tiny_cnn(const char* devices, const char* policy, const float* input,
                              float* logits, char* device);
}

namespace {

// Owns a braid_status*.
class CStatus {
 public:
  explicit CStatus(braid_status* s) : s_(s) {}
  ~CStatus() { braid_status_free(s_); }
  CStatus(const CStatus&) = delete;
  CStatus& operator=(const CStatus&) = delete;
  bool ok() const { return s_ == nullptr; }
  braid_status_code code() const { return braid_status_get_code(s_); }
  std::string message() const { return braid_status_message(s_); }

 private:
  braid_status* s_;
};

using SessionPtr = std::unique_ptr<braid_session, decltype(&braid_session_close)>;

SessionPtr Open(const braid_session_options* options, const char* model = "builtin:tiny_cnn") {
  braid_session* session = nullptr;
  CStatus s(braid_session_open(model, options, &session));
  EXPECT_TRUE(s.ok()) << s.message();
  return SessionPtr(session, &braid_session_close);
}

std::vector<float> RandomImage(int64_t batch, unsigned seed) {
  std::vector<float> image(static_cast<size_t>(batch * 3 * 224 * 224));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  for (float& x : image) x = d(rng);
  return image;
}

// Runs `session` on `image` (batch from its size) and copies the logits.
std::vector<float> RunC(braid_session* session, const std::vector<float>& image) {
  const int64_t dims[4] = {static_cast<int64_t>(image.size() / (3 * 224 * 224)), 3, 224, 224};
  CStatus set(braid_session_set_input(session, "input", BRAID_F32, dims, 4, image.data()));
  EXPECT_TRUE(set.ok()) << set.message();
  CStatus run(braid_session_run(session));
  EXPECT_TRUE(run.ok()) << run.message();
  braid_tensor out;
  CStatus got(braid_session_get_output(session, "output", &out));
  EXPECT_TRUE(got.ok()) << got.message();
  if (!got.ok() || out.dtype != BRAID_F32 || out.rank != 2) return {};
  const float* data = static_cast<const float*>(out.data);
  return std::vector<float>(data, data + out.dims[0] * out.dims[1]);
}

std::vector<float> RunCpp(const braid::SessionOptions& options, std::vector<float> image) {
  auto session = braid::Session::Open("builtin:tiny_cnn", options);
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  if (!session.ok()) return {};
  const int64_t batch = static_cast<int64_t>(image.size() / (3 * 224 * 224));
  EXPECT_TRUE((*session)
                  ->SetInput("input", braid::Tensor::Borrow(braid::DataType::kF32,
                                                            {batch, 3, 224, 224}, image.data()))
                  .ok());
  EXPECT_TRUE((*session)->Run().ok());
  auto out = (*session)->GetOutput("output");
  EXPECT_TRUE(out.ok());
  if (!out.ok()) return {};
  return std::vector<float>(out->data<float>(), out->data<float>() + out->elements());
}

struct Placement {
  std::string node, op_type, device, implementation, reason, slice;
  bool fallback;
  bool operator==(const Placement&) const = default;
};

std::vector<Placement> Placements(braid_session* session) {
  std::vector<Placement> all;
  const size_t n = braid_session_placement_count(session);
  for (size_t i = 0; i < n; ++i) {
    braid_placement p;
    p.struct_size = sizeof(p);
    CStatus s(braid_session_placement(session, i, &p));
    EXPECT_TRUE(s.ok()) << s.message();
    if (!s.ok()) break;
    all.push_back({p.node, p.op_type, p.device, p.implementation, p.reason, p.slice,
                   p.fallback != 0});
  }
  return all;
}

int CountOn(const std::vector<Placement>& all, const std::string& device) {
  int n = 0;
  for (const Placement& p : all) n += p.device == device;
  return n;
}

std::string TempPath(const std::string& name) {
  return testing::TempDir() + "/braid_c_api_" + std::to_string(::getpid()) + "_" + name;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(CApi, VersionIsTheProjectVersion) {
  EXPECT_STREQ(braid_version(), BRAID_PROJECT_VERSION);
}

TEST(CApi, OptionsInitHasTheCppDefaults) {
  braid_session_options o;
  std::memset(&o, 0x5a, sizeof(o));
  braid_session_options_init(&o);
  EXPECT_EQ(o.struct_size, sizeof(braid_session_options));
  EXPECT_EQ(o.num_threads, 0);
  EXPECT_EQ(o.fuse, 1);
  EXPECT_STREQ(o.devices, "cpu");
  EXPECT_STREQ(o.policy, "cpu-only");
  EXPECT_EQ(o.trace, 0);
  EXPECT_EQ(o.pin_threads, 0);
  EXPECT_EQ(o.sparse_kernels, 1);
  EXPECT_EQ(o.adapt, 0);
  EXPECT_EQ(o.adapt_threads, 1);
  EXPECT_EQ(o.plan_file, nullptr);
  EXPECT_STREQ(o.vgpu_timing, "none");
  EXPECT_EQ(o.profile, nullptr);
  EXPECT_EQ(o.sparse_crossover, nullptr);
  EXPECT_EQ(o.policy_setting_keys, nullptr);
  EXPECT_EQ(o.policy_setting_values, nullptr);
  EXPECT_EQ(o.policy_setting_count, 0u);

  // Converted, the init'd struct is braid::SessionOptions{}.
  braid::SessionOptions got;
  got.num_threads = 7;  // overwritten: the struct has every field
  got.trace = true;
  ASSERT_TRUE(braid::SessionOptionsFromC(o, got).ok());
  const braid::SessionOptions want;
  EXPECT_EQ(got.num_threads, want.num_threads);
  EXPECT_EQ(got.devices, want.devices);
  EXPECT_EQ(got.policy, want.policy);
  EXPECT_EQ(got.fuse, want.fuse);
  EXPECT_EQ(got.plan_file, want.plan_file);
  EXPECT_EQ(got.trace, want.trace);
  EXPECT_EQ(got.pin_threads, want.pin_threads);
  EXPECT_EQ(got.vgpu_timing, want.vgpu_timing);
  EXPECT_EQ(got.policy_settings, want.policy_settings);
  EXPECT_EQ(got.profile, want.profile);
  EXPECT_EQ(got.sparse_kernels, want.sparse_kernels);
  EXPECT_EQ(got.sparse_crossover, want.sparse_crossover);
  EXPECT_EQ(got.adapt, want.adapt);
  EXPECT_EQ(got.adapt_threads, want.adapt_threads);
}

// Every field set away from its default, for the conversion tests.
struct AllSet {
  const char* keys[2] = {"threshold.intensity", "threshold.sparsity"};
  const char* values[2] = {"4", "0.25"};
  braid_session_options o;
  AllSet() {
    braid_session_options_init(&o);
    o.num_threads = 3;
    o.fuse = 0;
    o.devices = "cpu,vgpu";
    o.policy = "threshold";
    o.trace = 1;
    o.pin_threads = 1;
    o.sparse_kernels = 0;
    o.adapt = 1;
    o.adapt_threads = 0;
    o.plan_file = "plan.json";
    o.vgpu_timing = "orin-like";
    o.profile = "host-vgpu";
    o.sparse_crossover = "gemm=0.5";
    o.policy_setting_keys = keys;
    o.policy_setting_values = values;
    o.policy_setting_count = 2;
  }
};

TEST(CApi, EveryOptionFieldReachesSessionOptions) {
  AllSet all;
  braid::SessionOptions got;
  braid::Status s = braid::SessionOptionsFromC(all.o, got);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(got.num_threads, 3);
  EXPECT_FALSE(got.fuse);
  EXPECT_EQ(got.devices, (std::vector<std::string>{"cpu", "vgpu"}));
  EXPECT_EQ(got.policy, "threshold");
  EXPECT_TRUE(got.trace);
  EXPECT_TRUE(got.pin_threads);
  EXPECT_FALSE(got.sparse_kernels);
  EXPECT_TRUE(got.adapt);
  EXPECT_FALSE(got.adapt_threads);
  EXPECT_EQ(got.plan_file, "plan.json");
  EXPECT_EQ(got.vgpu_timing, "orin-like");
  EXPECT_EQ(got.profile, "host-vgpu");
  EXPECT_EQ(got.sparse_crossover, "gemm=0.5");
  EXPECT_EQ(got.policy_settings,
            (std::map<std::string, std::string>{{"threshold.intensity", "4"},
                                                {"threshold.sparsity", "0.25"}}));
}

TEST(CApi, OlderSizeStructKeepsDefaultsForTheRest) {
  // The same fully set struct, claimed to be the minimal size: only its
  // first four fields count.
  AllSet all;
  all.o.struct_size = BRAID_SESSION_OPTIONS_MIN_SIZE;
  braid::SessionOptions got;
  ASSERT_TRUE(braid::SessionOptionsFromC(all.o, got).ok());
  const braid::SessionOptions want;
  EXPECT_EQ(got.num_threads, 3);
  EXPECT_FALSE(got.fuse);
  EXPECT_EQ(got.devices, (std::vector<std::string>{"cpu", "vgpu"}));
  EXPECT_EQ(got.policy, "threshold");
  EXPECT_EQ(got.trace, want.trace);
  EXPECT_EQ(got.pin_threads, want.pin_threads);
  EXPECT_EQ(got.sparse_kernels, want.sparse_kernels);
  EXPECT_EQ(got.adapt, want.adapt);
  EXPECT_EQ(got.adapt_threads, want.adapt_threads);
  EXPECT_EQ(got.plan_file, want.plan_file);
  EXPECT_EQ(got.vgpu_timing, want.vgpu_timing);
  EXPECT_EQ(got.profile, want.profile);
  EXPECT_EQ(got.sparse_crossover, want.sparse_crossover);
  EXPECT_TRUE(got.policy_settings.empty());

  // A caller compiled with only the first fields ("v1"), followed in memory
  // by bytes that would be a trace flag and wild pointers if read.
  struct OptionsV1 {
    size_t struct_size;
    int num_threads;
    int fuse;
    const char* devices;
    const char* policy;
  };
  static_assert(sizeof(OptionsV1) == BRAID_SESSION_OPTIONS_MIN_SIZE);
  struct {
    OptionsV1 v1;
    unsigned char after[sizeof(braid_session_options)];
  } memory;
  std::memset(&memory, 0xa5, sizeof(memory));
  memory.v1 = {sizeof(OptionsV1), 1, 1, "cpu,vgpu", "gpu-only"};
  SessionPtr session = Open(reinterpret_cast<const braid_session_options*>(&memory.v1));
  ASSERT_NE(session, nullptr);
  const std::vector<float> image = RandomImage(1, 11);
  const std::vector<float> got_out = RunC(session.get(), image);
  const std::vector<Placement> placed = Placements(session.get());
  EXPECT_GT(CountOn(placed, "vgpu"), 0) << "devices and policy of the v1 struct were read";
  CStatus trace(braid_session_write_trace(session.get(), TempPath("v1_trace.json").c_str()));
  EXPECT_EQ(trace.code(), BRAID_FAILED_PRECONDITION) << "trace must default to off";
  braid::SessionOptions cpp;
  cpp.num_threads = 1;
  cpp.devices = {"cpu", "vgpu"};
  cpp.policy = "gpu-only";
  EXPECT_EQ(got_out, RunCpp(cpp, image));
}

TEST(CApi, BadStructSizesAreRejected) {
  for (size_t size : {size_t{0}, size_t{BRAID_SESSION_OPTIONS_MIN_SIZE - 1}, size_t{4097},
                      size_t{1} << 40}) {
    braid_session_options o;
    braid_session_options_init(&o);
    o.struct_size = size;
    braid_session* session = reinterpret_cast<braid_session*>(&o);  // must be reset
    CStatus s(braid_session_open("builtin:tiny_cnn", &o, &session));
    EXPECT_EQ(s.code(), BRAID_INVALID_ARGUMENT) << size;
    EXPECT_NE(s.message().find("struct_size is " + std::to_string(size)), std::string::npos)
        << s.message();
    EXPECT_EQ(session, nullptr);
  }
  // A newer caller's bigger struct: fine while the unknown bytes are zero.
  struct {
    braid_session_options o;
    uint64_t newer_field;
  } newer;
  std::memset(&newer, 0, sizeof(newer));
  braid_session_options_init(&newer.o);
  newer.o.struct_size = sizeof(newer);
  braid::SessionOptions got;
  EXPECT_TRUE(braid::SessionOptionsFromC(newer.o, got).ok());
  newer.newer_field = 1;
  braid::Status s = braid::SessionOptionsFromC(newer.o, got);
  EXPECT_EQ(s.code(), braid::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("newer option"), std::string::npos) << s.message();
}

TEST(CApi, RoundTripMatchesCppSession) {
  braid_session_options options;
  braid_session_options_init(&options);
  options.num_threads = 1;
  SessionPtr session = Open(&options);
  ASSERT_NE(session, nullptr);

  ASSERT_EQ(braid_session_input_count(session.get()), 1u);
  ASSERT_EQ(braid_session_output_count(session.get()), 1u);
  braid_tensor_info in;
  ASSERT_TRUE(CStatus(braid_session_input_info(session.get(), 0, &in)).ok());
  EXPECT_STREQ(in.name, "input");
  EXPECT_EQ(in.dtype, BRAID_F32);
  ASSERT_EQ(in.rank, 4u);
  EXPECT_EQ(in.dims[0], -1);
  EXPECT_STREQ(in.symbols[0], "N");
  EXPECT_EQ(in.dims[1], 3);
  EXPECT_STREQ(in.symbols[1], "");
  braid_tensor_info out_info;
  ASSERT_TRUE(CStatus(braid_session_output_info(session.get(), 0, &out_info)).ok());
  EXPECT_STREQ(out_info.name, "output");
  EXPECT_EQ(CStatus(braid_session_output_info(session.get(), 1, &out_info)).code(),
            BRAID_OUT_OF_RANGE);

  // Before a run: nothing placed, nothing to save or trace.
  EXPECT_EQ(braid_session_placement_count(session.get()), 0u);
  EXPECT_EQ(CStatus(braid_session_save_plan(session.get(), TempPath("early.json").c_str())).code(),
            BRAID_FAILED_PRECONDITION);

  const std::vector<float> image = RandomImage(2, 3);
  const std::vector<float> got = RunC(session.get(), image);
  ASSERT_EQ(got.size(), 2000u);
  EXPECT_GT(braid_session_planned_peak_bytes(session.get()), 0u);
  const std::vector<Placement> placed = Placements(session.get());
  ASSERT_FALSE(placed.empty());
  EXPECT_EQ(CountOn(placed, "cpu"), static_cast<int>(placed.size()));
  EXPECT_FALSE(placed[0].implementation.empty());
  EXPECT_TRUE(placed[0].slice.empty());

  braid::SessionOptions cpp_options;
  cpp_options.num_threads = 1;
  const std::vector<float> want = RunCpp(cpp_options, image);
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(got[i], want[i]) << "element " << i;
  // A second run on other data gives other numbers (the outputs are live).
  const std::vector<float> image2 = RandomImage(2, 4);
  const std::vector<float> got2 = RunC(session.get(), image2);
  EXPECT_NE(got2, got);
  EXPECT_EQ(got2, RunCpp(cpp_options, image2));

  // Errors come back as status objects with the C++ messages.
  const int64_t dims[4] = {2, 3, 224, 224};
  CStatus wrong(braid_session_set_input(session.get(), "image", BRAID_F32, dims, 4, image.data()));
  EXPECT_EQ(wrong.code(), BRAID_INVALID_ARGUMENT);
  EXPECT_NE(wrong.message().find("input: f32[N,3,"), std::string::npos) << wrong.message();
  braid_tensor out;
  EXPECT_EQ(CStatus(braid_session_get_output(session.get(), "nope", &out)).code(),
            BRAID_NOT_FOUND);
}

TEST(CApi, CallerCompiledAsCMatchesTheCppApi) {
  // The C compiler's view of the structs is the library's.
  EXPECT_EQ(braid_c_test_sizeof_options(), sizeof(braid_session_options));
  EXPECT_EQ(braid_c_test_sizeof_placement(), sizeof(braid_placement));
  EXPECT_EQ(braid_c_test_options_min_size(), BRAID_SESSION_OPTIONS_MIN_SIZE);
  EXPECT_EQ(braid_c_test_offsetof_policy_setting_count(),
            offsetof(braid_session_options, policy_setting_count));
  const std::vector<float> image = RandomImage(1, 5);
  for (const auto& [devices, policy, device] :
       {std::tuple{"cpu", "cpu-only", "cpu"}, std::tuple{"cpu,vgpu", "gpu-only", "vgpu"}}) {
    std::vector<float> logits(1000, 0.0f);
    char placed[64] = "";
    ASSERT_EQ(braid_c_test_run_tiny_cnn(devices, policy, image.data(), logits.data(), placed),
              BRAID_OK)
        << devices;
    EXPECT_STREQ(placed, device);
    braid::SessionOptions cpp;
    cpp.num_threads = 1;
    cpp.devices = {"cpu"};
    if (std::string(devices) != "cpu") cpp.devices.push_back("vgpu");
    cpp.policy = policy;
    EXPECT_EQ(logits, RunCpp(cpp, image)) << devices;
  }
}

TEST(CApi, DevicesAndPolicyPlaceNodesOnVgpu) {
  braid_session_options options;
  braid_session_options_init(&options);
  options.num_threads = 1;
  options.devices = "cpu,vgpu";
  options.policy = "gpu-only";
  SessionPtr session = Open(&options);
  ASSERT_NE(session, nullptr);
  const std::vector<float> image = RandomImage(1, 7);
  const std::vector<float> got = RunC(session.get(), image);
  const std::vector<Placement> placed = Placements(session.get());
  ASSERT_FALSE(placed.empty());
  EXPECT_EQ(CountOn(placed, "vgpu"), static_cast<int>(placed.size()))
      << "gpu-only puts every node of tiny_cnn on the vgpu";
  braid::SessionOptions cpp;
  cpp.num_threads = 1;
  EXPECT_EQ(got, RunCpp(cpp, image)) << "the vgpu runs the CPU kernels";

  options.devices = "cpu,,vgpu";
  braid_session* bad = nullptr;
  CStatus s(braid_session_open("builtin:tiny_cnn", &options, &bad));
  EXPECT_EQ(s.code(), BRAID_INVALID_ARGUMENT);
  EXPECT_NE(s.message().find("devices: empty name in 'cpu,,vgpu'"), std::string::npos)
      << s.message();
  options.devices = "cpu,tpu";
  CStatus unknown(braid_session_open("builtin:tiny_cnn", &options, &bad));
  EXPECT_EQ(unknown.code(), BRAID_INVALID_ARGUMENT);
  EXPECT_NE(unknown.message().find("unknown device 'tpu'"), std::string::npos)
      << unknown.message();
  options.devices = "cuda";
  CStatus cuda(braid_session_open("builtin:tiny_cnn", &options, &bad));
  if (!cuda.ok()) {  // a CUDA build on a machine with a GPU opens it
    EXPECT_EQ(cuda.code(), BRAID_UNAVAILABLE);
    EXPECT_NE(cuda.message().find("cuda: unavailable"), std::string::npos) << cuda.message();
  }
  braid_session_close(bad);
}

TEST(CApi, PolicySettingsReachThePolicy) {
  braid_session_options options;
  braid_session_options_init(&options);
  options.num_threads = 1;
  options.devices = "cpu,vgpu";
  options.policy = "threshold";
  const char* keys[] = {"threshold.intensity"};
  const char* low[] = {"0"};
  const char* high[] = {"1e9"};
  options.policy_setting_keys = keys;
  options.policy_setting_count = 1;
  const std::vector<float> image = RandomImage(1, 9);
  int on_vgpu[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    options.policy_setting_values = i == 0 ? low : high;
    SessionPtr session = Open(&options);
    ASSERT_NE(session, nullptr);
    RunC(session.get(), image);
    on_vgpu[i] = CountOn(Placements(session.get()), "vgpu");
  }
  EXPECT_GT(on_vgpu[0], 0) << "intensity threshold 0: dense ops go to the vgpu";
  EXPECT_EQ(on_vgpu[1], 0) << "intensity threshold 1e9: nothing does";

  braid_session* session = nullptr;
  const char* unknown[] = {"threshold.nope"};
  options.policy_setting_keys = unknown;
  CStatus bad_key(braid_session_open("builtin:tiny_cnn", &options, &session));
  EXPECT_EQ(bad_key.code(), BRAID_INVALID_ARGUMENT);
  EXPECT_NE(bad_key.message().find("threshold.nope"), std::string::npos) << bad_key.message();
  const char* other[] = {"sparoa.polish"};
  options.policy_setting_keys = other;
  CStatus other_policy(braid_session_open("builtin:tiny_cnn", &options, &session));
  EXPECT_EQ(other_policy.code(), BRAID_INVALID_ARGUMENT);
  EXPECT_NE(other_policy.message().find("is for policy \"sparoa\""), std::string::npos)
      << other_policy.message();
  options.policy_setting_keys = nullptr;
  CStatus null_keys(braid_session_open("builtin:tiny_cnn", &options, &session));
  EXPECT_EQ(null_keys.code(), BRAID_INVALID_ARGUMENT);
  EXPECT_NE(null_keys.message().find("policy_setting_keys is NULL"), std::string::npos)
      << null_keys.message();
  const char* twice[] = {"threshold.intensity", "threshold.intensity"};
  const char* values[] = {"1", nullptr};
  options.policy_setting_keys = twice;
  options.policy_setting_values = values;
  options.policy_setting_count = 2;
  CStatus null_value(braid_session_open("builtin:tiny_cnn", &options, &session));
  EXPECT_NE(null_value.message().find("policy_setting_values[1] is NULL"), std::string::npos)
      << null_value.message();
  values[1] = "2";
  CStatus repeated(braid_session_open("builtin:tiny_cnn", &options, &session));
  EXPECT_EQ(repeated.code(), BRAID_INVALID_ARGUMENT);
  EXPECT_NE(repeated.message().find("given twice"), std::string::npos) << repeated.message();
  EXPECT_EQ(session, nullptr);
}

TEST(CApi, TraceWritesChromeTraceJson) {
  braid_session_options options;
  braid_session_options_init(&options);
  options.num_threads = 1;
  options.trace = 1;
  SessionPtr session = Open(&options);
  ASSERT_NE(session, nullptr);
  const std::string path = TempPath("trace.json");
  EXPECT_EQ(CStatus(braid_session_write_trace(session.get(), path.c_str())).code(),
            BRAID_FAILED_PRECONDITION)
      << "no run yet";
  RunC(session.get(), RandomImage(1, 13));
  CStatus written(braid_session_write_trace(session.get(), path.c_str()));
  ASSERT_TRUE(written.ok()) << written.message();
  const std::string json = ReadFile(path);
  EXPECT_NE(json.find("\"traceEvents\""), std::string::npos) << json.substr(0, 200);
  EXPECT_NE(json.find("stem"), std::string::npos) << "a step per node";
  std::remove(path.c_str());

  options.trace = 0;
  SessionPtr untraced = Open(&options);
  RunC(untraced.get(), RandomImage(1, 13));
  CStatus off(braid_session_write_trace(untraced.get(), path.c_str()));
  EXPECT_EQ(off.code(), BRAID_FAILED_PRECONDITION);
  EXPECT_NE(off.message().find("tracing is off"), std::string::npos) << off.message();
}

TEST(CApi, SavedPlanReopensWithTheSamePlacements) {
  braid_session_options options;
  braid_session_options_init(&options);
  options.num_threads = 1;
  options.devices = "cpu,vgpu";
  options.policy = "gpu-only";
  SessionPtr first = Open(&options);
  ASSERT_NE(first, nullptr);
  const std::vector<float> image = RandomImage(1, 17);
  RunC(first.get(), image);
  const std::string saved = TempPath("gpu_only_plan.json");
  CStatus s(braid_session_save_plan(first.get(), saved.c_str()));
  ASSERT_TRUE(s.ok()) << s.message();

  // A sliced plan: the 1x1 conv "/pw/Conv" split between the CPU and the vgpu.
  auto plan = braid::PlanFromJson(ReadFile(saved));
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->policy, "gpu-only");
  bool found = false;
  for (braid::NodePlan& n : plan->nodes) {
    if (n.node != "/pw/Conv") continue;
    n.device = "cpu";
    n.slice = braid::SliceSpec{braid::SliceAxis::kOutputChannels, "vgpu", 0.5};
    found = true;
  }
  ASSERT_TRUE(found) << ReadFile(saved);
  const std::string sliced_file = TempPath("sliced_plan.json");
  std::ofstream(sliced_file) << braid::PlanToJson(*plan);

  // Reopened with each plan (policy left at cpu-only: the plan file must
  // win), then saved and reopened once more: the same placements each time.
  for (const std::string& file : {saved, sliced_file}) {
    options.policy = "cpu-only";
    options.plan_file = file.c_str();
    SessionPtr loaded = Open(&options);
    ASSERT_NE(loaded, nullptr);
    const std::vector<float> out = RunC(loaded.get(), image);
    const std::vector<Placement> placed = Placements(loaded.get());
    EXPECT_GT(CountOn(placed, "vgpu"), 0) << file;
    if (file == saved) {
      EXPECT_EQ(placed, Placements(first.get()));
    }
    if (file == sliced_file) {
      int parts = 0;
      for (const Placement& p : placed)
        if (p.node.rfind("/pw/Conv#", 0) == 0) {
          ++parts;
          EXPECT_FALSE(p.slice.empty()) << p.node;
        }
      EXPECT_GE(parts, 2) << "pw sliced into parts";
    }
    const std::string again = TempPath("again.json");
    ASSERT_TRUE(CStatus(braid_session_save_plan(loaded.get(), again.c_str())).ok());
    options.plan_file = again.c_str();
    SessionPtr reloaded = Open(&options);
    ASSERT_NE(reloaded, nullptr);
    EXPECT_EQ(RunC(reloaded.get(), image), out);
    EXPECT_EQ(Placements(reloaded.get()), placed) << file;
    std::remove(again.c_str());
  }
  std::remove(saved.c_str());
  std::remove(sliced_file.c_str());

  options.plan_file = "/nonexistent/plan.json";
  braid_session* session = nullptr;
  CStatus missing(braid_session_open("builtin:tiny_cnn", &options, &session));
  EXPECT_EQ(missing.code(), BRAID_NOT_FOUND);
  EXPECT_NE(missing.message().find("/nonexistent/plan.json"), std::string::npos);
  CStatus unwritable(braid_session_save_plan(first.get(), "/nonexistent/dir/plan.json"));
  EXPECT_EQ(unwritable.code(), BRAID_NOT_FOUND);
  EXPECT_NE(unwritable.message().find("/nonexistent/dir/plan.json"), std::string::npos);
}

TEST(CApi, NoticesMatchTheCppSession) {
  const std::vector<float> image = RandomImage(1, 19);
  for (int pin : {0, 1}) {
    braid_session_options options;
    braid_session_options_init(&options);
    options.num_threads = 1;
    options.devices = "cpu,vgpu";
    options.policy = "gpu-only";
    options.pin_threads = pin;
    SessionPtr session = Open(&options);
    ASSERT_NE(session, nullptr);
    RunC(session.get(), image);
    std::vector<std::string> notices;
    for (size_t i = 0; i < braid_session_notice_count(session.get()); ++i) {
      const char* notice = nullptr;
      ASSERT_TRUE(CStatus(braid_session_notice(session.get(), i, &notice)).ok());
      notices.push_back(notice);
    }
    const char* notice = nullptr;
    EXPECT_EQ(CStatus(braid_session_notice(session.get(), notices.size(), &notice)).code(),
              BRAID_OUT_OF_RANGE);

    braid::SessionOptions cpp;
    cpp.num_threads = 1;
    cpp.devices = {"cpu", "vgpu"};
    cpp.policy = "gpu-only";
    cpp.pin_threads = pin != 0;
    auto want = braid::Session::Open("builtin:tiny_cnn", cpp);
    ASSERT_TRUE(want.ok());
    std::vector<float> copy = image;
    ASSERT_TRUE((*want)
                    ->SetInput("input", braid::Tensor::Borrow(braid::DataType::kF32,
                                                              {1, 3, 224, 224}, copy.data()))
                    .ok());
    ASSERT_TRUE((*want)->Run().ok());
    EXPECT_EQ(notices, (*want)->notices());
    if (pin) {
      // Pinned, or why not (one core, no worker): the engine always says.
      ASSERT_EQ(notices.size(), 1u);
      EXPECT_EQ(notices[0].rfind("threads ", 0), 0u) << notices[0];
    } else {
      EXPECT_TRUE(notices.empty()) << notices[0];
    }
  }
}

TEST(CApi, OtherOptionsReachTheSession) {
  braid_session_options options;
  braid_session* session = nullptr;
  auto open_error = [&](braid_session_options& o) {
    auto s = std::make_unique<CStatus>(braid_session_open("builtin:tiny_cnn", &o, &session));
    EXPECT_EQ(session, nullptr);
    return s;
  };
  braid_session_options_init(&options);
  options.profile = "no-such-profile";
  auto profile = open_error(options);
  EXPECT_FALSE(profile->ok());
  EXPECT_NE(profile->message().find("no-such-profile"), std::string::npos) << profile->message();

  braid_session_options_init(&options);
  options.devices = "cpu,vgpu";
  options.vgpu_timing = "no-such-timing";
  auto timing = open_error(options);
  EXPECT_NE(timing->message().find("unknown vgpu timing 'no-such-timing'"), std::string::npos)
      << timing->message();
  options.vgpu_timing = "orin-like";
  EXPECT_NE(Open(&options), nullptr);

  braid_session_options_init(&options);
  options.sparse_crossover = "conv1x1=2";
  auto crossover = open_error(options);
  EXPECT_EQ(crossover->code(), BRAID_INVALID_ARGUMENT);
  EXPECT_NE(crossover->message().find("sparse_crossover"), std::string::npos)
      << crossover->message();

  // adapt predicts every device: the built-in host profile has no vgpu.
  braid_session_options_init(&options);
  options.devices = "cpu,vgpu";
  options.profile = "host";
  EXPECT_NE(Open(&options), nullptr);
  options.adapt = 1;
  auto adapt = open_error(options);
  EXPECT_EQ(adapt->code(), BRAID_INVALID_ARGUMENT);
  EXPECT_NE(adapt->message().find("adapt: device profile 'host' has no device 'vgpu'"),
            std::string::npos)
      << adapt->message();

  braid_session_options_init(&options);
  options.num_threads = -1;
  EXPECT_EQ(open_error(options)->code(), BRAID_INVALID_ARGUMENT);

  // fuse: BatchNorms folded (on) or run as nodes (off).
  size_t nodes[2] = {0, 0};
  for (int fuse : {0, 1}) {
    braid_session_options_init(&options);
    options.num_threads = 1;
    options.fuse = fuse;
    SessionPtr s = Open(&options);
    ASSERT_NE(s, nullptr);
    RunC(s.get(), RandomImage(1, 23));
    int bn = 0;
    for (const Placement& p : Placements(s.get())) bn += p.op_type == "BatchNormalization";
    nodes[fuse] = braid_session_placement_count(s.get());
    EXPECT_EQ(bn > 0, fuse == 0) << "fuse " << fuse;
  }
  EXPECT_GT(nodes[0], nodes[1]);
}

TEST(CApi, PlacementStructSizeBoundsWhatIsWritten) {
  braid_session_options options;
  braid_session_options_init(&options);
  options.num_threads = 1;
  SessionPtr session = Open(&options);
  RunC(session.get(), RandomImage(1, 29));
  braid_placement p;
  std::memset(&p, 0, sizeof(p));
  const char* sentinel = "untouched";
  p.slice = sentinel;
  p.struct_size = BRAID_PLACEMENT_MIN_SIZE;  // an older caller: no slice field
  ASSERT_TRUE(CStatus(braid_session_placement(session.get(), 0, &p)).ok());
  EXPECT_NE(p.node, nullptr);
  EXPECT_EQ(p.slice, sentinel);
  p.struct_size = sizeof(p);
  ASSERT_TRUE(CStatus(braid_session_placement(session.get(), 0, &p)).ok());
  EXPECT_STREQ(p.slice, "");
  p.struct_size = 0;
  CStatus zero(braid_session_placement(session.get(), 0, &p));
  EXPECT_EQ(zero.code(), BRAID_INVALID_ARGUMENT);
  EXPECT_NE(zero.message().find("placement->struct_size is 0"), std::string::npos);
  p.struct_size = sizeof(p);
  EXPECT_EQ(CStatus(braid_session_placement(session.get(), 1000, &p)).code(), BRAID_OUT_OF_RANGE);
}

TEST(CApi, NullArgumentsNameTheArgument) {
  braid_session_options options;
  braid_session_options_init(&options);
  options.num_threads = 1;
  SessionPtr owned = Open(&options);
  braid_session* s = owned.get();
  braid_session* out_session = nullptr;
  braid_tensor_info info;
  braid_tensor tensor;
  braid_placement placement;
  placement.struct_size = sizeof(placement);
  const char* notice;
  const int64_t dims[4] = {1, 3, 224, 224};
  const std::vector<std::pair<braid_status*, std::string>> cases = {
      {braid_session_open(nullptr, &options, &out_session), "braid_session_open: model is NULL"},
      {braid_session_open("builtin:tiny_cnn", &options, nullptr),
       "braid_session_open: session is NULL"},
      {braid_session_input_info(nullptr, 0, &info), "braid_session_input_info: session is NULL"},
      {braid_session_input_info(s, 0, nullptr), "braid_session_input_info: info is NULL"},
      {braid_session_output_info(nullptr, 0, &info), "braid_session_output_info: session is NULL"},
      {braid_session_output_info(s, 0, nullptr), "braid_session_output_info: info is NULL"},
      {braid_session_set_input(nullptr, "input", BRAID_F32, dims, 4, nullptr),
       "braid_session_set_input: session is NULL"},
      {braid_session_set_input(s, nullptr, BRAID_F32, dims, 4, nullptr),
       "braid_session_set_input: name is NULL"},
      {braid_session_set_input(s, "input", BRAID_F32, nullptr, 4, nullptr),
       "braid_session_set_input: dims (rank > 0) is NULL"},
      {braid_session_run(nullptr), "braid_session_run: session is NULL"},
      {braid_session_get_output(nullptr, "output", &tensor),
       "braid_session_get_output: session is NULL"},
      {braid_session_get_output(s, nullptr, &tensor), "braid_session_get_output: name is NULL"},
      {braid_session_get_output(s, "output", nullptr),
       "braid_session_get_output: output is NULL"},
      {braid_session_placement(nullptr, 0, &placement),
       "braid_session_placement: session is NULL"},
      {braid_session_placement(s, 0, nullptr), "braid_session_placement: placement is NULL"},
      {braid_session_notice(nullptr, 0, &notice), "braid_session_notice: session is NULL"},
      {braid_session_notice(s, 0, nullptr), "braid_session_notice: notice is NULL"},
      {braid_session_write_trace(nullptr, "t.json"), "braid_session_write_trace: session is NULL"},
      {braid_session_write_trace(s, nullptr), "braid_session_write_trace: path is NULL"},
      {braid_session_save_plan(nullptr, "p.json"), "braid_session_save_plan: session is NULL"},
      {braid_session_save_plan(s, nullptr), "braid_session_save_plan: path is NULL"},
  };
  for (const auto& [status, message] : cases) {
    CStatus owned_status(status);
    EXPECT_EQ(owned_status.code(), BRAID_INVALID_ARGUMENT) << message;
    EXPECT_EQ(owned_status.message(), message);
  }
  EXPECT_EQ(out_session, nullptr);
  EXPECT_EQ(braid_session_input_count(nullptr), 0u);
  EXPECT_EQ(braid_session_output_count(nullptr), 0u);
  EXPECT_EQ(braid_session_placement_count(nullptr), 0u);
  EXPECT_EQ(braid_session_notice_count(nullptr), 0u);
  EXPECT_EQ(braid_session_planned_peak_bytes(nullptr), 0u);
  EXPECT_EQ(braid_status_get_code(nullptr), BRAID_OK);
  EXPECT_STREQ(braid_status_message(nullptr), "OK");
  braid_status_free(nullptr);
  braid_session_close(nullptr);
  braid_session_options_init(nullptr);

  CStatus missing(braid_session_open("/nonexistent.onnx", nullptr, &out_session));
  EXPECT_EQ(missing.code(), BRAID_NOT_FOUND);
  EXPECT_EQ(out_session, nullptr);
}

}  // namespace

namespace braid {
namespace {

// The slimmable C calls against braid::SlimmableModel on the same input.
TEST(CApiSlimmable, SegmentRunsAsTheCppApiAndErrorsAreCodes) {
  braid_slimmable* model = nullptr;
  {
    CStatus s(braid_slimmable_open("builtin:slim_resnet", &model));
    ASSERT_TRUE(s.ok()) << s.message();
  }
  EXPECT_EQ(braid_slimmable_segment_count(model), 4);
  ASSERT_EQ(braid_slimmable_width_count(model), 4u);
  EXPECT_EQ(braid_slimmable_width(model, 0), 1.0);
  EXPECT_EQ(braid_slimmable_width(model, 3), 0.25);
  EXPECT_EQ(braid_slimmable_width(model, 4), 0.0);
  uint64_t bytes = 0;
  {
    CStatus s(braid_slimmable_segment_weight_bytes(model, 1, 0.5, 0.5, &bytes));
    ASSERT_TRUE(s.ok()) << s.message();
  }
  braid_session_options options;
  braid_session_options_init(&options);
  options.num_threads = 1;
  braid_session* segment = nullptr;
  {
    CStatus s(braid_slimmable_open_segment(model, 0, 0.5, 1.0, &options, &segment));
    ASSERT_TRUE(s.ok()) << s.message();
  }
  std::vector<float> image(3 * 32 * 32);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (float& v : image) v = u(rng);
  const int64_t dims[4] = {1, 3, 32, 32};
  braid_tensor out;
  {
    CStatus s(braid_session_set_input(segment, "input", BRAID_F32, dims, 4, image.data()));
    ASSERT_TRUE(s.ok()) << s.message();
    CStatus r(braid_session_run(segment));
    ASSERT_TRUE(r.ok()) << r.message();
    braid_tensor_info info;
    CStatus i(braid_session_output_info(segment, 0, &info));
    ASSERT_TRUE(i.ok());
    CStatus g(braid_session_get_output(segment, info.name, &out));
    ASSERT_TRUE(g.ok()) << g.message();
  }
  ASSERT_EQ(out.rank, 4u);
  EXPECT_EQ(out.dims[1], 16);

  StatusOr<std::unique_ptr<SlimmableModel>> cpp = SlimmableModel::Open("builtin:slim_resnet");
  ASSERT_TRUE(cpp.ok());
  EXPECT_EQ(*(*cpp)->SegmentWeightBytes(1, 0.5, 0.5), bytes);
  SessionOptions cpp_options;
  cpp_options.num_threads = 1;
  StatusOr<std::unique_ptr<Session>> want = (*cpp)->OpenSegment(0, 0.5, 1.0, cpp_options);
  ASSERT_TRUE(want.ok());
  ASSERT_TRUE((*want)->SetInput("input", Tensor::Borrow(DataType::kF32, {1, 3, 32, 32}, image.data())).ok());
  ASSERT_TRUE((*want)->Run().ok());
  StatusOr<Tensor> expected = (*want)->GetOutput((*want)->outputs()[0].name);
  ASSERT_TRUE(expected.ok());
  ASSERT_EQ(expected->elements(), 16 * 32 * 32);
  const float* got = static_cast<const float*>(out.data);
  for (int64_t i = 0; i < expected->elements(); ++i) ASSERT_EQ(got[i], expected->data<float>()[i]) << i;

  braid_session* bad = nullptr;
  CStatus width(braid_slimmable_open_segment(model, 1, 0.3, 1.0, nullptr, &bad));
  EXPECT_EQ(width.code(), BRAID_INVALID_ARGUMENT);
  EXPECT_EQ(bad, nullptr);
  braid_session_close(segment);
  braid_slimmable_close(model);

  braid_slimmable* plain = nullptr;
  CStatus not_slimmable(braid_slimmable_open("builtin:tiny_cnn", &plain));
  EXPECT_EQ(not_slimmable.code(), BRAID_NOT_FOUND);
  EXPECT_EQ(plain, nullptr);
  CStatus null_arg(braid_slimmable_open("builtin:slim_resnet", nullptr));
  EXPECT_EQ(null_arg.code(), BRAID_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace braid
