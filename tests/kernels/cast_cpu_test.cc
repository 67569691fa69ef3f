// braid's CPU Cast (kernels/cpu/cast_cpu.cc) against the reference, bit for
// bit, where its F16C paths could differ: every f16 bit pattern to f32
// (signalling NaNs included) and f32 patterns spread over the whole 2^32
// range plus the rounding edges to f16 (subnormal, overflow and NaN
// boundaries), on two threads.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "tests/kernels/onednn_test_util.h"

namespace braid {
namespace {

using testing_cpu::Input;
using testing_cpu::OpCase;

template <typename T>
OpCase CastCase(DataType from, DataType to, int64_t onnx_to, const std::vector<T>& values) {
  OpCase c;
  c.node.op_type = "Cast";
  c.node.name = "cast_cpu_test";
  c.node.attrs.Set("to", onnx_to);
  const auto n = static_cast<int64_t>(values.size());
  Input in{TensorDesc{from, {n}}, false, {}};
  in.bytes.resize(values.size() * sizeof(T));
  std::memcpy(in.bytes.data(), values.data(), in.bytes.size());
  c.inputs = {std::move(in)};
  c.outputs = {TensorDesc{to, {n}}};
  return c;
}

void ExpectSameBits(const OpCase& c) {
  auto got = testing_cpu::RunImpl(c, "cpu", 2);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  auto want = testing_cpu::RunImpl(c, "reference", 1);
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  ASSERT_EQ((*got)[0].size(), (*want)[0].size());
  EXPECT_EQ(0, std::memcmp((*got)[0].data(), (*want)[0].data(), (*got)[0].size()));
}

TEST(CastCpuTest, EveryHalfToFloatMatchesTheReference) {
  std::vector<uint16_t> halves(65536 + 3);  // + 3: a tail after the 8-lane loop
  for (size_t i = 0; i < halves.size(); ++i) halves[i] = static_cast<uint16_t>(i);
  ExpectSameBits(CastCase(DataType::kF16, DataType::kF32, 1, halves));
}

TEST(CastCpuTest, FloatToHalfMatchesTheReferenceOverTheRangeAndItsEdges) {
  std::vector<uint32_t> bits;
  for (uint64_t b = 0; b < (1ull << 32); b += 4093) bits.push_back(static_cast<uint32_t>(b));
  // Every pattern around the thresholds FloatToHalf branches on (2^-25, the
  // smallest normal half, 65504 / 65520, infinity, NaNs), both signs.
  for (uint32_t edge : {0x33000000u, 0x38800000u, 0x477FE000u, 0x477FF000u, 0x7F800000u,
                        0x7FC00000u})
    for (uint32_t d = 0; d < 8192; ++d)
      for (uint32_t sign : {0u, 0x80000000u}) bits.push_back(sign | (edge - 4096 + d));
  bits.push_back(0x7F800001u);  // signalling NaN with low payload only
  ExpectSameBits(CastCase(DataType::kF32, DataType::kF16, 10, bits));
}

// The AVX2 f32 -> integer path redoes lanes outside int32 (NaN, +-Inf,
// |v| >= 2^31, wrapping to i32) with the reference's rule.
TEST(CastCpuTest, FloatToIntegersMatchTheReferenceOverTheRange) {
  std::vector<uint32_t> bits;
  for (uint64_t b = 0; b < (1ull << 32); b += 4093) bits.push_back(static_cast<uint32_t>(b));
  for (uint32_t edge : {0x4F000000u, 0x5F000000u})  // 2^31, 2^63
    for (uint32_t d = 0; d < 64; ++d)
      for (uint32_t sign : {0u, 0x80000000u}) bits.push_back(sign | (edge - 32 + d));
  ExpectSameBits(CastCase(DataType::kF32, DataType::kI32, 6, bits));
  ExpectSameBits(CastCase(DataType::kF32, DataType::kI64, 7, bits));
}

TEST(CastCpuTest, SmallIntegersToFloatMatchTheReference) {
  std::vector<uint8_t> bytes(256 + 5);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 7);
  ExpectSameBits(CastCase(DataType::kU8, DataType::kF32, 1, bytes));
  ExpectSameBits(CastCase(DataType::kBool, DataType::kF32, 1, bytes));  // any non-zero byte is true
  std::vector<int32_t> ints;
  for (int64_t v = -(1ll << 31); v < (1ll << 31); v += 65521) ints.push_back(static_cast<int32_t>(v));
  for (int32_t v : {16777217, -16777217, 2147483647, -2147483647 - 1}) ints.push_back(v);
  ExpectSameBits(CastCase(DataType::kI32, DataType::kF32, 1, ints));
}

}  // namespace
}  // namespace braid
