// The CPU pairing: bilinearity, the point at infinity on either side,
// non-degeneracy, values in GT, products (a Groth16-shaped check that holds
// and fails when one point changes), the shared Miller loop against separate
// ones, and the final exponentiation's chain against the plain power.
// (bls_vectors_test compares e(G1, G2) with @noble/curves.)
#include "kernels/pairing.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "fq12_test_util.hpp"
#include "fr_test_util.hpp"
#include "kernels/field.cuh"

namespace stoker::kernels {
namespace {

const std::uint64_t kR[4] = {0xffffffff00000001ull, 0x53bda402fffe5bfeull, 0x3339d80809a1d805ull,
                             0x73eda753299d7d48ull};
// 3 (q^4 - q^2 + 1) / r, the hard part's exponent (Python integers).
const std::uint64_t kHardExponent[20] = {
    0xaf444bdcaaab2f6bull, 0xefcb3800a61a66d5ull, 0xb116bba59a18123aull, 0x554e727d129be6a3ull,
    0x8a65dbc1cc35fe5aull, 0x6574220c23e5b6ccull, 0x8c72178bc76a791cull, 0xb415c7da454d4863ull,
    0x37d47f639b68a630ull, 0x6a6a2b0ab1c47526ull, 0x6c9ae9625394f594ull, 0x6163cbf00bf566e4ull,
    0x877c5e22f2639411ull, 0xb0f5836ba82b62deull, 0xe3ae662e47a24ea0ull, 0x8d69012b6d183f47ull,
    0xbcf13296f7a83fceull, 0x7b69b9acc2cc45eaull, 0x4237aa494c159cdcull, 0x002e3941b8817705ull};

struct Scalar {
  Fr value;
  std::uint64_t limbs[4];
};

Scalar scalar(const Fr& v) {
  Scalar s{v, {}};
  v.to_canonical(s.limbs);
  return s;
}

G1Affine g1_times(const Scalar& k) {
  return to_affine(scalar_mul(G1Affine::generator(), k.limbs));
}
G2Affine g2_times(const Scalar& k) {
  return to_affine(scalar_mul(G2Affine::generator(), k.limbs));
}

TEST(Pairing, IsBilinear) {
  std::mt19937_64 rng(91);
  const Fq12 base = cpu::pairing(G1Affine::generator(), G2Affine::generator());
  for (int i = 0; i < 2; ++i) {
    const Scalar a = scalar(test::random_fr(rng)), b = scalar(test::random_fr(rng));
    const Scalar ab = scalar(a.value * b.value);
    const G1Affine ap = g1_times(a);
    const G2Affine bq = g2_times(b);
    const Fq12 expected = base.pow(ab.limbs, 4);
    EXPECT_EQ(cpu::pairing(ap, bq), expected);
    // Moving the scalar across: e(abP, Q) = e(P, abQ) = e(aP, bQ).
    EXPECT_EQ(cpu::pairing(g1_times(ab), G2Affine::generator()), expected);
    EXPECT_EQ(cpu::pairing(G1Affine::generator(), g2_times(ab)), expected);
  }
  // Additive in each argument: e(P1 + P2, Q) = e(P1, Q) e(P2, Q).
  const G1Affine p1 = test::random_g1(rng), p2 = test::random_g1(rng);
  const G2Affine q = test::random_g2(rng);
  G1Xyzz sum = to_xyzz(p1);
  add_mixed(sum, p2);
  EXPECT_EQ(cpu::pairing(to_affine(sum), q), cpu::pairing(p1, q) * cpu::pairing(p2, q));
}

TEST(Pairing, InfinityOnEitherSideGivesOne) {
  std::mt19937_64 rng(92);
  const G1Affine p = test::random_g1(rng);
  const G2Affine q = test::random_g2(rng);
  EXPECT_TRUE(cpu::pairing(p, G2Affine::infinity()).is_one());
  EXPECT_TRUE(cpu::pairing(G1Affine::infinity(), q).is_one());
  EXPECT_TRUE(cpu::pairing(G1Affine::infinity(), G2Affine::infinity()).is_one());
  EXPECT_TRUE(cpu::pairing_product_is_one({}));
}

TEST(Pairing, IsNonDegenerateWithValuesOfOrderR) {
  const Fq12 e = cpu::pairing(G1Affine::generator(), G2Affine::generator());
  EXPECT_FALSE(e.is_one());
  EXPECT_TRUE(e.pow(kR, 4).is_one());
  EXPECT_TRUE((e * e.conjugate()).is_one());  // in the cyclotomic subgroup
}

TEST(Pairing, ProductOfAPairingAndItsNegationIsOne) {
  std::mt19937_64 rng(93);
  const G1Affine p = test::random_g1(rng);
  const G2Affine q = test::random_g2(rng);
  const PairingTerm cancel[2] = {{neg(p), q}, {p, q}};
  EXPECT_TRUE(cpu::pairing_product_is_one(cancel));
  const PairingTerm cancel_g2[2] = {{p, neg(q)}, {p, q}};
  EXPECT_TRUE(cpu::pairing_product_is_one(cancel_g2));
  const PairingTerm no_cancel[2] = {{p, q}, {p, q}};
  EXPECT_FALSE(cpu::pairing_product_is_one(no_cancel));
  const PairingTerm single[1] = {{p, q}};
  EXPECT_FALSE(cpu::pairing_product_is_one(single));
}

TEST(Pairing, Groth16ShapedCheckHoldsAndFailsOnAChangedPoint) {
  // e(A, B) = e(alpha, beta) e(IC, gamma) e(C, delta) with the logarithms
  // chosen so that ab = alpha beta + ic gamma + c delta.
  std::mt19937_64 rng(94);
  const Fr a = test::random_fr(rng), b = test::random_fr(rng), alpha = test::random_fr(rng),
           beta = test::random_fr(rng), ic = test::random_fr(rng), gamma = test::random_fr(rng),
           delta = test::random_fr(rng);
  const Fr c = (a * b - alpha * beta - ic * gamma) * delta.inverse();
  std::vector<PairingTerm> terms = {
      {neg(g1_times(scalar(a))), g2_times(scalar(b))},
      {g1_times(scalar(alpha)), g2_times(scalar(beta))},
      {g1_times(scalar(ic)), g2_times(scalar(gamma))},
      {g1_times(scalar(c)), g2_times(scalar(delta))},
  };
  EXPECT_TRUE(cpu::pairing_product_is_one(terms));
  for (std::size_t i = 0; i < terms.size(); ++i) {
    std::vector<PairingTerm> changed = terms;
    changed[i].p = neg(changed[i].p);
    EXPECT_FALSE(cpu::pairing_product_is_one(changed)) << "term " << i;
  }
  // A term with infinity contributes 1: appending one changes nothing.
  terms.push_back({G1Affine::infinity(), G2Affine::generator()});
  EXPECT_TRUE(cpu::pairing_product_is_one(terms));
}

TEST(Pairing, SharedMillerLoopIsTheProductOfSeparateOnes) {
  std::mt19937_64 rng(95);
  const PairingTerm t[3] = {{test::random_g1(rng), test::random_g2(rng)},
                            {test::random_g1(rng), test::random_g2(rng)},
                            {G1Affine::generator(), G2Affine::infinity()}};
  const Fq12 separate = cpu::miller_loop({&t[0], 1}) * cpu::miller_loop({&t[1], 1});
  EXPECT_EQ(cpu::miller_loop(t), separate);
  EXPECT_TRUE(cpu::miller_loop({&t[2], 1}).is_one());
}

TEST(Pairing, FinalExponentiationIsThePlainPower) {
  // The hard part's chain against f^(3 (q^4 - q^2 + 1) / r) by square and
  // multiply, after the easy part.
  std::mt19937_64 rng(96);
  const Fq12 f = test::random_fq12(rng);
  EXPECT_EQ(cpu::final_exponentiation(f), test::cyclotomic(f).pow(kHardExponent, 20));
  // The result lies in GT: its r-th power is one.
  EXPECT_TRUE(cpu::final_exponentiation(f).pow(kR, 4).is_one());
}

}  // namespace
}  // namespace stoker::kernels
