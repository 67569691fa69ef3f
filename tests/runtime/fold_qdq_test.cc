// FoldQdq (graph/passes/fold_qdq.cc): QDQ Conv / MatMul graphs, before and
// after the fold, run on the same seeded random inputs (reference kernels,
// and the CPU registry with oneDNN's int8 kernels for the folded graph):
// outputs agree within one quantization step of the output; patterns the
// pass must leave alone stay. FoldQdqLookups: Q(activation(DQ(x))) as one
// table lookup, within one step of the QDQ graph.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "graph/passes/passes.h"
#include "tests/passes/reference_eval_test_util.h"
#include "tests/runtime/reference_session_test_util.h"

namespace braid {
namespace {

using test::RunOnReference;
using test_eval::CountOps;

template <typename T>
ValueId AddConst(Graph& g, const std::string& name, DataType t, std::vector<int64_t> dims,
                 const std::vector<T>& v) {
  return g.AddConstant(name, t, StaticShape(dims), TensorData::Copy(v.data(), v.size() * sizeof(T)));
}

ValueId AddNode(Graph& g, const std::string& op, const std::string& name, std::vector<ValueId> in,
                Attributes attrs = {}) {
  Node n;
  n.name = name;
  n.op_type = op;
  n.inputs = std::move(in);
  n.attrs = std::move(attrs);
  n.outputs = {g.AddValue(name + "_out")};
  const ValueId out = n.outputs[0];
  g.AddNode(std::move(n));
  return out;
}

struct QdqOptions {
  bool matmul = false;
  bool gemm = false;          // Gemm(x [3, 16], w [6, 16], bias), transB=1
  bool relu = false;          // Conv -> Relu -> Q (Q zero point 0)
  float clip_max = 0;         // with relu: Clip(0, clip_max) instead of the Relu
  bool int32_bias = false;    // bias as DQ(int32), else f32
  bool extra_reader = false;  // the Conv's float output is also a graph output
  bool runtime_scale = false; // the output Q's scale is a graph input: not folded
};

constexpr float kYScale = 0.05f;

// x -> Q -> DQ -> Conv / MatMul (DQ weights, per output channel) [-> Relu]
// -> Q -> DQ -> y.
Graph QdqGraph(const QdqOptions& o, uint32_t seed) {
  std::mt19937 rng(seed);
  Graph g;
  g.set_opset(13);
  const int64_t m = 6, c = 4;
  const std::vector<int64_t> x_dims = o.matmul ? std::vector<int64_t>{3, 5, 16}
                                     : o.gemm   ? std::vector<int64_t>{3, 16}
                                                : std::vector<int64_t>{1, c, 8, 8};
  const ValueId x = g.AddInput("x", DataType::kF32, StaticShape(x_dims));
  const ValueId xs = AddConst(g, "xs", DataType::kF32, {}, std::vector<float>{0.02f});
  const ValueId xz = AddConst(g, "xz", DataType::kU8, {}, std::vector<uint8_t>{128});
  const ValueId xq = AddNode(g, "QuantizeLinear", "q_x", {x, xs, xz});
  const ValueId xd = AddNode(g, "DequantizeLinear", "dq_x", {xq, xs, xz});
  const std::vector<int64_t> w_dims = o.matmul ? std::vector<int64_t>{16, m}
                                     : o.gemm   ? std::vector<int64_t>{m, 16}
                                                : std::vector<int64_t>{m, c, 3, 3};
  int64_t w_count = 1;
  for (int64_t d : w_dims) w_count *= d;
  std::uniform_int_distribution<int> wdist(-127, 127);
  std::vector<int8_t> w(static_cast<size_t>(w_count));
  for (int8_t& v : w) v = static_cast<int8_t>(wdist(rng) | 1);  // odd: never 0
  std::uniform_real_distribution<float> sdist(0.002f, 0.005f);
  std::vector<float> ws(static_cast<size_t>(m));
  for (float& s : ws) s = sdist(rng);
  const ValueId wq = AddConst(g, "w_q", DataType::kI8, w_dims, w);
  const ValueId wsv = AddConst(g, "ws", DataType::kF32, {m}, ws);
  const ValueId wz = AddConst(g, "wz", DataType::kI8, {m}, std::vector<int8_t>(m, 0));
  Attributes w_attrs;
  w_attrs.Set("axis", int64_t{o.matmul ? 1 : 0});
  const ValueId wd = AddNode(g, "DequantizeLinear", "dq_w", {wq, wsv, wz}, w_attrs);
  ValueId product;
  if (o.matmul) {
    product = AddNode(g, "MatMul", "mm", {xd, wd});
  } else {
    std::uniform_real_distribution<float> bdist(-0.3f, 0.3f);
    std::vector<float> bf(static_cast<size_t>(m));
    for (float& b : bf) b = bdist(rng);
    ValueId bias;
    if (o.int32_bias) {
      std::vector<int32_t> bi(bf.size());
      std::vector<float> bs(bf.size());
      for (size_t i = 0; i < bf.size(); ++i) {
        bs[i] = 0.02f * ws[i];
        bi[i] = static_cast<int32_t>(std::nearbyint(bf[i] / bs[i]));
      }
      Attributes b_attrs;
      b_attrs.Set("axis", int64_t{0});
      bias = AddNode(g, "DequantizeLinear", "dq_b",
                     {AddConst(g, "b_q", DataType::kI32, {m}, bi),
                      AddConst(g, "bs", DataType::kF32, {m}, bs)},
                     b_attrs);
    } else {
      bias = AddConst(g, "b", DataType::kF32, {m}, bf);
    }
    Attributes attrs;
    if (o.gemm) {
      attrs.Set("transB", int64_t{1});
      product = AddNode(g, "Gemm", "fc", {xd, wd, bias}, attrs);
    } else {
      attrs.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
      product = AddNode(g, "Conv", "conv", {xd, wd, bias}, attrs);
    }
  }
  if (o.extra_reader) g.outputs().push_back(product);
  ValueId pre_q = product;
  if (o.relu && o.clip_max > 0)
    pre_q = AddNode(g, "Clip", "clip",
                    {product, AddConst(g, "clip_lo", DataType::kF32, {}, std::vector<float>{0.0f}),
                     AddConst(g, "clip_hi", DataType::kF32, {}, std::vector<float>{o.clip_max})});
  else if (o.relu)
    pre_q = AddNode(g, "Relu", "relu", {product});
  const ValueId ys = o.runtime_scale ? g.AddInput("ys", DataType::kF32, Shape{})
                                     : AddConst(g, "ys", DataType::kF32, {}, std::vector<float>{kYScale});
  const ValueId yz = AddConst(g, "yz", DataType::kU8, {}, std::vector<uint8_t>{static_cast<uint8_t>(o.relu ? 0 : 120)});
  const ValueId yq = AddNode(g, "QuantizeLinear", "q_y", {pre_q, ys, yz});
  g.outputs().insert(g.outputs().begin(), AddNode(g, "DequantizeLinear", "dq_y", {yq, ys, yz}));
  return g;  // no shapes yet: FoldQdq runs before shape inference in the pipeline
}

// A QDQ 3x3 conv of 6 channels to 6 (seeded int8 weights, per-channel scale
// 0.004, pads 1) on the dequantized `x_dq`; returns its float output.
ValueId QdqConv6(Graph& g, uint32_t seed, ValueId x_dq, const std::string& tag) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> wdist(-127, 127);
  std::vector<int8_t> w(6 * 6 * 3 * 3);
  for (int8_t& v : w) v = static_cast<int8_t>(wdist(rng) | 1);
  Attributes w_attrs;
  w_attrs.Set("axis", int64_t{0});
  const ValueId wd = AddNode(g, "DequantizeLinear", "dq_w_" + tag,
                             {AddConst(g, "w_q_" + tag, DataType::kI8, {6, 6, 3, 3}, w),
                              AddConst(g, "ws_" + tag, DataType::kF32, {6}, std::vector<float>(6, 0.004f)),
                              AddConst(g, "wz_" + tag, DataType::kI8, {6}, std::vector<int8_t>(6, 0))},
                             w_attrs);
  Attributes conv_attrs;
  conv_attrs.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
  return AddNode(g, "Conv", tag, {x_dq, wd}, conv_attrs);
}

std::vector<float> RandomInput(const Graph& g, uint32_t seed) {  // g: shapes inferred
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> x(static_cast<size_t>(ElementCount(g.value(g.inputs()[0]).shape)));
  for (float& v : x) {
    do v = dist(rng); while (std::fabs(v) < 0.01f);
  }
  return x;
}

// Elements of `got` more than one output step from `want`.
int BeyondOneStep(const std::vector<float>& got, const std::vector<float>& want) {
  EXPECT_EQ(got.size(), want.size());
  int bad = 0;
  for (size_t i = 0; i < got.size() && i < want.size(); ++i)
    bad += std::fabs(got[i] - want[i]) > kYScale * 1.001f;
  return bad;
}

// On three seeded inputs: the folded graph on the reference kernels (exactly,
// or within one output step) and on the CPU registry (oneDNN's int8 kernels,
// within one step) against the unfolded graph on the reference kernels; the
// output is not trivial (most elements away from the zero point).
void ExpectFoldedMatchesUnfolded(const Graph& before, const Graph& after, uint32_t seed0,
                                 bool exact_on_reference, bool exact_on_cpu = false) {
  std::shared_ptr<KernelRegistry> cpu = std::make_shared<KernelRegistry>();
  RegisterCpuKernels(*cpu);
  for (uint32_t seed = seed0; seed < seed0 + 3; ++seed) {
    const std::vector<float> x = RandomInput(before, seed);
    const auto want = RunOnReference(before, {x});
    const auto got = RunOnReference(after, {x});
    const auto got_cpu = RunOnReference(after, {x}, cpu);
    ASSERT_EQ(want.size(), 1u);
    ASSERT_EQ(got.size(), 1u);
    ASSERT_EQ(got_cpu.size(), 1u);
    if (exact_on_reference) {
      EXPECT_EQ(got[0], want[0]);
    } else {
      EXPECT_EQ(BeyondOneStep(got[0], want[0]), 0);
    }
    if (exact_on_cpu) {
      EXPECT_EQ(got_cpu[0], want[0]);
    } else {
      EXPECT_EQ(BeyondOneStep(got_cpu[0], want[0]), 0);
    }
    int nonzero = 0;
    for (float v : want[0]) nonzero += std::fabs(v) > kYScale * 0.5f;
    EXPECT_GT(nonzero, static_cast<int>(want[0].size() / 4));
  }
}

TEST(FoldQdq, FoldsAndStaysWithinOneStep) {
  const QdqOptions cases[] = {{},
                              {.relu = true},
                              {.int32_bias = true},
                              {.matmul = true},
                              {.gemm = true},
                              // Q's range is [0, 255 * 0.05]: a Clip to 12.75 is its saturation.
                              {.relu = true, .clip_max = 12.75f},
                              {.gemm = true, .relu = true, .int32_bias = true}};
  for (size_t k = 0; k < std::size(cases); ++k) {
    SCOPED_TRACE("case " + std::to_string(k));
    Graph before = QdqGraph(cases[k], 11 + static_cast<uint32_t>(k));
    Graph after = before;
    ASSERT_TRUE(InferShapes(before).ok());
    const Status folded = FoldQdq(after);
    ASSERT_TRUE(folded.ok()) << folded.ToString();
    ASSERT_TRUE(InferShapes(after).ok());
    const char* fused = cases[k].matmul ? "QLinearMatMul" : "QLinearConv";
    EXPECT_EQ(CountOps(after, fused), 1);
    EXPECT_EQ(CountOps(after, cases[k].matmul ? "MatMul" : "Conv"), 0);
    EXPECT_EQ(CountOps(after, "Gemm"), 0);
    // A Gemm runs as a 1x1 QLinearConv between two Reshape views.
    EXPECT_EQ(CountOps(after, "Reshape"), cases[k].gemm ? 2 : 0);
    EXPECT_EQ(CountOps(after, "Relu"), 0);
    EXPECT_EQ(CountOps(after, "Clip"), 0);
    EXPECT_EQ(CountOps(after, "QuantizeLinear"), 1);    // the input's
    EXPECT_EQ(CountOps(after, "DequantizeLinear"), 1);  // the output's
    ExpectFoldedMatchesUnfolded(before, after, 100, /*exact_on_reference=*/false);
  }
}

// Two folded convs back to back: on the CPU registry the uint8 tensor
// between them goes nhwc (runtime/layout.cc) through oneDNN's int8 kernels
// and the per-tensor (de)quantize kernels; it must match the reference
// kernels (plain) within one output step for >= 99% of the elements.
TEST(FoldQdq, ChainRunsChannelsLastLikeTheReference) {
  Graph g = QdqGraph({}, 21);
  // Append DQ -> Conv(DQ w2) -> Q -> DQ behind the first conv's Q output.
  const ValueId yq = g.node(g.value(g.outputs()[0]).producer).inputs[0];
  const ValueId ys = g.FindValue("ys"), yz = g.FindValue("yz");
  const ValueId conv2 = QdqConv6(g, 22, AddNode(g, "DequantizeLinear", "dq_mid", {yq, ys, yz}), "conv2");
  const ValueId q2 = AddNode(g, "QuantizeLinear", "q_y2", {conv2, ys, yz});
  g.outputs()[0] = AddNode(g, "DequantizeLinear", "dq_y2", {q2, ys, yz});
  ASSERT_TRUE(FoldQdq(g).ok());
  ASSERT_TRUE(InferShapes(g).ok());
  ASSERT_EQ(CountOps(g, "QLinearConv"), 2);
  std::shared_ptr<KernelRegistry> cpu = std::make_shared<KernelRegistry>();
  RegisterCpuKernels(*cpu);
  const std::vector<float> x = RandomInput(g, 9);
  const auto want = RunOnReference(g, {x});
  const auto got = RunOnReference(g, {x}, cpu);
  ASSERT_EQ(want.size(), 1u);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_LE(BeyondOneStep(got[0], want[0]), static_cast<int>(want[0].size() / 100));
  int nonzero = 0;
  for (float v : want[0]) nonzero += std::fabs(v) > kYScale * 0.5f;
  EXPECT_GT(nonzero, static_cast<int>(want[0].size() / 4));
}

// Q(MaxPool(DQ(x))) with the same scale and zero point becomes a uint8
// MaxPool: exact against the unfolded graph on the reference kernels, and
// within one step on the CPU registry, where the uint8 tensor between the
// QLinearConv and the MaxPool goes nhwc through oneDNN's int8 pooling.
// Different output parameters: nothing folds.
TEST(FoldQdq, MaxPoolBetweenEqualQdqParametersRunsInUint8) {
  for (bool same_params : {true, false}) {
    SCOPED_TRACE(same_params ? "same parameters" : "different output scale");
    Graph g = QdqGraph({}, 31);
    const ValueId yq = g.node(g.value(g.outputs()[0]).producer).inputs[0];
    const ValueId ys = g.FindValue("ys"), yz = g.FindValue("yz");
    const ValueId pool_in = AddNode(g, "DequantizeLinear", "dq_pool", {yq, ys, yz});
    Attributes pool_attrs;
    pool_attrs.Set("kernel_shape", std::vector<int64_t>{3, 3});
    pool_attrs.Set("strides", std::vector<int64_t>{2, 2});
    pool_attrs.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
    const ValueId pooled = AddNode(g, "MaxPool", "pool", {pool_in}, pool_attrs);
    const ValueId out_scale =
        same_params ? ys : AddConst(g, "ys2", DataType::kF32, {}, std::vector<float>{kYScale * 2});
    const ValueId q2 = AddNode(g, "QuantizeLinear", "q_pool", {pooled, out_scale, yz});
    g.outputs()[0] = AddNode(g, "DequantizeLinear", "dq_out", {q2, out_scale, yz});
    Graph before = g;
    ASSERT_TRUE(InferShapes(before).ok());
    ASSERT_TRUE(FoldQdq(g).ok());
    ASSERT_TRUE(InferShapes(g).ok());
    EXPECT_EQ(CountOps(g, "QLinearConv"), 1);
    EXPECT_EQ(CountOps(g, "MaxPool"), 1);
    // The pooled value's producer: the uint8 MaxPool, or still the Q.
    const Node& pool = g.node(g.value(g.FindValue("q_pool_out")).producer);
    ASSERT_EQ(pool.op_type, same_params ? "MaxPool" : "QuantizeLinear");
    if (!same_params) {
      EXPECT_EQ(CountOps(g, "QuantizeLinear"), 2);  // the input's and the pool's
      continue;
    }
    EXPECT_EQ(g.value(pool.inputs[0]).dtype, DataType::kU8);
    EXPECT_EQ(CountOps(g, "QuantizeLinear"), 1);    // the input's
    EXPECT_EQ(CountOps(g, "DequantizeLinear"), 1);  // the output's
    ExpectFoldedMatchesUnfolded(before, g, 200, /*exact_on_reference=*/true);
  }
}

// A residual block: y1 = Q(conv1(x)), y2 = Q(conv2(DQ(y1))), then
// Q([Relu](Add(DQ(y1), DQ(y2)))) -> DQ -> output. With `other_type` the second
// operand is re-quantized to int8 first, so the Add's operands differ in type.
Graph ResidualGraph(bool relu, bool other_type) {
  Graph g = QdqGraph({}, 41);
  const ValueId y1 = g.node(g.value(g.outputs()[0]).producer).inputs[0];
  const ValueId ys = g.FindValue("ys"), yz = g.FindValue("yz");
  const ValueId conv2 = QdqConv6(g, 42, AddNode(g, "DequantizeLinear", "dq_mid", {y1, ys, yz}), "conv2");
  // Its own scale: the two operands' scale ratios differ.
  ValueId y2s = AddConst(g, "ys2", DataType::kF32, {}, std::vector<float>{kYScale * 1.6f}), y2z = yz;
  ValueId y2 = AddNode(g, "QuantizeLinear", "q_y2", {conv2, y2s, yz});
  if (other_type) {
    y2s = AddConst(g, "ys_i8", DataType::kF32, {}, std::vector<float>{kYScale});
    y2z = AddConst(g, "yz_i8", DataType::kI8, {}, std::vector<int8_t>{-8});
    y2 = AddNode(g, "QuantizeLinear", "q_y2_i8",
                 {AddNode(g, "DequantizeLinear", "dq_y2_u8", {y2, g.FindValue("ys2"), yz}), y2s, y2z});
  }
  ValueId sum = AddNode(g, "Add", "residual",
                        {AddNode(g, "DequantizeLinear", "dq_a", {y1, ys, yz}),
                         AddNode(g, "DequantizeLinear", "dq_b", {y2, y2s, y2z})});
  if (relu) sum = AddNode(g, "Relu", "relu_out", {sum});
  const ValueId oz = AddConst(g, "oz", DataType::kU8, {}, std::vector<uint8_t>{static_cast<uint8_t>(relu ? 0 : 110)});
  const ValueId out_q = AddNode(g, "QuantizeLinear", "q_out", {sum, ys, oz});
  g.outputs()[0] = AddNode(g, "DequantizeLinear", "dq_out", {out_q, ys, oz});
  return g;
}

// The residual Add folds into com.microsoft.QLinearAdd (the Relu with it when
// the output's zero point is uint8's minimum): within one output step of the
// unfolded graph on the reference kernels and on the CPU registry, where the
// uint8 tensors between the convs and the add go nhwc.
TEST(FoldQdq, ResidualAddRunsInUint8) {
  for (bool relu : {false, true}) {
    SCOPED_TRACE(relu ? "Add -> Relu -> Q" : "Add -> Q");
    Graph g = ResidualGraph(relu, false);
    Graph before = g;
    ASSERT_TRUE(InferShapes(before).ok());
    ASSERT_TRUE(FoldQdq(g).ok());
    ASSERT_TRUE(InferShapes(g).ok());
    EXPECT_EQ(CountOps(g, "QLinearConv"), 2);
    EXPECT_EQ(CountOps(g, "com.microsoft.QLinearAdd"), 1);
    EXPECT_EQ(CountOps(g, "Add"), 0);
    EXPECT_EQ(CountOps(g, "Relu"), 0);
    EXPECT_EQ(CountOps(g, "QuantizeLinear"), 1);    // the input's
    EXPECT_EQ(CountOps(g, "DequantizeLinear"), 1);  // the output's
    // conv2's int8 rounding can move its output one step of its own (1.6x
    // larger) scale, so the sum may land two output steps away: allow 1% of
    // the elements beyond one step, none beyond three.
    std::shared_ptr<KernelRegistry> cpu = std::make_shared<KernelRegistry>();
    RegisterCpuKernels(*cpu);
    for (uint32_t seed = 300; seed < 303; ++seed) {
      const std::vector<float> x = RandomInput(before, seed);
      const auto want = RunOnReference(before, {x});
      ASSERT_EQ(want.size(), 1u);
      int nonzero = 0;
      for (float v : want[0]) nonzero += std::fabs(v) > kYScale * 0.5f;
      EXPECT_GT(nonzero, static_cast<int>(want[0].size() / 4));
      for (const auto& got : {RunOnReference(g, {x}), RunOnReference(g, {x}, cpu)}) {
        ASSERT_EQ(got.size(), 1u);
        ASSERT_EQ(got[0].size(), want[0].size());
        EXPECT_LE(BeyondOneStep(got[0], want[0]), static_cast<int>(want[0].size() / 100));
        for (size_t i = 0; i < want[0].size(); ++i)
          ASSERT_LE(std::fabs(got[0][i] - want[0][i]), 3.001f * kYScale) << i;
      }
    }
  }
  // Operands of different types (uint8 and int8): the Add stays float.
  Graph mixed = ResidualGraph(false, true);
  ASSERT_TRUE(FoldQdq(mixed).ok());
  EXPECT_EQ(CountOps(mixed, "com.microsoft.QLinearAdd"), 0);
  EXPECT_EQ(CountOps(mixed, "Add"), 1);
}

// x quantized twice (uint8 at 0.02 / 128, and at 0.035 / 100 as `second`),
// both dequantized, joined along the channels, [Relu,] quantized at kYScale
// and dequantized to the output.
Graph ConcatGraph(bool relu, DataType second, int64_t batch = 1) {
  Graph g;
  g.set_opset(13);
  const ValueId x = g.AddInput("x", DataType::kF32, StaticShape(std::vector<int64_t>{batch, 6, 8, 8}));
  auto qdq = [&](const std::string& tag, float scale, DataType t, int zero) {
    const ValueId s = AddConst(g, "s_" + tag, DataType::kF32, {}, std::vector<float>{scale});
    const ValueId z = t == DataType::kU8
                          ? AddConst(g, "z_" + tag, t, {}, std::vector<uint8_t>{static_cast<uint8_t>(zero)})
                          : AddConst(g, "z_" + tag, t, {}, std::vector<int8_t>{static_cast<int8_t>(zero)});
    return AddNode(g, "DequantizeLinear", "dq_" + tag,
                   {AddNode(g, "QuantizeLinear", "q_" + tag, {x, s, z}), s, z});
  };
  const ValueId a = qdq("a", 0.02f, DataType::kU8, 128);
  const ValueId b = qdq("b", 0.035f, second, second == DataType::kU8 ? 100 : -8);
  Attributes axis;
  axis.Set("axis", int64_t{1});
  ValueId joined = AddNode(g, "Concat", "fire_concat", {a, b}, axis);
  if (relu) joined = AddNode(g, "Relu", "relu", {joined});
  const ValueId ys = AddConst(g, "ys", DataType::kF32, {}, std::vector<float>{kYScale});
  const ValueId yz = AddConst(g, "yz", DataType::kU8, {}, std::vector<uint8_t>{static_cast<uint8_t>(relu ? 0 : 120)});
  g.outputs().push_back(AddNode(g, "DequantizeLinear", "dq_y",
                                {AddNode(g, "QuantizeLinear", "q_y", {joined, ys, yz}), ys, yz}));
  return g;
}

// A Concat of dequantized uint8 tensors at different scales folds into
// com.microsoft.QLinearConcat (the Relu with it when the output's zero point
// is uint8's minimum): bit for bit the unfolded graph, on the reference
// kernels and on braid's CPU kernel.
TEST(FoldQdq, ConcatRunsInUint8BitForBit) {
  for (auto [relu, batch] : {std::pair{false, 1}, std::pair{true, 1}, std::pair{false, 3}}) {
    // Batch 3: the CPU kernel's block-per-image path (outer > 1).
    SCOPED_TRACE(std::string(relu ? "Concat -> Relu -> Q" : "Concat -> Q") + ", batch " +
                 std::to_string(batch));
    Graph g = ConcatGraph(relu, DataType::kU8, batch);
    Graph before = g;
    ASSERT_TRUE(InferShapes(before).ok());
    ASSERT_TRUE(FoldQdq(g).ok());
    ASSERT_TRUE(InferShapes(g).ok());
    EXPECT_EQ(CountOps(g, "com.microsoft.QLinearConcat"), 1);
    EXPECT_EQ(CountOps(g, "Concat"), 0);
    EXPECT_EQ(CountOps(g, "Relu"), 0);
    EXPECT_EQ(CountOps(g, "QuantizeLinear"), 2);    // the two of x
    EXPECT_EQ(CountOps(g, "DequantizeLinear"), 1);  // the output's
    ExpectFoldedMatchesUnfolded(before, g, 500, /*exact_on_reference=*/true, /*exact_on_cpu=*/true);
  }
  // Inputs of different types (uint8 and int8): the Concat stays float.
  Graph mixed = ConcatGraph(false, DataType::kI8);
  ASSERT_TRUE(FoldQdq(mixed).ok());
  EXPECT_EQ(CountOps(mixed, "com.microsoft.QLinearConcat"), 0);
  EXPECT_EQ(CountOps(mixed, "Concat"), 1);
}

// x -> Q(0.02, xz) -> DQ -> f -> Q(kYScale, yz) -> DQ -> y on [1, 6, 8, 8],
// f one of the activations below as exporters write them.
enum class Activation { kHardSwish, kSiLU, kGeluErf, kHardSigmoid, kLeakyRelu, kElu, kSoftplus,
                        kMish, kTanh, kClip };

Graph LookupGraph(Activation act, DataType x_type, DataType y_type) {
  Graph g;
  g.set_opset(17);
  const ValueId x = g.AddInput("x", DataType::kF32, StaticShape(std::vector<int64_t>{1, 6, 8, 8}));
  auto zero_point = [&](const std::string& name, DataType t, int u8_value, int i8_value) {
    return t == DataType::kU8
               ? AddConst(g, name, t, {}, std::vector<uint8_t>{static_cast<uint8_t>(u8_value)})
               : AddConst(g, name, t, {}, std::vector<int8_t>{static_cast<int8_t>(i8_value)});
  };
  auto scalar = [&](const std::string& name, float v) {
    return AddConst(g, name, DataType::kF32, {}, std::vector<float>{v});
  };
  const ValueId xs = scalar("xs", 0.02f), xz = zero_point("xz", x_type, 128, 3);
  const ValueId d = AddNode(g, "DequantizeLinear", "dq_x",
                            {AddNode(g, "QuantizeLinear", "q_x", {x, xs, xz}), xs, xz});
  ValueId f = kNoValue;
  Attributes attrs;
  switch (act) {
    case Activation::kHardSwish: f = AddNode(g, "HardSwish", "act", {d}); break;
    case Activation::kSiLU: f = AddNode(g, "Mul", "act", {d, AddNode(g, "Sigmoid", "sigmoid", {d})}); break;
    case Activation::kGeluErf: {  // x * 0.5 * (1 + erf(x / sqrt(2))), PyTorch's export
      const ValueId e = AddNode(g, "Erf", "erf", {AddNode(g, "Div", "div", {d, scalar("sqrt2", 1.4142135f)})});
      const ValueId half = AddNode(g, "Mul", "mul_x", {d, AddNode(g, "Add", "add1", {e, scalar("one", 1.0f)})});
      f = AddNode(g, "Mul", "act", {half, scalar("half", 0.5f)});
      break;
    }
    case Activation::kHardSigmoid:
      attrs.Set("alpha", 0.3f);
      attrs.Set("beta", 0.4f);
      f = AddNode(g, "HardSigmoid", "act", {d}, attrs);
      break;
    case Activation::kLeakyRelu:
      attrs.Set("alpha", 0.1f);
      f = AddNode(g, "LeakyRelu", "act", {d}, attrs);
      break;
    case Activation::kElu: f = AddNode(g, "Elu", "act", {d}); break;
    case Activation::kSoftplus: f = AddNode(g, "Softplus", "act", {d}); break;
    case Activation::kMish: f = AddNode(g, "Mish", "act", {d}); break;
    case Activation::kTanh: f = AddNode(g, "Tanh", "act", {d}); break;
    case Activation::kClip:  // bounds inside the Q's range: not saturation's work
      f = AddNode(g, "Clip", "act", {d, scalar("lo", 0.0f), scalar("hi", 1.0f)});
      break;
  }
  const ValueId ys = scalar("ys", kYScale), yz = zero_point("yz", y_type, 60, -70);
  g.outputs().push_back(AddNode(g, "DequantizeLinear", "dq_y",
                                {AddNode(g, "QuantizeLinear", "q_y", {f, ys, yz}), ys, yz}));
  return g;
}

// A pointwise activation between a DQ and a Q (HardSwish, SiLU as Sigmoid *
// x, GELU's erf form, ...) becomes one braid.TableLookup: within one output
// step of the QDQ graph on the reference kernels and on braid's CPU kernel,
// for four pairs of quantized types.
TEST(FoldQdqLookups, ActivationsBecomeOneTableWithinOneStep) {
  const Activation kActivations[] = {
      Activation::kHardSwish,   Activation::kSiLU,      Activation::kGeluErf,
      Activation::kHardSigmoid, Activation::kLeakyRelu, Activation::kElu,
      Activation::kSoftplus,    Activation::kMish,      Activation::kTanh,
      Activation::kClip};
  const std::pair<DataType, DataType> kTypes[] = {{DataType::kU8, DataType::kU8},
                                                  {DataType::kI8, DataType::kU8},
                                                  {DataType::kU8, DataType::kI8},
                                                  {DataType::kI8, DataType::kI8}};
  for (Activation act : kActivations) {
    for (auto [x_type, y_type] : kTypes) {
      SCOPED_TRACE("activation " + std::to_string(static_cast<int>(act)) + ", " +
                   DataTypeName(x_type) + " -> " + DataTypeName(y_type));
      Graph g = LookupGraph(act, x_type, y_type);
      Graph before = g;
      ASSERT_TRUE(InferShapes(before).ok());
      ASSERT_TRUE(InferShapes(g).ok());
      ASSERT_TRUE(FoldQdqLookups(g).ok());
      ASSERT_TRUE(InferShapes(g).ok());
      EXPECT_EQ(CountOps(g, "braid.TableLookup"), 1);
      EXPECT_EQ(CountOps(g, "QuantizeLinear"), 1);    // x's
      EXPECT_EQ(CountOps(g, "DequantizeLinear"), 1);  // the output's
      EXPECT_EQ(static_cast<int>(g.nodes().size()), 3);
      ExpectFoldedMatchesUnfolded(before, g, 700, /*exact_on_reference=*/false);
    }
  }
}

// Views inside the activation (FuseMatMulBias' Reshapes around a
// transformer's GELU) fold with it when the ends have one shape; a Reshape
// that leaves the lookup's output another shape than its input stays.
TEST(FoldQdqLookups, ViewsAroundTheActivationFoldWithIt) {
  for (bool back : {true, false}) {
    SCOPED_TRACE(back ? "reshaped back" : "reshaped once");
    Graph g = LookupGraph(Activation::kHardSwish, DataType::kU8, DataType::kU8);
    const NodeId act = g.value(g.FindValue("act_out")).producer;
    const ValueId rows = AddNode(g, "Reshape", "rows",
                                 {g.node(act).inputs[0],
                                  AddConst(g, "rows_shape", DataType::kI64, {2}, std::vector<int64_t>{6, 64})});
    g.node(act).inputs[0] = rows;
    ValueId out = g.FindValue("act_out");
    if (back) {
      out = AddNode(g, "Reshape", "unrows",
                    {out, AddConst(g, "unrows_shape", DataType::kI64, {4}, std::vector<int64_t>{1, 6, 8, 8})});
      const NodeId q = g.value(g.FindValue("q_y_out")).producer;
      g.node(q).inputs[0] = out;
    }
    ASSERT_TRUE(g.TopologicalSort().ok());
    Graph before = g;
    ASSERT_TRUE(InferShapes(before).ok());
    ASSERT_TRUE(InferShapes(g).ok());
    ASSERT_TRUE(FoldQdqLookups(g).ok());
    EXPECT_EQ(CountOps(g, "braid.TableLookup"), back ? 1 : 0);
    EXPECT_EQ(CountOps(g, "Reshape"), back ? 0 : 1);
    if (back) {
      ASSERT_TRUE(InferShapes(g).ok());
      ExpectFoldedMatchesUnfolded(before, g, 800, /*exact_on_reference=*/false);
    }
  }
}

// What the table cannot stand for stays: an intermediate another node (here
// the graph) reads, a per-channel constant, two quantized sources.
TEST(FoldQdqLookups, LeavesNonPointwisePatternsAlone) {
  {
    Graph g = LookupGraph(Activation::kSiLU, DataType::kU8, DataType::kU8);
    g.outputs().push_back(g.FindValue("sigmoid_out"));
    ASSERT_TRUE(InferShapes(g).ok());
    ASSERT_TRUE(FoldQdqLookups(g).ok());
    EXPECT_EQ(CountOps(g, "braid.TableLookup"), 0);
    EXPECT_EQ(CountOps(g, "Sigmoid"), 1);
  }
  {
    // Gelu's tanh form: FoldConstants evaluates only the exact one.
    Graph g = LookupGraph(Activation::kHardSwish, DataType::kU8, DataType::kU8);
    const NodeId act = g.value(g.FindValue("act_out")).producer;
    g.node(act).op_type = "Gelu";
    g.node(act).attrs.Set("approximate", std::string("tanh"));
    ASSERT_TRUE(InferShapes(g).ok());
    ASSERT_TRUE(FoldQdqLookups(g).ok());
    EXPECT_EQ(CountOps(g, "braid.TableLookup"), 0);
  }
  {
    // Mul by a [1, 6, 1, 1] constant: each channel its own function.
    Graph g = LookupGraph(Activation::kHardSwish, DataType::kU8, DataType::kU8);
    const NodeId act = g.value(g.FindValue("act_out")).producer;
    g.node(act).op_type = "Mul";
    g.node(act).inputs.push_back(
        AddConst(g, "per_channel", DataType::kF32, {1, 6, 1, 1}, std::vector<float>{1, 2, 3, 4, 5, 6}));
    ASSERT_TRUE(InferShapes(g).ok());
    ASSERT_TRUE(FoldQdqLookups(g).ok());
    EXPECT_EQ(CountOps(g, "braid.TableLookup"), 0);
  }
  {
    // Mul(DQ(q(x)), DQ(q(x))) through two DQs: two sources.
    Graph g = LookupGraph(Activation::kHardSwish, DataType::kU8, DataType::kU8);
    const NodeId act = g.value(g.FindValue("act_out")).producer;
    const Node dq = g.node(g.value(g.node(act).inputs[0]).producer);
    const ValueId second = AddNode(g, "DequantizeLinear", "dq_x2", dq.inputs);
    g.node(act).op_type = "Mul";
    g.node(act).inputs.push_back(second);
    ASSERT_TRUE(g.TopologicalSort().ok());
    ASSERT_TRUE(InferShapes(g).ok());
    ASSERT_TRUE(FoldQdqLookups(g).ok());
    EXPECT_EQ(CountOps(g, "braid.TableLookup"), 0);
    EXPECT_EQ(CountOps(g, "Mul"), 1);
  }
}

// The default passes (fusion on) fold it; with fusion off they do not.
TEST(FoldQdqLookups, DefaultPipelineFoldsWhenFusing) {
  Graph fused = LookupGraph(Activation::kGeluErf, DataType::kU8, DataType::kU8);
  Graph plain = fused;
  ASSERT_TRUE(RunDefaultPasses(fused).ok());
  EXPECT_EQ(CountOps(fused, "braid.TableLookup"), 1);
  EXPECT_EQ(CountOps(fused, "Erf") + CountOps(fused, "Gelu"), 0);
  PassOptions no_fuse;
  no_fuse.fuse = false;
  ASSERT_TRUE(RunDefaultPasses(plain, no_fuse).ok());
  EXPECT_EQ(CountOps(plain, "braid.TableLookup"), 0);
}

TEST(FoldQdq, LeavesOtherPatternsAlone) {
  // A Clip inside Q's range (6 < 12.75) clips what Q would not: it stays.
  {
    Graph g = QdqGraph({.relu = true, .clip_max = 6.0f}, 9);
    ASSERT_TRUE(FoldQdq(g).ok());
    EXPECT_EQ(CountOps(g, "Clip"), 1);
    EXPECT_EQ(CountOps(g, "QLinearConv"), 0);
  }
  // A Gemm whose C is [M, 1] adds it per row, not per output channel.
  {
    Graph g = QdqGraph({.gemm = true}, 8);
    for (NodeId n = 0; n < g.num_nodes(); ++n)
      if (g.node(n).op_type == "Gemm")
        g.node(n).inputs[2] = AddConst(g, "c_rows", DataType::kF32, {6, 1}, std::vector<float>(6, 0.1f));
    ASSERT_TRUE(FoldQdq(g).ok());
    EXPECT_EQ(CountOps(g, "Gemm"), 1);
  }
  // A Gemm that is not x * W^T + b (transB=0, or alpha != 1): not a 1x1 conv.
  for (const char* attr : {"transB", "alpha"}) {
    Graph g = QdqGraph({.gemm = true}, 7);
    for (NodeId n = 0; n < g.num_nodes(); ++n) {
      if (g.node(n).op_type != "Gemm") continue;
      if (std::string(attr) == "transB") g.node(n).attrs.Set("transB", int64_t{0});
      else g.node(n).attrs.Set("alpha", 0.5f);
    }
    ASSERT_TRUE(FoldQdq(g).ok());
    EXPECT_EQ(CountOps(g, "Gemm"), 1) << attr;
    EXPECT_EQ(CountOps(g, "QLinearConv"), 0) << attr;
  }
  // The float Conv output is read elsewhere, or the output scale is computed
  // at run time: nothing to fold.
  for (const QdqOptions& o : {QdqOptions{.extra_reader = true}, QdqOptions{.runtime_scale = true}}) {
    Graph g = QdqGraph(o, 5);
    ASSERT_TRUE(FoldQdq(g).ok());
    EXPECT_EQ(CountOps(g, "QLinearConv"), 0);
    EXPECT_EQ(CountOps(g, "Conv"), 1);
  }
}

TEST(FoldQdq, DefaultPipelineRunsItBeforeFoldingWeights) {
  Graph g = QdqGraph({}, 7);
  const Status s = RunDefaultPasses(g);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(CountOps(g, "QLinearConv"), 1);
  Graph unfused = QdqGraph({}, 7);
  PassOptions no_fuse;
  no_fuse.fuse = false;
  ASSERT_TRUE(RunDefaultPasses(unfused, no_fuse).ok());
  EXPECT_EQ(CountOps(unfused, "QLinearConv"), 0);
  EXPECT_EQ(CountOps(unfused, "Conv"), 1);  // weights folded to f32
}

}  // namespace
}  // namespace braid
