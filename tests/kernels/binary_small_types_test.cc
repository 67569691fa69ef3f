// Reference binary ops on u8 / i8 (wrapping like numpy, x / 0 = 0, i8
// -128 / -1 wraps) and Min/Max on f16 (compared as values, the winning
// operand's bits returned unchanged, NaN propagates), with broadcasting.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/params/elementwise.h"
#include "tests/kernels/onednn_test_util.h"

namespace braid {
namespace {

using testing_cpu::OpCase;

template <typename T>
testing_cpu::Input Data(DataType dtype, std::vector<int64_t> dims, const std::vector<T>& values) {
  testing_cpu::Input in{TensorDesc{dtype, std::move(dims)}, false, {}};
  in.bytes.resize(values.size() * sizeof(T));
  std::memcpy(in.bytes.data(), values.data(), in.bytes.size());
  return in;
}

template <typename T>
std::vector<T> RunBinary(const std::string& op, DataType dtype,
                         std::vector<testing_cpu::Input> inputs, std::vector<int64_t> y_dims) {
  OpCase c;
  c.node.name = "bin";
  c.node.op_type = op;
  c.inputs = std::move(inputs);
  c.outputs = {TensorDesc{dtype, std::move(y_dims)}};
  auto out = testing_cpu::RunImpl(c, "reference", 1);
  EXPECT_TRUE(out.ok()) << op << ": " << out.status().ToString();
  if (!out.ok()) return {};
  std::vector<T> v((*out)[0].size() / sizeof(T));
  std::memcpy(v.data(), (*out)[0].data(), (*out)[0].size());
  return v;
}

const std::vector<uint8_t> kU8A = {250, 3, 7, 0, 128, 255};
const std::vector<uint8_t> kU8B = {10, 5, 2, 9, 2, 0};

TEST(BinaryU8, WrappingArithmetic) {
  auto run = [](const char* op) {
    return RunBinary<uint8_t>(op, DataType::kU8,
                              {Data(DataType::kU8, {6}, kU8A), Data(DataType::kU8, {6}, kU8B)},
                              {6});
  };
  // 250 + 10 = 260 -> 4; 3 - 5 -> 254; 128 * 2 -> 0; 255 / 0 -> 0.
  EXPECT_EQ(run("Add"), (std::vector<uint8_t>{4, 8, 9, 9, 130, 255}));
  EXPECT_EQ(run("Sub"), (std::vector<uint8_t>{240, 254, 5, 247, 126, 255}));
  EXPECT_EQ(run("Mul"), (std::vector<uint8_t>{196, 15, 14, 0, 0, 0}));
  EXPECT_EQ(run("Div"), (std::vector<uint8_t>{25, 0, 3, 0, 64, 0}));
  EXPECT_EQ(run("Min"), (std::vector<uint8_t>{10, 3, 2, 0, 2, 0}));
  EXPECT_EQ(run("Max"), (std::vector<uint8_t>{250, 5, 7, 9, 128, 255}));
}

TEST(BinaryI8, WrappingArithmeticAndTruncatingDivision) {
  const std::vector<int8_t> a = {120, -128, -7, 7, -128, 100};
  const std::vector<int8_t> b = {10, -1, 2, -2, 0, -3};
  auto run = [&](const char* op) {
    return RunBinary<int8_t>(op, DataType::kI8,
                             {Data(DataType::kI8, {6}, a), Data(DataType::kI8, {6}, b)}, {6});
  };
  EXPECT_EQ(run("Add"), (std::vector<int8_t>{-126, 127, -5, 5, -128, 97}));
  EXPECT_EQ(run("Sub"), (std::vector<int8_t>{110, -127, -9, 9, -128, 103}));
  // 120 * 10 = 1200 = 4 * 256 + 176 -> -80; -128 * -1 -> -128; 100 * -3 = -300 -> -44.
  EXPECT_EQ(run("Mul"), (std::vector<int8_t>{-80, -128, -14, -14, 0, -44}));
  // Truncation toward zero: -7 / 2 = -3, 7 / -2 = -3, 100 / -3 = -33.
  EXPECT_EQ(run("Div"), (std::vector<int8_t>{12, -128, -3, -3, 0, -33}));
  EXPECT_EQ(run("Min"), (std::vector<int8_t>{10, -128, -7, -2, -128, -3}));
  EXPECT_EQ(run("Max"), (std::vector<int8_t>{120, -1, 2, 7, 0, 100}));
}

TEST(BinaryU8, BroadcastsAndVariadicMax) {
  // [2,3] + [3] and Max of three inputs with a scalar.
  EXPECT_EQ(RunBinary<uint8_t>("Add", DataType::kU8,
                               {Data(DataType::kU8, {2, 3}, std::vector<uint8_t>{1, 2, 3, 4, 5, 6}),
                                Data(DataType::kU8, {3}, std::vector<uint8_t>{255, 10, 0})},
                               {2, 3}),
            (std::vector<uint8_t>{0, 12, 3, 3, 15, 6}));
  EXPECT_EQ(RunBinary<uint8_t>("Max", DataType::kU8,
                               {Data(DataType::kU8, {3}, std::vector<uint8_t>{1, 200, 3}),
                                Data(DataType::kU8, {}, std::vector<uint8_t>{100}),
                                Data(DataType::kU8, {3}, std::vector<uint8_t>{0, 0, 150})},
                               {3}),
            (std::vector<uint8_t>{100, 200, 150}));
}

TEST(BinaryF16, MinMaxReturnExactOperandBits) {
  const uint16_t kNaN = 0x7E00;
  const std::vector<uint16_t> a = {FloatToHalf(1.0009765625f), FloatToHalf(-2.0f), 0x0001,
                                   kNaN, FloatToHalf(3.0f)};
  const std::vector<uint16_t> b = {FloatToHalf(1.0f), FloatToHalf(-65504.0f), 0x8001,
                                   FloatToHalf(1.0f), kNaN};
  auto run = [&](const char* op) {
    return RunBinary<uint16_t>(op, DataType::kF16,
                               {Data(DataType::kF16, {5}, a), Data(DataType::kF16, {5}, b)}, {5});
  };
  const std::vector<uint16_t> max = run("Max");
  const std::vector<uint16_t> min = run("Min");
  ASSERT_EQ(max.size(), 5u);
  ASSERT_EQ(min.size(), 5u);
  // 1 + 2^-10 vs 1, -2 vs -65504, smallest subnormal vs its negation.
  EXPECT_EQ(max[0], 0x3C01);
  EXPECT_EQ(min[0], 0x3C00);
  EXPECT_EQ(max[1], 0xC000);
  EXPECT_EQ(min[1], 0xFBFF);
  EXPECT_EQ(max[2], 0x0001);
  EXPECT_EQ(min[2], 0x8001);
  for (size_t i : {3u, 4u}) {
    EXPECT_TRUE(std::isnan(HalfToFloat(max[i]))) << i;
    EXPECT_TRUE(std::isnan(HalfToFloat(min[i]))) << i;
  }
}

TEST(BinaryF16, ArithmeticStaysUnsupported) {
  OpCase c;
  c.node.name = "bin";
  c.node.op_type = "Add";
  c.inputs = {Data(DataType::kF16, {1}, std::vector<uint16_t>{0x3C00}),
              Data(DataType::kF16, {1}, std::vector<uint16_t>{0x3C00})};
  c.outputs = {TensorDesc{DataType::kF16, {1}}};
  testing_cpu::Prepared p;
  EXPECT_EQ(testing_cpu::PrepareImpl(c, "reference", p).code(), StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace braid
