// Constant folding: chains collapse to constants whose bytes equal values
// computed here by hand; the size cap and graph output names hold.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "graph/ops/constant_eval.h"
#include "graph/passes/passes.h"
#include "tests/passes/pass_test_util.h"

namespace braid {
namespace {

const Dim kN = Dim::Symbol("N");

using pass_test::GraphBuilder;
using pass_test::OpTypes;

// Node outputs are named "<node>_out", which the expectations look up.
constexpr char kOutputSuffix[] = "_out";

Attributes A(std::initializer_list<std::pair<const char*, AttributeValue>> kv) {
  Attributes a;
  for (const auto& [k, v] : kv) a.Set(k, v);
  return a;
}

std::vector<float> RandomFloats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(0.25f, 4.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng) * (rng() % 2 ? 1.0f : -1.0f);
  return v;
}

template <typename T>
std::vector<T> ConstantOf(const Graph& g, const std::string& name) {
  ValueId id = g.FindValue(name);
  EXPECT_NE(id, kNoValue) << name;
  if (id == kNoValue || !g.value(id).constant) {
    ADD_FAILURE() << name << " is not a constant";
    return {};
  }
  std::span<const T> s = g.value(id).constant->as<T>();
  return std::vector<T>(s.begin(), s.end());
}

bool BitwiseEqual(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(FoldConstants, StaticShapeChainCollapses) {
  GraphBuilder b(kOutputSuffix);
  ValueId x = b.Input("x", {2, 3, 4, 5});
  ValueId shape = b.Op("Shape", "shape", {x});
  ValueId dims = b.Op("Gather", "gather", {shape, b.Ints("idx", {0, 1})});
  ValueId target = b.Op("Concat", "concat", {dims, b.Ints("rest", {-1})},
                        A({{"axis", int64_t{0}}}));
  ValueId y = b.Op("Reshape", "reshape", {x, target});
  b.graph().outputs().push_back(y);
  ASSERT_TRUE(FoldConstants(b.graph()).ok());
  EXPECT_EQ(OpTypes(b.graph()), std::vector<std::string>{"Reshape"});
  EXPECT_EQ(ConstantOf<int64_t>(b.graph(), "concat_out"),
            (std::vector<int64_t>{2, 3, -1}));
  ASSERT_TRUE(InferShapes(b.graph()).ok());
  EXPECT_EQ(b.graph().value(b.graph().outputs()[0]).shape, (Shape{2, 3, 20}));
}

TEST(FoldConstants, StaticDimsOfSymbolicShapeFold) {
  GraphBuilder b(kOutputSuffix);
  ValueId x = b.Input("x", {kN, 6, 4});
  ValueId shape = b.Op("Shape", "shape", {x});
  ValueId batch = b.Op("Gather", "batch", {shape, b.Ints("i0", {0})});
  ValueId chans = b.Op("Gather", "chans", {shape, b.Ints("i1", {1})});
  ValueId half = b.Op("Div", "half", {chans, b.Ints("two", {2})});
  ValueId target = b.Op("Concat", "concat", {batch, half, b.Ints("rest", {-1})},
                        A({{"axis", int64_t{0}}}));
  ValueId y = b.Op("Reshape", "reshape", {x, target});
  b.graph().outputs().push_back(y);
  ASSERT_TRUE(FoldConstants(b.graph()).ok());
  // The batch stays a run-time value; 6 / 2 became a constant.
  EXPECT_EQ(OpTypes(b.graph()),
            (std::vector<std::string>{"Shape", "Gather", "Concat", "Reshape"}));
  EXPECT_EQ(ConstantOf<int64_t>(b.graph(), "half_out"), (std::vector<int64_t>{3}));
  ASSERT_TRUE(InferShapes(b.graph()).ok());
  EXPECT_EQ(b.graph().value(b.graph().outputs()[0]).shape, (Shape{kN, 3, 8}));
}

TEST(FoldConstants, SizeOfAStaticShapeAndArgMaxOfAConstantFold) {
  GraphBuilder b(kOutputSuffix);
  ValueId x = b.Input("x", {2, 3, 4});
  ValueId size = b.Op("Size", "size", {x});
  // [[1, 5, 5], [7, 2, 7]]: first maxima [1, 0], last [2, 2]; minima along axis 0 [0, 1, 0].
  ValueId m = b.Floats("m", {2, 3}, {1, 5, 5, 7, 2, 7});
  ValueId first = b.Op("ArgMax", "first", {m}, A({{"axis", int64_t{1}}, {"keepdims", int64_t{0}}}));
  ValueId last = b.Op("ArgMax", "last", {m},
                      A({{"axis", int64_t{1}}, {"keepdims", int64_t{0}}, {"select_last_index", int64_t{1}}}));
  ValueId low = b.Op("ArgMin", "low", {m});
  for (ValueId v : {size, first, last, low}) b.graph().outputs().push_back(v);
  ASSERT_TRUE(FoldConstants(b.graph()).ok());
  EXPECT_TRUE(OpTypes(b.graph()).empty());
  EXPECT_EQ(ConstantOf<int64_t>(b.graph(), "size_out"), (std::vector<int64_t>{24}));
  EXPECT_EQ(ConstantOf<int64_t>(b.graph(), "first_out"), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(ConstantOf<int64_t>(b.graph(), "last_out"), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(ConstantOf<int64_t>(b.graph(), "low_out"), (std::vector<int64_t>{0, 1, 0}));
}

// A QDQ model's weights: DequantizeLinear of int8 constants per output
// channel (axis 0) folds to f32 weights, (q - zero_point) * scale per row.
TEST(FoldConstants, DequantizeLinearOfConstantWeightsFoldsPerAxis) {
  GraphBuilder b(kOutputSuffix);
  const std::vector<int8_t> q = {-128, -1, 0, 5, 127, 64};  // [2, 3]
  const std::vector<int8_t> zp = {0, 3};
  ValueId w = b.graph().AddConstant("w", DataType::kI8, {2, 3}, TensorData::Copy(q.data(), q.size()));
  ValueId scale = b.Floats("scale", {2}, {0.5f, 0.25f});
  ValueId zero = b.graph().AddConstant("zp", DataType::kI8, {2}, TensorData::Copy(zp.data(), zp.size()));
  ValueId dq = b.Op("DequantizeLinear", "dq", {w, scale, zero}, A({{"axis", int64_t{0}}}));
  // Per tensor, uint8, no zero point.
  const std::vector<uint8_t> u = {0, 200, 255};
  ValueId t = b.graph().AddConstant("t", DataType::kU8, {3}, TensorData::Copy(u.data(), u.size()));
  ValueId dq2 = b.Op("DequantizeLinear", "dq2", {t, b.Floats("s2", {}, {0.1f})});
  b.graph().outputs() = {dq, dq2};
  ASSERT_TRUE(InferShapes(b.graph()).ok());
  ASSERT_TRUE(FoldConstants(b.graph()).ok());
  EXPECT_TRUE(OpTypes(b.graph()).empty());
  EXPECT_EQ(ConstantOf<float>(b.graph(), "dq_out"),
            (std::vector<float>{-64.0f, -0.5f, 0.0f, 0.5f, 31.0f, 15.25f}));
  EXPECT_EQ(ConstantOf<float>(b.graph(), "dq2_out"),
            (std::vector<float>{0.0f, 200 * 0.1f, 255 * 0.1f}));
}

TEST(FoldConstants, SizeOfASymbolicShapeStaysARuntimeNode) {
  GraphBuilder b(kOutputSuffix);
  ValueId size = b.Op("Size", "size", {b.Input("x", {kN, 3})});
  b.graph().outputs().push_back(size);
  ASSERT_TRUE(FoldConstants(b.graph()).ok());
  EXPECT_EQ(OpTypes(b.graph()), std::vector<std::string>{"Size"});
}

TEST(FoldConstants, FloatArithmeticIsBitwiseExact) {
  GraphBuilder b(kOutputSuffix);
  const std::vector<float> av = RandomFloats(6, 1), bv = RandomFloats(3, 2);
  ValueId a = b.Floats("a", {2, 3}, av);
  ValueId c = b.Floats("c", {3}, bv);
  std::vector<ValueId> outs = {
      b.Op("Add", "add", {a, c}),   b.Op("Sub", "sub", {a, c}),
      b.Op("Mul", "mul", {a, c}),   b.Op("Div", "div", {a, c}),
      b.Op("Neg", "neg", {a}),      b.Op("Sqrt", "sqrt", {b.Op("Abs", "abs", {a})}),
      b.Op("Pow", "pow", {b.Op("Abs", "abs2", {a}), c}),
      b.Op("Transpose", "tr", {a})};
  for (ValueId o : outs) b.graph().outputs().push_back(o);
  ASSERT_TRUE(FoldConstants(b.graph()).ok());
  EXPECT_EQ(b.graph().num_nodes(), 0);

  std::vector<float> add(6), sub(6), mul(6), div(6), neg(6), sqrt_abs(6),
      pow_abs(6), tr(6);
  for (size_t i = 0; i < 2; ++i) {
    for (size_t j = 0; j < 3; ++j) {
      const float x = av[i * 3 + j], y = bv[j];
      add[i * 3 + j] = x + y;
      sub[i * 3 + j] = x - y;
      mul[i * 3 + j] = x * y;
      div[i * 3 + j] = x / y;
      neg[i * 3 + j] = -x;
      sqrt_abs[i * 3 + j] = std::sqrt(std::fabs(x));
      pow_abs[i * 3 + j] = std::pow(std::fabs(x), y);
      tr[j * 2 + i] = x;
    }
  }
  const Graph& g = b.graph();
  EXPECT_TRUE(BitwiseEqual(ConstantOf<float>(g, "add_out"), add));
  EXPECT_TRUE(BitwiseEqual(ConstantOf<float>(g, "sub_out"), sub));
  EXPECT_TRUE(BitwiseEqual(ConstantOf<float>(g, "mul_out"), mul));
  EXPECT_TRUE(BitwiseEqual(ConstantOf<float>(g, "div_out"), div));
  EXPECT_TRUE(BitwiseEqual(ConstantOf<float>(g, "neg_out"), neg));
  EXPECT_TRUE(BitwiseEqual(ConstantOf<float>(g, "sqrt_out"), sqrt_abs));
  EXPECT_TRUE(BitwiseEqual(ConstantOf<float>(g, "pow_out"), pow_abs));
  EXPECT_TRUE(BitwiseEqual(ConstantOf<float>(g, "tr_out"), tr));
  EXPECT_EQ(g.value(g.FindValue("tr_out")).shape, (Shape{3, 2}));
}

TEST(FoldConstants, FloatShapeArithmeticFeedingAPadFoldsBeforeThePadIsInferred) {
  // timm's TF-style SAME padding: pad = max((ceil(H / s) - 1) * s + k - H, 0) in
  // float on Shape(x)[2], cast back to int64, as Pad's amounts. Shape
  // inference cannot infer the Pad until the chain is folded.
  GraphBuilder b(kOutputSuffix);
  ValueId x = b.Input("x", {kN, 3, 7, 7});
  ValueId h = b.Op("Gather", "h", {b.Op("Shape", "shape", {x}), b.Ints("two", {2}, true)});
  ValueId hf = b.Op("Cast", "hf", {h}, A({{"to", int64_t{1}}}));
  ValueId steps = b.Op("Ceil", "ceil", {b.Op("Div", "div", {hf, b.Floats("s", {}, 2.0f)})});
  ValueId need = b.Op("Sub", "need",
                      {b.Op("Add", "span", {b.Op("Mul", "mul", {b.Op("Sub", "less", {steps, b.Floats("one", {}, 1.0f)}),
                                                               b.Floats("s2", {}, 2.0f)}),
                                            b.Floats("k", {}, 3.0f)}),
                       hf});
  ValueId pad = b.Op("Cast", "pad", {b.Op("Max", "max", {need, b.Floats("zero", {}, 0.0f)})},
                     A({{"to", int64_t{7}}}));
  ValueId amount = b.Op("Unsqueeze", "u", {pad, b.Ints("axes", {0})});
  ValueId pads = b.Op("Concat", "pads",
                      {b.Ints("lead", {0, 0, 0, 0, 0, 0}), amount, amount}, A({{"axis", int64_t{0}}}));
  ValueId y = b.Op("Pad", "pad_op", {x, pads});
  b.graph().outputs().push_back(y);
  ASSERT_TRUE(FoldConstants(b.graph()).ok());
  // (ceil(7 / 2) - 1) * 2 + 3 - 7 = 2 at the end of H and W.
  EXPECT_EQ(OpTypes(b.graph()), (std::vector<std::string>{"Pad"}));
  // (Value ids change when nodes are removed: look the output up by name.)
  EXPECT_EQ(b.graph().value(b.graph().FindValue("pad_op_out")).shape, (Shape{kN, 3, 9, 9}));
  EXPECT_EQ(ConstantOf<int64_t>(b.graph(), "pads_out"),
            (std::vector<int64_t>{0, 0, 0, 0, 0, 0, 2, 2}));
}

TEST(FoldConstants, TrainingModeBatchNormOfAWeightFolds) {
  // NF-Nets standardise conv weights with F.batch_norm(w, training=True):
  // per channel over the other axes, population variance.
  GraphBuilder b(kOutputSuffix);
  const std::vector<float> w = {1, 2, 3, 4, -1, 0, 1, 6};  // [1, 2, 4]: channels 0 and 1
  Node bn;
  bn.name = "bn";
  bn.op_type = "BatchNormalization";
  bn.attrs = A({{"training_mode", int64_t{1}}, {"epsilon", 0.0f}});
  bn.inputs = {b.Floats("w", {1, 2, 4}, w), b.Floats("scale", {2}, 1.0f), b.Floats("bias", {2}, 0.0f),
               b.Floats("mean", {2}, 0.0f), b.Floats("var", {2}, 1.0f)};
  bn.outputs = {b.graph().AddValue("bn_out"), b.graph().AddValue("running_mean"),
                b.graph().AddValue("running_var")};
  const ValueId y = bn.outputs[0];
  b.graph().AddNode(std::move(bn));
  b.graph().outputs().push_back(y);
  ASSERT_TRUE(FoldConstants(b.graph()).ok());
  EXPECT_EQ(b.graph().num_nodes(), 0);
  // Channel 0: mean 2.5, var 1.25; channel 1: mean 1.5, var (6.25 + 2.25 + 0.25 + 20.25) / 4 = 7.25.
  std::vector<float> want;
  for (int i = 0; i < 4; ++i) want.push_back(static_cast<float>((w[i] - 2.5) / std::sqrt(1.25)));
  for (int i = 4; i < 8; ++i) want.push_back(static_cast<float>((w[i] - 1.5) / std::sqrt(7.25)));
  const std::vector<float> got = ConstantOf<float>(b.graph(), "bn_out");
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << i;
}

TEST(FoldConstants, EmptyTensorsAndHugeRangesAreNoCrash) {
  // A BatchNormalization of an empty constant batch and a CumSum over an
  // empty trailing axis fold to empty constants (no division by zero); a
  // Range of 5e8 elements gets its shape without materialising its values.
  GraphBuilder b(kOutputSuffix);
  Node bn;
  bn.name = "bn";
  bn.op_type = "BatchNormalization";
  bn.inputs = {b.graph().AddConstant("x", DataType::kF32, {Dim(0), Dim(2), Dim(3)}, TensorData::Allocate(0)),
               b.Floats("scale", {2}, 1.0f), b.Floats("bias", {2}, 0.0f), b.Floats("mean", {2}, 0.0f),
               b.Floats("var", {2}, 1.0f)};
  bn.outputs = {b.graph().AddValue("bn_out")};
  b.graph().AddNode(std::move(bn));
  b.graph().outputs().push_back(b.graph().FindValue("bn_out"));
  ValueId empty = b.graph().AddConstant("e", DataType::kF32, {Dim(2), Dim(3), Dim(0)}, TensorData::Allocate(0));
  b.graph().outputs().push_back(b.Op("CumSum", "cumsum", {empty, b.Ints("axis", {1}, true)}));
  b.graph().outputs().push_back(
      b.Op("Range", "range", {b.Ints("r0", {0}, true), b.Ints("r1", {500000000}, true),
                              b.Ints("r2", {1}, true)}));
  ASSERT_TRUE(InferShapes(b.graph()).ok());
  EXPECT_EQ(b.graph().value(b.graph().FindValue("range_out")).shape, (Shape{500000000}));
  // Range's 2 GB output stays a node (above the folding cap); the empty ones fold.
  ASSERT_TRUE(FoldConstants(b.graph()).ok());
  EXPECT_EQ(OpTypes(b.graph()), (std::vector<std::string>{"Range"}));
  EXPECT_EQ(ConstantOf<float>(b.graph(), "bn_out").size(), 0u);
  EXPECT_EQ(ConstantOf<float>(b.graph(), "cumsum_out").size(), 0u);
}

TEST(FoldConstants, IndexingAndIntegerOps) {
  GraphBuilder b(kOutputSuffix);
  std::vector<float> data(24);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i) * 0.5f - 3.0f;
  ValueId x = b.Floats("x", {2, 3, 4}, data);
  ValueId sl = b.Op("Slice", "slice",
                    {x, b.Ints("st", {-1, 3}), b.Ints("en", {-100, 0}),
                     b.Ints("ax", {1, 2}), b.Ints("sp", {-2, -2})});
  ValueId ga = b.Op("Gather", "gather", {x, b.Ints("gi", {2, 0})}, A({{"axis", int64_t{2}}}));
  ValueId cast = b.Op("Cast", "cast", {x}, A({{"to", int64_t{7}}}));
  ValueId ints = b.Ints("ints", {7, -7, 9});
  ValueId idiv = b.Op("Div", "idiv", {ints, b.Ints("d", {2}, true)});
  ValueId eq = b.Op("Equal", "eq", {ints, b.Ints("e", {-7, -7, 0})});
  ValueId wh = b.Op("Where", "where", {eq, ints, b.Ints("w", {100}, true)});
  ValueId un = b.Op("Unsqueeze", "unsq", {ints, b.Ints("ua", {0})});
  ValueId ex = b.Op("Expand", "expand", {un, b.Ints("es", {2, 1})});
  for (ValueId o : {sl, ga, cast, idiv, wh, ex}) b.graph().outputs().push_back(o);
  ASSERT_TRUE(FoldConstants(b.graph()).ok());
  EXPECT_EQ(b.graph().num_nodes(), 0);
  const Graph& g = b.graph();
  // Slice: rows 2, 0 of each batch (step -2 from -1), columns 3, 1.
  std::vector<float> slice_expect;
  for (int n = 0; n < 2; ++n)
    for (int r : {2, 0})
      for (int c : {3, 1}) slice_expect.push_back(data[static_cast<size_t>(n * 12 + r * 4 + c)]);
  EXPECT_TRUE(BitwiseEqual(ConstantOf<float>(g, "slice_out"), slice_expect));
  std::vector<float> gather_expect;
  for (int n = 0; n < 2; ++n)
    for (int r = 0; r < 3; ++r)
      for (int c : {2, 0}) gather_expect.push_back(data[static_cast<size_t>(n * 12 + r * 4 + c)]);
  EXPECT_TRUE(BitwiseEqual(ConstantOf<float>(g, "gather_out"), gather_expect));
  std::vector<int64_t> cast_expect;
  for (float f : data) cast_expect.push_back(static_cast<int64_t>(f));
  EXPECT_EQ(ConstantOf<int64_t>(g, "cast_out"), cast_expect);
  EXPECT_EQ(ConstantOf<int64_t>(g, "idiv_out"), (std::vector<int64_t>{3, -3, 4}));
  EXPECT_EQ(ConstantOf<int64_t>(g, "where_out"), (std::vector<int64_t>{100, -7, 100}));
  EXPECT_EQ(ConstantOf<int64_t>(g, "expand_out"),
            (std::vector<int64_t>{7, -7, 9, 7, -7, 9}));
}

TEST(FoldConstants, GatherElementsComparisonsAndLogicalOps) {
  GraphBuilder b(kOutputSuffix);
  // [[1, 2, 3], [4, 5, 6]] gathered along axis 1 by [[2, 0], [-1, 1]].
  ValueId data = b.Floats("data", {2, 3}, {1, 2, 3, 4, 5, 6});
  const std::vector<int64_t> picks = {2, 0, -1, 1};
  ValueId indices = b.graph().AddConstant("picks", DataType::kI64, {2, 2},
                                          TensorData::Copy(picks.data(), picks.size() * 8));
  ValueId ge = b.Op("GatherElements", "ge", {data, indices}, A({{"axis", int64_t{1}}}));
  ValueId ints = b.Ints("ints", {-3, 0, 5});
  ValueId greater = b.Op("Greater", "gt", {ints, b.Ints("zero", {0}, true)});
  ValueId less_eq = b.Op("LessOrEqual", "le", {ints, b.Ints("l", {-3, -1, 5})});
  ValueId both = b.Op("And", "and", {greater, less_eq});
  ValueId either = b.Op("Or", "or", {greater, less_eq});
  ValueId differ = b.Op("Xor", "xor", {greater, less_eq});
  for (ValueId o : {ge, both, either, differ}) b.graph().outputs().push_back(o);
  ASSERT_TRUE(FoldConstants(b.graph()).ok());
  EXPECT_EQ(b.graph().num_nodes(), 0);
  EXPECT_EQ(ConstantOf<float>(b.graph(), "ge_out"), (std::vector<float>{3, 1, 6, 5}));
  // Greater: [0, 0, 1]; LessOrEqual: [1, 0, 1].
  EXPECT_EQ(ConstantOf<uint8_t>(b.graph(), "and_out"), (std::vector<uint8_t>{0, 0, 1}));
  EXPECT_EQ(ConstantOf<uint8_t>(b.graph(), "or_out"), (std::vector<uint8_t>{1, 0, 1}));
  EXPECT_EQ(ConstantOf<uint8_t>(b.graph(), "xor_out"), (std::vector<uint8_t>{1, 0, 0}));
}

TEST(FoldConstants, ConstantNodesAndConstantOfShape) {
  GraphBuilder b(kOutputSuffix);
  TensorAttr two;
  two.dtype = DataType::kF32;
  two.dims = {1};
  const float two_value = 2.0f;
  two.data = TensorData::Copy(&two_value, 4);
  Node cst;
  cst.name = "cst";
  cst.op_type = "Constant";
  cst.attrs.Set("value_ints", std::vector<int64_t>{2, 3});
  cst.outputs = {b.graph().AddValue("cst_out")};
  ValueId shape = cst.outputs[0];
  b.graph().AddNode(std::move(cst));
  ValueId filled = b.Op("ConstantOfShape", "cos", {shape}, A({{"value", two}}));
  b.graph().outputs().push_back(filled);
  ASSERT_TRUE(FoldConstants(b.graph()).ok());
  EXPECT_EQ(b.graph().num_nodes(), 0);
  EXPECT_EQ(ConstantOf<float>(b.graph(), "cos_out"), std::vector<float>(6, 2.0f));
  EXPECT_EQ(b.graph().value(b.graph().outputs()[0]).shape, (Shape{2, 3}));
}

TEST(FoldConstants, SizeCapLeavesLargeOutputs) {
  const std::vector<float> big = RandomFloats(32, 3);  // 128 bytes
  for (size_t cap : {size_t{64}, kMaxFoldedBytes}) {
    GraphBuilder b(kOutputSuffix);
    ValueId a = b.Floats("a", {32}, big);
    ValueId y = b.Op("Neg", "neg", {a});
    b.graph().outputs().push_back(y);
    ASSERT_TRUE(FoldConstants(b.graph(), cap).ok());
    EXPECT_EQ(b.graph().num_nodes(), cap == 64 ? 1 : 0) << cap;
  }
}

TEST(FoldConstants, KeepsGraphOutputNamesAndLeavesRuntimeNodes) {
  GraphBuilder b(kOutputSuffix);
  ValueId x = b.Input("x", {kN, 4});
  ValueId w = b.Op("Transpose", "wt", {b.Floats("w", {4, 4}, RandomFloats(16, 4))});
  ValueId y = b.Op("MatMul", "mm", {x, w});
  ValueId k = b.Op("Mul", "scale", {b.Ints("k", {3}), b.Ints("k2", {5})});
  b.graph().outputs().push_back(y);
  b.graph().outputs().push_back(k);
  ASSERT_TRUE(FoldConstants(b.graph()).ok());
  EXPECT_EQ(OpTypes(b.graph()), std::vector<std::string>{"MatMul"});
  EXPECT_EQ(b.graph().value(b.graph().outputs()[0]).name, "mm_out");
  EXPECT_EQ(b.graph().value(b.graph().outputs()[1]).name, "scale_out");
  EXPECT_EQ(ConstantOf<int64_t>(b.graph(), "scale_out"), std::vector<int64_t>{15});
  EXPECT_TRUE(b.graph().Validate().ok());
}

TEST(FoldConstants, IntegerOverflowWrapsAndCastsSaturate) {
  // INT64_MIN / -1 trapped (SIGFPE); overflowing +, *, unary minus and
  // out-of-range float->int casts were undefined behaviour.
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  GraphBuilder b(kOutputSuffix);
  ValueId lo = b.Ints("lo", {kMin, 6});
  ValueId divisor = b.Ints("divisor", {-1, -4});
  ValueId big = b.Ints("big", {int64_t{1} << 62, kMax});
  ValueId four = b.Ints("four", {4, 1});
  std::vector<ValueId> outs = {
      b.Op("Div", "div", {lo, divisor}), b.Op("Mul", "mul", {big, four}),
      b.Op("Add", "add", {big, big}), b.Op("Neg", "neg", {lo}),
      b.Op("Cast", "cast",
           {b.Floats("f", {3}, {std::nanf(""), 1e30f, -1e30f})},
           A({{"to", int64_t{7}}}))};
  for (ValueId v : outs) b.graph().outputs().push_back(v);
  ASSERT_TRUE(FoldConstants(b.graph()).ok());
  EXPECT_EQ(b.graph().num_nodes(), 0);
  // Two's complement wrap-around, as ONNX Runtime computes it.
  EXPECT_EQ(ConstantOf<int64_t>(b.graph(), "div_out"),
            (std::vector<int64_t>{kMin, -1}));
  EXPECT_EQ(ConstantOf<int64_t>(b.graph(), "mul_out"),
            (std::vector<int64_t>{0, kMax}));
  EXPECT_EQ(ConstantOf<int64_t>(b.graph(), "add_out"),
            (std::vector<int64_t>{kMin, -2}));
  EXPECT_EQ(ConstantOf<int64_t>(b.graph(), "neg_out"),
            (std::vector<int64_t>{kMin, -6}));
  EXPECT_EQ(ConstantOf<int64_t>(b.graph(), "cast_out"),
            (std::vector<int64_t>{0, kMax, kMin}));
}

TEST(FoldConstants, SliceOfEmptyAxisWithNegativeStepFoldsToEmpty) {
  GraphBuilder b(kOutputSuffix);
  ValueId x = b.Floats("x", {0, 2}, {});
  ValueId y = b.Op("Slice", "slice",
                   {x, b.Ints("st", {-1}), b.Ints("en", {-100}),
                    b.Ints("ax", {0}), b.Ints("sp", {-1})});
  b.graph().outputs().push_back(y);
  ASSERT_TRUE(FoldConstants(b.graph()).ok());
  EXPECT_EQ(b.graph().num_nodes(), 0);
  const Value& out = b.graph().value(b.graph().outputs()[0]);  // ids renumbered
  EXPECT_EQ(out.name, "slice_out");
  EXPECT_EQ(out.shape, (Shape{0, 2}));
  ASSERT_TRUE(out.constant.has_value());
  EXPECT_EQ(out.constant->size(), 0u);
}

TEST(FoldConstants, SliceWithHugeStepPicksTheStartElement) {
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  GraphBuilder b(kOutputSuffix);
  ValueId x = b.Floats("x", {2, 3}, {1, 2, 3, 4, 5, 6});
  ValueId y = b.Op("Slice", "slice",
                   {x, b.Ints("st", {1}), b.Ints("en", {kMax}),
                    b.Ints("ax", {1}), b.Ints("sp", {kMax})});
  b.graph().outputs().push_back(y);
  ASSERT_TRUE(FoldConstants(b.graph()).ok());
  EXPECT_EQ(ConstantOf<float>(b.graph(), "slice_out"),
            (std::vector<float>{2, 5}));
}

}  // namespace
}  // namespace braid
