// Built-in models through Session::Open (oneDNN / CPU / reference kernels as
// the registry chooses) against a session with only the reference kernels,
// on seeded random non-zero inputs. Error measure: max |a - b| over the
// output divided by max |b| (the reference's largest magnitude); tolerance
// 1e-4. Batch 1, then batch 3 on the same Session (re-plan), whose first
// image is the batch-1 image, so row 0 must match the batch-1 reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "api/model_loader.h"
#include "kernels/cpu/cpu_device.h"
#include "runtime/session_internal.h"

namespace braid {
namespace {

constexpr double kTolerance = 1e-4;

std::vector<float> RandomNonZero(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> magnitude(0.05f, 1.0f);
  std::bernoulli_distribution negative(0.5);
  std::vector<float> v(n);
  for (float& x : v) x = negative(rng) ? -magnitude(rng) : magnitude(rng);
  return v;
}

std::unique_ptr<Session> ReferenceSession(const std::string& model) {
  StatusOr<Graph> graph = LoadGraphForExecution(model);
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  if (!graph.ok()) return nullptr;
  auto registry = std::make_shared<KernelRegistry>();
  RegisterReferenceKernels(*registry);
  SessionOptions options;
  options.num_threads = 1;
  StatusOr<std::unique_ptr<Session>> s =
      CreateSession(std::move(*graph), options, std::move(registry), CreateCpuDevice());
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::move(*s) : nullptr;
}

// Runs `session` on `input` of batch n; returns the single output's values.
std::vector<float> RunOnce(Session& session, const std::vector<float>& input,
                           std::vector<int64_t> dims) {
  const TensorInfo& in = session.inputs().at(0);
  Status s = session.SetInput(in.name, Tensor::Borrow(DataType::kF32, dims,
                                                      const_cast<float*>(input.data())));
  EXPECT_TRUE(s.ok()) << s.ToString();
  s = session.Run();
  EXPECT_TRUE(s.ok()) << s.ToString();
  if (!s.ok()) return {};
  StatusOr<Tensor> out = session.GetOutput(session.outputs().at(0).name);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->dims().at(0), dims[0]);
  return std::vector<float>(out->data<float>(), out->data<float>() + out->elements());
}

double RelativeError(std::span<const float> got, std::span<const float> want) {
  double max_diff = 0, max_ref = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    max_diff = std::max(max_diff, std::fabs(static_cast<double>(got[i]) - want[i]));
    max_ref = std::max(max_ref, std::fabs(static_cast<double>(want[i])));
  }
  return max_diff / std::max(max_ref, 1e-30);
}

class BuiltinModel : public ::testing::TestWithParam<std::string> {};

TEST_P(BuiltinModel, MatchesReferenceKernelsAcrossBatchChange) {
  const std::string model = "builtin:" + GetParam();
  SessionOptions options;
  options.num_threads = 2;
  StatusOr<std::unique_ptr<Session>> opened = Session::Open(model, options);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  Session& session = **opened;
  std::unique_ptr<Session> reference = ReferenceSession(model);
  ASSERT_NE(reference, nullptr);

  ASSERT_EQ(session.inputs().size(), 1u);
  std::vector<int64_t> dims = session.inputs()[0].dims;
  ASSERT_EQ(dims[0], -1) << "batch should be symbolic";
  dims[0] = 1;
  int64_t per_image = 1;
  for (size_t i = 1; i < dims.size(); ++i) per_image *= dims[i];
  std::vector<float> batch3 = RandomNonZero(static_cast<size_t>(3 * per_image), 42);
  std::vector<float> image(batch3.begin(), batch3.begin() + per_image);

  std::vector<float> want = RunOnce(*reference, image, dims);
  ASSERT_FALSE(want.empty());
  std::vector<float> got1 = RunOnce(session, image, dims);
  ASSERT_EQ(got1.size(), want.size());
  EXPECT_LE(RelativeError(got1, want), kTolerance) << "batch 1";
  const size_t peak1 = session.planned_peak_bytes();
  EXPECT_GT(peak1, 0u);

  dims[0] = 3;
  std::vector<float> got3 = RunOnce(session, batch3, dims);
  ASSERT_EQ(got3.size(), 3 * want.size());
  EXPECT_LE(RelativeError(std::span<const float>(got3).first(want.size()), want), kTolerance)
      << "batch 3, image 0";
  EXPECT_GT(session.planned_peak_bytes(), peak1);
  // Images 1 and 2 differ from image 0, so their outputs must too.
  EXPECT_GT(RelativeError(std::span<const float>(got3).subspan(want.size(), want.size()), want),
            kTolerance);

  // Every node is placed on the CPU; fallbacks carry their reason. The only
  // reasons without a fallback are the specialized kernels' routine declines:
  // the (input-)sparse kernels' (dense weights, below their crossover) and braid's
  // own CPU kernels' (e.g. the broadcast binary leaving same-shape operands
  // to oneDNN).
  std::vector<NodePlacement> placements = session.placements();
  ASSERT_FALSE(placements.empty());
  for (const NodePlacement& p : placements) {
    EXPECT_EQ(p.device, "cpu");
    EXPECT_FALSE(p.implementation.empty()) << p.node;
    if (p.fallback) {
      EXPECT_FALSE(p.reason.empty()) << p.node;
    } else if (!p.reason.empty()) {
      const std::string& r = p.reason;
      EXPECT_TRUE(r.rfind("sparse: ", 0) == 0 || r.rfind("input-sparse: ", 0) == 0 ||
                  r.rfind("cpu: ", 0) == 0)
          << p.node << ": " << r;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, BuiltinModel,
                         ::testing::Values("tiny_cnn", "squeezenet1_1", "mobilenet_v2",
                                           "resnet18", "vit_tiny"));

// NaN / Inf through whole models (docs/ops.md "NaN and Inf"; issue 32): an
// all-NaN image gives an all-NaN output, and one +Inf, -Inf or NaN pixel
// gives the NaN / Inf pattern of the reference kernels (which follow ONNX
// Runtime; bench/nan_inf_check.py compares the zoo exports with it). Before
// oneDNN's relu / clip post-ops and max pooling were guarded, every case gave
// finite outputs.
class BuiltinModelNanInf : public ::testing::TestWithParam<std::string> {};

TEST_P(BuiltinModelNanInf, PatternMatchesReferenceKernels) {
  const std::string model = "builtin:" + GetParam();
  SessionOptions options;
  options.num_threads = 2;
  StatusOr<std::unique_ptr<Session>> opened = Session::Open(model, options);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  std::unique_ptr<Session> reference = ReferenceSession(model);
  ASSERT_NE(reference, nullptr);
  std::vector<int64_t> dims = (*opened)->inputs()[0].dims;
  dims[0] = 1;
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> base = RandomNonZero(static_cast<size_t>(n), 7);

  std::vector<float> all_nan(base.size(), nan);
  std::vector<float> got = RunOnce(**opened, all_nan, dims);
  ASSERT_FALSE(got.empty());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_TRUE(std::isnan(got[i])) << "all NaN, " << i;

  struct Pixel {
    float value;
    int64_t index;
  };
  for (const Pixel& px : {Pixel{inf, n / 2 + 17}, Pixel{-inf, n / 3}, Pixel{nan, n / 5}}) {
    std::vector<float> image = base;
    image[static_cast<size_t>(px.index)] = px.value;
    const std::vector<float> want = RunOnce(*reference, image, dims);
    got = RunOnce(**opened, image, dims);
    ASSERT_EQ(got.size(), want.size());
    size_t non_finite = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      non_finite += !std::isfinite(want[i]);
      if (std::isnan(want[i])) {
        EXPECT_TRUE(std::isnan(got[i])) << px.value << " pixel, output " << i << " = " << got[i];
      } else if (std::isinf(want[i])) {
        EXPECT_EQ(got[i], want[i]) << px.value << " pixel, output " << i;
      } else {
        EXPECT_TRUE(std::isfinite(got[i])) << px.value << " pixel, output " << i;
      }
    }
    // A NaN pixel poisons every output of these models (its conv window
    // reaches all channels, global pooling all positions).
    if (std::isnan(px.value)) {
      EXPECT_EQ(non_finite, want.size());
    }
  }
}

// resnet18 (fused Add -> Relu) takes 45 s here on the reference kernels; the
// op harness covers its fused Add and bench/nan_inf_check.py the whole model.
INSTANTIATE_TEST_SUITE_P(Models, BuiltinModelNanInf,
                         ::testing::Values("tiny_cnn", "squeezenet1_1", "mobilenet_v2"));

// policy "sparoa" through Session::Open: planned with the host-vgpu profile's
// cost model on cpu + vgpu (the virtual GPU), results match the reference.
TEST(SparoaSession, RunsOnCpuAndVgpuAndReportsABadPolicyFile) {
  const std::string model = "builtin:tiny_cnn";
  SessionOptions options;
  options.num_threads = 1;
  options.devices = {"cpu", "vgpu"};
  options.policy = "sparoa";
  StatusOr<std::unique_ptr<Session>> opened = Session::Open(model, options);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  std::unique_ptr<Session> reference = ReferenceSession(model);
  ASSERT_NE(reference, nullptr);
  std::vector<int64_t> dims = (*opened)->inputs()[0].dims;
  dims[0] = 1;
  int64_t elements = 1;
  for (int64_t d : dims) elements *= d;
  const std::vector<float> image = RandomNonZero(static_cast<size_t>(elements), 7);
  const std::vector<float> want = RunOnce(*reference, image, dims);
  const std::vector<float> got = RunOnce(**opened, image, dims);
  ASSERT_EQ(got.size(), want.size());
  EXPECT_LE(RelativeError(got, want), kTolerance);
  EXPECT_FALSE((*opened)->placements().empty());

  // A policy file that cannot be read fails the first Run, naming the file.
  options.policy_settings["sparoa.policy_file"] = "/nonexistent/braid_sparoa_policy.bin";
  opened = Session::Open(model, options);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  const TensorInfo& in = (*opened)->inputs().at(0);
  ASSERT_TRUE((*opened)
                  ->SetInput(in.name, Tensor::Borrow(DataType::kF32, dims,
                                                     const_cast<float*>(image.data())))
                  .ok());
  const Status run = (*opened)->Run();
  EXPECT_FALSE(run.ok());
  EXPECT_NE(run.ToString().find("braid_sparoa_policy.bin"), std::string::npos) << run.ToString();
  // sparoa's settings belong to sparoa only; unknown keys and bad values fail.
  options.policy = "cpu-only";
  StatusOr<std::unique_ptr<Session>> other = Session::Open(model, options);
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(other.status().message().find("'sparoa.policy_file' is for policy \"sparoa\""),
            std::string::npos)
      << other.status().message();
  options.policy = "sparoa";
  options.policy_settings = {{"sparoa.polsh", "0"}};
  other = Session::Open(model, options);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("unknown policy setting 'sparoa.polsh'"),
            std::string::npos)
      << other.status().message();
  options.policy_settings = {{"sparoa.polish", "maybe"}};
  EXPECT_EQ(Session::Open(model, options).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace braid
