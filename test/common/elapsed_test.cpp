#include "common/elapsed.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace stoker::common {
namespace {

using std::chrono::steady_clock;

// Reports add these figures up and print them beside bounds in their own
// unit, so the unit is part of the promise.
TEST(MsSince, GivesTheIntervalInMilliseconds) {
  const steady_clock::time_point a{};
  EXPECT_DOUBLE_EQ(ms_since(a, a + std::chrono::microseconds(2500)), 2.5);
  EXPECT_DOUBLE_EQ(ms_since(a, a), 0.0);
}

TEST(SecondsSince, CountsUpToNow) {
  const auto t0 = steady_clock::now() - std::chrono::milliseconds(1500);
  const double s = seconds_since(t0);
  EXPECT_GE(s, 1.5);
  EXPECT_LT(s, 60.0);
  EXPECT_GE(ms_since(t0), 1500.0);
}

}  // namespace
}  // namespace stoker::common
