// `braid run`: JSON report, .npy inputs and outputs (checked against a Session
// run in-process on the same input), and bad input exiting 2.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "braid/braid.h"
#include "tests/onnx/onnx_builders.h"
#include "tests/tools/cli_test_util.h"
#include "tools/commands.h"
#include "tools/npy.h"

namespace braid::cli {
namespace {

namespace fs = std::filesystem;

using Result = CliResult;

Result BraidRun(std::vector<std::string> args) { return RunCliCommand("run", std::move(args)); }

fs::path TempDir(const std::string& tag) {
  fs::path dir = fs::temp_directory_path() /
                 ("braid_run_test_" + tag + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// A strict little JSON checker: true when `s` is exactly one JSON value.
class JsonChecker {
 public:
  explicit JsonChecker(const std::string& s) : s_(s) {}
  bool Valid() {
    Space();
    if (!Value()) return false;
    Space();
    return i_ == s_.size();
  }

 private:
  void Space() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool Lit(const char* w) {
    const size_t n = std::strlen(w);
    if (s_.compare(i_, n, w) != 0) return false;
    i_ += n;
    return true;
  }
  bool String() {
    if (i_ >= s_.size() || s_[i_] != '"') return false;
    for (++i_; i_ < s_.size(); ++i_) {
      if (s_[i_] == '\\') {
        ++i_;
      } else if (s_[i_] == '"') {
        ++i_;
        return true;
      } else if (static_cast<unsigned char>(s_[i_]) < 0x20) {
        return false;
      }
    }
    return false;
  }
  bool Number() {
    const size_t start = i_;
    while (i_ < s_.size() && std::strchr("+-0123456789.eE", s_[i_])) ++i_;
    if (i_ == start) return false;
    char* end = nullptr;
    std::strtod(s_.c_str() + start, &end);
    return end == s_.c_str() + i_;
  }
  bool Value() {
    Space();
    if (i_ >= s_.size()) return false;
    const char c = s_[i_];
    if (c == '{' || c == '[') {
      const char close = c == '{' ? '}' : ']';
      ++i_;
      Space();
      if (i_ < s_.size() && s_[i_] == close) return ++i_, true;
      while (true) {
        Space();
        if (c == '{') {
          if (!String()) return false;
          Space();
          if (!Lit(":")) return false;
        }
        if (!Value()) return false;
        Space();
        if (Lit(",")) continue;
        return Lit(close == '}' ? "}" : "]");
      }
    }
    if (c == '"') return String();
    if (Lit("true") || Lit("false") || Lit("null")) return true;
    return Number();
  }
  const std::string& s_;
  size_t i_ = 0;
};

double JsonNumberAfter(const std::string& json, const std::string& key) {
  const size_t at = json.find("\"" + key + "\":");
  EXPECT_NE(at, std::string::npos) << key << " in " << json;
  if (at == std::string::npos) return std::nan("");
  return std::strtod(json.c_str() + at + key.size() + 3, nullptr);
}

std::vector<float> RandomImage(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) {
    x = d(rng);
    if (x == 0.0f) x = 0.5f;
  }
  return v;
}

TEST(RunCommandTest, JsonReport) {
  const Result r = BraidRun({"builtin:tiny_cnn", "--json", "--iterations", "5", "--warmup", "1",
                        "--threads", "1", "--batch", "2", "--seed", "3"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(JsonChecker(r.out).Valid()) << r.out;
  const double min = JsonNumberAfter(r.out, "min");
  const double median = JsonNumberAfter(r.out, "median");
  const double p90 = JsonNumberAfter(r.out, "p90");
  EXPECT_GT(min, 0);
  EXPECT_LE(min, median);
  EXPECT_LE(median, p90);
  EXPECT_EQ(JsonNumberAfter(r.out, "iterations"), 5);
  EXPECT_EQ(JsonNumberAfter(r.out, "threads"), 1);
  EXPECT_EQ(JsonNumberAfter(r.out, "seed"), 3);
  EXPECT_GT(JsonNumberAfter(r.out, "peak_bytes"), 0);
  EXPECT_NE(r.out.find("\"placements\":{\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"fallbacks\":["), std::string::npos);
  // The symbolic batch N took --batch.
  EXPECT_NE(r.out.find("\"outputs\":[{\"name\":\"output\",\"shape\":[2,1000],\"dtype\":\"f32\""),
            std::string::npos)
      << r.out;
}

TEST(RunCommandTest, TextReport) {
  const Result r = BraidRun({"builtin:tiny_cnn", "--iterations", "2", "--warmup", "0"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("input: input f32[1,3,224,224] from random (seed 1)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("latency (CPU): min "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("planned peak memory: "), std::string::npos);
  EXPECT_NE(r.out.find("placements: "), std::string::npos);
  EXPECT_NE(r.out.find(" fallbacks\n"), std::string::npos);
  EXPECT_NE(r.out.find("  output f32[1,1000]  min "), std::string::npos) << r.out;
}

// The .npy given with --input is what runs: the written output equals an
// in-process Session run on the same data, and differs from a random input.
TEST(RunCommandTest, NpyInputIsUsedAndOutputWritten) {
  const fs::path dir = TempDir("npy");
  const std::vector<int64_t> dims = {1, 3, 224, 224};
  std::vector<float> image = RandomImage(3 * 224 * 224, 11);
  ASSERT_TRUE(npy::WriteFile((dir / "x.npy").string(), DataType::kF32, dims, image.data()).ok());

  const Result r = BraidRun({"builtin:tiny_cnn", "--input", "input=" + (dir / "x.npy").string(),
                        "--output-dir", (dir / "out").string(), "--threads", "1",
                        "--iterations", "1", "--warmup", "0"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("from " + (dir / "x.npy").string()), std::string::npos) << r.out;
  StatusOr<npy::Array> written = npy::ReadFile((dir / "out" / "output.npy").string());
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  ASSERT_EQ(written->dtype, DataType::kF32);
  ASSERT_EQ(written->dims, (std::vector<int64_t>{1, 1000}));
  const auto* got = reinterpret_cast<const float*>(written->data.data());

  SessionOptions options;
  options.num_threads = 1;
  StatusOr<std::unique_ptr<Session>> session = Session::Open("builtin:tiny_cnn", options);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  ASSERT_TRUE((*session)->SetInput("input", Tensor::Borrow(DataType::kF32, dims, image.data())).ok());
  ASSERT_TRUE((*session)->Run().ok());
  StatusOr<Tensor> ref = (*session)->GetOutput("output");
  ASSERT_TRUE(ref.ok());
  ASSERT_EQ(ref->elements(), 1000);
  double max_ref = 0, max_err = 0;
  for (int i = 0; i < 1000; ++i) {
    max_ref = std::max(max_ref, std::fabs(double{ref->data<float>()[i]}));
    max_err = std::max(max_err, std::fabs(double{ref->data<float>()[i]} - got[i]));
  }
  ASSERT_GT(max_ref, 0);
  // Same code, same threads: equal up to float reassociation at most.
  EXPECT_LE(max_err, 1e-5 * max_ref);

  // A random input gives another output (so the file above was really used).
  const Result random = BraidRun({"builtin:tiny_cnn", "--output-dir", (dir / "random").string(),
                             "--threads", "1", "--iterations", "1", "--warmup", "0"});
  ASSERT_EQ(random.status, 0) << random.err;
  StatusOr<npy::Array> other = npy::ReadFile((dir / "random" / "output.npy").string());
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->data, written->data);
  fs::remove_all(dir);
}

// A model on f64 (CumSum, Mod, Cast to f32): `braid inspect`, `convert` and
// `run` take it, the .npy output keeps f64, and the nodes the CPU backend
// declines run on the reference kernel.
TEST(RunCommandTest, DoubleModelRunsAndWritesDoubleOutputs) {
  namespace ot = braid::testing;
  const fs::path dir = TempDir("f64");
  onnx::ModelProto m = ot::MakeModel(13);
  ot::AddInput(m, "x", onnx::TensorProto::DOUBLE, {2, 3});
  ot::AddInitializer(m, ot::RawTensor("axis", onnx::TensorProto::INT64, {}, std::vector<int64_t>{1}));
  ot::AddInitializer(m, ot::RawTensor("d", onnx::TensorProto::DOUBLE, {}, std::vector<double>{2.5}));
  ot::AddNode(m, "CumSum", {"x", "axis"}, {"s"});
  ot::SetIntAttr(ot::AddNode(m, "Mod", {"s", "d"}, {"y"}), "fmod", 1);
  ot::SetIntAttr(ot::AddNode(m, "Cast", {"y"}, {"z"}), "to", onnx::TensorProto::FLOAT);
  ot::AddOutput(m, "y", onnx::TensorProto::DOUBLE, {2, 3});
  ot::AddOutput(m, "z", onnx::TensorProto::FLOAT, {2, 3});
  const std::string model = (dir / "f64.onnx").string();
  ot::WriteFile(model, ot::Serialize(m));

  const std::vector<double> x = {1, 2, 3.5, -4, 0.25, 10};
  ASSERT_TRUE(npy::WriteFile((dir / "x.npy").string(), DataType::kF64, std::vector<int64_t>{2, 3}, x.data()).ok());
  const Result inspect = RunCliCommand("inspect", {model});
  ASSERT_EQ(inspect.status, 0) << inspect.err;
  EXPECT_NE(inspect.out.find("CumSum"), std::string::npos) << inspect.out;
  const Result convert = RunCliCommand("convert", {model, "-o", (dir / "f64.braid").string()});
  ASSERT_EQ(convert.status, 0) << convert.err;

  const Result r = BraidRun({(dir / "f64.braid").string(), "--input",
                             "x=" + (dir / "x.npy").string(), "--output-dir",
                             (dir / "out").string(), "--threads", "1", "--iterations", "1",
                             "--warmup", "0"});
  ASSERT_EQ(r.status, 0) << r.err;
  // f64 CumSum, Mod and Cast run on braid's own CPU kernels (no fallback).
  EXPECT_NE(r.out.find("cpu/cpu 3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0 fallbacks"), std::string::npos) << r.out;
  // Row sums 1, 3, 6.5 and -4, -3.75, 6.25, each fmod 2.5 (dividend's sign).
  StatusOr<npy::Array> y = npy::ReadFile((dir / "out" / "y.npy").string());
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  ASSERT_EQ(y->dtype, DataType::kF64);
  std::vector<double> got(6);
  ASSERT_EQ(y->data.size(), sizeof(double) * got.size());
  std::memcpy(got.data(), y->data.data(), y->data.size());
  EXPECT_EQ(got, (std::vector<double>{1, 0.5, 1.5, -1.5, -1.25, 1.25}));
  StatusOr<npy::Array> z = npy::ReadFile((dir / "out" / "z.npy").string());
  ASSERT_TRUE(z.ok()) << z.status().ToString();
  EXPECT_EQ(z->dtype, DataType::kF32);
  fs::remove_all(dir);
}

TEST(RunCommandTest, BadInputExitsTwoWithOneLine) {
  const fs::path dir = TempDir("bad");
  {
    std::ofstream f(dir / "garbage.npy", std::ios::binary);
    f << "this is not a numpy file";
  }
  const std::vector<float> small(3 * 32 * 32, 0.5f);
  const std::vector<int64_t> small_dims = {1, 3, 32, 32};
  ASSERT_TRUE(npy::WriteFile((dir / "small.npy").string(), DataType::kF32, small_dims,
                             small.data()).ok());
  const std::vector<int64_t> ints(3 * 224 * 224, 1);
  const std::vector<int64_t> full_dims = {1, 3, 224, 224};
  ASSERT_TRUE(npy::WriteFile((dir / "ints.npy").string(), DataType::kI64, full_dims,
                             ints.data()).ok());

  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"--input", "input=" + (dir / "garbage.npy").string()}, "not a .npy file"},
      {{"--input", "input=" + (dir / "missing.npy").string()}, "cannot open"},
      {{"--input", "input=" + (dir / "small.npy").string()}, "shape [1,3,32,32]"},
      {{"--input", "input=" + (dir / "ints.npy").string()}, "dtype i64"},
      {{"--input", "image=" + (dir / "small.npy").string()}, "no input 'image'"},
      {{"--input", "input"}, "NAME=FILE.npy"},
      {{"--device", "cuda"}, "cuda: unavailable"},  // no GPU here (or no CUDA build)
      {{"--devices", "cpu,cuda"}, "cuda: unavailable"},
      {{"--devices", "cpu,tpu"}, "'tpu'"},
      {{"--devices", "cpu,vgpu", "--vgpu-timing", "h100"}, "unknown vgpu timing 'h100'"},
      {{"--devices", "cpu,vgpu", "--policy", "nope"}, "unknown policy 'nope'"},
      {{"--plan", "/nonexistent/plan.json"}, "/nonexistent/plan.json"},
      {{"--iterations", "0"}, "--iterations"},
      {{"--threads", "two"}, "--threads"},
      {{"--bogus"}, "unknown option"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"builtin:tiny_cnn"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const Result r = BraidRun(args);
    EXPECT_EQ(r.status, 2) << c.message << ": " << r.out << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.err.rfind("braid run: error: ", 0), 0u) << r.err;
  }
  EXPECT_EQ(BraidRun({"builtin:no_such_model"}).status, 2);
  EXPECT_EQ(BraidRun({}).status, 2);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace braid::cli
