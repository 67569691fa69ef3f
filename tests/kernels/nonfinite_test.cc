// AnyNonFinite (kernels/cpu/nonfinite.h), the NaN / Inf check in front of
// oneDNN conv's fast post-ops and its max pooling: every supported
// instruction set finds one NaN / +-Inf at any position (vector body and
// scalar tail), and finds none among finite extremes and denormals.
#include "kernels/cpu/nonfinite.h"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

namespace braid {
namespace {

TEST(AnyNonFinite, FindsEveryNanAndInfinityAtEveryPosition) {
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(),
                            -std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::signaling_NaN(),
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity()};
  for (SimdIsa isa : {SimdIsa::kPortable, SimdIsa::kAvx2, SimdIsa::kAvx512}) {
    if (!SimdIsaSupported(isa)) continue;
    for (int64_t n : {1, 7, 64, 100, 131}) {
      std::vector<float> x(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i)
        x[static_cast<size_t>(i)] = i % 3 == 0   ? std::numeric_limits<float>::max()
                                    : i % 3 == 1 ? -std::numeric_limits<float>::denorm_min()
                                                 : -1e-40f;
      EXPECT_FALSE(AnyNonFinite(isa, x.data(), n)) << SimdIsaName(isa) << " n " << n;
      for (int64_t i = 0; i < n; ++i) {
        for (float v : specials) {
          const float keep = x[static_cast<size_t>(i)];
          x[static_cast<size_t>(i)] = v;
          EXPECT_TRUE(AnyNonFinite(isa, x.data(), n))
              << SimdIsaName(isa) << " n " << n << " at " << i << " value " << v;
          x[static_cast<size_t>(i)] = keep;
        }
      }
    }
  }
}

TEST(AnyNonFinite, SplitsAcrossThreads) {
  std::vector<float> x(1 << 20, 1.0f);
  EXPECT_FALSE(AnyNonFinite(BestSimdIsa(), x.data(), static_cast<int64_t>(x.size()), 4));
  x[x.size() - 5] = -std::numeric_limits<float>::infinity();
  EXPECT_TRUE(AnyNonFinite(BestSimdIsa(), x.data(), static_cast<int64_t>(x.size()), 4));
  EXPECT_FALSE(AnyNonFinite(BestSimdIsa(), x.data(), 0, 4));
}

}  // namespace
}  // namespace braid
