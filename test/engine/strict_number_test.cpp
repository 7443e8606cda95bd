// Strict reading of numbers, shared by Config and the stoker binary.
#include "engine/strict_number.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

namespace stoker::engine {
namespace {

TEST(StrictNumber, TakesOnlyAWholeDecimalValue) {
  EXPECT_EQ(parse_integer<int>("42"), 42);
  EXPECT_EQ(parse_integer<int>("-7"), -7);
  for (const char* bad : {"", "abc", "12x", " 12", "12 ", "+12", "0x10", "1e3", "1.5"})
    EXPECT_EQ(parse_integer<int>(bad), std::nullopt) << "'" << bad << "'";
}

// A value the variable cannot hold is refused, not wrapped or saturated.
TEST(StrictNumber, RefusesWhatTheTypeCannotHold) {
  EXPECT_EQ(parse_integer<int>("2147483647"), 2147483647);
  EXPECT_EQ(parse_integer<int>("3000000000"), std::nullopt);
  EXPECT_EQ(parse_integer<std::size_t>("-1"), std::nullopt);
  EXPECT_EQ(parse_integer<std::uint64_t>("18446744073709551615"),
            std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(parse_integer<std::uint64_t>("18446744073709551616"), std::nullopt);
}

TEST(StrictNumber, KeepsToTheOptionsRange) {
  EXPECT_EQ(parse_integer("1", 1, 1000), 1);
  EXPECT_EQ(parse_integer("1000", 1, 1000), 1000);
  EXPECT_EQ(parse_integer("0", 1, 1000), std::nullopt);
  EXPECT_EQ(parse_integer("1001", 1, 1000), std::nullopt);
}

TEST(StrictNumber, ProblemNamesTheOptionTheValueAndTheRange) {
  EXPECT_EQ(integer_problem("--reps", "x", 1, 1000), "--reps: 'x' is not an integer in 1..1000");
  EXPECT_EQ(real_problem("--seconds", "1s", 0.001, 60),
            "--seconds: '1s' is not a number in 0.001..60");
}

TEST(StrictNumber, RealsAreWholeFiniteOrAllowedInfinity) {
  EXPECT_EQ(parse_real("0.25", 0, 1), 0.25);
  EXPECT_EQ(parse_real("1e-3", 0, 1), 0.001);
  for (const char* bad : {"", "x", "0.5s", " 0.5", "nan", "-0.1", "1.5"})
    EXPECT_EQ(parse_real(bad, 0, 1), std::nullopt) << "'" << bad << "'";
  EXPECT_EQ(parse_real("inf", 0, 1e9), std::nullopt);
  EXPECT_EQ(parse_real("inf", 0, HUGE_VAL), HUGE_VAL);
}

}  // namespace
}  // namespace stoker::engine
