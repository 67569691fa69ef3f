// QuantizeLinear's vectorised loop (kernels/cpu/quantize_cpu.h) against the
// scalar loop of kernels/params/quantize.h, bit for bit, on every instruction
// set this CPU runs: random values, exact ties (half to even), NaN, +-Inf,
// values past the range, denormals; per tensor and per axis; u8 and i8;
// lengths that leave vector tails. And QLinearAdd's element function by hand,
// and QLinearConcat's requantization (by hand, vector vs scalar).
#include "kernels/cpu/quantize_cpu.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "kernels/params/qlinear_add.h"

namespace braid {
namespace {

template <typename Q>
void CheckAgainstScalar(SimdIsa isa, int64_t outer, int64_t axis_size, int64_t inner,
                        bool per_axis, bool zero_point, uint32_t seed) {
  QuantizeLinearParams p;
  p.quantize = true;
  p.quantized = std::is_signed_v<Q> ? DataType::kI8 : DataType::kU8;
  p.has_zero_point = zero_point;
  p.outer = outer;
  p.axis_size = axis_size;
  p.inner = inner;
  p.per_axis = per_axis;
  const int64_t n = p.elements();
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-300.0f, 300.0f);
  const size_t params = per_axis ? static_cast<size_t>(axis_size) : 1;
  std::vector<float> scale(params);
  std::vector<Q> zp(params);
  for (size_t k = 0; k < params; ++k) {
    scale[k] = k % 2 == 0 ? 0.5f : std::uniform_real_distribution<float>(0.01f, 2.0f)(rng);
    zp[k] = static_cast<Q>(std::uniform_int_distribution<int>(std::numeric_limits<Q>::min() / 2,
                                                              std::numeric_limits<Q>::max() / 2)(rng));
  }
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    float v = value(rng);
    switch (i % 11) {
      case 0: v = std::nearbyint(v) + 0.25f; break;  // with scale 0.5: an exact .5 tie
      case 1: v = std::numeric_limits<float>::quiet_NaN(); break;
      case 2: v = (i % 2 ? 1 : -1) * std::numeric_limits<float>::infinity(); break;
      case 3: v = 1e-40f; break;  // denormal
      case 4: v *= 1e6f; break;   // far past the range
      default: break;
    }
    x[static_cast<size_t>(i)] = v;
  }
  std::vector<Q> want(static_cast<size_t>(n)), got(static_cast<size_t>(n));
  const void* src[] = {x.data(), scale.data(), zero_point ? zp.data() : nullptr};
  void* dst_want[] = {want.data()};
  void* dst_got[] = {got.data()};
  RunArgs scalar{src, dst_want};
  RunArgs vector{src, dst_got};
  RunQuantizeLinear(p, scalar, 0, n);
  // Two ranges, as two threads would split it (a range may start mid-run).
  QuantizeLinearRange(isa, p, vector, 0, n / 3);
  QuantizeLinearRange(isa, p, vector, n / 3, n);
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(static_cast<int>(got[static_cast<size_t>(i)]),
              static_cast<int>(want[static_cast<size_t>(i)]))
        << SimdIsaName(isa) << " element " << i << " x " << x[static_cast<size_t>(i)];
}

TEST(QuantizeCpu, VectorLoopsEqualTheScalarLoopBitForBit) {
  int checked = 0;
  for (SimdIsa isa : {SimdIsa::kPortable, SimdIsa::kAvx2, SimdIsa::kAvx512}) {
    if (!SimdIsaSupported(isa)) continue;
    ++checked;
    for (bool zero_point : {false, true}) {
      CheckAgainstScalar<uint8_t>(isa, 1, 1, 1000, false, zero_point, 1);
      CheckAgainstScalar<int8_t>(isa, 1, 1, 37, false, zero_point, 2);
      CheckAgainstScalar<uint8_t>(isa, 2, 5, 29, true, zero_point, 3);  // per axis, odd rows
      CheckAgainstScalar<int8_t>(isa, 3, 4, 64, true, zero_point, 4);
      CheckAgainstScalar<int8_t>(isa, 1, 7, 1, true, zero_point, 5);  // one element per run
    }
  }
  EXPECT_GE(checked, 1);
}

// The rounding is half to even, not half away from zero, on every path.
TEST(QuantizeCpu, TiesRoundToEven) {
  for (SimdIsa isa : {SimdIsa::kPortable, SimdIsa::kAvx2, SimdIsa::kAvx512}) {
    if (!SimdIsaSupported(isa)) continue;
    QuantizeLinearParams p;
    p.inner = 6;
    const float x[] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 3.5f};
    const float scale = 1.0f;
    int8_t y[6] = {};
    const void* src[] = {x, &scale, nullptr};
    void* dst[] = {y};
    p.quantized = DataType::kI8;
    QuantizeLinearRange(isa, p, RunArgs{src, dst}, 0, 6);
    const int want[] = {0, 2, 2, 0, -2, 4};
    for (int i = 0; i < 6; ++i) EXPECT_EQ(y[i], want[i]) << SimdIsaName(isa) << " x " << x[i];
  }
}

// QLinearAdd's element function, by hand: (a - za) * sa / sc + (b - zb) *
// sb / sc + zc, rounded half to even, saturated.
TEST(QLinearAddElement, HandComputedRoundingAndSaturation) {
  QLinearAddScales s;
  s.a_ratio = 0.4f;   // 0.02 / 0.05
  s.b_ratio = 0.2f;   // 0.01 / 0.05
  s.a_zp = 128, s.b_zp = 128, s.c_zp = 10;
  EXPECT_EQ(QLinearAddElement<uint8_t>(s, 130, 100), 5);   // 0.8 - 5.6 + 10 = 5.2
  EXPECT_EQ(QLinearAddElement<uint8_t>(s, 255, 255), 86);  // 50.8 + 25.4 + 10 = 86.2
  EXPECT_EQ(QLinearAddElement<uint8_t>(s, 0, 0), 0);       // -51.2 - 25.6 + 10 < 0: saturated
  QLinearAddScales half;
  half.a_ratio = 0.5f, half.b_ratio = 0.5f;
  EXPECT_EQ(QLinearAddElement<int8_t>(half, 3, 2), 2);     // 2.5 -> 2 (ties to even)
  EXPECT_EQ(QLinearAddElement<int8_t>(half, 5, 2), 4);     // 3.5 -> 4
  EXPECT_EQ(QLinearAddElement<int8_t>(half, -3, -2), -2);  // -2.5 -> -2
  half.a_ratio = 2.0f;
  EXPECT_EQ(QLinearAddElement<int8_t>(half, 100, 100), 127);  // 250: saturated
}

// The vector QLinearAdd loops equal the scalar element function bit for bit
// on every instruction set this CPU runs: random operands incl. 0 and 255 /
// -128 and 127, ratios that round, saturate and tie; lengths with tails.
template <typename Q>
void CheckQLinearAdd(SimdIsa isa, int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> value(std::numeric_limits<Q>::min(), std::numeric_limits<Q>::max());
  std::vector<Q> a(static_cast<size_t>(n)), b(a.size()), want(a.size()), got(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<Q>(i % 17 == 0 ? std::numeric_limits<Q>::max() : value(rng));
    b[i] = static_cast<Q>(i % 13 == 0 ? std::numeric_limits<Q>::min() : value(rng));
  }
  for (const QLinearAddScales& s :
       {QLinearAddScales{0.4f, 0.2f, 128, 128, 10}, QLinearAddScales{0.5f, 0.5f, 0, 0, 0},
        QLinearAddScales{1.7f, 0.9f, 3, -5, -20}, QLinearAddScales{0.013f, 2.5f, 100, 7, 90}}) {
    for (size_t i = 0; i < a.size(); ++i) want[i] = QLinearAddElement<Q>(s, a[i], b[i]);
    std::fill(got.begin(), got.end(), Q{0});
    // Two ranges, as two threads would split it.
    QLinearAddRange(isa, s, std::is_signed_v<Q> ? DataType::kI8 : DataType::kU8, a.data(), b.data(),
                    got.data(), 0, n / 3);
    QLinearAddRange(isa, s, std::is_signed_v<Q> ? DataType::kI8 : DataType::kU8, a.data(), b.data(),
                    got.data(), n / 3, n);
    for (size_t i = 0; i < a.size(); ++i)
      ASSERT_EQ(static_cast<int>(got[i]), static_cast<int>(want[i]))
          << SimdIsaName(isa) << " element " << i << " a " << static_cast<int>(a[i]) << " b "
          << static_cast<int>(b[i]) << " ratios " << s.a_ratio << " " << s.b_ratio;
  }
}

TEST(QLinearAddCpu, VectorLoopsEqualTheScalarElementBitForBit) {
  int checked = 0;
  for (SimdIsa isa : {SimdIsa::kPortable, SimdIsa::kAvx2, SimdIsa::kAvx512}) {
    if (!SimdIsaSupported(isa)) continue;
    ++checked;
    CheckQLinearAdd<uint8_t>(isa, 1000, 1);
    CheckQLinearAdd<int8_t>(isa, 1000, 2);
    CheckQLinearAdd<uint8_t>(isa, 37, 3);
    CheckQLinearAdd<int8_t>(isa, 5, 4);
  }
  EXPECT_GE(checked, 1);
}

// QLinearConcat's requantization, by hand: DequantizeLinear's (x - x_zp) *
// x_scale, then QuantizeLinear's round_half_even(v / y_scale) + y_zp,
// saturated.
TEST(RequantizeElement, HandComputedRoundingAndSaturation) {
  RequantizeScales s{.x_scale = 0.5f, .x_zp = 100, .y_scale = 2.0f, .y_zp = 10};
  EXPECT_EQ(RequantizeElement<uint8_t>(s, 120), 15);  // 10 / 2 + 10
  EXPECT_EQ(RequantizeElement<uint8_t>(s, 110), 12);  // 5 / 2 = 2.5 -> 2 (ties to even), + 10
  EXPECT_EQ(RequantizeElement<uint8_t>(s, 114), 14);  // 7 / 2 = 3.5 -> 4, + 10
  EXPECT_EQ(RequantizeElement<uint8_t>(s, 0), 0);     // -25 + 10 < 0: saturated
  RequantizeScales wide{.x_scale = 4.0f, .x_zp = 0, .y_scale = 1.0f, .y_zp = 0};
  EXPECT_EQ(RequantizeElement<int8_t>(wide, 40), 127);     // 160: saturated
  EXPECT_EQ(RequantizeElement<int8_t>(wide, -40), -128);   // -160: saturated
  EXPECT_EQ(RequantizeElement<int8_t>(wide, -3), -12);
  RequantizeScales bad{.x_scale = 1.0f, .x_zp = 0, .y_scale = 0.0f, .y_zp = 5};
  EXPECT_EQ(RequantizeElement<uint8_t>(bad, 0), 0);  // 0 / 0 = NaN -> 0, as QuantizeLinear
  // The output's own parameters give the input back.
  RequantizeScales same{.x_scale = 0.0371f, .x_zp = 131, .y_scale = 0.0371f, .y_zp = 131};
  for (int x = 0; x < 256; ++x)
    ASSERT_EQ(RequantizeElement<uint8_t>(same, static_cast<uint8_t>(x)), x);
}

// The vector requantization loops equal the scalar element function bit for
// bit on every instruction set this CPU runs: every input value, parameters
// that round, saturate and tie; lengths with tails.
template <typename Q>
void CheckRequantize(SimdIsa isa, int64_t n) {
  std::vector<Q> x(static_cast<size_t>(n)), want(x.size()), got(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<Q>(static_cast<int>(std::numeric_limits<Q>::min()) + static_cast<int>(i * 7 % 256));
  for (const RequantizeScales& s :
       {RequantizeScales{0.02f, 128, 0.05f, 10}, RequantizeScales{0.5f, 0, 1.0f, 0},
        RequantizeScales{1.7f, 3, 0.9f, -20}, RequantizeScales{0.013f, 100, 0.0131f, 90}}) {
    for (size_t i = 0; i < x.size(); ++i) want[i] = RequantizeElement<Q>(s, x[i]);
    std::fill(got.begin(), got.end(), Q{0});
    RequantizeRange(isa, s, std::is_signed_v<Q> ? DataType::kI8 : DataType::kU8, x.data(), got.data(),
                    n);
    for (size_t i = 0; i < x.size(); ++i)
      ASSERT_EQ(static_cast<int>(got[i]), static_cast<int>(want[i]))
          << SimdIsaName(isa) << " element " << i << " x " << static_cast<int>(x[i]) << " scales "
          << s.x_scale << " -> " << s.y_scale;
  }
}

TEST(QLinearConcatCpu, VectorRequantizationEqualsTheScalarElementBitForBit) {
  int checked = 0;
  for (SimdIsa isa : {SimdIsa::kPortable, SimdIsa::kAvx2, SimdIsa::kAvx512}) {
    if (!SimdIsaSupported(isa)) continue;
    ++checked;
    CheckRequantize<uint8_t>(isa, 1000);
    CheckRequantize<int8_t>(isa, 1000);
    CheckRequantize<uint8_t>(isa, 37);
    CheckRequantize<int8_t>(isa, 5);
  }
  EXPECT_GE(checked, 1);
}

// The byte table holds RequantizeElement's 256 results, and the lookup loops
// (VBMI's 64 lanes where the CPU has it, the portable loop) read it right for
// every byte at lengths with tails.
TEST(QLinearConcatCpu, TableLookupEqualsTheScalarElement) {
  for (DataType type : {DataType::kU8, DataType::kI8}) {
    const RequantizeScales s{0.013f, type == DataType::kU8 ? 100.0f : -7.0f, 0.0131f, 90};
    uint8_t table[256];
    RequantizeTable(s, type, table);
    for (int b = 0; b < 256; ++b) {
      const int want = type == DataType::kI8
                           ? static_cast<uint8_t>(RequantizeElement<int8_t>(s, static_cast<int8_t>(b)))
                           : RequantizeElement<uint8_t>(s, static_cast<uint8_t>(b));
      ASSERT_EQ(table[b], want) << b;
    }
    for (bool vbmi : {false, true}) {
      if (vbmi && !Avx512VbmiSupported()) continue;
      for (int64_t n : {int64_t{1}, int64_t{63}, int64_t{64}, int64_t{200}, int64_t{1000}}) {
        std::vector<uint8_t> x(static_cast<size_t>(n)), y(x.size(), 0);
        for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<uint8_t>(i * 37 + 11);
        LookupBytes(vbmi, table, x.data(), y.data(), n);
        for (size_t i = 0; i < x.size(); ++i)
          ASSERT_EQ(y[i], table[x[i]]) << (vbmi ? "vbmi" : "portable") << " n " << n << " i " << i;
      }
    }
  }
}

}  // namespace
}  // namespace braid
