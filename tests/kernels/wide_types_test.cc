// Reference kernels on the dtypes appended after bool (f64, bf16, i16, u16,
// u32, u64): Cast between all types, Min/Max, Mod (f16/f64 fmod, integer
// sign rule), BitShift, Pow with unsigned exponents, CumSum, ReduceLogSumExp,
// MatMul, Einsum and EyeLike. Hand-computed values where the rule is the
// point; f64 results against the f32 reference on the same seeded inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/params/elementwise.h"
#include "tests/kernels/onednn_test_util.h"

namespace braid {
namespace {

using testing_cpu::Input;
using testing_cpu::OpCase;

template <typename T>
Input Data(DataType dtype, std::vector<int64_t> dims, const std::vector<T>& values) {
  Input in{TensorDesc{dtype, std::move(dims)}, false, {}};
  in.bytes.resize(values.size() * sizeof(T));
  std::memcpy(in.bytes.data(), values.data(), in.bytes.size());
  return in;
}

template <typename T>
std::vector<T> RunRef(OpCase c) {
  if (c.node.name.empty()) c.node.name = "wide_" + c.node.op_type;
  auto out = testing_cpu::RunImpl(c, "reference", 1);
  EXPECT_TRUE(out.ok()) << c.node.op_type << ": " << out.status().ToString();
  if (!out.ok()) return {};
  std::vector<T> v((*out)[0].size() / sizeof(T));
  std::memcpy(v.data(), (*out)[0].data(), (*out)[0].size());
  return v;
}

OpCase Case(const std::string& op, std::vector<Input> inputs, TensorDesc out) {
  OpCase c;
  c.node.op_type = op;
  c.inputs = std::move(inputs);
  c.outputs = {std::move(out)};
  return c;
}

template <typename To, typename From>
std::vector<To> Cast(DataType from, DataType to, const std::vector<From>& x) {
  OpCase c = Case("Cast", {Data(from, {static_cast<int64_t>(x.size())}, x)},
                  TensorDesc{to, {static_cast<int64_t>(x.size())}});
  c.node.attrs.Set("to", int64_t{0});  // replaced below: ONNX code of `to`
  const std::vector<std::pair<DataType, int64_t>> onnx = {
      {DataType::kF32, 1},  {DataType::kU8, 2},   {DataType::kI8, 3},
      {DataType::kU16, 4},  {DataType::kI16, 5},  {DataType::kI32, 6},
      {DataType::kI64, 7},  {DataType::kBool, 9}, {DataType::kF16, 10},
      {DataType::kF64, 11}, {DataType::kU32, 12}, {DataType::kU64, 13},
      {DataType::kBF16, 16}};
  for (const auto& [d, code] : onnx)
    if (d == to) c.node.attrs.Set("to", code);
  return RunRef<To>(c);
}

std::vector<double> SeededDoubles(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-2.0, 2.0);
  std::vector<double> v(n);
  for (double& x : v) {
    do x = dist(rng); while (std::fabs(x) < 0.01);
  }
  return v;
}

std::vector<float> ToFloats(const std::vector<double>& v) {
  return std::vector<float>(v.begin(), v.end());
}

TEST(WideTypesCast, Bfloat16RoundsToNearestEven) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // 1 + 2^-8 lies halfway between 0x3F80 and 0x3F81: the even one wins;
  // 1 + 3 * 2^-8 lies halfway between 0x3F81 and 0x3F82: 0x3F82.
  const std::vector<uint16_t> y =
      Cast<uint16_t>(DataType::kF32, DataType::kBF16,
                     std::vector<float>{1.0f, 1.00390625f, 1.01171875f,
                                        std::nextafter(1.00390625f, 2.0f), -3.140625f,
                                        std::numeric_limits<float>::max(), nan});
  ASSERT_EQ(y.size(), 7u);
  EXPECT_EQ(y[0], 0x3F80);
  EXPECT_EQ(y[1], 0x3F80);
  EXPECT_EQ(y[2], 0x3F82);
  EXPECT_EQ(y[3], 0x3F81);  // just above the halfway point rounds up
  EXPECT_EQ(y[4], 0xC049);
  EXPECT_EQ(y[5], 0x7F80);  // overflows to +inf
  EXPECT_TRUE(std::isnan(BFloat16ToFloat(y[6])));
  EXPECT_EQ(Cast<float>(DataType::kBF16, DataType::kF32, std::vector<uint16_t>{0x4049, 0xBF80}),
            (std::vector<float>{3.140625f, -1.0f}));
}

TEST(WideTypesCast, DoubleToAndFromEveryType) {
  const std::vector<double> x = {-2.75, 0.1, 1e10, 65504.0};
  EXPECT_EQ(Cast<float>(DataType::kF64, DataType::kF32, x),
            (std::vector<float>{-2.75f, 0.1f, 1e10f, 65504.0f}));
  EXPECT_EQ(Cast<int64_t>(DataType::kF64, DataType::kI64, x),
            (std::vector<int64_t>{-2, 0, 10000000000, 65504}));
  EXPECT_EQ(Cast<uint16_t>(DataType::kF64, DataType::kF16, std::vector<double>{1.5, -2.0, 65504.0}),
            (std::vector<uint16_t>{0x3E00, 0xC000, 0x7BFF}));
  EXPECT_EQ(Cast<double>(DataType::kF16, DataType::kF64, std::vector<uint16_t>{0x3E00, 0x0001}),
            (std::vector<double>{1.5, std::ldexp(1.0, -24)}));
  EXPECT_EQ(Cast<double>(DataType::kF32, DataType::kF64, std::vector<float>{0.1f}),
            (std::vector<double>{static_cast<double>(0.1f)}));
  EXPECT_EQ(Cast<uint8_t>(DataType::kF64, DataType::kBool, std::vector<double>{0.0, -0.5}),
            (std::vector<uint8_t>{0, 1}));
}

TEST(WideTypesCast, IntegersWrapAndKeepTheirMagnitude) {
  EXPECT_EQ(Cast<uint16_t>(DataType::kI16, DataType::kU16, std::vector<int16_t>{-1, 7}),
            (std::vector<uint16_t>{65535, 7}));
  EXPECT_EQ(Cast<int64_t>(DataType::kU32, DataType::kI64, std::vector<uint32_t>{4000000000u}),
            (std::vector<int64_t>{4000000000}));
  // u64 past int64 keeps its value in double (not a negative number).
  EXPECT_EQ(Cast<double>(DataType::kU64, DataType::kF64, std::vector<uint64_t>{~uint64_t{0}}),
            (std::vector<double>{18446744073709551616.0}));
  EXPECT_EQ(Cast<uint32_t>(DataType::kI64, DataType::kU32, std::vector<int64_t>{-1, 1LL << 32}),
            (std::vector<uint32_t>{4294967295u, 0}));
  EXPECT_EQ(Cast<int16_t>(DataType::kF32, DataType::kI16, std::vector<float>{-7.9f, 300.5f}),
            (std::vector<int16_t>{-7, 300}));
}

template <typename T>
void ExpectMinMax(DataType dtype, const std::vector<T>& a, const std::vector<T>& b) {
  const auto n = static_cast<int64_t>(a.size());
  std::vector<T> lo(a.size()), hi(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    lo[i] = std::min(a[i], b[i]);
    hi[i] = std::max(a[i], b[i]);
  }
  EXPECT_EQ(RunRef<T>(Case("Min", {Data(dtype, {n}, a), Data(dtype, {n}, b)}, TensorDesc{dtype, {n}})),
            lo)
      << DataTypeName(dtype);
  EXPECT_EQ(RunRef<T>(Case("Max", {Data(dtype, {n}, a), Data(dtype, {n}, b)}, TensorDesc{dtype, {n}})),
            hi)
      << DataTypeName(dtype);
}

TEST(WideTypesBinary, MinMaxOnEveryNewNumericType) {
  ExpectMinMax<int16_t>(DataType::kI16, {-32768, 5, 100}, {3, -5, 32767});
  ExpectMinMax<uint16_t>(DataType::kU16, {65535, 5, 0}, {3, 40000, 1});
  ExpectMinMax<uint32_t>(DataType::kU32, {4000000000u, 5, 0}, {3, 4000000001u, 1});
  ExpectMinMax<uint64_t>(DataType::kU64, {~uint64_t{0}, 5, 0}, {uint64_t{1} << 63, 6, 1});
  ExpectMinMax<double>(DataType::kF64, {-1e300, 0.5, 2.0}, {1e-300, 0.25, -2.0});
}

TEST(WideTypesBinary, ModFollowsFmodForFloatsAndTheDivisorSignForIntegers) {
  OpCase f64 = Case("Mod",
                    {Data(DataType::kF64, {4}, std::vector<double>{5.5, -5.5, 5.5, 1e300}),
                     Data(DataType::kF64, {4}, std::vector<double>{2.0, 2.0, -2.0, 3.0})},
                    TensorDesc{DataType::kF64, {4}});
  f64.node.attrs.Set("fmod", int64_t{1});
  const std::vector<double> want = {1.5, -1.5, 1.5, std::fmod(1e300, 3.0)};
  EXPECT_EQ(RunRef<double>(f64), want);

  std::vector<uint16_t> a, b;
  for (float v : {5.5f, -5.5f, 7.0f}) a.push_back(FloatToHalf(v));
  for (float v : {2.0f, 2.0f, -3.0f}) b.push_back(FloatToHalf(v));
  OpCase f16 = Case("Mod", {Data(DataType::kF16, {3}, a), Data(DataType::kF16, {3}, b)},
                    TensorDesc{DataType::kF16, {3}});
  f16.node.attrs.Set("fmod", int64_t{1});
  std::vector<uint16_t> want16;
  for (float v : {1.5f, -1.5f, 1.0f}) want16.push_back(FloatToHalf(v));
  EXPECT_EQ(RunRef<uint16_t>(f16), want16);

  // fmod=0 on a float is refused (ONNX defines it for integers only).
  f16.node.attrs.Set("fmod", int64_t{0});
  EXPECT_FALSE(testing_cpu::RunImpl(f16, "reference", 1).ok());

  // Python's %: the result takes the divisor's sign.
  EXPECT_EQ(RunRef<int16_t>(Case("Mod",
                              {Data(DataType::kI16, {4}, std::vector<int16_t>{-7, 7, -7, 7}),
                               Data(DataType::kI16, {4}, std::vector<int16_t>{3, -3, -3, 0})},
                              TensorDesc{DataType::kI16, {4}})),
            (std::vector<int16_t>{2, -2, -1, 0}));
  EXPECT_EQ(RunRef<uint32_t>(Case("Mod",
                               {Data(DataType::kU32, {2}, std::vector<uint32_t>{4000000000u, 10}),
                                Data(DataType::kU32, {2}, std::vector<uint32_t>{7, 3})},
                               TensorDesc{DataType::kU32, {2}})),
            (std::vector<uint32_t>{4000000000u % 7u, 1}));
  EXPECT_EQ(RunRef<uint64_t>(Case("Mod",
                               {Data(DataType::kU64, {1}, std::vector<uint64_t>{~uint64_t{0}}),
                                Data(DataType::kU64, {1}, std::vector<uint64_t>{10})},
                               TensorDesc{DataType::kU64, {1}})),
            (std::vector<uint64_t>{5}));
}

template <typename T>
std::vector<T> Shift(DataType dtype, const char* direction, const std::vector<T>& a,
                     const std::vector<T>& b) {
  const auto n = static_cast<int64_t>(a.size());
  OpCase c = Case("BitShift", {Data(dtype, {n}, a), Data(dtype, {n}, b)}, TensorDesc{dtype, {n}});
  c.node.attrs.Set("direction", std::string(direction));
  return RunRef<T>(c);
}

TEST(WideTypesBinary, BitShiftOnWiderUnsignedTypes) {
  EXPECT_EQ(Shift<uint16_t>(DataType::kU16, "LEFT", {1, 0xFFFF, 3}, {15, 1, 16}),
            (std::vector<uint16_t>{0x8000, 0xFFFE, 0}));
  EXPECT_EQ(Shift<uint16_t>(DataType::kU16, "RIGHT", {0x8000, 0xFFFF}, {15, 4}),
            (std::vector<uint16_t>{1, 0x0FFF}));
  EXPECT_EQ(Shift<uint32_t>(DataType::kU32, "LEFT", {1, 0xFFFFFFFFu}, {31, 4}),
            (std::vector<uint32_t>{0x80000000u, 0xFFFFFFF0u}));
  EXPECT_EQ(Shift<uint64_t>(DataType::kU64, "LEFT", {1, 5}, {63, 64}),
            (std::vector<uint64_t>{uint64_t{1} << 63, 0}));
  EXPECT_EQ(Shift<uint64_t>(DataType::kU64, "RIGHT", {~uint64_t{0}}, {60}),
            (std::vector<uint64_t>{15}));
}

TEST(WideTypesBinary, PowWithUnsignedAndDoubleExponents) {
  const Input base = Data(DataType::kF32, {3}, std::vector<float>{2.0f, 1.5f, -3.0f});
  EXPECT_EQ(RunRef<float>(Case("Pow", {base, Data(DataType::kU32, {3}, std::vector<uint32_t>{3, 2, 3})},
                            testing_cpu::F32({3}))),
            (std::vector<float>{8.0f, 2.25f, -27.0f}));
  EXPECT_EQ(RunRef<float>(Case("Pow", {base, Data(DataType::kU64, {3}, std::vector<uint64_t>{10, 0, 1})},
                            testing_cpu::F32({3}))),
            (std::vector<float>{1024.0f, 1.0f, -3.0f}));
  EXPECT_EQ(RunRef<double>(Case("Pow",
                             {Data(DataType::kF64, {2}, std::vector<double>{2.0, 9.0}),
                              Data(DataType::kF64, {2}, std::vector<double>{-1.0, 0.5})},
                             TensorDesc{DataType::kF64, {2}})),
            (std::vector<double>{0.5, 3.0}));
}

TEST(WideTypesScan, CumSumOnDoubles) {
  auto run = [](bool exclusive, bool reverse) {
    OpCase c = Case("CumSum",
                    {Data(DataType::kF64, {2, 3}, std::vector<double>{1, 2, 3.5, 1e15, 1, 0.25}),
                     Data(DataType::kI32, {}, std::vector<int32_t>{1})},
                    TensorDesc{DataType::kF64, {2, 3}});
    c.node.attrs.Set("exclusive", int64_t{exclusive});
    c.node.attrs.Set("reverse", int64_t{reverse});
    return RunRef<double>(c);
  };
  EXPECT_EQ(run(false, false), (std::vector<double>{1, 3, 6.5, 1e15, 1e15 + 1, 1e15 + 1.25}));
  EXPECT_EQ(run(true, true), (std::vector<double>{5.5, 3.5, 0, 1.25, 0.25, 0}));
}

TEST(WideTypesReduce, LogSumExpOnDoublesMatchesTheFloatReference) {
  const std::vector<double> x = SeededDoubles(24, 7);
  for (const char* op : {"ReduceLogSumExp", "ReduceSum", "ReduceMax", "ReduceL2"}) {
    auto make = [&](DataType dtype, Input in) {
      OpCase c = Case(op, {std::move(in)}, TensorDesc{dtype, {2, 1, 4}});
      c.opset = 11;  // axes as an attribute for every reduction
      c.node.attrs.Set("axes", std::vector<int64_t>{1});
      return c;
    };
    const std::vector<double> got = RunRef<double>(make(DataType::kF64, Data(DataType::kF64, {2, 3, 4}, x)));
    const std::vector<float> want =
        RunRef<float>(make(DataType::kF32, Data(DataType::kF32, {2, 3, 4}, ToFloats(x))));
    ASSERT_EQ(got.size(), want.size()) << op;
    // f32 inputs carry 2^-24 relative rounding; the sums are of 3 elements.
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_NEAR(got[i], want[i], 1e-5 * (1 + std::fabs(got[i]))) << op << " " << i;
  }
  // And one exact case: log(e^0 + e^0) = log 2, shifted by a large value.
  OpCase c = Case("ReduceLogSumExp", {Data(DataType::kF64, {2}, std::vector<double>{1000, 1000})},
                  TensorDesc{DataType::kF64, {}});
  c.node.attrs.Set("keepdims", int64_t{0});
  const std::vector<double> y = RunRef<double>(c);
  ASSERT_EQ(y.size(), 1u);
  EXPECT_DOUBLE_EQ(y[0], 1000 + std::log(2.0));
}

TEST(WideTypesMatMul, MatMulAndEinsumOnDoublesMatchTheFloatReference) {
  const std::vector<double> a = SeededDoubles(2 * 3 * 4, 11), b = SeededDoubles(2 * 4 * 5, 12);
  auto near = [](const std::vector<double>& got, const std::vector<float>& want, const char* what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_NEAR(got[i], want[i], 1e-5 * (1 + std::fabs(got[i]))) << what << " " << i;
  };
  auto matmul = [&](DataType t, Input x, Input y) {
    return Case("MatMul", {std::move(x), std::move(y)}, TensorDesc{t, {2, 3, 5}});
  };
  near(RunRef<double>(matmul(DataType::kF64, Data(DataType::kF64, {2, 3, 4}, a),
                          Data(DataType::kF64, {2, 4, 5}, b))),
       RunRef<float>(matmul(DataType::kF32, Data(DataType::kF32, {2, 3, 4}, ToFloats(a)),
                         Data(DataType::kF32, {2, 4, 5}, ToFloats(b)))),
       "MatMul");
  for (const auto& [equation, dims] :
       std::vector<std::pair<std::string, std::vector<int64_t>>>{
           {"bij,bjk->bik", {2, 3, 5}}, {"bij,bjk->", {}}, {"bij,bjk->kb", {5, 2}}}) {
    auto einsum = [&](DataType t, Input x, Input y) {
      OpCase c = Case("Einsum", {std::move(x), std::move(y)}, TensorDesc{t, dims});
      c.node.attrs.Set("equation", equation);
      return c;
    };
    near(RunRef<double>(einsum(DataType::kF64, Data(DataType::kF64, {2, 3, 4}, a),
                            Data(DataType::kF64, {2, 4, 5}, b))),
         RunRef<float>(einsum(DataType::kF32, Data(DataType::kF32, {2, 3, 4}, ToFloats(a)),
                           Data(DataType::kF32, {2, 4, 5}, ToFloats(b)))),
         equation.c_str());
  }
  // A diagonal (repeated label) on doubles, by hand.
  OpCase diag = Case("Einsum", {Data(DataType::kF64, {2, 2}, std::vector<double>{1.25, 2, 3, -0.5})},
                     TensorDesc{DataType::kF64, {2}});
  diag.node.attrs.Set("equation", std::string("ii->i"));
  EXPECT_EQ(RunRef<double>(diag), (std::vector<double>{1.25, -0.5}));
}

TEST(WideTypesEyeLike, OnesInTheOutputDtype) {
  auto eye = [](DataType dtype) {
    OpCase c = Case("EyeLike", {Data(DataType::kF32, {2, 3}, std::vector<float>(6, 0.5f))},
                    TensorDesc{dtype, {2, 3}});
    c.node.attrs.Set("k", int64_t{1});
    return c;
  };
  EXPECT_EQ(RunRef<double>(eye(DataType::kF64)), (std::vector<double>{0, 1, 0, 0, 0, 1}));
  EXPECT_EQ(RunRef<uint16_t>(eye(DataType::kBF16)),
            (std::vector<uint16_t>{0, 0x3F80, 0, 0, 0, 0x3F80}));
  EXPECT_EQ(RunRef<uint64_t>(eye(DataType::kU64)), (std::vector<uint64_t>{0, 1, 0, 0, 0, 1}));
  EXPECT_EQ(RunRef<int16_t>(eye(DataType::kI16)), (std::vector<int16_t>{0, 1, 0, 0, 0, 1}));
}

}  // namespace
}  // namespace braid
