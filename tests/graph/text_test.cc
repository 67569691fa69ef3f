// FixedDigits (graph/text.h): printf's "%.*f", one rule for every report.
#include "graph/text.h"

#include <gtest/gtest.h>

#include <limits>

namespace braid {
namespace {

TEST(FixedDigits, RoundsToTheGivenDigits) {
  EXPECT_EQ(FixedDigits(3.14159, 2), "3.14");
  EXPECT_EQ(FixedDigits(2.71828, 3), "2.718");
  EXPECT_EQ(FixedDigits(1234.5, 1), "1234.5");
  EXPECT_EQ(FixedDigits(0.125, 2), "0.12");  // ties to even, as printf
  EXPECT_EQ(FixedDigits(-0.4, 0), "-0");
  EXPECT_EQ(FixedDigits(7.0, 3), "7.000");
  EXPECT_EQ(FixedDigits(std::numeric_limits<double>::infinity(), 2), "inf");
  EXPECT_EQ(FixedDigits(1e30, 0), "1000000000000000019884624838656");
  // Longer than any fixed buffer: whole, not cut.
  const std::string big = FixedDigits(1e100, 2);
  EXPECT_EQ(big.size(), 101u + 3u);
  EXPECT_EQ(big.substr(0, 5), "10000");
  EXPECT_EQ(big.substr(big.size() - 3), ".00");
}

}  // namespace
}  // namespace braid
