// QuantizeLinear's vectorised loop (kernels/cpu/quantize_cpu.h) against the
// scalar loop of kernels/params/quantize.h, bit for bit, on every instruction
// set this CPU runs: random values, exact ties (half to even), NaN, +-Inf,
// values past the range, denormals; per tensor and per axis; u8 and i8;
// lengths that leave vector tails.
#include "kernels/cpu/quantize_cpu.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

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

}  // namespace
}  // namespace braid
