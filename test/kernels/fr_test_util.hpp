// Helpers shared by the kernels suites: hex <-> Fr and seeded random elements.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernels/field.cuh"

namespace stoker::kernels::test {

// Big-endian hex (as written in the issue) to Fr; the value must be < r.
inline Fr fr_from_hex(std::string hex) {
  if (hex.rfind("0x", 0) == 0) hex = hex.substr(2);
  hex = std::string(64 - hex.size(), '0') + hex;
  std::uint64_t v[4];
  for (int i = 0; i < 4; ++i) v[3 - i] = std::stoull(hex.substr(16 * i, 16), nullptr, 16);
  return Fr::from_canonical(v);
}

inline std::string fr_to_hex(const Fr& x) {
  std::uint64_t v[4];
  x.to_canonical(v);
  static const char* digits = "0123456789abcdef";
  std::string s = "0x";
  for (int i = 3; i >= 0; --i)
    for (int b = 60; b >= 0; b -= 4) s += digits[(v[i] >> b) & 15];
  return s;
}

// Uniform over [0, r) by rejection.
inline Fr random_fr(std::mt19937_64& rng) {
  for (;;) {
    std::uint64_t v[4] = {rng(), rng(), rng(), rng() & 0x7fffffffffffffffull};
    if (Fr::is_canonical(v)) return Fr::from_canonical(v);
  }
}

// Montgomery-form words (not field values) at the edges of [0, r): where a
// product's carries and its final subtraction are most likely to go wrong.
inline std::vector<Fr> fr_edge_values() {
  namespace fr = fr_detail;
  std::vector<Fr> edges = {Fr::zero(),
                           Fr::one(),
                           -Fr::one(),
                           Fr{{1, 0, 0, 0}},
                           Fr{{fr::kP0 - 1, fr::kP1, fr::kP2, fr::kP3}},
                           Fr{{fr::kP0 - 2, fr::kP1, fr::kP2, fr::kP3}},
                           Fr{{0, fr::kP1, fr::kP2, fr::kP3}},
                           Fr{{~0ull, fr::kP1 - 1, fr::kP2, fr::kP3}},
                           Fr{{~0ull, ~0ull, ~0ull, fr::kP3 - 1}},
                           Fr{{~0ull, ~0ull, ~0ull, 0}},
                           Fr{{0xffffffffull, 0, 0xffffffff00000000ull, 0x7000000000000000ull}}};
  for (int bit = 0; bit < 255; ++bit) {  // powers of two below r
    Fr x = Fr::zero();
    x.l[bit / 64] = std::uint64_t{1} << (bit % 64);
    if (Fr::is_canonical(x.l)) edges.push_back(x);
  }
  return edges;
}

inline std::vector<Fr> random_vector(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Fr> v(n);
  for (auto& x : v) x = random_fr(rng);
  return v;
}

}  // namespace stoker::kernels::test
