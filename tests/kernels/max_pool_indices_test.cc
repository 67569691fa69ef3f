// Reference MaxPool: the optional Indices output (storage_order 0 and 1, ties,
// padding, batch/channel offsets, 1-D and 3-D) and the small dtypes (f16, i8,
// u8); oneDNN's pool declines when Indices is requested.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
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
std::vector<T> As(const std::vector<std::byte>& bytes) {
  std::vector<T> v(bytes.size() / sizeof(T));
  std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

struct PoolSpec {
  std::vector<int64_t> kernel, strides, pads;
  int64_t storage_order = 0;
};

OpCase MaxPoolCase(testing_cpu::Input x, std::vector<int64_t> y_dims, const PoolSpec& s,
                   bool indices = true) {
  OpCase c;
  c.node.name = "pool";
  c.node.op_type = "MaxPool";
  c.node.attrs.Set("kernel_shape", s.kernel);
  if (!s.strides.empty()) c.node.attrs.Set("strides", s.strides);
  if (!s.pads.empty()) c.node.attrs.Set("pads", s.pads);
  c.node.attrs.Set("storage_order", s.storage_order);
  c.outputs = {TensorDesc{x.desc.dtype, y_dims}};
  if (indices) c.outputs.push_back(TensorDesc{DataType::kI64, y_dims});
  c.inputs = {std::move(x)};
  return c;
}

std::vector<std::vector<std::byte>> RunReference(const OpCase& c) {
  auto out = testing_cpu::RunImpl(c, "reference", 1);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? std::move(*out) : std::vector<std::vector<std::byte>>(c.outputs.size());
}

// [[1,2,3],[4,5,6],[7,8,9]] and its negation as two channels.
const std::vector<float> kTwoChannels = {1, 2, 3, 4, 5, 6, 7, 8, 9,
                                         -1, -2, -3, -4, -5, -6, -7, -8, -9};

TEST(MaxPoolIndices, RowMajorCountsBatchAndChannel) {
  OpCase c = MaxPoolCase(Data(DataType::kF32, {1, 2, 3, 3}, kTwoChannels), {1, 2, 2, 2},
                         {{2, 2}});
  auto out = RunReference(c);
  EXPECT_EQ(As<float>(out[0]), (std::vector<float>{5, 6, 8, 9, -1, -2, -4, -5}));
  // Channel 1 starts at flat index 9: its maxima sit at (0,0) (0,1) (1,0) (1,1).
  EXPECT_EQ(As<int64_t>(out[1]), (std::vector<int64_t>{4, 5, 7, 8, 9, 10, 12, 13}));
}

TEST(MaxPoolIndices, ColumnMajorSpatialPart) {
  OpCase c = MaxPoolCase(Data(DataType::kF32, {1, 2, 3, 3}, kTwoChannels), {1, 2, 2, 2},
                         {{2, 2}, {}, {}, 1});
  auto out = RunReference(c);
  EXPECT_EQ(As<float>(out[0]), (std::vector<float>{5, 6, 8, 9, -1, -2, -4, -5}));
  // (h, w) -> c * 9 + h + w * 3: (1,1)=4 (1,2)=7 (2,1)=5 (2,2)=8; channel 1:
  // (0,0)=9 (0,1)=12 (1,0)=10 (1,1)=13.
  EXPECT_EQ(As<int64_t>(out[1]), (std::vector<int64_t>{4, 7, 5, 8, 9, 12, 10, 13}));
}

TEST(MaxPoolIndices, TiesTakeTheFirstInWindowOrderAndPaddingNeverWins) {
  // All equal, kernel 2 stride 1, pads 1: every window's first in-bounds
  // element wins; for the window at (-1,-1) that is (0,0).
  const std::vector<float> x(9, -3.0f);
  OpCase c = MaxPoolCase(Data(DataType::kF32, {1, 1, 3, 3}, x), {1, 1, 4, 4},
                         {{2, 2}, {1, 1}, {1, 1, 1, 1}});
  auto out = RunReference(c);
  EXPECT_EQ(As<float>(out[0]), std::vector<float>(16, -3.0f));
  // Window (i, j) starts at (i-1, j-1); its first in-bounds cell is
  // (max(i-1,0), max(j-1,0)).
  std::vector<int64_t> want;
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 4; ++j)
      want.push_back(std::max<int64_t>(i - 1, 0) * 3 + std::max<int64_t>(j - 1, 0));
  EXPECT_EQ(As<int64_t>(out[1]), want);
}

TEST(MaxPoolIndices, ThreeDimensionalBothOrdersAgainstBruteForce) {
  // N=2, C=2, D=3, H=4, W=5, kernel 2x2x2 stride 1x2x2, distinct values.
  const int64_t n = 2, ch = 2, d = 3, h = 4, w = 5;
  std::vector<float> x(static_cast<size_t>(n * ch * d * h * w));
  std::mt19937 rng(7);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) + 0.5f;
  std::shuffle(x.begin(), x.end(), rng);
  const int64_t od = 2, oh = 2, ow = 2;
  for (int64_t order : {0, 1}) {
    SCOPED_TRACE(order);
    OpCase c = MaxPoolCase(Data(DataType::kF32, {n, ch, d, h, w}, x), {n, ch, od, oh, ow},
                           {{2, 2, 2}, {1, 2, 2}, {}, order});
    auto out = RunReference(c);
    std::vector<float> want_y;
    std::vector<int64_t> want_i;
    for (int64_t p = 0; p < n * ch; ++p)
      for (int64_t a = 0; a < od; ++a)
        for (int64_t b = 0; b < oh; ++b)
          for (int64_t e = 0; e < ow; ++e) {
            float best = -1;
            int64_t at = -1;
            for (int64_t ka = 0; ka < 2; ++ka)
              for (int64_t kb = 0; kb < 2; ++kb)
                for (int64_t ke = 0; ke < 2; ++ke) {
                  const int64_t zi = a + ka, yi = b * 2 + kb, xi = e * 2 + ke;
                  const float v = x[static_cast<size_t>(((p * d + zi) * h + yi) * w + xi)];
                  if (v > best) {
                    best = v;
                    at = p * d * h * w +
                         (order == 0 ? (zi * h + yi) * w + xi : zi + yi * d + xi * d * h);
                  }
                }
            want_y.push_back(best);
            want_i.push_back(at);
          }
    EXPECT_EQ(As<float>(out[0]), want_y);
    EXPECT_EQ(As<int64_t>(out[1]), want_i);
  }
}

TEST(MaxPoolIndices, OneDimensional) {
  OpCase c = MaxPoolCase(Data(DataType::kF32, {1, 1, 6}, std::vector<float>{3, 1, 4, 1, 5, 9}),
                         {1, 1, 3}, {{2}, {2}});
  auto out = RunReference(c);
  EXPECT_EQ(As<float>(out[0]), (std::vector<float>{3, 4, 9}));
  EXPECT_EQ(As<int64_t>(out[1]), (std::vector<int64_t>{0, 2, 5}));
}

TEST(MaxPoolIndices, OnednnDeclinesIndices) {
  OpCase c = MaxPoolCase(Data(DataType::kF32, {1, 2, 3, 3}, kTwoChannels), {1, 2, 2, 2},
                         {{2, 2}});
  testing_cpu::Prepared p;
  EXPECT_EQ(testing_cpu::PrepareImpl(c, "onednn", p).code(), StatusCode::kUnimplemented);
}

TEST(MaxPoolSmallTypes, Int8AndUint8) {
  // Signed and unsigned order differ: 200 (u8) is the max, as i8 it is -56.
  const std::vector<uint8_t> u = {200, 1, 2, 3, 4, 5, 6, 7, 8};
  OpCase cu = MaxPoolCase(Data(DataType::kU8, {1, 1, 3, 3}, u), {1, 1, 2, 2}, {{2, 2}});
  auto out_u = RunReference(cu);
  EXPECT_EQ(As<uint8_t>(out_u[0]), (std::vector<uint8_t>{200, 5, 7, 8}));
  EXPECT_EQ(As<int64_t>(out_u[1]), (std::vector<int64_t>{0, 5, 7, 8}));
  const std::vector<int8_t> s = {-56, 1, 2, 3, -128, 5, 6, 7, 8};
  OpCase cs = MaxPoolCase(Data(DataType::kI8, {1, 1, 3, 3}, s), {1, 1, 2, 2}, {{2, 2}}, false);
  EXPECT_EQ(As<int8_t>(RunReference(cs)[0]), (std::vector<int8_t>{3, 5, 7, 8}));
}

TEST(MaxPoolSmallTypes, Float16ComparesValuesAndCopiesBits) {
  // -0.5, 2.5, -4, 1.0009765625 (1 + 2^-10): the max of all four is 2.5 and
  // the bits come back unchanged.
  const std::vector<uint16_t> x = {FloatToHalf(-0.5f), FloatToHalf(2.5f), FloatToHalf(-4.0f),
                                   FloatToHalf(1.0009765625f)};
  OpCase c = MaxPoolCase(Data(DataType::kF16, {1, 1, 2, 2}, x), {1, 1, 1, 1}, {{2, 2}});
  auto out = RunReference(c);
  EXPECT_EQ(As<uint16_t>(out[0]), (std::vector<uint16_t>{0x4100}));  // 2.5
  EXPECT_EQ(As<int64_t>(out[1]), (std::vector<int64_t>{1}));
  // Kernel 1x2 over row 1: max(-4, 1.0009765625) keeps the odd mantissa bit.
  OpCase row = MaxPoolCase(Data(DataType::kF16, {1, 1, 2, 2}, x), {1, 1, 2, 1}, {{1, 2}},
                           false);
  EXPECT_EQ(As<uint16_t>(RunReference(row)[0]),
            (std::vector<uint16_t>{0x4100, 0x3C01}));
}

}  // namespace
}  // namespace braid
