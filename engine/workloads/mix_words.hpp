// mix_words: the hash that the synthetic workload's kernel and the stress tool's blend jobs
// run over their data, compiled for host and device.
#pragma once

#include <cstdint>

#include "common/host_device.hpp"

namespace stoker::engine::workloads::detail {

STOKER_HD std::uint32_t mix_words(std::uint32_t a, std::uint32_t b, std::uint32_t c,
                                  std::uint32_t d, int rounds) {
  std::uint32_t x = a ^ 0x9e3779b9u, y = b, z = c, w = d;
  for (int r = 0; r < rounds; ++r) {
    x = x * 0x85ebca6bu + y;
    y = (y ^ (x >> 13)) * 0xc2b2ae35u;
    z = z + (x ^ w);
    w = (w << 7 | w >> 25) ^ z;
  }
  return x ^ y ^ z ^ w;
}

}  // namespace stoker::engine::workloads::detail
