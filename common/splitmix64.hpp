// splitmix64: the output function of the SplitMix generator (Steele, Lea and
// Flood, OOPSLA 2014) with the usual 64-bit constants, a bijection of 64-bit
// words in which every input bit reaches every output bit, two
// multiplications a word. The workloads, the stress tool and the
// MSM test inputs draw their pseudo-random data from it by counter
// (splitmix64(key ^ i)): random access, the same words on every platform
// and on the host and the device alike, which is what lets a checker
// recompute any input word. Not for anything that must be unpredictable.
//
// splitmix64(v) is splitmix64_mix(v + kSplitmix64Gamma); splitmix64_mix is
// the mixing step alone, for callers that add their own step. The constants
// are public so that vector versions (AVX-512 lanes) compute the same words.
#pragma once

#include <cstdint>

#include "common/host_device.hpp"

namespace stoker::common {

// 2^64 divided by the golden ratio, rounded to odd: the generator's step.
inline constexpr std::uint64_t kSplitmix64Gamma = 0x9e3779b97f4a7c15ull;
inline constexpr std::uint64_t kSplitmix64Mul1 = 0xbf58476d1ce4e5b9ull;
inline constexpr std::uint64_t kSplitmix64Mul2 = 0x94d049bb133111ebull;

STOKER_HD constexpr std::uint64_t splitmix64_mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * kSplitmix64Mul1;
  z = (z ^ (z >> 27)) * kSplitmix64Mul2;
  return z ^ (z >> 31);
}

STOKER_HD constexpr std::uint64_t splitmix64(std::uint64_t v) {
  return splitmix64_mix(v + kSplitmix64Gamma);
}

}  // namespace stoker::common
