// The timers take the sparse-kernel settings as options (the library reads no
// environment): CpuKernelOptionsOf maps them as the CLI's environment did.
#include <gtest/gtest.h>

#include "kernels/cpu/sparse/crossover.h"
#include "profiling/op_timer.h"

namespace braid::profiling {
namespace {

TEST(CpuKernelOptionsOfTest, DefaultsAreTheKernelsDefaults) {
  StatusOr<CpuKernelOptions> k = CpuKernelOptionsOf(OpTimerOptions{});
  ASSERT_TRUE(k.ok()) << k.status().ToString();
  EXPECT_TRUE(k->sparse);
  EXPECT_EQ(SparseCrossoverToString(k->sparse_options.crossover),
            SparseCrossoverToString(SparseCrossover()));
}

TEST(CpuKernelOptionsOfTest, SparseOffAndACrossoverOverOnlyTheClassesNamed) {
  OpTimerOptions o;
  o.sparse_kernels = false;
  o.sparse_crossover = "conv1x1=0.25";
  StatusOr<CpuKernelOptions> k = CpuKernelOptionsOf(o);
  ASSERT_TRUE(k.ok()) << k.status().ToString();
  EXPECT_FALSE(k->sparse);
  EXPECT_DOUBLE_EQ(k->sparse_options.crossover.conv1x1, 0.25);
  EXPECT_DOUBLE_EQ(k->sparse_options.crossover.conv3x3, SparseCrossover().conv3x3);
}

TEST(CpuKernelOptionsOfTest, AMalformedCrossoverIsInvalidArgument) {
  OpTimerOptions o;
  o.sparse_crossover = "conv1x1=2";
  StatusOr<CpuKernelOptions> k = CpuKernelOptionsOf(o);
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace braid::profiling
