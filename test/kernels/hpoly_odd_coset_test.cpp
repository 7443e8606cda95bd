// snarkjs's roots of unity and the odd-coset H scalars against their
// definitions: the roots snarkjs's files are built on (values from its
// ffjavascript tables), and h_i = P(omega5_2n^(2i+1)) evaluated directly
// from the Lagrange basis of snarkjs's domain.
#include "kernels/hpoly_odd_coset.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "test/kernels/fr_test_util.hpp"

namespace stoker::kernels {
namespace {

using test::fr_from_hex;
using test::random_fr;

TEST(SnarkjsRoots, AreTheFiveBasedRootsSnarkjsTabulates) {
  EXPECT_EQ(snarkjs_root_of_unity(4),
            fr_from_hex("0x4f2c596e753e4fcc6e92a9c460afca4a1ef4e672ebc1e1bb95df4b360411fe73"));
  EXPECT_EQ(snarkjs_root_of_unity(8),
            fr_from_hex("0x2e95da59a33dcbf232a732ae1a3b0aef752c84f3154125602cabadec2fe322b8"));
  EXPECT_EQ(snarkjs_root_of_unity(15),
            fr_from_hex("0x42c22911f5f07f43a22ba63dd6e7b1c839929d2e88fbbc57e6a354dda97eccd4"));
  EXPECT_EQ(snarkjs_root_of_unity(32),
            fr_from_hex("0x0212d79e5b416b6f0fd56dc8d168d6c0c4024ff270b3e0941b788f500b912f1f"));
  // They agree with the 7-based roots for n <= 4 and differ from n = 8 on.
  EXPECT_EQ(snarkjs_root_of_unity(2), Fr::root_of_unity(2));
  EXPECT_NE(snarkjs_root_of_unity(3), Fr::root_of_unity(3));
}

TEST(SnarkjsRoots, AreSevenBasedRootsRaisedToOneOddExponent) {
  const std::uint32_t e = snarkjs_root_exponent();
  EXPECT_EQ(e % 2, 1u);
  for (unsigned k = 0; k <= 32; ++k) {
    const std::uint64_t mask = k == 32 ? 0xffffffffull : (std::uint64_t{1} << k) - 1;
    EXPECT_EQ(Fr::root_of_unity(k).pow(e & mask), snarkjs_root_of_unity(k)) << "2^" << k;
  }
  EXPECT_EQ(snarkjs_point_to_ntt_index(0, 5), 0u);
  EXPECT_EQ(snarkjs_point_to_ntt_index(1, 5), e % 32);
}

TEST(SnarkjsRoots, StokersPointsMapBackToSnarkjssOnes) {
  for (const unsigned log_n : {0u, 1u, 5u, 20u, 32u}) {
    const SnarkjsToNttIndex to_ntt(log_n);
    const NttToSnarkjsIndex to_snarkjs(log_n);
    const std::size_t n = std::size_t{1} << log_n;
    for (const std::size_t i : {std::size_t{0}, std::size_t{1}, std::size_t{12345}, n - 1})
      EXPECT_EQ(to_snarkjs(to_ntt(i % n)), i % n) << "2^" << log_n << ", point " << i;
  }
}

// sum_c v[c] L_c(x) over snarkjs's domain, L_c(x) = w^c (x^n - 1) / (n (x - w^c)).
Fr interpolate_at(const std::vector<Fr>& v, unsigned log_n, const Fr& x) {
  const std::size_t n = v.size();
  const Fr w = snarkjs_root_of_unity(log_n);
  const Fr zx = x.pow(static_cast<std::uint64_t>(n)) - Fr::one();
  const Fr n_inv = Fr::from_u64(n).inverse();
  Fr sum = Fr::zero(), wc = Fr::one();
  for (std::size_t c = 0; c < n; ++c) {
    sum += v[c] * wc * zx * n_inv * (x - wc).inverse();
    wc *= w;
  }
  return sum;
}

TEST(HpolyOddCoset, EvaluatesABMinusCOnTheOddCosetOfTheDoubledDomain) {
  std::mt19937_64 rng(11);
  for (unsigned log_n : {0u, 1u, 3u, 5u}) {
    const std::size_t n = std::size_t{1} << log_n;
    std::vector<Fr> a(n), b(n), c(n), h(n);
    for (std::size_t i = 0; i < n; ++i) {
      a[i] = random_fr(rng);
      b[i] = random_fr(rng);
      c[i] = i % 3 ? a[i] * b[i] : random_fr(rng);  // some rows unsatisfied: P need not vanish
    }
    cpu::hpoly_odd_coset(h.data(), a.data(), b.data(), c.data(), log_n, 2);
    const Fr s = snarkjs_root_of_unity(log_n + 1);
    for (std::size_t i = 0; i < n; ++i) {
      const Fr x = s.pow(static_cast<std::uint64_t>(2 * i + 1));
      const Fr want =
          interpolate_at(a, log_n, x) * interpolate_at(b, log_n, x) - interpolate_at(c, log_n, x);
      ASSERT_EQ(h[i], want) << "n = " << n << ", i = " << i;
    }
  }
}

// In stoker's order the same scalars sit at e i mod n, inputs and outputs.
TEST(HpolyOddCoset, InNttOrderIsThePermutationOfSnarkjssOrder) {
  std::mt19937_64 rng(13);
  for (unsigned log_n : {0u, 1u, 4u, 9u}) {
    const std::size_t n = std::size_t{1} << log_n;
    std::vector<Fr> a(n), b(n), c(n), h(n), a7(n), b7(n), c7(n), h7(n);
    for (std::size_t i = 0; i < n; ++i) {
      a[i] = random_fr(rng);
      b[i] = random_fr(rng);
      c[i] = random_fr(rng);
      const std::size_t j = snarkjs_point_to_ntt_index(i, log_n);
      a7[j] = a[i];
      b7[j] = b[i];
      c7[j] = c[i];
    }
    cpu::hpoly_odd_coset(h.data(), a.data(), b.data(), c.data(), log_n, 2);
    cpu::hpoly_odd_coset_in_ntt_order(h7.data(), a7.data(), b7.data(), c7.data(), log_n, 2);
    for (std::size_t i = 0; i < n; ++i)
      ASSERT_EQ(h7[snarkjs_point_to_ntt_index(i, log_n)], h[i]) << "n = " << n << ", i = " << i;
  }
}

// What a zkey's H points rely on: for a satisfied system P vanishes on the
// domain and sum_i h_i L^(2n)_{2i+1}(tau) = P(tau) at any tau.
TEST(HpolyOddCoset, ScalarsOverTheOddLagrangeBasisGiveP) {
  std::mt19937_64 rng(12);
  const unsigned log_n = 4;
  const std::size_t n = std::size_t{1} << log_n;
  std::vector<Fr> a(n), b(n), c(n), h(n);
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = random_fr(rng);
    b[i] = random_fr(rng);
    c[i] = a[i] * b[i];
  }
  cpu::hpoly_odd_coset(h.data(), a.data(), b.data(), c.data(), log_n, 1);
  const Fr tau = random_fr(rng);
  const Fr p_tau =
      interpolate_at(a, log_n, tau) * interpolate_at(b, log_n, tau) - interpolate_at(c, log_n, tau);
  // L^(2n)_k(tau) on the 2n-th roots, k odd.
  std::vector<Fr> basis(2 * n, Fr::zero());
  for (std::size_t i = 0; i < n; ++i) basis[2 * i + 1] = Fr::one();
  Fr sum = Fr::zero();
  const Fr w2n = snarkjs_root_of_unity(log_n + 1);
  const Fr z = tau.pow(static_cast<std::uint64_t>(2 * n)) - Fr::one();
  const Fr inv2n = Fr::from_u64(2 * n).inverse();
  for (std::size_t i = 0; i < n; ++i) {
    const Fr wk = w2n.pow(static_cast<std::uint64_t>(2 * i + 1));
    sum += h[i] * wk * z * inv2n * (tau - wk).inverse();
  }
  EXPECT_EQ(sum, p_tau);
}

}  // namespace
}  // namespace stoker::kernels
