#include "tools/bench/bench_stats.hpp"

#include <gtest/gtest.h>

namespace stoker::tools {
namespace {

TEST(BenchStats, MedianOfOddAndEvenCountsAndNone) {
  EXPECT_EQ(median({3, 1, 2}), 2);
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(median({}), 0);
}

// The case the per-repetition ratio is for: both variants slow down
// together in the second repetition, and the third caught only one of them
// in a slow moment. Two of the three repetitions say 2x, and so does their
// median; the ratio of the two medians says 3.8x.
TEST(BenchStats, RatiosPerRepFollowTheRunsMadeTogether) {
  const std::vector<double> slow = {200, 400, 420}, fast = {100, 200, 105};
  const Spread r = ratios_per_rep(slow, fast);
  EXPECT_DOUBLE_EQ(r.median, 2.0);
  EXPECT_DOUBLE_EQ(r.min, 2.0);
  EXPECT_DOUBLE_EQ(r.max, 4.0);
  EXPECT_NEAR(median(slow) / median(fast), 3.81, 0.01);

  const Spread s = ratios_per_rep({300, 100, 200}, {100, 100, 100});
  EXPECT_DOUBLE_EQ(s.median, 2.0);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 3.0);
}

TEST(BenchStats, RatiosLeaveOutRepsEitherSideLacks) {
  // A variant not run has no times; a zero time is not a measurement.
  const Spread none = ratios_per_rep({100, 200}, {});
  EXPECT_EQ(none.median, 0);
  EXPECT_EQ(none.min, 0);
  EXPECT_EQ(none.max, 0);
  const Spread some = ratios_per_rep({100, 200, 300}, {50, 0});
  EXPECT_DOUBLE_EQ(some.median, 2.0);
  EXPECT_DOUBLE_EQ(some.max, 2.0);
}

}  // namespace
}  // namespace stoker::tools
