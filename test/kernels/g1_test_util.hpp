// Helpers shared by the Fq, G1 and MSM suites: hex <-> Fq, seeded random
// field elements, scalars and points.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernels/field.cuh"
#include "kernels/fq.cuh"
#include "kernels/g1.cuh"

namespace stoker::kernels::test {

// Big-endian hex (up to 96 digits) to Fq; the value must be < q.
inline Fq fq_from_hex(std::string hex) {
  if (hex.rfind("0x", 0) == 0) hex = hex.substr(2);
  hex = std::string(96 - hex.size(), '0') + hex;
  std::uint64_t v[6];
  for (int i = 0; i < 6; ++i) v[5 - i] = std::stoull(hex.substr(16 * i, 16), nullptr, 16);
  return Fq::from_canonical(v);
}

inline std::string fq_to_hex(const Fq& x) {
  std::uint64_t v[6];
  x.to_canonical(v);
  static const char* digits = "0123456789abcdef";
  std::string s = "0x";
  for (int i = 5; i >= 0; --i)
    for (int b = 60; b >= 0; b -= 4) s += digits[(v[i] >> b) & 15];
  return s;
}

// Uniform over [0, q) by rejection.
inline Fq random_fq(std::mt19937_64& rng) {
  for (;;) {
    std::uint64_t v[6] = {rng(), rng(), rng(), rng(), rng(), rng() & 0x1fffffffffffffffull};
    if (Fq::is_canonical(v)) return Fq::from_canonical(v);
  }
}

// Affine forms with one inversion for all (Montgomery's trick): with
// z = ZZZ / ZZ, x = X (ZZ / ZZZ)^2 and y = Y / ZZZ, so only the ZZZs are
// inverted.
inline std::vector<G1Affine> batch_to_affine(const std::vector<G1Xyzz>& xs) {
  std::vector<Fq> prefix(xs.size());
  Fq acc = Fq::one();
  for (std::size_t i = 0; i < xs.size(); ++i) {
    prefix[i] = acc;
    if (!xs[i].is_infinity()) acc = acc * xs[i].zzz;
  }
  Fq inv = acc.inverse();
  std::vector<G1Affine> out(xs.size());
  for (std::size_t i = xs.size(); i-- > 0;) {
    if (xs[i].is_infinity()) {
      out[i] = G1Affine::infinity();
      continue;
    }
    const Fq zzz_inv = inv * prefix[i];
    inv = inv * xs[i].zzz;
    const Fq z_inv = xs[i].zz * zzz_inv;
    out[i] = G1Affine{xs[i].x * z_inv.sqr(), xs[i].y * zzz_inv};
  }
  return out;
}

// r, the order of G1 and G2 (Fr's modulus), as scalar_mul's limbs: [r] P
// of a curve point is its part in the cofactor's torsion.
inline constexpr std::uint64_t kGroupOrder[4] = {fr_detail::kP0, fr_detail::kP1, fr_detail::kP2,
                                                 fr_detail::kP3};
// h / 3 for G1's cofactor h = 3 * 11^2 * 10177^2 * 859267^2 * 52437899^2:
// [h / 3] of a torsion point is a point of order 3 or infinity.
inline constexpr std::uint64_t kG1CofactorOver3[4] = {0x2eaae38e55558e39ull,
                                                      0x13242eaac71ca072ull, 0, 0};

// a + b in affine form (any points of E, infinity and a = +-b too).
inline G1Affine plus(const G1Affine& a, const G1Affine& b) {
  G1Xyzz s = to_xyzz(a);
  add_mixed(s, b);
  return to_affine(s);
}

// The first point of E (by x) outside G1: the cofactor is large, so such
// a point is almost never in G1 (checked).
inline G1Affine g1_point_outside_the_group() {
  for (std::uint64_t x = 1;; ++x) {
    const Fq fx = Fq::from_u64(x);
    Fq y;
    if (!(fx.sqr() * fx + Fq::from_u64(4)).sqrt(y)) continue;
    if (const G1Affine p{fx, y}; !in_subgroup(p)) return p;
  }
}

// A point of order 3 on E: [r h / 3] of the first curve point (by x) whose
// torsion has a 3-part. Outside G1, and the hardest case of the batched
// group checks: three of them in one sum cancel.
inline G1Affine g1_point_of_order_3() {
  for (std::uint64_t x = 1;; ++x) {
    const Fq fx = Fq::from_u64(x);
    Fq y;
    if (!(fx.sqr() * fx + Fq::from_u64(4)).sqrt(y)) continue;
    const G1Affine t = to_affine(scalar_mul(G1Affine{fx, y}, kGroupOrder));
    const G1Affine t3 = to_affine(scalar_mul(t, kG1CofactorOver3));
    if (!t3.is_infinity()) return t3;
  }
}

// [k] G for a random 64-bit k: points of G1 with known logarithms, cheap.
inline G1Affine random_g1(std::mt19937_64& rng) {
  const std::uint64_t k[4] = {rng() | 1, 0, 0, 0};
  return to_affine(scalar_mul(G1Affine::generator(), k));
}

inline std::vector<G1Affine> random_g1_vector(std::size_t n, std::uint64_t seed) {
  // P_i = R_(i mod 16) + S_(i / 16): distinct in practice, one addition each.
  std::mt19937_64 rng(seed);
  std::vector<G1Affine> rows(16), cols((n + 15) / 16);
  for (auto& p : rows) p = random_g1(rng);
  for (auto& p : cols) p = random_g1(rng);
  std::vector<G1Xyzz> sums(n);
  for (std::size_t i = 0; i < n; ++i) {
    sums[i] = to_xyzz(rows[i % 16]);
    add_mixed(sums[i], cols[i / 16]);
  }
  return batch_to_affine(sums);
}

}  // namespace stoker::kernels::test
