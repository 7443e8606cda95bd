// Helpers shared by the Fq2 suites: hex <-> Fq2, seeded random Fq2 elements.
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include "g1_test_util.hpp"
#include "kernels/fq2.cuh"

namespace stoker::kernels::test {

inline Fq2 fq2_from_hex(const std::string& c0, const std::string& c1) {
  return Fq2{fq_from_hex(c0), fq_from_hex(c1)};
}

inline Fq2 random_fq2(std::mt19937_64& rng) {
  const Fq c0 = random_fq(rng);
  return Fq2{c0, random_fq(rng)};
}

}  // namespace stoker::kernels::test
