// [k] P by plain double-and-add over k's 256 bits, written once for G1 and
// G2: the group's dbl and add_mixed (g1.cuh, g2.cuh) are found by argument-
// dependent lookup where scalar_mul instantiates it. For tests, checks and
// the prover's few single multiplications, not for speed: 255 doublings
// and a mixed addition per set bit, with no window and no endomorphism.
#pragma once

#include <cstdint>

#include "common/host_device.hpp"

namespace stoker::kernels::detail {

// k: four little-endian 64-bit limbs, any value (multiples of the group's
// order included).
template <typename Xyzz, typename Affine>
STOKER_HD Xyzz double_and_add(const Affine& p, const std::uint64_t k[4]) {
  Xyzz acc = Xyzz::infinity();
  for (int i = 3; i >= 0; --i)
    for (int b = 63; b >= 0; --b) {
      acc = dbl(acc);
      if ((k[i] >> b) & 1) add_mixed(acc, p);
    }
  return acc;
}

}  // namespace stoker::kernels::detail
