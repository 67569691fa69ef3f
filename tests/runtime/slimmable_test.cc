// Slimmable models (include/braid/slimmable.h, graph/slimmable.h): segments
// chained at full width give the full model's output, and a segment at a
// smaller width computes what a model built directly from the leading
// channels of every weight computes (sliced here by plain loops, independently
// of graph/slimmable.cc). Random inputs, CPU reference and oneDNN kernels.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "braid/slimmable.h"
#include "graph/annotate.h"
#include "graph/braid_format.h"
#include "graph/passes/passes.h"
#include "graph/slimmable.h"
#include "models/builtin.h"
#include "models/graph_builder.h"
#include "api/session_open.h"
#include "tests/scoped_temp_dir.h"

namespace braid {
namespace {

std::vector<float> RandomVector(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

struct Output {
  std::vector<float> values;
  std::vector<int64_t> dims;
};

// Runs `session` on `inputs` (by position) and returns output 0.
Output RunOnce(Session& session, const std::vector<std::vector<int64_t>>& dims,
               std::vector<std::vector<float>*> inputs) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Status s = session.SetInput(session.inputs()[i].name,
                                      Tensor::Borrow(DataType::kF32, dims[i], inputs[i]->data()));
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  const Status s = session.Run();
  EXPECT_TRUE(s.ok()) << s.ToString();
  StatusOr<Tensor> out = session.GetOutput(session.outputs()[0].name);
  EXPECT_TRUE(out.ok());
  if (!out.ok()) return {};
  const float* p = out->data<float>();
  return {std::vector<float>(p, p + out->elements()), out->dims()};
}

void ExpectClose(const std::vector<float>& want, const std::vector<float>& got, double tolerance) {
  ASSERT_EQ(want.size(), got.size());
  double worst = 0;
  for (size_t i = 0; i < want.size(); ++i)
    worst = std::max(worst, std::abs(double{want[i]} - got[i]) / (1.0 + std::abs(want[i])));
  EXPECT_LE(worst, tolerance);
}

TEST(SlimResNet, RecordsFourSegmentsAndFourWidths) {
  StatusOr<std::unique_ptr<SlimmableModel>> model = SlimmableModel::Open("builtin:slim_resnet");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_EQ((*model)->num_segments(), 4);
  EXPECT_EQ((*model)->widths(), (std::vector<double>{1.0, 0.75, 0.5, 0.25}));
  // Weight bytes shrink with the width (about quadratically for 3x3 convs).
  StatusOr<uint64_t> full = (*model)->SegmentWeightBytes(3, 1.0, 1.0);
  StatusOr<uint64_t> quarter = (*model)->SegmentWeightBytes(3, 0.25, 0.25);
  ASSERT_TRUE(full.ok() && quarter.ok());
  EXPECT_GT(*full, 3'000'000u);
  EXPECT_LT(*quarter * 8, *full);
}

TEST(SlimResNet, SegmentsAtFullWidthComposeToTheWholeModel) {
  SessionOptions options;
  options.num_threads = 1;
  StatusOr<std::unique_ptr<Session>> whole = Session::Open("builtin:slim_resnet", options);
  StatusOr<std::unique_ptr<SlimmableModel>> model = SlimmableModel::Open("builtin:slim_resnet");
  ASSERT_TRUE(whole.ok() && model.ok());
  const int64_t batch = 2;
  std::vector<float> image = RandomVector(batch * 3 * 32 * 32, 7);
  const Output want = RunOnce(**whole, {{batch, 3, 32, 32}}, {&image});

  Output x = {image, {batch, 3, 32, 32}};
  for (int s = 0; s < 4; ++s) {
    StatusOr<std::unique_ptr<Session>> part = (*model)->OpenSegment(s, 1.0, 1.0, options);
    ASSERT_TRUE(part.ok()) << part.status().ToString();
    ASSERT_EQ((*part)->inputs().size(), 1u);
    x = RunOnce(**part, {x.dims}, {&x.values});
  }
  EXPECT_EQ(want.dims, x.dims);
  ExpectClose(want.values, x.values, 1e-5);
}

TEST(SlimResNet, MixedWidthsChainAndShrinkTheActivations) {
  StatusOr<std::unique_ptr<SlimmableModel>> model = SlimmableModel::Open("builtin:slim_resnet");
  ASSERT_TRUE(model.ok());
  const std::vector<double> widths = {0.5, 0.25, 1.0, 0.75};
  const std::vector<int64_t> channels = {16, 16, 128, 192};
  Output x = {RandomVector(3 * 32 * 32, 11), {1, 3, 32, 32}};
  double previous = 1.0;
  for (size_t s = 0; s < 4; ++s) {
    StatusOr<std::unique_ptr<Session>> part =
        (*model)->OpenSegment(static_cast<int>(s), widths[s], previous);
    ASSERT_TRUE(part.ok()) << part.status().ToString();
    x = RunOnce(**part, {x.dims}, {&x.values});
    if (s < 3) {
      EXPECT_EQ(x.dims[1], channels[s]) << "segment " << s;
    }
    previous = widths[s];
  }
  EXPECT_EQ(x.dims, (std::vector<int64_t>{1, 100}));
  for (float v : x.values) EXPECT_TRUE(std::isfinite(v));
}

TEST(SlimResNet, BadRequestsAreClearErrors) {
  StatusOr<std::unique_ptr<SlimmableModel>> model = SlimmableModel::Open("builtin:slim_resnet");
  ASSERT_TRUE(model.ok());
  StatusOr<std::unique_ptr<Session>> s = (*model)->OpenSegment(4, 1.0, 1.0);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("out of range"), std::string::npos);
  s = (*model)->OpenSegment(1, 0.3, 1.0);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("0.3"), std::string::npos) << s.status().message();
  s = (*model)->OpenSegment(1, 1.0, 0.6);
  ASSERT_FALSE(s.ok());
  StatusOr<std::unique_ptr<SlimmableModel>> plain = SlimmableModel::Open("builtin:tiny_cnn");
  ASSERT_FALSE(plain.ok());
  EXPECT_EQ(plain.status().code(), StatusCode::kNotFound);
  EXPECT_NE(plain.status().message().find("not slimmable"), std::string::npos);
}

// ---- a hand-built two-segment model against one built from sliced weights --

constexpr int64_t kIn = 4, kMid = 8, kClasses = 5, kHw = 6;

struct Weights {
  std::vector<float> conv1_w = RandomVector(kMid * kIn * 9, 1), conv1_b = RandomVector(kMid, 2);
  std::vector<float> gn_scale = RandomVector(kMid, 3), gn_bias = RandomVector(kMid, 4);
  std::vector<float> dw_w = RandomVector(kMid * 9, 5);
  std::vector<float> pw_w = RandomVector(kMid * kMid, 6), proj_w = RandomVector(kMid * kMid, 7);
  std::vector<float> scale = RandomVector(kMid, 8);
  std::vector<float> fc_w = RandomVector(kClasses * kMid, 9), fc_b = RandomVector(kClasses, 10);
};

// Leading [rows, cols] of a [full_rows, full_cols, inner] tensor.
std::vector<float> Leading(const std::vector<float>& w, int64_t full_cols, int64_t inner,
                           int64_t rows, int64_t cols) {
  std::vector<float> out;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      for (int64_t i = 0; i < inner; ++i) out.push_back(w[(r * full_cols + c) * inner + i]);
  return out;
}

// segment 0: conv3x3(kIn -> m0) + bias, GroupNorm(2 groups), Relu -> "boundary"
// segment 1: depthwise 3x3, pointwise (-> m1) + 1x1 projection of the input,
//            Add, Mul by a per-channel constant, global pool, Flatten, Gemm.
// m0 / m1 are the channels each segment keeps; with m0 = m1 = kMid it is the
// full model, otherwise the weights are the leading slices.
Graph BuildTwoSegmentModel(const Weights& w, int64_t m0, int64_t m1, bool record_spec) {
  GraphBuilder b("two_segments", 3);
  ValueId x = b.Input("input", {Dim::Symbol("N"), kIn, kHw, kHw});
  auto conv = [&](ValueId in, const std::string& name, std::vector<float> weight, int64_t out,
                  int64_t in_channels, int64_t kernel, int64_t group, const std::vector<float>* bias) {
    std::vector<ValueId> inputs = {
        in, b.ConstantF32(name + ".weight", {out, in_channels / group, kernel, kernel}, weight)};
    if (bias != nullptr) inputs.push_back(b.ConstantF32(name + ".bias", {out}, *bias));
    Attributes attrs;
    attrs.Set("group", group);
    attrs.Set("kernel_shape", std::vector<int64_t>{kernel, kernel});
    attrs.Set("pads", std::vector<int64_t>(4, kernel / 2));
    ValueId y = b.Op("Conv", inputs, std::move(attrs), name);
    b.set_channels(y, out);
    return y;
  };
  const std::vector<float> conv1_b(w.conv1_b.begin(), w.conv1_b.begin() + m0);
  ValueId y = conv(x, "conv1", Leading(w.conv1_w, kIn, 9, m0, kIn), m0, kIn, 3, 1, &conv1_b);
  Attributes gn;
  gn.Set("num_groups", int64_t{2});
  y = b.Op("GroupNormalization",
           {y, b.ConstantF32("gn.scale", {m0}, {w.gn_scale.begin(), w.gn_scale.begin() + m0}),
            b.ConstantF32("gn.bias", {m0}, {w.gn_bias.begin(), w.gn_bias.begin() + m0})},
           std::move(gn), "gn");
  b.set_channels(y, m0);
  const ValueId boundary = b.Relu(y, "relu");
  ValueId d = conv(boundary, "dw", Leading(w.dw_w, 1, 9, m0, 1), m0, m0, 3, m0, nullptr);
  ValueId p = conv(d, "pw", Leading(w.pw_w, kMid, 1, m1, m0), m1, m0, 1, 1, nullptr);
  ValueId q = conv(boundary, "proj", Leading(w.proj_w, kMid, 1, m1, m0), m1, m0, 1, 1, nullptr);
  ValueId z = b.Mul(b.Add(p, q), b.ConstantF32("scale", {1, m1, 1, 1}, {w.scale.begin(), w.scale.begin() + m1}));
  z = b.Flatten(b.GlobalAveragePool(z));
  z = b.Op("Gemm", {z, b.ConstantF32("fc.weight", {kClasses, m1}, Leading(w.fc_w, kMid, 1, kClasses, m1)),
                    b.ConstantF32("fc.bias", {kClasses}, w.fc_b)},
           [] {
             Attributes a;
             a.Set("transB", int64_t{1});
             return a;
           }(),
           "fc");
  b.Output(z, "output", {Dim::Symbol("N"), kClasses});
  Graph g = std::move(b).Finish();
  g.set_opset(21);
  if (record_spec) {
    SlimSpec spec;
    spec.widths = {1.0, 0.5};
    spec.boundaries = {g.value(boundary).name};
    EXPECT_TRUE(WriteSlimSpec(spec, g).ok());
  }
  EXPECT_TRUE(RunDefaultPasses(g).ok());
  EXPECT_TRUE(Annotate(g).ok());
  return g;
}

TEST(SlimSegmentGraph, MatchesAModelBuiltFromLeadingChannelSlices) {
  const Weights w;
  testing::ScopedTempDir dir("braid_slim_test");
  const std::string path = (dir.path() / "two.braid").string();
  // Through a .braid file: the segments and widths travel in its metadata.
  ASSERT_TRUE(SaveBraidFile(BuildTwoSegmentModel(w, kMid, kMid, true), path).ok());
  StatusOr<std::unique_ptr<SlimmableModel>> model = SlimmableModel::Open(path);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  ASSERT_EQ((*model)->num_segments(), 2);
  const int64_t batch = 2;
  std::vector<float> x = RandomVector(batch * kIn * kHw * kHw, 12);
  for (auto [w0, w1] : {std::pair{1.0, 1.0}, {0.5, 0.5}, {1.0, 0.5}, {0.5, 1.0}}) {
    SCOPED_TRACE("widths " + std::to_string(w0) + ", " + std::to_string(w1));
    const int64_t m0 = w0 == 1.0 ? kMid : kMid / 2, m1 = w1 == 1.0 ? kMid : kMid / 2;
    StatusOr<std::unique_ptr<Session>> expected = OpenSessionWithGraph(
        {}, [&]() -> StatusOr<Graph> { return BuildTwoSegmentModel(w, m0, m1, false); });
    ASSERT_TRUE(expected.ok()) << expected.status().ToString();
    const Output want = RunOnce(**expected, {{batch, kIn, kHw, kHw}}, {&x});

    StatusOr<std::unique_ptr<Session>> first = (*model)->OpenSegment(0, w0, 1.0);
    StatusOr<std::unique_ptr<Session>> second = (*model)->OpenSegment(1, w1, w0);
    ASSERT_TRUE(first.ok()) << first.status().ToString();
    ASSERT_TRUE(second.ok()) << second.status().ToString();
    Output mid = RunOnce(**first, {{batch, kIn, kHw, kHw}}, {&x});
    EXPECT_EQ(mid.dims[1], m0);
    ExpectClose(want.values, RunOnce(**second, {mid.dims}, {&mid.values}).values, 1e-5);
  }
}

TEST(SlimSegmentGraph, RejectsBoundariesThatDoNotCutAndUnslimmableOps) {
  const Weights w;
  Graph g = BuildTwoSegmentModel(w, kMid, kMid, true);
  SlimSpec spec = *ReadSlimSpec(g);
  // The depthwise conv's output is read by the pointwise conv only, but the
  // boundary input is also read by the projection: cutting after the
  // depthwise conv leaves the projection reading across the cut.
  std::string dw_out;
  for (const Node& n : g.nodes())
    if (n.op_type == "Conv" && n.attrs.GetInt("group", 1) == kMid) dw_out = g.value(n.outputs[0]).name;
  ASSERT_FALSE(dw_out.empty());
  SlimSpec bad = spec;
  bad.boundaries = {spec.boundaries[0], dw_out};
  StatusOr<Graph> part = SlimSegmentGraph(g, bad, 2, 1.0, 1.0);
  ASSERT_FALSE(part.ok());
  EXPECT_NE(part.status().message().find("does not cut"), std::string::npos) << part.status().message();
  bad.boundaries = {"no_such_value"};
  EXPECT_FALSE(SlimSegmentGraph(g, bad, 0, 1.0, 1.0).ok());
  // A Concat in a segment: its output channels are not leading channels.
  GraphBuilder b("concat", 1);
  ValueId x = b.Input("input", {1, 4, 3, 3});
  ValueId y = b.Conv(x, "c", {.out_channels = 4});
  ValueId z = b.Concat({y, y}, 1);
  b.Output(z, "out", {1, 8, 3, 3});
  Graph c = std::move(b).Finish();
  ASSERT_TRUE(InferShapes(c).ok());
  const SlimSpec one = {.boundaries = {}, .widths = {1.0, 0.5}};
  part = SlimSegmentGraph(c, one, 0, 0.5, 1.0);
  ASSERT_FALSE(part.status().ok());
  EXPECT_EQ(part.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(part.status().message().find("Concat"), std::string::npos);
}

TEST(SlimSpecMetadata, ParsesAndRejectsMalformedValues) {
  Graph g = BuildBuiltinModel("slim_resnet").value();
  StatusOr<SlimSpec> spec = ReadSlimSpec(g);
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->num_segments(), 4);
  g.metadata()[kSlimWidthsKey] = "1,abc";
  EXPECT_EQ(ReadSlimSpec(g).status().code(), StatusCode::kInvalidArgument);
  g.metadata()[kSlimWidthsKey] = "0.5,0.25";
  EXPECT_NE(ReadSlimSpec(g).status().message().find("must include 1"), std::string::npos);
  g.metadata()[kSlimWidthsKey] = "1,1.5";
  EXPECT_FALSE(ReadSlimSpec(g).ok());
  g.metadata()[kSlimWidthsKey] = "1,0.5";
  g.metadata()[kSlimSegmentsKey] = "input";  // a graph input, not computed by a node
  EXPECT_FALSE(ReadSlimSpec(g).ok());
  EXPECT_EQ(SlimChannels(32, 0.75), 24);
  EXPECT_EQ(SlimChannels(3, 0.25), 1);
}

}  // namespace
}  // namespace braid
