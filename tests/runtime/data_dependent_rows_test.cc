// Outputs whose row count only the data tells (kOpDataDependentRows:
// NonMaxSuppression) through Session::Open: the planned upper bound in the
// buffer, the count the kernel reports in GetOutput's dims, on the
// sequential path and on a cpu + vgpu engine, run after run with counts that
// go down and up; a node that reads such an output is refused at load.
//
// The selections are checked against greedy NMS's defining properties with
// an IoU computed here (each kept box passes the score threshold, overlaps no
// better-scored kept box of its class by more than iou_threshold, and every
// box left out is either over the per-class maximum or overlapped that way),
// not against a second copy of the kernel. ONNX's node cases
// (onnx_conformance) and tests/python (ONNX Runtime) check the exact rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "braid/braid.h"
#include "graph/braid_format.h"
#include "graph/ir.h"

namespace braid {
namespace {

constexpr int64_t kBatches = 2, kClasses = 3, kBoxes = 40, kMaxPerClass = 6;
constexpr float kIou = 0.4f, kScoreThreshold = 0.3f;

struct NmsShape {
  int64_t batches = kBatches, boxes = kBoxes;
  float iou = kIou;
  bool read_it = false;      // an Identity reads the selections
  bool listed_twice = false;  // the selections are graph outputs 0 and 1
};

// boxes [2, 40, 4] (y1, x1, y2, x2 corners), scores [2, 3, 40]; NMS's
// selections as the graph output.
Graph NmsGraph(const NmsShape& shape);
Graph NmsGraph(bool read_it) { return NmsGraph(NmsShape{.read_it = read_it}); }

Graph NmsGraph(const NmsShape& shape) {
  const bool read_it = shape.read_it;
  const float iou_threshold = shape.iou;
  Graph g;
  g.name() = "nms";
  g.set_opset(17);
  ValueId boxes = g.AddInput("boxes", DataType::kF32, {shape.batches, shape.boxes, 4});
  ValueId scores = g.AddInput("scores", DataType::kF32, {shape.batches, kClasses, shape.boxes});
  const int64_t max_per_class = kMaxPerClass;
  ValueId max = g.AddConstant("max_output_boxes_per_class", DataType::kI64, {1},
                              TensorData::Copy(&max_per_class, sizeof max_per_class));
  ValueId iou = g.AddConstant("iou_threshold", DataType::kF32, {1},
                              TensorData::Copy(&iou_threshold, sizeof iou_threshold));
  ValueId score = g.AddConstant("score_threshold", DataType::kF32, {1},
                                TensorData::Copy(&kScoreThreshold, sizeof kScoreThreshold));
  ValueId selected = g.AddValue("selected");
  Node nms;
  nms.name = "nms";
  nms.op_type = "NonMaxSuppression";
  nms.inputs = {boxes, scores, max, iou, score};
  nms.outputs = {selected};
  g.AddNode(std::move(nms));
  if (!read_it) {
    g.outputs().push_back(selected);
    if (shape.listed_twice) g.outputs().push_back(selected);
    return g;
  }
  ValueId copy = g.AddValue("copy");
  Node identity;
  identity.name = "reader";
  identity.op_type = "Identity";
  identity.inputs = {selected};
  identity.outputs = {copy};
  g.AddNode(std::move(identity));
  g.outputs().push_back(copy);
  return g;
}

std::string SaveModel(const Graph& graph, const std::string& name) {
  const std::string path = (std::filesystem::path(testing::TempDir()) / name).string();
  const Status saved = SaveBraidFile(graph, path);
  EXPECT_TRUE(saved.ok()) << saved.ToString();
  return path;
}

struct Inputs {
  std::vector<float> boxes, scores;
};

// Boxes in clusters, so that many overlap; scores uniform in [0, scale).
Inputs RandomInputs(uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  Inputs in;
  for (int64_t b = 0; b < kBatches * kBoxes; ++b) {
    const float cy = 0.2f + 0.6f * static_cast<float>(b % 4) / 3 + 0.1f * unit(rng);
    const float cx = 0.5f + 0.1f * unit(rng);
    const float h = 0.1f + 0.2f * unit(rng), w = 0.1f + 0.2f * unit(rng);
    // Corners in either order: NMS takes any diagonal pair.
    if (b % 2)
      in.boxes.insert(in.boxes.end(), {cy - h / 2, cx - w / 2, cy + h / 2, cx + w / 2});
    else
      in.boxes.insert(in.boxes.end(), {cy + h / 2, cx + w / 2, cy - h / 2, cx - w / 2});
  }
  for (int64_t i = 0; i < kBatches * kClasses * kBoxes; ++i) in.scores.push_back(scale * unit(rng));
  return in;
}

double Iou(const float* a, const float* b) {
  auto lo = [](const float* p, int k) { return std::min<double>(p[k], p[k + 2]); };
  auto hi = [](const float* p, int k) { return std::max<double>(p[k], p[k + 2]); };
  const double ih = std::max(0.0, std::min(hi(a, 0), hi(b, 0)) - std::max(lo(a, 0), lo(b, 0)));
  const double iw = std::max(0.0, std::min(hi(a, 1), hi(b, 1)) - std::max(lo(a, 1), lo(b, 1)));
  const double area_a = (hi(a, 0) - lo(a, 0)) * (hi(a, 1) - lo(a, 1));
  const double area_b = (hi(b, 0) - lo(b, 0)) * (hi(b, 1) - lo(b, 1));
  return ih * iw / (area_a + area_b - ih * iw);
}

// Runs once and checks the rows against greedy NMS's properties; the row count.
int64_t RunAndCheck(Session& session, const Inputs& in) {
  Tensor boxes = Tensor::Borrow(DataType::kF32, {kBatches, kBoxes, 4},
                                const_cast<float*>(in.boxes.data()));
  Tensor scores = Tensor::Borrow(DataType::kF32, {kBatches, kClasses, kBoxes},
                                 const_cast<float*>(in.scores.data()));
  EXPECT_TRUE(session.SetInput("boxes", boxes).ok());
  EXPECT_TRUE(session.SetInput("scores", scores).ok());
  const Status ran = session.Run();
  EXPECT_TRUE(ran.ok()) << ran.ToString();
  if (!ran.ok()) return -1;
  StatusOr<Tensor> out = session.GetOutput("selected");
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  if (!out.ok()) return -1;
  EXPECT_EQ(out->dtype(), DataType::kI64);
  EXPECT_EQ(out->dims().size(), 2u);
  EXPECT_EQ(out->dims()[1], 3);
  const int64_t rows = out->dims()[0];
  EXPECT_LE(rows, kBatches * kClasses * kMaxPerClass);
  const int64_t* r = out->data<int64_t>();
  for (int64_t b = 0; b < kBatches; ++b) {
    for (int64_t c = 0; c < kClasses; ++c) {
      const float* s = in.scores.data() + (b * kClasses + c) * kBoxes;
      std::vector<int64_t> kept;
      for (int64_t k = 0; k < rows; ++k)
        if (r[k * 3] == b && r[k * 3 + 1] == c) kept.push_back(r[k * 3 + 2]);
      EXPECT_LE(static_cast<int64_t>(kept.size()), kMaxPerClass);
      for (size_t i = 0; i < kept.size(); ++i) {
        EXPECT_GT(s[kept[i]], kScoreThreshold);
        if (i > 0) {
          EXPECT_GT(s[kept[i - 1]], s[kept[i]]) << "not in descending score order";
        }
        for (size_t j = 0; j < i; ++j)
          EXPECT_LE(Iou(&in.boxes[(b * kBoxes + kept[i]) * 4], &in.boxes[(b * kBoxes + kept[j]) * 4]),
                    kIou)
              << "kept boxes " << kept[j] << " and " << kept[i] << " overlap";
      }
      // A box left out with a passing score: the class was full when its turn
      // came, or a better-scored kept box overlaps it.
      for (int64_t box = 0; box < kBoxes; ++box) {
        if (s[box] <= kScoreThreshold || std::count(kept.begin(), kept.end(), box)) continue;
        size_t better = 0;
        bool overlapped = false;
        for (int64_t k : kept) {
          if (s[k] <= s[box]) continue;
          ++better;
          overlapped |= Iou(&in.boxes[(b * kBoxes + box) * 4], &in.boxes[(b * kBoxes + k) * 4]) > kIou;
        }
        EXPECT_TRUE(overlapped || better == static_cast<size_t>(kMaxPerClass))
            << "batch " << b << " class " << c << " box " << box << " score " << s[box]
            << " was neither suppressed nor over the maximum";
      }
    }
  }
  // Batch-major, then class.
  for (int64_t k = 1; k < rows; ++k)
    EXPECT_LE(r[(k - 1) * 3] * kClasses + r[(k - 1) * 3 + 1], r[k * 3] * kClasses + r[k * 3 + 1]);
  return rows;
}

void RunRounds(Session& session) {
  // Low scores leave few boxes over the threshold; high ones fill the classes.
  const int64_t few = RunAndCheck(session, RandomInputs(1, 0.45f));
  const int64_t many = RunAndCheck(session, RandomInputs(2, 1.0f));
  const int64_t few_again = RunAndCheck(session, RandomInputs(1, 0.45f));
  const int64_t none = RunAndCheck(session, RandomInputs(3, 0.25f));
  EXPECT_GT(few, 0);
  EXPECT_LT(few, many);
  EXPECT_EQ(few_again, few);
  EXPECT_EQ(none, 0);
}

TEST(DataDependentRows, NonMaxSuppressionOnTheSequentialPath) {
  const std::string path = SaveModel(NmsGraph(false), "nms_rows.braid");
  SessionOptions options;
  options.num_threads = 1;
  StatusOr<std::unique_ptr<Session>> session = Session::Open(path, options);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  ASSERT_EQ((*session)->outputs().size(), 1u);
  // The rows are not known until a Run.
  EXPECT_EQ((*session)->outputs()[0].ToString(), "selected: i64[rows?,3]");
  EXPECT_EQ((*session)->outputs()[0].dims, (std::vector<int64_t>{-1, 3}));
  RunRounds(**session);
  std::remove(path.c_str());
}

TEST(DataDependentRows, NonMaxSuppressionOnTheVirtualGpu) {
  const std::string path = SaveModel(NmsGraph(false), "nms_rows_vgpu.braid");
  SessionOptions options;
  options.num_threads = 1;
  options.devices = {"cpu", "vgpu"};
  options.policy = "gpu-only";
  StatusOr<std::unique_ptr<Session>> session = Session::Open(path, options);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  RunRounds(**session);
  bool on_vgpu = false;
  for (const NodePlacement& p : (*session)->placements())
    on_vgpu |= p.node == "nms" && p.device == "vgpu";
  EXPECT_TRUE(on_vgpu) << "the plan should run NMS on the virtual GPU";
  std::remove(path.c_str());
}

TEST(DataDependentRows, ANodeReadingTheRowsIsRefusedNamingBoth) {
  const std::string path = SaveModel(NmsGraph(false), "nms_rows_read.braid");
  Graph read = NmsGraph(true);
  const Status saved = SaveBraidFile(read, path);
  StatusOr<std::unique_ptr<Session>> session =
      saved.ok() ? Session::Open(path, SessionOptions{}) : StatusOr<std::unique_ptr<Session>>(saved);
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().code(), StatusCode::kUnimplemented) << session.status().ToString();
  const std::string message = session.status().ToString();
  EXPECT_NE(message.find("'reader'"), std::string::npos) << message;
  EXPECT_NE(message.find("NonMaxSuppression 'nms'"), std::string::npos) << message;
  EXPECT_NE(message.find("only as a graph output"), std::string::npos) << message;
  std::remove(path.c_str());
}

// The same rows through both listings of one output, Run after Run.
TEST(DataDependentRows, AnOutputListedTwiceReportsItsRowsTwice) {
  const std::string path = SaveModel(NmsGraph(NmsShape{.listed_twice = true}), "nms_twice.braid");
  SessionOptions options;
  options.num_threads = 1;
  StatusOr<std::unique_ptr<Session>> session = Session::Open(path, options);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  ASSERT_EQ((*session)->outputs().size(), 2u);
  RunRounds(**session);
  std::remove(path.c_str());
}

// An iou_threshold outside [0, 1] is an error naming the node (ONNX's range,
// ONNX Runtime's check); an empty batch of 2^40 boxes allocates nothing.
TEST(DataDependentRows, BadThresholdAndEmptyBatch) {
  const std::string bad_iou = SaveModel(NmsGraph(NmsShape{.iou = 1.5f}), "nms_bad_iou.braid");
  StatusOr<std::unique_ptr<Session>> session = Session::Open(bad_iou, SessionOptions{});
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  Inputs in = RandomInputs(4, 1.0f);
  ASSERT_TRUE((*session)->SetInput("boxes", Tensor::Borrow(DataType::kF32, {kBatches, kBoxes, 4},
                                                           in.boxes.data())).ok());
  ASSERT_TRUE((*session)->SetInput("scores", Tensor::Borrow(DataType::kF32,
                                                            {kBatches, kClasses, kBoxes},
                                                            in.scores.data())).ok());
  const Status ran = (*session)->Run();
  EXPECT_EQ(ran.code(), StatusCode::kInvalidArgument) << ran.ToString();
  EXPECT_NE(ran.ToString().find("iou_threshold is 1.5"), std::string::npos) << ran.ToString();
  std::remove(bad_iou.c_str());

  constexpr int64_t kHuge = int64_t{1} << 40;
  const std::string empty =
      SaveModel(NmsGraph(NmsShape{.batches = 0, .boxes = kHuge}), "nms_empty.braid");
  session = Session::Open(empty, SessionOptions{});
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  float unused = 0;
  ASSERT_TRUE((*session)->SetInput("boxes", Tensor::Borrow(DataType::kF32, {0, kHuge, 4}, &unused)).ok());
  ASSERT_TRUE(
      (*session)->SetInput("scores", Tensor::Borrow(DataType::kF32, {0, kClasses, kHuge}, &unused))
          .ok());
  const Status empty_run = (*session)->Run();
  ASSERT_TRUE(empty_run.ok()) << empty_run.ToString();
  StatusOr<Tensor> out = (*session)->GetOutput("selected");
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->dims(), (std::vector<int64_t>{0, 3}));
  std::remove(empty.c_str());
}

}  // namespace
}  // namespace braid
