// Helpers shared by the Fq6, Fq12 and pairing suites: seeded random
// elements, the exponents q and (q - 1) / d as limbs, and an element of the
// cyclotomic subgroup.
#pragma once

#include <cstdint>
#include <random>

#include "g2_test_util.hpp"
#include "kernels/fq12.cuh"

namespace stoker::kernels::test {

inline Fq6 random_fq6(std::mt19937_64& rng) {
  const Fq2 c0 = random_fq2(rng), c1 = random_fq2(rng);
  return Fq6{c0, c1, random_fq2(rng)};
}

inline Fq12 random_fq12(std::mt19937_64& rng) {
  const Fq6 c0 = random_fq6(rng);
  return Fq12{c0, random_fq6(rng)};
}

// q as little-endian limbs.
inline const std::uint64_t* q_limbs() {
  static const std::uint64_t q[6] = {fq_detail::kQ0, fq_detail::kQ1, fq_detail::kQ2,
                                     fq_detail::kQ3, fq_detail::kQ4, fq_detail::kQ5};
  return q;
}

// (q - 1) / d for d dividing q - 1, by long division.
inline void q_minus_1_over(std::uint64_t d, std::uint64_t out[6]) {
  const std::uint64_t* q = q_limbs();
  unsigned __int128 rem = 0;
  for (int i = 5; i >= 0; --i) {
    const unsigned __int128 cur = (rem << 64) | (i == 0 ? q[0] - 1 : q[i]);
    out[i] = static_cast<std::uint64_t>(cur / d);
    rem = cur % d;
  }
}

// f^((q^6 - 1)(q^2 + 1)): an element of the cyclotomic subgroup.
inline Fq12 cyclotomic(const Fq12& f) {
  const Fq12 t = f.conjugate() * f.inverse();
  return t.frobenius().frobenius() * t;
}

}  // namespace stoker::kernels::test
