// Reference elementwise and data-movement kernels (kernels/reference/
// register_data.cc) and their parameter parsing (kernels/params/{broadcast,
// elementwise,data_ops}.h) against hand-computed values, plus broadcasting
// against an independent coordinate-by-coordinate formulation.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/backend.h"
#include "kernels/params/broadcast.h"
#include "kernels/params/data_ops.h"
#include "kernels/params/elementwise.h"
#include "kernels/reference/registration.h"

namespace braid {

namespace {

using Ints = std::vector<int64_t>;
using Values = std::vector<double>;
using Attr = std::pair<std::string, AttributeValue>;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// One input. Values are converted to the dtype; for f16 each value is the
// raw bit pattern (so tests do not depend on the conversion under test).
struct In {
  TensorDesc desc;
  Values v;
  bool constant = false;
};
In T(DataType t, Ints dims, Values v, bool constant = false) {
  return In{{t, std::move(dims)}, std::move(v), constant};
}
In F32(Ints dims, Values v) { return T(DataType::kF32, std::move(dims), std::move(v)); }
In I64(Ints dims, Values v) { return T(DataType::kI64, std::move(dims), std::move(v)); }
In I32(Ints dims, Values v) { return T(DataType::kI32, std::move(dims), std::move(v)); }
In Bool(Ints dims, Values v) { return T(DataType::kBool, std::move(dims), std::move(v)); }
In ConstI64(Values v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return T(DataType::kI64, {n}, std::move(v), true);
}
In Missing() { return In{}; }
TensorDesc Out(DataType t, Ints dims) { return {t, std::move(dims)}; }

void Store(DataType t, double v, std::byte* p) {
  auto put = [p](auto x) { std::memcpy(p, &x, sizeof x); };
  switch (t) {
    case DataType::kF32: put(static_cast<float>(v)); break;
    case DataType::kF16: put(static_cast<uint16_t>(v)); break;
    case DataType::kI64: put(static_cast<int64_t>(v)); break;
    case DataType::kI32: put(static_cast<int32_t>(v)); break;
    case DataType::kI8: put(static_cast<int8_t>(v)); break;
    case DataType::kU8: put(static_cast<uint8_t>(v)); break;
    case DataType::kBool: put(static_cast<uint8_t>(v != 0)); break;
    case DataType::kF64: put(v); break;
    case DataType::kBF16: put(static_cast<uint16_t>(v)); break;  // bits, as f16
    case DataType::kI16: put(static_cast<int16_t>(v)); break;
    case DataType::kU16: put(static_cast<uint16_t>(v)); break;
    case DataType::kU32: put(static_cast<uint32_t>(v)); break;
    case DataType::kU64: put(static_cast<uint64_t>(v)); break;
    case DataType::kUndefined: break;
  }
}

double Load(DataType t, const std::byte* p) {
  auto get = [p](auto x) {
    std::memcpy(&x, p, sizeof x);
    return static_cast<double>(x);
  };
  switch (t) {
    case DataType::kF32: return get(float{});
    case DataType::kF16: return get(uint16_t{});
    case DataType::kI64: return get(int64_t{});
    case DataType::kI32: return get(int32_t{});
    case DataType::kI8: return get(int8_t{});
    case DataType::kU8: return get(uint8_t{});
    case DataType::kBool: return get(uint8_t{});
    case DataType::kF64: return get(double{});
    case DataType::kBF16: return get(uint16_t{});
    case DataType::kI16: return get(int16_t{});
    case DataType::kU16: return get(uint16_t{});
    case DataType::kU32: return get(uint32_t{});
    case DataType::kU64: return get(uint64_t{});
    case DataType::kUndefined: break;
  }
  return 0;
}

Node MakeNode(const std::string& op, std::vector<Attr> attrs = {}) {
  Node n;
  n.name = "n_" + op;
  n.op_type = op;
  for (auto& [k, v] : attrs) n.attrs.Set(k, v);
  return n;
}

const KernelRegistry& Registry() {
  static const KernelRegistry* r = [] {
    auto* reg = new KernelRegistry;
    RegisterReferenceElementwiseAndDataKernels(*reg);
    return reg;
  }();
  return *r;
}

// A kernel prepared on bound inputs; Run may be repeated with new values of
// the non-constant inputs (SetInput).
struct Harness {
  Node node;
  std::vector<In> inputs;
  std::vector<TensorDesc> outputs;
  std::vector<TensorData> data;
  PrepareArgs args;
  std::unique_ptr<Kernel> kernel;

  Status Prepare(int64_t opset) {
    data.resize(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      const In& in = inputs[i];
      if (!in.desc.present()) continue;
      EXPECT_EQ(in.v.size(), static_cast<size_t>(in.desc.elements())) << "test input " << i;
      data[i] = TensorData::Allocate(std::max<size_t>(in.desc.bytes(), 1));
      SetInput(i, in.v);
    }
    args.node = &node;
    args.opset = opset;
    args.outputs = outputs;
    for (size_t i = 0; i < inputs.size(); ++i) {
      args.inputs.push_back(inputs[i].desc);
      args.constants.push_back(inputs[i].constant ? &data[i] : nullptr);
    }
    std::vector<const KernelEntry*> c = Registry().Candidates(node.op_type, DeviceKind::kCpu);
    if (c.empty()) return NotFound("no reference kernel for " + node.op_type);
    EXPECT_EQ(c[0]->impl, "reference");
    kernel = c[0]->create();
    return kernel->Prepare(args);
  }
  void SetInput(size_t i, const Values& v) {
    const DataType t = inputs[i].desc.dtype;
    for (size_t k = 0; k < v.size(); ++k)
      Store(t, v[k], data[i].mutable_data() + k * DataTypeSize(t));
  }
  StatusOr<std::vector<Values>> Run() {
    std::vector<std::vector<std::byte>> bytes;
    std::vector<void*> dst;
    for (const TensorDesc& d : outputs) {
      bytes.emplace_back(std::max<size_t>(d.bytes(), 1), std::byte{0xA5});  // poison
      dst.push_back(d.present() ? bytes.back().data() : nullptr);
    }
    std::vector<const void*> src;
    for (size_t i = 0; i < inputs.size(); ++i)
      src.push_back(inputs[i].desc.present() ? data[i].data() : nullptr);
    RunArgs run;
    run.src = src;
    run.dst = dst;
    RETURN_IF_ERROR(kernel->Run(run));
    std::vector<Values> result;
    for (size_t o = 0; o < outputs.size(); ++o) {
      Values v;
      const size_t size = DataTypeSize(outputs[o].dtype);
      for (int64_t k = 0; outputs[o].present() && k < outputs[o].elements(); ++k)
        v.push_back(Load(outputs[o].dtype, bytes[o].data() + static_cast<size_t>(k) * size));
      result.push_back(std::move(v));
    }
    return result;
  }
};

StatusOr<std::vector<Values>> RunAll(Node node, std::vector<In> inputs,
                                     std::vector<TensorDesc> outputs, int64_t opset = 17) {
  Harness h{std::move(node), std::move(inputs), std::move(outputs), {}, {}, {}};
  RETURN_IF_ERROR(h.Prepare(opset));
  return h.Run();
}

StatusOr<Values> Run1(Node node, std::vector<In> inputs, TensorDesc output,
                      int64_t opset = 17) {
  ASSIGN_OR_RETURN(std::vector<Values> all,
                   RunAll(std::move(node), std::move(inputs), {std::move(output)}, opset));
  return all[0];
}

void ExpectValues(const StatusOr<Values>& got, const Values& want, double tol = 0) {
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan((*got)[i])) << "element " << i;
    } else if (std::isinf(want[i])) {
      EXPECT_EQ((*got)[i], want[i]) << "element " << i;
    } else {
      EXPECT_NEAR((*got)[i], want[i], tol + 1e-6 * std::fabs(want[i])) << "element " << i;
    }
  }
}

void ExpectError(const Status& s, StatusCode code, const std::string& a,
                 const std::string& b = "") {
  EXPECT_EQ(s.code(), code) << s.ToString();
  EXPECT_NE(s.message().find(a), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find(b), std::string::npos) << s.ToString();
}
template <typename V>
void ExpectError(const StatusOr<V>& s, StatusCode code, const std::string& a,
                 const std::string& b = "") {
  ASSERT_FALSE(s.ok());
  ExpectError(s.status(), code, a, b);
}

Values RandomNonZero(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  Values v(n);
  for (double& x : v) {
    float f;
    do f = dist(rng); while (std::fabs(f) < 0.05f);
    x = f;
  }
  return v;
}

// ------------------------------------------------------------- broadcasting

TEST(Broadcast, OutputDims) {
  auto dims = [](std::vector<Ints> s) { return BroadcastDims(s); };
  EXPECT_EQ(*dims({{2, 3, 4}, {4}}), (Ints{2, 3, 4}));
  EXPECT_EQ(*dims({{2, 1, 4}, {3, 1}}), (Ints{2, 3, 4}));
  EXPECT_EQ(*dims({{}, {2, 3}}), (Ints{2, 3}));
  EXPECT_EQ(*dims({{0, 3}, {1, 3}}), (Ints{0, 3}));
  EXPECT_EQ(*dims({{1}, {1, 1}, {5, 1, 1}}), (Ints{5, 1, 1}));
  StatusOr<Ints> bad = dims({{2, 3}, {4}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("3 vs 4"), std::string::npos) << bad.status().ToString();
  EXPECT_TRUE(BroadcastsTo(Ints{3, 1}, Ints{2, 3, 4}));
  EXPECT_FALSE(BroadcastsTo(Ints{2, 3, 4}, Ints{3, 4}));
  EXPECT_FALSE(BroadcastsTo(Ints{2}, Ints{3}));
}

TEST(Broadcast, PatternsAndStrides) {
  StatusOr<BroadcastPlan> plan = BroadcastPlan::Make({{2, 3, 4, 5}, {1, 3, 1, 1}, {}, {5}, {3, 1, 5}});
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->output_dims(), (Ints{2, 3, 4, 5}));
  EXPECT_EQ(plan->output_elements(), 120);
  EXPECT_EQ(plan->input(0).pattern, BroadcastPattern::kSameShape);
  EXPECT_EQ(plan->input(1).pattern, BroadcastPattern::kPerChannel);
  EXPECT_EQ(plan->input(1).channel_axis, 1);
  EXPECT_EQ(plan->input(1).channel_outer, 2);
  EXPECT_EQ(plan->input(1).channel_inner, 20);
  EXPECT_EQ(plan->input(2).pattern, BroadcastPattern::kScalar);
  EXPECT_EQ(plan->input(3).pattern, BroadcastPattern::kPerChannel);
  EXPECT_EQ(plan->input(3).channel_axis, 3);
  EXPECT_EQ(plan->input(4).pattern, BroadcastPattern::kGeneral);
  EXPECT_EQ(plan->input(4).dims, (Ints{1, 3, 1, 5}));
  EXPECT_EQ(plan->input(4).strides, (Ints{0, 5, 0, 1}));
  EXPECT_EQ(plan->input(1).strides, (Ints{0, 1, 0, 0}));
  EXPECT_FALSE(plan->AllSameShape());

  // Same shapes collapse to one axis; a leading stretch leaves two.
  StatusOr<BroadcastPlan> same = BroadcastPlan::Make({{2, 3, 4}, {2, 3, 4}});
  ASSERT_TRUE(same.ok());
  EXPECT_TRUE(same->AllSameShape());
  EXPECT_EQ(same->collapsed_dims(), (Ints{24}));
  StatusOr<BroadcastPlan> lead = BroadcastPlan::Make({{2, 3, 4}, {3, 4}});
  ASSERT_TRUE(lead.ok());
  EXPECT_EQ(lead->collapsed_dims(), (Ints{2, 12}));
  EXPECT_EQ(lead->collapsed_stride(1, 0), 0);
  EXPECT_EQ(lead->collapsed_stride(1, 1), 1);
  // A scalar output collapses to [1].
  StatusOr<BroadcastPlan> scalar = BroadcastPlan::Make({{}, {1, 1}});
  ASSERT_TRUE(scalar.ok());
  EXPECT_EQ(scalar->output_dims(), (Ints{1, 1}));
  EXPECT_EQ(scalar->collapsed_dims(), (Ints{1}));

  EXPECT_FALSE(BroadcastPlan::MakeForOutput(std::vector<Ints>{{3}}, Ints{2, 4}).ok());
}

// ForEachRow against coordinates computed independently per element.
TEST(Broadcast, RowWalkMatchesCoordinates) {
  const std::vector<std::vector<Ints>> cases = {
      {{2, 3, 4}, {3, 1}, {1}},    {{4, 1, 3, 1}, {1, 5, 1, 2}}, {{2, 1, 3}, {2, 4, 3}},
      {{1, 1, 1}, {7}},            {{3, 1, 1, 2}, {1, 2, 2, 1}}, {{0, 3}, {3}},
      {{2, 2, 2, 2, 2}, {2, 1, 2, 1, 2}}};
  for (const auto& shapes : cases) {
    StatusOr<BroadcastPlan> plan = BroadcastPlan::Make(shapes);
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    const Ints& out = plan->output_dims();
    std::vector<Ints> seen(shapes.size(), Ints(static_cast<size_t>(plan->output_elements()), -1));
    plan->ForEachRow([&](int64_t o, const int64_t* in, const int64_t* step, int64_t n) {
      for (size_t i = 0; i < shapes.size(); ++i)
        for (int64_t e = 0; e < n; ++e) seen[i][static_cast<size_t>(o + e)] = in[i] + e * step[i];
    });
    for (int64_t flat = 0; flat < plan->output_elements(); ++flat) {
      // Output coordinate -> each input's flat index, the numpy way.
      Ints coord(out.size());
      int64_t rest = flat;
      for (size_t a = out.size(); a-- > 0;) {
        coord[a] = rest % out[a];
        rest /= out[a];
      }
      for (size_t i = 0; i < shapes.size(); ++i) {
        const Ints& s = shapes[i];
        int64_t index = 0;
        for (size_t a = 0; a < s.size(); ++a) {
          const int64_t c = coord[out.size() - s.size() + a];
          index = index * s[a] + (s[a] == 1 ? 0 : c);
        }
        EXPECT_EQ(seen[i][static_cast<size_t>(flat)], index) << "input " << i << " element " << flat;
      }
    }
  }
}

// ------------------------------------------------------------------ binary

TEST(ReferenceBinary, ArithmeticWithBroadcast) {
  // [2,3] op [3]
  const Values a = {1.5, -2, 3, 4, 5.25, -6};
  const Values b = {0.5, 2, -4};
  ExpectValues(Run1(MakeNode("Add"), {F32({2, 3}, a), F32({3}, b)}, Out(DataType::kF32, {2, 3})),
               {2, 0, -1, 4.5, 7.25, -10});
  ExpectValues(Run1(MakeNode("Sub"), {F32({2, 3}, a), F32({3}, b)}, Out(DataType::kF32, {2, 3})),
               {1, -4, 7, 3.5, 3.25, -2});
  ExpectValues(Run1(MakeNode("Mul"), {F32({2, 3}, a), F32({3}, b)}, Out(DataType::kF32, {2, 3})),
               {0.75, -4, -12, 2, 10.5, 24});
  ExpectValues(Run1(MakeNode("Div"), {F32({2, 3}, a), F32({3}, b)}, Out(DataType::kF32, {2, 3})),
               {3, -1, -0.75, 8, 2.625, 1.5});
  // Rank mismatch and size-1 axes on both sides: [2,1] + [1,3] -> [2,3].
  ExpectValues(Run1(MakeNode("Add"), {I64({2, 1}, {10, 20}), I64({1, 3}, {1, 2, 3})},
                    Out(DataType::kI64, {2, 3})),
               {11, 12, 13, 21, 22, 23});
  // Scalar operand.
  ExpectValues(Run1(MakeNode("Mul"), {I32({}, {-3}), I32({2, 2}, {1, 2, 3, 4})},
                    Out(DataType::kI32, {2, 2})),
               {-3, -6, -9, -12});
}

TEST(ReferenceBinary, IntegerDivisionTruncatesAndWraps) {
  ExpectValues(Run1(MakeNode("Div"), {I32({5}, {7, -7, 7, -7, 5}), I32({5}, {2, 2, -2, -2, 0})},
                    Out(DataType::kI32, {5})),
               {3, -3, -3, 3, 0});
  const double min64 = static_cast<double>(std::numeric_limits<int64_t>::min());
  ExpectValues(Run1(MakeNode("Div"), {I64({2}, {min64, 9}), I64({2}, {-1, 4})}, Out(DataType::kI64, {2})),
               {min64, 2});
  const double max32 = std::numeric_limits<int32_t>::max();
  const double min32 = std::numeric_limits<int32_t>::min();
  ExpectValues(Run1(MakeNode("Add"), {I32({1}, {max32}), I32({1}, {1})}, Out(DataType::kI32, {1})),
               {min32});
}

TEST(ReferenceBinary, ModTakesTheDivisorsSignOrWithFmodTheDividends) {
  // Python's %: 7 % -3 = -2, -7 % 3 = 2; C's fmod: 7 fmod -3 = 1, -7 fmod 3 = -1.
  ExpectValues(Run1(MakeNode("Mod"), {I64({5}, {7, -7, 7, -7, 6}), I64({5}, {3, 3, -3, -3, 3})},
                    Out(DataType::kI64, {5})),
               {1, 2, -2, -1, 0});
  ExpectValues(Run1(MakeNode("Mod", {{"fmod", int64_t{1}}}),
                    {I32({4}, {7, -7, 7, -7}), I32({4}, {3, 3, -3, -3})}, Out(DataType::kI32, {4})),
               {1, -1, 1, -1});
  ExpectValues(Run1(MakeNode("Mod", {{"fmod", int64_t{1}}}),
                    {F32({3}, {5.5, -5.5, 4.0}), F32({1}, {2.0})}, Out(DataType::kF32, {3})),
               {1.5, -1.5, 0.0});
  // x % 0 is 0 (ONNX leaves it undefined; no trap), INT64_MIN % -1 is 0.
  const double min64 = static_cast<double>(std::numeric_limits<int64_t>::min());
  ExpectValues(Run1(MakeNode("Mod"), {I64({2}, {5, min64}), I64({2}, {0, -1})}, Out(DataType::kI64, {2})),
               {0, 0});
  ExpectError(Run1(MakeNode("Mod"), {F32({2}, {1, 2}), F32({2}, {1, 2})}, Out(DataType::kF32, {2})),
              StatusCode::kInvalidArgument, "fmod=0", "integers only");
}

TEST(ReferenceUnary, NotInvertsBooleans) {
  ExpectValues(Run1(MakeNode("Not"), {Bool({2, 2}, {1, 0, 0, 1})}, Out(DataType::kBool, {2, 2})),
               {0, 1, 1, 0});
  ExpectError(Run1(MakeNode("Not"), {F32({2}, {1, 0})}, Out(DataType::kBool, {2})),
              StatusCode::kInvalidArgument, "must be bool");
}

TEST(ReferenceData, RangeAccumulatesDeltaAndChecksTheLength) {
  ExpectValues(Run1(MakeNode("Range"), {I64({}, {10}), I64({}, {1}), I64({}, {-3})},
                    Out(DataType::kI64, {3})),
               {10, 7, 4});
  ExpectValues(Run1(MakeNode("Range"), {F32({}, {1.0}), F32({}, {2.0}), F32({}, {0.25})},
                    Out(DataType::kF32, {4})),
               {1.0, 1.25, 1.5, 1.75});
  // Inputs that disagree with the planned length are an error, not a short write.
  ExpectError(Run1(MakeNode("Range"), {I32({}, {0}), I32({}, {5}), I32({}, {1})},
                   Out(DataType::kI32, {4})),
              StatusCode::kInvalidArgument, "give 5 elements", "the plan has 4");
  ExpectError(Run1(MakeNode("Range"), {I32({}, {0}), I32({}, {5}), I32({}, {0})},
                   Out(DataType::kI32, {0})),
              StatusCode::kInvalidArgument, "delta is 0");
}

TEST(ReferenceData, ScatterNDReplacesOrCombinesSlices) {
  // data [2, 3]; indices [[1], [0]] replace whole rows; [[0, 2]] one element.
  const In data = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  ExpectValues(Run1(MakeNode("ScatterND"), {data, I64({2, 1}, {1, 0}), F32({2, 3}, {7, 8, 9, 10, 11, 12})},
                    Out(DataType::kF32, {2, 3})),
               {10, 11, 12, 7, 8, 9});
  ExpectValues(Run1(MakeNode("ScatterND"), {data, I64({1, 2}, {0, -1}), F32({1}, {9})},
                    Out(DataType::kF32, {2, 3})),
               {1, 2, 9, 4, 5, 6});
  // Repeated indices accumulate with a reduction.
  ExpectValues(Run1(MakeNode("ScatterND", {{"reduction", std::string("add")}}),
                    {data, I64({2, 1}, {1, 1}), F32({2, 3}, {1, 1, 1, 2, 2, 2})},
                    Out(DataType::kF32, {2, 3})),
               {1, 2, 3, 7, 8, 9});
  ExpectValues(Run1(MakeNode("ScatterND", {{"reduction", std::string("max")}}),
                    {data, I64({1, 1}, {0}), F32({1, 3}, {0, 5, 3})}, Out(DataType::kF32, {2, 3})),
               {1, 5, 3, 4, 5, 6});
  ExpectError(Run1(MakeNode("ScatterND"), {data, I64({1, 1}, {2}), F32({1, 3}, {0, 0, 0})},
                   Out(DataType::kF32, {2, 3})),
              StatusCode::kInvalidArgument, "index 2 is out of range", "extent 2");
}

TEST(ReferenceData, TileRepeatsEveryAxis) {
  // [[1,2],[3,4]] tiled [2, 3] -> 4 x 6.
  ExpectValues(Run1(MakeNode("Tile"), {F32({2, 2}, {1, 2, 3, 4}), ConstI64({2, 3})},
                    Out(DataType::kF32, {4, 6})),
               {1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4, 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4});
  // Repeats known only at run time: the output desc decides (the batch of a Shape).
  ExpectValues(Run1(MakeNode("Tile"), {I64({1, 2}, {5, 6}), I64({2}, {3, 1})},
                    Out(DataType::kI64, {3, 2})),
               {5, 6, 5, 6, 5, 6});
  ExpectError(Run1(MakeNode("Tile"), {F32({2}, {1, 2}), ConstI64({2, 2})}, Out(DataType::kF32, {4})),
              StatusCode::kInvalidArgument, "one entry per input axis");
}

TEST(ReferenceData, CumSumExclusiveAndReverse) {
  const In x = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  ExpectValues(Run1(MakeNode("CumSum"), {x, I64({}, {1})}, Out(DataType::kF32, {2, 3})),
               {1, 3, 6, 4, 9, 15});
  ExpectValues(Run1(MakeNode("CumSum"), {x, I64({}, {0})}, Out(DataType::kF32, {2, 3})),
               {1, 2, 3, 5, 7, 9});
  ExpectValues(Run1(MakeNode("CumSum", {{"exclusive", int64_t{1}}}), {x, I64({}, {-1})},
                    Out(DataType::kF32, {2, 3})),
               {0, 1, 3, 0, 4, 9});
  ExpectValues(Run1(MakeNode("CumSum", {{"reverse", int64_t{1}}}), {x, I64({}, {1})},
                    Out(DataType::kF32, {2, 3})),
               {6, 5, 3, 15, 11, 6});
  ExpectValues(Run1(MakeNode("CumSum", {{"reverse", int64_t{1}}, {"exclusive", int64_t{1}}}),
                    {I32({3}, {1, 2, 3}), I32({}, {0})}, Out(DataType::kI32, {3})),
               {5, 3, 0});
  ExpectError(Run1(MakeNode("CumSum"), {x, I64({}, {2})}, Out(DataType::kF32, {2, 3})),
              StatusCode::kInvalidArgument, "axis 2 is out of range");
}

TEST(ReferenceData, GatherElementsPicksAlongTheAxis) {
  // ONNX's examples: axis 1 takes within rows, axis 0 within columns.
  ExpectValues(Run1(MakeNode("GatherElements", {{"axis", int64_t{1}}}),
                    {F32({2, 2}, {1, 2, 3, 4}), I64({2, 2}, {0, 0, 1, 0})}, Out(DataType::kF32, {2, 2})),
               {1, 1, 4, 3});
  const In nine = I32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  ExpectValues(Run1(MakeNode("GatherElements"), {nine, I64({2, 3}, {1, 2, 0, 2, 0, 0})},
                    Out(DataType::kI32, {2, 3})),
               {4, 8, 3, 7, 2, 3});
  ExpectValues(Run1(MakeNode("GatherElements"), {nine, I32({2, 3}, {-1, -2, 0, -2, 0, 0})},
                    Out(DataType::kI32, {2, 3})),
               {7, 5, 3, 4, 2, 3});
  ExpectError(Run1(MakeNode("GatherElements"), {nine, I64({1, 1}, {3})}, Out(DataType::kI32, {1, 1})),
              StatusCode::kInvalidArgument, "index 3 is out of range for axis 0", "extent 3");
  ExpectError(Run1(MakeNode("GatherElements"), {nine, I64({3}, {0, 1, 2})}, Out(DataType::kI32, {3})),
              StatusCode::kInvalidArgument, "must have the same rank");
}

TEST(ReferenceData, ScatterElementsReplacesOrReducesInIndexOrder) {
  const In row = F32({1, 5}, {1, 2, 3, 4, 5});
  ExpectValues(Run1(MakeNode("ScatterElements", {{"axis", int64_t{1}}}),
                    {row, I64({1, 2}, {1, 3}), F32({1, 2}, {1.5, 2.5})}, Out(DataType::kF32, {1, 5})),
               {1, 1.5, 3, 2.5, 5});
  // Duplicates: add gives 2 + 1.5 + 2.5, mul 2 * 1.5 * 2.5, min the least.
  const In twice = I64({1, 2}, {1, -4});
  const In updates = F32({1, 2}, {1.5, 2.5});
  ExpectValues(Run1(MakeNode("ScatterElements", {{"axis", int64_t{1}}, {"reduction", std::string("add")}}),
                    {row, twice, updates}, Out(DataType::kF32, {1, 5})),
               {1, 6, 3, 4, 5});
  ExpectValues(Run1(MakeNode("ScatterElements", {{"axis", int64_t{1}}, {"reduction", std::string("mul")}}),
                    {row, twice, updates}, Out(DataType::kF32, {1, 5})),
               {1, 7.5, 3, 4, 5});
  ExpectValues(Run1(MakeNode("ScatterElements", {{"axis", int64_t{1}}, {"reduction", std::string("min")}}),
                    {row, twice, updates}, Out(DataType::kF32, {1, 5})),
               {1, 1.5, 3, 4, 5});
  // Scatter (opsets 9-10) along axis 0, ONNX's example.
  ExpectValues(Run1(MakeNode("Scatter"),
                    {F32({3, 3}, {0, 0, 0, 0, 0, 0, 0, 0, 0}), I64({2, 3}, {1, 0, 2, 0, 2, 1}),
                     F32({2, 3}, {1.0, 1.1, 1.2, 2.0, 2.1, 2.2})},
                    Out(DataType::kF32, {3, 3}), 10),
               {2.0, 1.1, 0, 1.0, 0, 2.2, 0, 2.1, 1.2});
  ExpectError(Run1(MakeNode("ScatterElements"), {row, I64({1, 2}, {0, 1}), F32({1, 3}, {1, 2, 3})},
                   Out(DataType::kF32, {1, 5})),
              StatusCode::kInvalidArgument, "updates", "indices' shape");
  ExpectError(Run1(MakeNode("ScatterElements", {{"axis", int64_t{1}}}),
                   {row, I64({1, 1}, {5}), F32({1, 1}, {9})}, Out(DataType::kF32, {1, 5})),
              StatusCode::kInvalidArgument, "index 5 is out of range for axis 1", "extent 5");
}

TEST(ReferenceData, GatherNDCopiesSlicesPerBatch) {
  const In square = I32({2, 2}, {0, 1, 2, 3});
  ExpectValues(Run1(MakeNode("GatherND"), {square, I64({2, 2}, {0, 0, 1, 1})}, Out(DataType::kI32, {2})),
               {0, 3});
  ExpectValues(Run1(MakeNode("GatherND"), {square, I64({2, 1}, {1, -2})}, Out(DataType::kI32, {2, 2})),
               {2, 3, 0, 1});
  // batch_dims 1: batch 0 takes row 1 of its [2, 2], batch 1 row 0.
  ExpectValues(Run1(MakeNode("GatherND", {{"batch_dims", int64_t{1}}}),
                    {F32({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}), I64({2, 1}, {1, 0})},
                    Out(DataType::kF32, {2, 2})),
               {2, 3, 4, 5});
  ExpectError(Run1(MakeNode("GatherND"), {square, I64({1, 2}, {0, 2})}, Out(DataType::kI32, {1})),
              StatusCode::kInvalidArgument, "index 2 is out of range", "extent 2");
}

TEST(ReferenceData, ReverseSequenceReversesEachRowsPrefix) {
  // Time-major [4, 2]: column 0 (length 3) 0 2 4 6 -> 4 2 0 6, column 1 (length 1) unchanged.
  const In x = I32({4, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  ExpectValues(Run1(MakeNode("ReverseSequence"), {x, I64({2}, {3, 1})}, Out(DataType::kI32, {4, 2})),
               {4, 1, 2, 3, 0, 5, 6, 7});
  // Batch-major [2, 3, 2] rows of 2 elements move whole: batch 0 (length 2) swaps
  // its first two rows, batch 1 (length 3) reverses all three.
  ExpectValues(Run1(MakeNode("ReverseSequence", {{"batch_axis", int64_t{0}}, {"time_axis", int64_t{1}}}),
                    {F32({2, 3, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}), I64({2}, {2, 3})},
                    Out(DataType::kF32, {2, 3, 2})),
               {2, 3, 0, 1, 4, 5, 10, 11, 8, 9, 6, 7});
  ExpectError(Run1(MakeNode("ReverseSequence"), {x, I64({2}, {5, 1})}, Out(DataType::kI32, {4, 2})),
              StatusCode::kInvalidArgument, "sequence_lens[0] = 5", "outside [0, 4]");
  ExpectError(Run1(MakeNode("ReverseSequence", {{"batch_axis", int64_t{0}}}), {x, I64({2}, {1, 1})},
                   Out(DataType::kI32, {4, 2})),
              StatusCode::kInvalidArgument, "time_axis 0 and batch_axis 0", "one each");
}

TEST(ReferenceBinary, ComparisonsAndLogicalOps) {
  const In a = F32({4}, {1, 2, 3, kNaN});
  const In two = F32({1}, {2});
  const TensorDesc out = Out(DataType::kBool, {4});
  ExpectValues(Run1(MakeNode("Greater"), {a, two}, out), {0, 0, 1, 0});
  ExpectValues(Run1(MakeNode("Less"), {a, two}, out), {1, 0, 0, 0});
  ExpectValues(Run1(MakeNode("GreaterOrEqual"), {a, two}, out), {0, 1, 1, 0});
  ExpectValues(Run1(MakeNode("LessOrEqual"), {a, two}, out), {1, 1, 0, 0});
  ExpectValues(Run1(MakeNode("Greater"), {I64({2, 2}, {-5, 7, 0, 9}), I64({2}, {0, 8})},
                    Out(DataType::kBool, {2, 2})),
               {0, 0, 0, 1});
  const In p = Bool({2, 2}, {1, 1, 0, 0});
  const In q = Bool({2}, {1, 0});
  const TensorDesc out22 = Out(DataType::kBool, {2, 2});
  ExpectValues(Run1(MakeNode("And"), {p, q}, out22), {1, 0, 0, 0});
  ExpectValues(Run1(MakeNode("Or"), {p, q}, out22), {1, 1, 1, 0});
  ExpectValues(Run1(MakeNode("Xor"), {p, q}, out22), {0, 1, 1, 0});
  ExpectError(Run1(MakeNode("And"), {a, a}, out), StatusCode::kUnimplemented, "input dtype f32");
  ExpectError(Run1(MakeNode("Greater"), {p, p}, out22), StatusCode::kUnimplemented, "input dtype bool");
}

TEST(ReferenceBinary, BitShiftOfUnsignedBytes) {
  const In x = T(DataType::kU8, {4}, {16, 4, 200, 255});
  const In shift = T(DataType::kU8, {4}, {1, 2, 1, 8});
  const TensorDesc out = Out(DataType::kU8, {4});
  // 200 << 1 = 400 wraps to 144; a shift by 8 moves every bit out.
  ExpectValues(Run1(MakeNode("BitShift", {{"direction", std::string("LEFT")}}), {x, shift}, out),
               {32, 16, 144, 0});
  ExpectValues(Run1(MakeNode("BitShift", {{"direction", std::string("RIGHT")}}), {x, shift}, out),
               {8, 1, 100, 0});
  ExpectError(Run1(MakeNode("BitShift", {{"direction", std::string("UP")}}), {x, shift}, out),
              StatusCode::kInvalidArgument, "direction 'UP'");
  ExpectError(Run1(MakeNode("BitShift", {{"direction", std::string("LEFT")}}),
                   {I32({1}, {1}), I32({1}, {1})}, Out(DataType::kI32, {1})),
              StatusCode::kUnimplemented, "input dtype i32");
}

TEST(ReferenceBinary, PReluSumAndMean) {
  ExpectValues(Run1(MakeNode("PRelu"), {F32({2, 2}, {-2, -1, 0, 3}), F32({2}, {0.5, 2})},
                    Out(DataType::kF32, {2, 2})),
               {-1, -2, 0, 3});
  const std::vector<In> three = {F32({2}, {1, 2}), F32({1}, {10}), F32({2, 1}, {100, 200})};
  ExpectValues(Run1(MakeNode("Sum"), three, Out(DataType::kF32, {2, 2})), {111, 112, 211, 212});
  ExpectValues(Run1(MakeNode("Mean"), three, Out(DataType::kF32, {2, 2})),
               {37, 112.0 / 3, 211.0 / 3, 212.0 / 3}, 1e-5);
  ExpectValues(Run1(MakeNode("Sum"), {I64({2}, {1, 2})}, Out(DataType::kI64, {2})), {1, 2});
  ExpectError(Run1(MakeNode("Mean"), {I64({2}, {1, 2}), I64({2}, {3, 4})}, Out(DataType::kI64, {2})),
              StatusCode::kUnimplemented, "input dtype i64");
}

TEST(ReferenceUnary, TrigonometricAndHyperbolic) {
  auto one = [](const char* op, double x) {
    return Run1(MakeNode(op), {F32({1}, {x})}, Out(DataType::kF32, {1}));
  };
  ExpectValues(one("Tan", 0.5), {0.5463024898}, 1e-6);
  ExpectValues(one("Asin", 0.5), {0.5235987756}, 1e-6);
  ExpectValues(one("Acos", 0.5), {1.0471975512}, 1e-6);
  ExpectValues(one("Atan", 1.0), {0.7853981634}, 1e-6);
  ExpectValues(one("Sinh", 1.0), {1.1752011936}, 1e-6);
  ExpectValues(one("Cosh", 1.0), {1.5430806348}, 1e-6);
  ExpectValues(one("Asinh", 1.0), {0.8813735870}, 1e-6);
  ExpectValues(one("Acosh", 2.0), {1.3169578969}, 1e-6);
  ExpectValues(one("Atanh", 0.5), {0.5493061443}, 1e-6);
  ExpectValues(one("Asin", 2.0), {kNaN});
}

TEST(ReferenceUnary, ActivationsWithAttributes) {
  auto run = [](Node node, Values x) {
    const int64_t n = static_cast<int64_t>(x.size());
    return Run1(std::move(node), {F32({n}, std::move(x))}, Out(DataType::kF32, {n}));
  };
  // log(1 + e^x); large x must not overflow to inf.
  ExpectValues(run(MakeNode("Softplus"), {-1, 0, 1, 100}), {0.3132616875, 0.6931471806, 1.3132616875, 100},
               1e-6);
  ExpectValues(run(MakeNode("Softsign"), {-3, 1}), {-0.75, 0.5});
  ExpectValues(run(MakeNode("Mish"), {-1, 1}), {-0.3034014613, 0.8650983882}, 1e-6);
  // Elu alpha 2: 2 * (e^-1 - 1); Celu alpha 2: 2 * (e^-0.5 - 1).
  ExpectValues(run(MakeNode("Elu", {{"alpha", 2.0f}}), {-1, 2}), {-1.2642411177, 2}, 1e-6);
  ExpectValues(run(MakeNode("Elu"), {-1}), {-0.6321205588}, 1e-6);
  ExpectValues(run(MakeNode("Celu", {{"alpha", 2.0f}}), {-1, 2}), {-0.7869386806, 2}, 1e-6);
  // Selu defaults: 1.0507009873554805 * 1.6732632423543772 * (e^-1 - 1), 1.0507... * 2.
  ExpectValues(run(MakeNode("Selu"), {-1, 2}), {-1.1113307378, 2.1014019747}, 1e-6);
  ExpectValues(run(MakeNode("Selu", {{"alpha", 2.0f}, {"gamma", 3.0f}}), {-1, 2}), {-3.7927233530, 6}, 1e-6);
  ExpectValues(run(MakeNode("ThresholdedRelu"), {0.5, 1, 1.5}), {0, 0, 1.5});
  ExpectValues(run(MakeNode("ThresholdedRelu", {{"alpha", 0.25f}}), {0.5, -1}), {0.5, 0});
  ExpectValues(run(MakeNode("Shrink", {{"lambd", 1.0f}, {"bias", 0.5f}}), {-2, -0.5, 0.5, 2}),
               {-1.5, 0, 0, 1.5});
  ExpectValues(run(MakeNode("Shrink"), {-0.75, 0.5, 0.75}), {-0.75, 0, 0.75});
  ExpectError(run(MakeNode("Celu", {{"alpha", 0.0f}}), {1}), StatusCode::kInvalidArgument, "alpha 0");
}

TEST(ReferenceUnary, IsNaNAndIsInf) {
  const In x = F32({4}, {kInf, -kInf, 1, kNaN});
  const TensorDesc out = Out(DataType::kBool, {4});
  ExpectValues(Run1(MakeNode("IsNaN"), {x}, out), {0, 0, 0, 1});
  ExpectValues(Run1(MakeNode("IsInf"), {x}, out), {1, 1, 0, 0});
  ExpectValues(Run1(MakeNode("IsInf", {{"detect_negative", int64_t{0}}}), {x}, out), {1, 0, 0, 0});
  ExpectValues(Run1(MakeNode("IsInf", {{"detect_positive", int64_t{0}}}), {x}, out), {0, 1, 0, 0});
}

TEST(ReferenceData, OneHotInsertsTheDepthAxis) {
  // depth 3 (from the output shape), values [off 0, on 5]; -1 is index 2, 7 matches nothing.
  const In indices = I64({3}, {0, -1, 7});
  const In depth = I64({}, {3});
  const In values = F32({2}, {0, 5});
  ExpectValues(Run1(MakeNode("OneHot"), {indices, depth, values}, Out(DataType::kF32, {3, 3})),
               {5, 0, 0, 0, 0, 5, 0, 0, 0});
  ExpectValues(Run1(MakeNode("OneHot", {{"axis", int64_t{0}}}), {indices, depth, values},
                    Out(DataType::kF32, {3, 3})),
               {5, 0, 0, 0, 0, 0, 0, 5, 0});
  // Float indices and i32 values.
  ExpectValues(Run1(MakeNode("OneHot"), {F32({2}, {1.0, 0.0}), F32({}, {2}), I32({2}, {-1, 1})},
                    Out(DataType::kI32, {2, 2})),
               {-1, 1, 1, -1});
  ExpectError(Run1(MakeNode("OneHot"), {indices, depth, F32({3}, {0, 1, 2})}, Out(DataType::kF32, {3, 3})),
              StatusCode::kInvalidArgument, "two elements");
  // Every integer and float index type is read (an unread type once gave every
  // row "off" without an error); 2^63 and 3.5e19 match no row.
  for (DataType t : {DataType::kI16, DataType::kU16, DataType::kU32, DataType::kU64, DataType::kI8,
                     DataType::kF64}) {
    const bool is_unsigned = t == DataType::kU16 || t == DataType::kU32 || t == DataType::kU64;
    const double far = t == DataType::kU64 ? 9223372036854775808.0 : t == DataType::kF64 ? 3.5e19 : 7;
    const In typed = T(t, {3}, {2, is_unsigned ? 0.0 : -3.0, far});
    ExpectValues(Run1(MakeNode("OneHot"), {typed, depth, values}, Out(DataType::kF32, {3, 3})),
                 {0, 0, 5, 5, 0, 0, 0, 0, 0});
  }
  ExpectError(Run1(MakeNode("OneHot"), {Bool({3}, {1, 0, 1}), depth, values}, Out(DataType::kF32, {3, 3})),
              StatusCode::kUnimplemented, "OneHot indices of dtype");
}

TEST(ReferenceData, DepthToSpaceModesAndSpaceToDepth) {
  // [1, 8, 1, 1] holding its channel index, blocksize 2: C' = 2.
  const In channels = F32({1, 8, 1, 1}, {0, 1, 2, 3, 4, 5, 6, 7});
  // DCR: y[c, i, j] = x[(i*2 + j)*2 + c]; CRD: y[c, i, j] = x[c*4 + i*2 + j].
  ExpectValues(Run1(MakeNode("DepthToSpace", {{"blocksize", int64_t{2}}}), {channels},
                    Out(DataType::kF32, {1, 2, 2, 2})),
               {0, 2, 4, 6, 1, 3, 5, 7});
  ExpectValues(Run1(MakeNode("DepthToSpace", {{"blocksize", int64_t{2}}, {"mode", std::string("CRD")}}),
                    {channels}, Out(DataType::kF32, {1, 2, 2, 2})),
               {0, 1, 2, 3, 4, 5, 6, 7});
  // SpaceToDepth undoes DCR; with width 4 the blocks interleave columns.
  ExpectValues(Run1(MakeNode("SpaceToDepth", {{"blocksize", int64_t{2}}}),
                    {F32({1, 2, 2, 2}, {0, 2, 4, 6, 1, 3, 5, 7})}, Out(DataType::kF32, {1, 8, 1, 1})),
               {0, 1, 2, 3, 4, 5, 6, 7});
  ExpectValues(Run1(MakeNode("DepthToSpace", {{"blocksize", int64_t{2}}}),
                    {I64({1, 4, 1, 2}, {0, 1, 10, 11, 20, 21, 30, 31})}, Out(DataType::kI64, {1, 1, 2, 4})),
               {0, 10, 1, 11, 20, 30, 21, 31});
  ExpectError(Run1(MakeNode("SpaceToDepth", {{"blocksize", int64_t{2}}}), {F32({1, 1, 3, 2}, {0, 0, 0, 0, 0, 0})},
                   Out(DataType::kF32, {1, 4, 1, 1})),
              StatusCode::kInvalidArgument, "not multiples of blocksize 2");
}

TEST(ReferenceData, ArgMaxArgMinPickFirstOrLastOfEqualValues) {
  // [[1, 5, 5], [7, 2, 7]]
  const In x = F32({2, 3}, {1, 5, 5, 7, 2, 7});
  ExpectValues(Run1(MakeNode("ArgMax", {{"axis", int64_t{1}}}), {x}, Out(DataType::kI64, {2, 1})),
               {1, 0});
  ExpectValues(Run1(MakeNode("ArgMax", {{"axis", int64_t{-1}}, {"select_last_index", int64_t{1}}}), {x},
                    Out(DataType::kI64, {2, 1})),
               {2, 2});
  // Columns (1, 7), (5, 2), (5, 7).
  ExpectValues(Run1(MakeNode("ArgMin", {{"keepdims", int64_t{0}}}), {x}, Out(DataType::kI64, {3})),
               {0, 1, 0});
  ExpectValues(Run1(MakeNode("ArgMin", {{"axis", int64_t{1}}}), {I32({2, 3}, {4, -9, -9, 0, 0, 1})},
                    Out(DataType::kI64, {2, 1})),
               {1, 0});
  // The first NaN wins, as numpy's argmax/argmin.
  const In nan = F32({3}, {1, kNaN, kNaN});
  ExpectValues(Run1(MakeNode("ArgMax"), {nan}, Out(DataType::kI64, {1})), {1});
  ExpectValues(Run1(MakeNode("ArgMin"), {nan}, Out(DataType::kI64, {1})), {1});
  ExpectValues(Run1(MakeNode("ArgMax", {{"select_last_index", int64_t{1}}}), {nan},
                    Out(DataType::kI64, {1})),
               {2});
  ExpectError(Run1(MakeNode("ArgMax", {{"axis", int64_t{2}}}), {x}, Out(DataType::kI64, {2, 3})),
              StatusCode::kInvalidArgument, "axis 2 is out of range");
}

TEST(ReferenceData, TopKSortsAndBreaksTiesByLowerIndex) {
  // [[3, 1, 4, 1], [5, 9, 2, 6]], K = 2.
  const In x = F32({2, 4}, {3, 1, 4, 1, 5, 9, 2, 6});
  const std::vector<TensorDesc> outs = {Out(DataType::kF32, {2, 2}), Out(DataType::kI64, {2, 2})};
  StatusOr<std::vector<Values>> largest = RunAll(MakeNode("TopK"), {x, ConstI64({2})}, outs);
  ASSERT_TRUE(largest.ok()) << largest.status().ToString();
  ExpectValues((*largest)[0], {4, 3, 9, 6});
  ExpectValues((*largest)[1], {2, 0, 1, 3});
  StatusOr<std::vector<Values>> smallest =
      RunAll(MakeNode("TopK", {{"largest", int64_t{0}}}), {x, ConstI64({2})}, outs);
  ASSERT_TRUE(smallest.ok()) << smallest.status().ToString();
  ExpectValues((*smallest)[0], {1, 1, 2, 5});
  ExpectValues((*smallest)[1], {1, 3, 2, 0});
  // Along axis 0 of i64: columns (3, 5), (1, 9), (4, 2), (1, 6), K = 1.
  StatusOr<std::vector<Values>> columns =
      RunAll(MakeNode("TopK", {{"axis", int64_t{0}}}),
             {I64({2, 4}, {3, 1, 4, 1, 5, 9, 2, 6}), ConstI64({1})},
             {Out(DataType::kI64, {1, 4}), Out(DataType::kI64, {1, 4})});
  ASSERT_TRUE(columns.ok()) << columns.status().ToString();
  ExpectValues((*columns)[0], {5, 9, 4, 6});
  ExpectValues((*columns)[1], {1, 1, 0, 1});
  // K at run time must be the K the outputs were planned with.
  ExpectError(RunAll(MakeNode("TopK"), {x, ConstI64({3})}, outs), StatusCode::kInvalidArgument,
              "K is 3", "the plan has 2");
}

TEST(ReferenceData, TriluKeepsATriangleWithOffsetK) {
  // [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]]
  const In x = F32({3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  ExpectValues(Run1(MakeNode("Trilu"), {x}, Out(DataType::kF32, {3, 4})),
               {1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12});
  // Lower with k = -1: j - i <= -1, strictly below the diagonal; k read at run time.
  ExpectValues(Run1(MakeNode("Trilu", {{"upper", int64_t{0}}}), {x, I64({}, {-1})},
                    Out(DataType::kF32, {3, 4})),
               {0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0});
  // Upper with k = 2 on a batch of two i32 matrices [2, 2, 3].
  ExpectValues(Run1(MakeNode("Trilu"), {I32({2, 2, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}),
                                        I64({1}, {2})},
                    Out(DataType::kI32, {2, 2, 3})),
               {0, 0, 3, 0, 0, 0, 0, 0, 9, 0, 0, 0});
  ExpectError(Run1(MakeNode("Trilu"), {F32({3}, {1, 2, 3})}, Out(DataType::kF32, {3})),
              StatusCode::kInvalidArgument, "rank >= 2");
}

TEST(ReferenceData, EyeLikeSizeAndCastLike) {
  const In x = F32({2, 3}, {7, 7, 7, 7, 7, 7});
  ExpectValues(Run1(MakeNode("EyeLike", {{"k", int64_t{1}}}), {x}, Out(DataType::kI32, {2, 3})),
               {0, 1, 0, 0, 0, 1});
  ExpectValues(Run1(MakeNode("EyeLike"), {x}, Out(DataType::kF32, {2, 3})), {1, 0, 0, 0, 1, 0});
  // A diagonal outside the matrix (also an extreme k) gives zeros.
  ExpectValues(Run1(MakeNode("EyeLike", {{"k", std::numeric_limits<int64_t>::min()}}), {x},
                    Out(DataType::kBool, {2, 3})),
               {0, 0, 0, 0, 0, 0});
  ExpectValues(Run1(MakeNode("Size"), {F32({2, 3, 4}, Values(24, 1.0))}, Out(DataType::kI64, {})),
               {24});
  // CastLike casts to input 1's dtype (truncation toward zero, as Cast).
  ExpectValues(Run1(MakeNode("CastLike"), {F32({3}, {1.7, -2.5, 3}), I32({1}, {0})},
                    Out(DataType::kI32, {3})),
               {1, -2, 3});
  ExpectError(Run1(MakeNode("CastLike"), {F32({3}, {1.7, -2.5, 3}), I32({1}, {0})},
                   Out(DataType::kI64, {3})),
              StatusCode::kInvalidArgument, "does not match");
}

TEST(ReferenceBinary, Pow) {
  // ONNX test_pow_example / test_pow_types_*.
  ExpectValues(Run1(MakeNode("Pow"), {F32({3}, {1, 2, 3}), F32({3}, {4, 5, 6})}, Out(DataType::kF32, {3})),
               {1, 32, 729});
  ExpectValues(Run1(MakeNode("Pow"), {F32({3}, {1, 2, 3}), I64({}, {2})}, Out(DataType::kF32, {3})),
               {1, 4, 9});
  ExpectValues(Run1(MakeNode("Pow"), {I64({3}, {1, 2, 3}), F32({3}, {4, 5, 6})}, Out(DataType::kI64, {3})),
               {1, 32, 729});
  ExpectValues(Run1(MakeNode("Pow"), {I32({2}, {-2, 3}), I32({2}, {3, 2})}, Out(DataType::kI32, {2})),
               {-8, 9});
  ExpectValues(Run1(MakeNode("Pow"), {F32({2}, {4, 2}), F32({1}, {0.5})}, Out(DataType::kF32, {2})),
               {2, std::sqrt(2.0)}, 1e-6);
}

TEST(ReferenceBinary, VariadicMinMaxAndEqual) {
  const Values a = {1, 5, -3, 8}, b = {4, 2}, c = {0};
  ExpectValues(Run1(MakeNode("Min"), {F32({2, 2}, a), F32({2}, b), F32({}, c)}, Out(DataType::kF32, {2, 2})),
               {0, 0, -3, 0});
  ExpectValues(Run1(MakeNode("Max"), {F32({2, 2}, a), F32({2}, b), F32({}, c)}, Out(DataType::kF32, {2, 2})),
               {4, 5, 4, 8});
  ExpectValues(Run1(MakeNode("Max"), {I64({3}, {-1, 7, 2})}, Out(DataType::kI64, {3})), {-1, 7, 2});
  ExpectValues(Run1(MakeNode("Min"), {F32({2}, {kNaN, 1}), F32({2}, {1, kNaN})}, Out(DataType::kF32, {2})),
               {kNaN, kNaN});
  ExpectValues(Run1(MakeNode("Equal"), {I64({2, 2}, {1, 2, 3, 4}), I64({2}, {1, 4})},
                    Out(DataType::kBool, {2, 2})),
               {1, 0, 0, 1});
  ExpectValues(Run1(MakeNode("Equal"), {F32({3}, {0.5, kNaN, -1}), F32({3}, {0.5, kNaN, 1})},
                    Out(DataType::kBool, {3})),
               {1, 0, 0});
}

TEST(ReferenceBinary, Errors) {
  const In h = T(DataType::kF16, {2}, {0x3C00, 0x3C00});
  ExpectError(Run1(MakeNode("Add"), {h, h}, Out(DataType::kF16, {2})), StatusCode::kUnimplemented,
              "n_Add", "f16");
  ExpectError(Run1(MakeNode("Add"), {F32({2}, {1, 2}), F32({3}, {1, 2, 3})}, Out(DataType::kF32, {3})),
              StatusCode::kInvalidArgument, "node 'n_Add' (Add)", "broadcast");
  ExpectError(Run1(MakeNode("Mul"), {F32({2}, {1, 2}), F32({2}, {1, 2})}, Out(DataType::kF32, {3})),
              StatusCode::kInvalidArgument, "n_Mul", "f32[3]");
  ExpectError(Run1(MakeNode("Sub"), {F32({2}, {1, 2}), I32({2}, {1, 2})}, Out(DataType::kF32, {2})),
              StatusCode::kInvalidArgument, "n_Sub", "dtypes differ");
  ExpectError(Run1(MakeNode("Equal"), {F32({1}, {1}), F32({1}, {1})}, Out(DataType::kF32, {1})),
              StatusCode::kInvalidArgument, "n_Equal", "bool");
}

// ------------------------------------------------------------------- unary

TEST(ReferenceUnary, FloatOps) {
  struct Case {
    const char* op;
    Values x, want;
    std::vector<Attr> attrs;
  };
  const std::vector<Case> cases = {
      {"Relu", {-1.5, 0, 2.5}, {0, 0, 2.5}},
      {"Sigmoid", {0, 2}, {0.5, 0.8807970779778823}},
      {"Tanh", {0.5, -1}, {0.46211715726000974, -0.7615941559557649}},
      {"Exp", {1, -2}, {2.718281828459045, 0.1353352832366127}},
      {"Log", {2.718281828459045, 0.25}, {1, -1.3862943611198906}},
      {"Abs", {-3.5, 2}, {3.5, 2}},
      {"Neg", {-3.5, 2}, {3.5, -2}},
      {"Sqrt", {4, 2}, {2, 1.4142135623730951}},
      {"Reciprocal", {4, -0.5}, {0.25, -2}},
      {"Erf", {1, -0.5}, {0.8427007929497149, -0.5204998778130465}},
      {"HardSigmoid", {-4, 0.5, 4}, {0, 0.85, 1}, {{"alpha", 0.5f}, {"beta", 0.6f}}},
      {"HardSigmoid", {1}, {0.7}},  // defaults 0.2, 0.5
      {"HardSwish", {-4, 1, 4}, {0, 2.0 / 3.0, 4}},
      {"LeakyRelu", {-2, 3}, {-0.2, 3}, {{"alpha", 0.1f}}},
      {"LeakyRelu", {-2}, {-0.02}},  // default 0.01
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    const int64_t n = static_cast<int64_t>(c.x.size());
    ExpectValues(Run1(MakeNode(c.op, c.attrs), {F32({n}, c.x)}, Out(DataType::kF32, {n})), c.want, 1e-6);
  }
}

TEST(ReferenceUnary, IntegerOpsAndErrors) {
  const double min32 = std::numeric_limits<int32_t>::min();
  ExpectValues(Run1(MakeNode("Abs"), {I32({3}, {-5, 7, min32})}, Out(DataType::kI32, {3})), {5, 7, min32});
  ExpectValues(Run1(MakeNode("Neg"), {I64({2}, {-5, 7})}, Out(DataType::kI64, {2})), {5, -7});
  ExpectValues(Run1(MakeNode("Relu"), {I64({2}, {-5, 7})}, Out(DataType::kI64, {2})), {0, 7});
  ExpectError(Run1(MakeNode("Sqrt"), {I32({1}, {4})}, Out(DataType::kI32, {1})), StatusCode::kUnimplemented,
              "n_Sqrt", "i32");
  ExpectError(Run1(MakeNode("Relu"), {F32({2}, {1, 2})}, Out(DataType::kF32, {3})),
              StatusCode::kInvalidArgument, "n_Relu");
}

// -------------------------------------------------------------------- Clip

TEST(ReferenceClip, AttributesInputsAndComputedBounds) {
  const Values x = {-3, -0.5, 0.5, 3};
  ExpectValues(Run1(MakeNode("Clip", {{"min", -1.0f}, {"max", 1.0f}}), {F32({4}, x)}, Out(DataType::kF32, {4}), 6),
               {-1, -0.5, 0.5, 1});
  In lo = T(DataType::kF32, {}, {-1}, true), hi = T(DataType::kF32, {}, {0}, true);
  ExpectValues(Run1(MakeNode("Clip"), {F32({4}, x), lo, hi}, Out(DataType::kF32, {4})), {-1, -0.5, 0, 0});
  ExpectValues(Run1(MakeNode("Clip"), {F32({4}, x), Missing(), hi}, Out(DataType::kF32, {4})),
               {-3, -0.5, 0, 0});
  // min > max gives max (numpy.clip).
  ExpectValues(Run1(MakeNode("Clip"), {F32({2}, {-5, 5}), T(DataType::kF32, {}, {2}, true),
                                       T(DataType::kF32, {}, {1}, true)},
                    Out(DataType::kF32, {2})),
               {1, 1});
  // Computed min, read at Run: changing it between runs changes the result.
  Harness h{MakeNode("Clip"), {F32({4}, x), F32({}, {0})}, {Out(DataType::kF32, {4})}, {}, {}, {}};
  ASSERT_TRUE(h.Prepare(13).ok());
  ExpectValues(h.Run().value()[0], {0, 0, 0.5, 3});
  h.SetInput(1, {-1});
  ExpectValues(h.Run().value()[0], {-1, -0.5, 0.5, 3});
  // Integers (ONNX test_clip_default_int8_min etc.).
  ExpectValues(Run1(MakeNode("Clip"), {T(DataType::kI8, {3}, {-100, 0, 100}), T(DataType::kI8, {}, {0}, true)},
                    Out(DataType::kI8, {3})),
               {0, 0, 100});
  ExpectValues(Run1(MakeNode("Clip"), {I64({3}, {-7, 2, 9}), T(DataType::kI64, {}, {-5}, true),
                                       T(DataType::kI64, {}, {5}, true)},
                    Out(DataType::kI64, {3})),
               {-5, 2, 5});
  ExpectError(Run1(MakeNode("Clip"), {F32({1}, {1}), T(DataType::kF32, {2}, {0, 1}, true)},
                   Out(DataType::kF32, {1})),
              StatusCode::kInvalidArgument, "n_Clip", "scalar");
}

// -------------------------------------------------------------------- Cast

TEST(HalfConversion, KnownValues) {
  EXPECT_EQ(FloatToHalf(1.0f), 0x3C00);
  EXPECT_EQ(FloatToHalf(-2.0f), 0xC000);
  EXPECT_EQ(FloatToHalf(0.0f), 0x0000);
  EXPECT_EQ(FloatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7BFF);
  EXPECT_EQ(FloatToHalf(65519.0f), 0x7BFF);  // below the 65520 tie
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7C00);  // tie to even -> overflow
  EXPECT_EQ(FloatToHalf(1e9f), 0x7C00);
  EXPECT_EQ(FloatToHalf(-std::numeric_limits<float>::infinity()), 0xFC00);
  const uint16_t nan = FloatToHalf(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan & 0x7C00, 0x7C00);
  EXPECT_NE(nan & 0x03FF, 0);
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -25)), 0x0000);  // tie -> even (0)
  EXPECT_EQ(FloatToHalf(std::ldexp(3.0f, -25)), 0x0002);  // 1.5 units: tie -> even (2)
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -26)), 0x0000);
  EXPECT_EQ(FloatToHalf(std::ldexp(1023.0f, -24)), 0x03FF);  // largest subnormal
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3C00);  // tie -> even
  EXPECT_EQ(FloatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);  // tie -> even
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)), 0x3C01);
  EXPECT_EQ(FloatToHalf(0.1f), 0x2E66);
  EXPECT_EQ(HalfToFloat(0x3C00), 1.0f);
  EXPECT_EQ(HalfToFloat(0x7BFF), 65504.0f);
  EXPECT_EQ(HalfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(HalfToFloat(0x03FF), std::ldexp(1023.0f, -24));
  EXPECT_EQ(HalfToFloat(0xC000), -2.0f);
  EXPECT_TRUE(std::signbit(HalfToFloat(0x8000)));
  EXPECT_TRUE(std::isinf(HalfToFloat(0x7C00)));
  EXPECT_TRUE(std::isnan(HalfToFloat(0x7E00)));
}

TEST(HalfConversion, EveryHalfRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    const uint16_t h = static_cast<uint16_t>(bits);
    const float f = HalfToFloat(h);
    if (std::isnan(f)) continue;
    ASSERT_EQ(FloatToHalf(f), h) << std::hex << bits;
  }
}

TEST(ReferenceCast, BetweenTypes) {
  auto cast = [](In x, DataType to, int64_t onnx_to) {
    const Ints dims = x.desc.dims;
    return Run1(MakeNode("Cast", {{"to", onnx_to}}), {std::move(x)}, Out(to, dims));
  };
  ExpectValues(cast(F32({4}, {1, 65504, -2, std::ldexp(1.0, -24)}), DataType::kF16, 10),
               {0x3C00, 0x7BFF, 0xC000, 0x0001});
  ExpectValues(cast(T(DataType::kF16, {3}, {0x3C00, 0x3555, 0xFC00}), DataType::kF32, 1),
               {1, 0.333251953125, -kInf});
  ExpectValues(cast(F32({5}, {1.9, -1.9, 0.5, kNaN, 1e20}), DataType::kI32, 6),
               {1, -1, 0, 0, -1});  // 1e20 saturates to INT64_MAX, whose low 32 bits are -1
  ExpectValues(cast(F32({3}, {2.7, 255.9, 0}), DataType::kU8, 2), {2, 255, 0});
  ExpectValues(cast(I64({3}, {300, -1, 127}), DataType::kI8, 3), {44, -1, 127});
  ExpectValues(cast(I64({2}, {3, -4}), DataType::kF32, 1), {3, -4});
  ExpectValues(cast(F32({3}, {0, -0.5, kNaN}), DataType::kBool, 9), {0, 1, 1});
  ExpectValues(cast(Bool({2}, {1, 0}), DataType::kF32, 1), {1, 0});
  ExpectValues(cast(I32({2}, {70000, -2}), DataType::kF16, 10), {0x7C00, 0xC000});
  ExpectValues(cast(T(DataType::kF16, {2}, {0x4248, 0xC248}), DataType::kI64, 7), {3, -3});  // +-3.14
  ExpectValues(cast(I64({2}, {5, 6}), DataType::kI64, 7), {5, 6});
  ExpectError(cast(F32({1}, {1}), DataType::kF32, 14), StatusCode::kUnimplemented, "n_Cast", "14");
  ExpectError(Run1(MakeNode("Cast", {{"to", int64_t{7}}}), {F32({1}, {1})}, Out(DataType::kI32, {1})),
              StatusCode::kInvalidArgument, "n_Cast", "i64");
}

// ---------------------------------------------------------- Where, copies

TEST(ReferenceWhere, BroadcastsAllThree) {
  ExpectValues(Run1(MakeNode("Where"), {Bool({2, 1}, {1, 0}), F32({2, 3}, {1, 2, 3, 4, 5, 6}), F32({}, {-1})},
                    Out(DataType::kF32, {2, 3})),
               {1, 2, 3, -1, -1, -1});
  ExpectValues(Run1(MakeNode("Where"), {Bool({3}, {0, 1, 0}), I64({1}, {7}), I64({3}, {1, 2, 3})},
                    Out(DataType::kI64, {3})),
               {1, 7, 3});
  ExpectError(Run1(MakeNode("Where"), {F32({1}, {1}), F32({1}, {1}), F32({1}, {1})}, Out(DataType::kF32, {1})),
              StatusCode::kInvalidArgument, "n_Where", "bool");
}

TEST(ReferenceCopy, IdentityDropoutReshapeFlatten) {
  const Values x = RandomNonZero(6, 1);
  ExpectValues(Run1(MakeNode("Identity"), {F32({2, 3}, x)}, Out(DataType::kF32, {2, 3})), x);
  StatusOr<std::vector<Values>> dropout =
      RunAll(MakeNode("Dropout"), {F32({2, 3}, x)}, {Out(DataType::kF32, {2, 3}), Out(DataType::kBool, {2, 3})});
  ASSERT_TRUE(dropout.ok()) << dropout.status().ToString();
  ExpectValues((*dropout)[0], x);
  ExpectValues((*dropout)[1], {1, 1, 1, 1, 1, 1});
  ExpectError(Run1(MakeNode("Dropout"), {F32({1}, {1}), Missing(), T(DataType::kBool, {}, {1}, true)},
                   Out(DataType::kF32, {1})),
              StatusCode::kUnimplemented, "n_Dropout", "training");
  ExpectValues(Run1(MakeNode("Reshape"), {I64({2, 3}, {1, 2, 3, 4, 5, 6}), ConstI64({3, -1})},
                    Out(DataType::kI64, {3, 2})),
               {1, 2, 3, 4, 5, 6});
  ExpectValues(Run1(MakeNode("Reshape"), {F32({2, 3}, x), ConstI64({0, 3})}, Out(DataType::kF32, {2, 3})), x);
  ExpectError(Run1(MakeNode("Reshape"), {F32({2, 3}, x), ConstI64({3, 2})}, Out(DataType::kF32, {2, 3})),
              StatusCode::kInvalidArgument, "n_Reshape", "[3,2]");
  ExpectError(Run1(MakeNode("Flatten"), {F32({2, 3}, x)}, Out(DataType::kF32, {2, 2})),
              StatusCode::kInvalidArgument, "n_Flatten");
  ExpectValues(Run1(MakeNode("Unsqueeze"), {F32({2, 3}, x), ConstI64({0})}, Out(DataType::kF32, {1, 2, 3})), x);
}

TEST(ReferenceShape, StartEnd) {
  In x = F32({2, 3, 4}, RandomNonZero(24, 2));
  ExpectValues(Run1(MakeNode("Shape"), {x}, Out(DataType::kI64, {3})), {2, 3, 4});
  ExpectValues(Run1(MakeNode("Shape", {{"start", int64_t{1}}}), {x}, Out(DataType::kI64, {2})), {3, 4});
  ExpectValues(Run1(MakeNode("Shape", {{"end", int64_t{-1}}}), {x}, Out(DataType::kI64, {2})), {2, 3});
  ExpectValues(Run1(MakeNode("Shape", {{"start", int64_t{-10}}, {"end", int64_t{10}}}), {x},
                    Out(DataType::kI64, {3})),
               {2, 3, 4});
  ExpectValues(Run1(MakeNode("Shape", {{"start", int64_t{2}}, {"end", int64_t{1}}}), {x},
                    Out(DataType::kI64, {0})),
               {});
}

TEST(ReferenceConstantOfShape, ValueAndDefault) {
  ExpectValues(Run1(MakeNode("ConstantOfShape"), {ConstI64({2, 2})}, Out(DataType::kF32, {2, 2})), {0, 0, 0, 0});
  TensorAttr seven{DataType::kI64, {1}, TensorData::Allocate(8)};
  seven.data.mutable_as<int64_t>()[0] = 7;
  ExpectValues(Run1(MakeNode("ConstantOfShape", {{"value", seven}}), {I64({1}, {3})}, Out(DataType::kI64, {3})),
               {7, 7, 7});
  ExpectError(Run1(MakeNode("ConstantOfShape", {{"value", seven}}), {ConstI64({3})}, Out(DataType::kI64, {4})),
              StatusCode::kInvalidArgument, "n_ConstantOfShape");
}

// ------------------------------------------------------------------ Gather

TEST(ReferenceGather, AxesNegativeIndicesAndErrors) {
  const Values data = {0, 1, 2, 10, 11, 12, 20, 21, 22};  // [3,3]
  ExpectValues(Run1(MakeNode("Gather"), {F32({3, 3}, data), I64({2}, {2, -3})}, Out(DataType::kF32, {2, 3})),
               {20, 21, 22, 0, 1, 2});
  ExpectValues(Run1(MakeNode("Gather", {{"axis", int64_t{1}}}), {F32({3, 3}, data), I32({2, 1}, {-1, 0})},
                    Out(DataType::kF32, {3, 2, 1})),
               {2, 0, 12, 10, 22, 20});
  ExpectValues(Run1(MakeNode("Gather", {{"axis", int64_t{-1}}}), {I64({3, 3}, data), I64({}, {1})},
                    Out(DataType::kI64, {3})),
               {1, 11, 21});
  // Out of range at Run (computed indices) and at Prepare (constant).
  Harness h{MakeNode("Gather"), {F32({3, 3}, data), I64({1}, {0})}, {Out(DataType::kF32, {1, 3})}, {}, {}, {}};
  ASSERT_TRUE(h.Prepare(13).ok());
  ExpectValues(h.Run().value()[0], {0, 1, 2});
  h.SetInput(1, {3});
  ExpectError(h.Run(), StatusCode::kInvalidArgument, "node 'n_Gather' (Gather)", "index 3");
  h.SetInput(1, {-4});
  ExpectError(h.Run(), StatusCode::kInvalidArgument, "n_Gather", "-4");
  ExpectError(Run1(MakeNode("Gather"), {F32({3, 3}, data), T(DataType::kI64, {1}, {5}, true)},
                   Out(DataType::kF32, {1, 3})),
              StatusCode::kInvalidArgument, "n_Gather", "index 5");
  ExpectError(Run1(MakeNode("Gather", {{"axis", int64_t{2}}}), {F32({3, 3}, data), I64({1}, {0})},
                   Out(DataType::kF32, {3, 1})),
              StatusCode::kInvalidArgument, "n_Gather", "axis 2");
}

// ------------------------------------------------------------------- Slice

TEST(ReferenceSlice, InputsAttributesNegativeStepsClamping) {
  Values data(20);  // [4,5], value = 10*row + col
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 5; ++c) data[static_cast<size_t>(r * 5 + c)] = 10 * r + c;
  const double big = 1e18;  // INT64_MAX-like ends clamp (exactly representable)
  // rows 1..2, cols 0..2 step 2 (opset 13 inputs).
  ExpectValues(Run1(MakeNode("Slice"), {F32({4, 5}, data), ConstI64({1, 0}), ConstI64({3, 3}), ConstI64({0, 1}),
                                        ConstI64({1, 2})},
                    Out(DataType::kF32, {2, 2})),
               {10, 12, 20, 22});
  // Negative step from the end, end clamped at -inf-ish; negative axis.
  ExpectValues(Run1(MakeNode("Slice"), {F32({4, 5}, data), ConstI64({-1}), ConstI64({-big}), ConstI64({-1}),
                                        ConstI64({-2})},
                    Out(DataType::kF32, {4, 3})),
               {4, 2, 0, 14, 12, 10, 24, 22, 20, 34, 32, 30});
  // End past the extent clamps; start past it gives an empty axis.
  ExpectValues(Run1(MakeNode("Slice"), {F32({4, 5}, data), ConstI64({2}), ConstI64({big})},
                    Out(DataType::kF32, {2, 5})),
               {20, 21, 22, 23, 24, 30, 31, 32, 33, 34});
  ExpectValues(Run1(MakeNode("Slice"), {F32({4, 5}, data), ConstI64({7}), ConstI64({9})},
                    Out(DataType::kF32, {0, 5})),
               {});
  // Opset 9 attributes (no steps).
  ExpectValues(Run1(MakeNode("Slice", {{"starts", Ints{1}}, {"ends", Ints{-1}}, {"axes", Ints{1}}}),
                    {I64({4, 5}, data)}, Out(DataType::kI64, {4, 3}), 9),
               {1, 2, 3, 11, 12, 13, 21, 22, 23, 31, 32, 33});
  ExpectError(Run1(MakeNode("Slice"), {F32({4, 5}, data), ConstI64({0}), ConstI64({2}), ConstI64({0}), ConstI64({0})},
                   Out(DataType::kF32, {2, 5})),
              StatusCode::kInvalidArgument, "n_Slice", "step");
  ExpectError(Run1(MakeNode("Slice"), {F32({4, 5}, data), ConstI64({0}), ConstI64({2})}, Out(DataType::kF32, {3, 5})),
              StatusCode::kInvalidArgument, "n_Slice", "[2,5]");
}

TEST(ReferenceSlice, ComputedParametersAreReadAtRun) {
  const Values data = {0, 1, 2, 3, 4, 5};
  Harness h{MakeNode("Slice"), {F32({6}, data), I32({1}, {1}), I32({1}, {4})}, {Out(DataType::kF32, {3})},
            {}, {}, {}};
  ASSERT_TRUE(h.Prepare(13).ok());
  ExpectValues(h.Run().value()[0], {1, 2, 3});
  h.SetInput(1, {3});
  h.SetInput(2, {6});
  ExpectValues(h.Run().value()[0], {3, 4, 5});
  h.SetInput(2, {5});  // would give 2 elements: not the prepared shape
  ExpectError(h.Run(), StatusCode::kInvalidArgument, "n_Slice", "shape");
}

// ----------------------------------------------------- Concat, Split, Transpose, Expand

TEST(ReferenceConcatSplit, Axes) {
  ExpectValues(Run1(MakeNode("Concat", {{"axis", int64_t{-1}}}),
                    {F32({2, 1}, {1, 2}), F32({2, 2}, {3, 4, 5, 6}), F32({2, 0}, {})},
                    Out(DataType::kF32, {2, 3})),
               {1, 3, 4, 2, 5, 6});
  ExpectValues(Run1(MakeNode("Concat", {{"axis", int64_t{0}}}), {I64({1, 2}, {1, 2}), I64({2, 2}, {3, 4, 5, 6})},
                    Out(DataType::kI64, {3, 2})),
               {1, 2, 3, 4, 5, 6});
  ExpectError(Run1(MakeNode("Concat", {{"axis", int64_t{0}}}), {F32({1, 2}, {1, 2}), F32({1, 3}, {1, 2, 3})},
                   Out(DataType::kF32, {2, 2})),
              StatusCode::kInvalidArgument, "n_Concat", "f32[1,3]");

  const Values x = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};  // [2,5]
  StatusOr<std::vector<Values>> parts = RunAll(
      MakeNode("Split", {{"axis", int64_t{1}}}), {F32({2, 5}, x), ConstI64({2, 3})},
      {Out(DataType::kF32, {2, 2}), Out(DataType::kF32, {2, 3})}, 13);
  ASSERT_TRUE(parts.ok()) << parts.status().ToString();
  ExpectValues((*parts)[0], {1, 2, 6, 7});
  ExpectValues((*parts)[1], {3, 4, 5, 8, 9, 10});
  StatusOr<std::vector<Values>> equal = RunAll(
      MakeNode("Split"), {I64({2, 5}, x)}, {Out(DataType::kI64, {1, 5}), Out(DataType::kI64, {1, 5})}, 11);
  ASSERT_TRUE(equal.ok()) << equal.status().ToString();
  ExpectValues((*equal)[1], {6, 7, 8, 9, 10});
  ExpectError(RunAll(MakeNode("Split", {{"axis", int64_t{1}}, {"split", Ints{1, 4}}}), {F32({2, 5}, x)},
                     {Out(DataType::kF32, {2, 2}), Out(DataType::kF32, {2, 3})}, 11),
              StatusCode::kInvalidArgument, "n_Split", "[1,4]");
}

TEST(ReferenceTranspose, DefaultAndPerm) {
  const Values x = {0, 1, 2, 3, 4, 5};  // [2,3]
  ExpectValues(Run1(MakeNode("Transpose"), {F32({2, 3}, x)}, Out(DataType::kF32, {3, 2})), {0, 3, 1, 4, 2, 5});
  Values y(24);  // [2,3,4] -> perm [1,2,0] -> [3,4,2]
  for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<double>(i);
  StatusOr<Values> t = Run1(MakeNode("Transpose", {{"perm", Ints{1, 2, 0}}}), {I64({2, 3, 4}, y)},
                            Out(DataType::kI64, {3, 4, 2}));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  for (int64_t b = 0; b < 3; ++b)
    for (int64_t c = 0; c < 4; ++c)
      for (int64_t a = 0; a < 2; ++a)
        EXPECT_EQ((*t)[static_cast<size_t>((b * 4 + c) * 2 + a)], a * 12 + b * 4 + c);
  ExpectError(Run1(MakeNode("Transpose", {{"perm", Ints{0, 0}}}), {F32({2, 3}, x)}, Out(DataType::kF32, {2, 2})),
              StatusCode::kInvalidArgument, "n_Transpose", "permutation");
}

TEST(ReferenceExpand, ConstantAndComputedShape) {
  ExpectValues(Run1(MakeNode("Expand"), {F32({3, 1}, {1, 2, 3}), ConstI64({2, 1, 2})}, Out(DataType::kF32, {2, 3, 2})),
               {1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3});
  // Computed shape: the output desc decides ([1] in the shape keeps 3).
  ExpectValues(Run1(MakeNode("Expand"), {I32({3}, {4, 5, 6}), I64({2}, {2, 1})}, Out(DataType::kI32, {2, 3})),
               {4, 5, 6, 4, 5, 6});
  ExpectError(Run1(MakeNode("Expand"), {F32({3}, {1, 2, 3}), ConstI64({2, 4})}, Out(DataType::kF32, {2, 4})),
              StatusCode::kInvalidArgument, "n_Expand");
}

// --------------------------------------------------------------------- Pad

TEST(ReferencePad, Modes) {
  const Values x = {1, 2, 3, 4, 5, 6};  // [2,3]
  // ONNX test_constant_pad style: pads [0,2,0,0] (x1_begin, x2_begin, x1_end, x2_end).
  ExpectValues(Run1(MakeNode("Pad"), {F32({2, 3}, x), ConstI64({0, 2, 0, 1}), T(DataType::kF32, {}, {9}, true)},
                    Out(DataType::kF32, {2, 6})),
               {9, 9, 1, 2, 3, 9, 9, 9, 4, 5, 6, 9});
  ExpectValues(Run1(MakeNode("Pad", {{"mode", std::string("reflect")}}), {F32({2, 3}, x), ConstI64({1, 2, 0, 2})},
                    Out(DataType::kF32, {3, 7})),
               {6, 5, 4, 5, 6, 5, 4,  //
                3, 2, 1, 2, 3, 2, 1,  //
                6, 5, 4, 5, 6, 5, 4});
  ExpectValues(Run1(MakeNode("Pad", {{"mode", std::string("edge")}}), {I64({2, 3}, x), ConstI64({0, 1, 1, 1})},
                    Out(DataType::kI64, {3, 5})),
               {1, 1, 2, 3, 3, 4, 4, 5, 6, 6, 4, 4, 5, 6, 6});
  // Negative pads crop; opset 2 attributes.
  ExpectValues(Run1(MakeNode("Pad", {{"pads", Ints{0, -1, 0, 1}}, {"value", 7.0f}}), {F32({2, 3}, x)},
                    Out(DataType::kF32, {2, 3}), 2),
               {2, 3, 7, 5, 6, 7});
  // Opset 18 axes input.
  ExpectValues(Run1(MakeNode("Pad"), {F32({2, 3}, x), ConstI64({1, 0}), Missing(), ConstI64({-2})},
                    Out(DataType::kF32, {3, 3})),
               {0, 0, 0, 1, 2, 3, 4, 5, 6});
  ExpectError(Run1(MakeNode("Pad", {{"mode", std::string("wrap")}}), {F32({2, 3}, x), ConstI64({0, 0, 0, 0})},
                   Out(DataType::kF32, {2, 3})),
              StatusCode::kUnimplemented, "n_Pad", "wrap");
  ExpectError(Run1(MakeNode("Pad"), {F32({2, 3}, x), ConstI64({0, 0, 0})}, Out(DataType::kF32, {2, 3})),
              StatusCode::kInvalidArgument, "n_Pad", "pads");
}

TEST(ReferencePad, ComputedPadsAreReadAtRun) {
  Harness h{MakeNode("Pad"), {F32({3}, {1, 2, 3}), I64({2}, {1, 0}), F32({}, {5})},
            {Out(DataType::kF32, {4})}, {}, {}, {}};
  ASSERT_TRUE(h.Prepare(13).ok());
  ExpectValues(h.Run().value()[0], {5, 1, 2, 3});
  h.SetInput(1, {0, 1});
  h.SetInput(2, {-1});
  ExpectValues(h.Run().value()[0], {1, 2, 3, -1});
  h.SetInput(1, {1, 1});
  ExpectError(h.Run(), StatusCode::kInvalidArgument, "n_Pad", "shape");
}

TEST(ReferenceRegistry, EveryOpHasAReferenceKernel) {
  for (const char* op :
       {"Add", "Sub", "Mul", "Div", "Pow", "Min", "Max", "Equal", "Relu", "Sigmoid", "Tanh", "Exp", "Log",
        "Abs", "Neg", "Sqrt", "Reciprocal", "Erf", "Clip", "HardSigmoid", "HardSwish", "LeakyRelu", "Where",
        "Cast", "Identity", "Dropout", "Shape", "Gather", "Slice", "Concat", "Split", "Transpose", "Reshape",
        "Flatten", "Squeeze", "Unsqueeze", "Expand", "Pad", "ConstantOfShape"}) {
    std::vector<const KernelEntry*> c = Registry().Candidates(op, DeviceKind::kCpu);
    ASSERT_EQ(c.size(), 1u) << op;
    EXPECT_EQ(c[0]->impl, "reference") << op;
  }
}

}  // namespace
}  // namespace braid
