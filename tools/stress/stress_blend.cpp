#include "tools/stress/stress_blend.hpp"

#include "common/splitmix64.hpp"
#include "engine/workloads/mix_words.hpp"

namespace stoker::tools::stress {

using common::splitmix64;
using engine::workloads::detail::mix_words;

namespace {

// Stands in for input b when a partition has one input.
constexpr std::uint32_t kNoSecondInput = 0x5bd1e995u;

}  // namespace

std::uint32_t blend_input_word(std::uint64_t job, std::size_t partition, std::size_t input,
                               std::size_t index) {
  return static_cast<std::uint32_t>(splitmix64(job * 0x100000001b3ull ^
                                               (std::uint64_t{partition} << 40) ^
                                               (std::uint64_t{input} << 56) ^ index));
}

void blend_cpu(const std::uint32_t* a, const std::uint32_t* b, std::uint32_t* out,
               std::size_t words, std::uint32_t salt, int rounds) {
  for (std::size_t i = 0; i < words; ++i)
    out[i] =
        mix_words(a[i], b ? b[i] : kNoSecondInput, static_cast<std::uint32_t>(i), salt, rounds);
}

}  // namespace stoker::tools::stress
