// The synthetic workload's producer: every word it writes is the word the
// verifier computes on its own, whatever the share's first word, length or
// alignment (the AVX-512 lanes, their aligned head and their tail included).
#include "engine/workloads/synthetic.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

namespace stoker::engine::workloads {
namespace {

TEST(SyntheticFill, EveryWordMatchesTheVerifiersAtAnyOffsetLengthAndAlignment) {
  constexpr std::size_t kWords = 4096;
  std::vector<std::uint32_t> storage(kWords + 64);
  for (std::size_t shift : {0u, 1u, 2u, 3u, 15u, 16u}) {  // 4-byte steps off a 64-byte line
    auto* base = reinterpret_cast<std::uint32_t*>(
                     (reinterpret_cast<std::uintptr_t>(storage.data()) + 63) / 64 * 64) +
                 shift;
    for (std::size_t first : {0u, 1u, 2u, 7u, 1000u, 12345u})
      for (std::size_t count : {0u, 1u, 2u, 3u, 15u, 16u, 17u, 33u, 1000u, 4001u}) {
        std::span<std::uint32_t> out(base, count);
        for (auto& w : out) w = 0xdeadbeef;
        synthetic_fill(9, 3, out, first);
        for (std::size_t i = 0; i < count; ++i)
          ASSERT_EQ(out[i], synthetic_input_word(9, 3, first + i))
              << "word " << i << " of " << count << " from " << first << ", shift " << shift;
      }
  }
}

TEST(SyntheticFill, PartitionsAndSeedsDrawDifferentWords) {
  std::vector<std::uint32_t> a(256), b(256), c(256);
  synthetic_fill(1, 0, a);
  synthetic_fill(1, 1, b);
  synthetic_fill(2, 0, c);
  EXPECT_NE(a, b);
  EXPECT_NE(a, c);
}

}  // namespace
}  // namespace stoker::engine::workloads
