// Helpers shared by the Fq2, G2, encoding and pairing suites: hex <-> Fq2,
// seeded random Fq2 elements, points of G2 and points of E' outside G2.
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include "g1_test_util.hpp"
#include "kernels/fq2.cuh"
#include "kernels/g2.cuh"

namespace stoker::kernels::test {

inline Fq2 fq2_from_hex(const std::string& c0, const std::string& c1) {
  return Fq2{fq_from_hex(c0), fq_from_hex(c1)};
}

inline Fq2 random_fq2(std::mt19937_64& rng) {
  const Fq c0 = random_fq(rng);
  return Fq2{c0, random_fq(rng)};
}

// [k] G2 for a random 64-bit k: points of G2 with known logarithms.
inline G2Affine random_g2(std::mt19937_64& rng) {
  const std::uint64_t k[4] = {rng() | 1, 0, 0, 0};
  return to_affine(scalar_mul(G2Affine::generator(), k));
}

// a + b in affine form (any points of E', infinity and a = +-b too).
inline G2Affine plus(const G2Affine& a, const G2Affine& b) {
  G2Xyzz s = to_xyzz(a);
  add_mixed(s, b);
  return to_affine(s);
}

// A point of E' from a random x by solving for y, without clearing the
// cofactor: outside G2 but for a chance of about 2^-508.
inline G2Affine random_e2_point(std::mt19937_64& rng) {
  for (;;) {
    const Fq2 x = random_fq2(rng);
    Fq2 y;
    if ((x.sqr() * x + g2_detail::curve_b()).sqrt(y)) return G2Affine{x, y};
  }
}

}  // namespace stoker::kernels::test
