#include "common/splitmix64.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace stoker::common {
namespace {

// Checkers recompute input words from the seed, and files and benchmark
// figures name seeds, so the words must never change: these are the first
// outputs of the reference splitmix64 generator seeded with 0, whose state
// steps by the gamma before each output.
TEST(Splitmix64, GivesTheReferenceWords) {
  EXPECT_EQ(splitmix64(0), 0xe220a8397b1dcdafull);
  EXPECT_EQ(splitmix64(kSplitmix64Gamma), 0x6e789e6aa1b965f4ull);
  EXPECT_EQ(splitmix64(2 * kSplitmix64Gamma), 0x06c45d188009454full);
}

// Callers that add their own step (the hpoly stream keys) use the mixing
// step alone; together with the gamma it is splitmix64.
TEST(Splitmix64, IsTheMixOfTheInputPlusTheGamma) {
  for (std::uint64_t v : {0ull, 1ull, 0xffffffffffffffffull, 0x123456789abcdef0ull})
    EXPECT_EQ(splitmix64(v), splitmix64_mix(v + kSplitmix64Gamma)) << v;
  EXPECT_EQ(splitmix64_mix(0), 0u);
}

}  // namespace
}  // namespace stoker::common
