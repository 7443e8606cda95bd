// Fq2: known values (computed independently with Python integers), field
// identities on random elements, the inverse, the Frobenius map as x^q, and
// square roots of squares found and of non-squares refused.
#include "kernels/fq2.cuh"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include "g2_test_util.hpp"

namespace stoker::kernels {
namespace {

using test::fq2_from_hex;
using test::random_fq2;

const Fq2 kA = fq2_from_hex(
    "0x10f61624ec1d7da0a6eb8c9ebd69fe29d76d4330f1446beab0c11fdecb91ce375bc8fbbcbde5c0994164d8399f76"
    "7c45",
    "0x0be5bb2f1cfb10f62827688de6a16a3b0d464138a62332553fc1ea36f17fd374c6a5387777330bdbd7210dff076c"
    "e2ef");
const Fq2 kB = fq2_from_hex(
    "0x0d0f92cd377b9aa2bb2edb20035b73993fd4235992edcf451a1afe878b33e968617959ce3f1f65a8de5271007814"
    "e8a2",
    "0x13c60d23238642ea126a1e48cc11d357c30d8b7628dbd25e63b229f1c4069545de11cc9dea959c212e9c82b1478c"
    "281d");

// q as little-endian limbs, the exponent of the Frobenius map.
const std::uint64_t kQ[6] = {fq_detail::kQ0, fq_detail::kQ1, fq_detail::kQ2,
                             fq_detail::kQ3, fq_detail::kQ4, fq_detail::kQ5};

TEST(Fq2, ArithmeticMatchesKnownValues) {
  EXPECT_EQ(kA * kB, fq2_from_hex("0x04da2f5311376e210361267036d0a01d6702532f30eacc995ca00d27793daf"
                                  "2ff523ebeb2a9a3bcde9e6fb458a832db7",
                                  "0x17920b0eb98540d848a869d2945f4ad9f0c26c1c270e7afeda03a7caf135bb"
                                  "81f2f3bb8959ce9600e517d7c320a8e261"));
  EXPECT_EQ(kA.sqr(),
            fq2_from_hex("0x12c7261460044b31832df548b6ba16b81dafd25758939efd2c344f3cfcdede"
                         "c1dae8447d6b5639b686c7c101d9c262a9",
                         "0x06251d3cf3ba57703ce71f1425f818876d9abe81e75b693d56bc0503248a6f"
                         "fa8f9e97251c25cada17cdcd68a0b3635d"));
  EXPECT_EQ(kA.inverse(),
            fq2_from_hex("0x193a36c8a25dfadd615d5e8542173bc71ead93a2d16104de420d721062"
                         "07f1bbfa7d09fd68b7963c3346112063da64c1",
                         "0x0fc9d0e2a156c84e1c9bfe8138377430aea42fc5bb38c06d253f0b474b"
                         "3b14280d82e0fdc8b5be5cc37e2af92fafe8c4"));
  EXPECT_EQ(
      kA.mul_by_nonresidue(),
      fq2_from_hex("0x05105af5cf226caa7ec42410d6c893eeca2701f84b21399570ff35a7da11fac29523c345"
                   "46b2b4bd6a43ca3a98099956",
                   "0x02dabf69cf98a7fc83f74d7660bfbb8d803c38e4a3e28b8089523774c660ab8803c23435"
                   "83c4cc755e86e638a6e3b489"));
}

TEST(Fq2, UnitSquaresToMinusOne) {
  const Fq2 u{Fq::zero(), Fq::one()};
  EXPECT_EQ(u.sqr(), (Fq2{Fq::one().neg(), Fq::zero()}));
  EXPECT_EQ(u * u, -Fq2::one());
  EXPECT_EQ(Fq2::one().mul_by_nonresidue(), (Fq2{Fq::one(), Fq::one()}));
  const Fq2 zeroed{};
  EXPECT_TRUE(zeroed.is_zero());
  EXPECT_FALSE(u.is_zero());
}

TEST(Fq2, FieldIdentitiesHoldOnRandomElements) {
  std::mt19937_64 rng(41);
  const Fq2 xi{Fq::one(), Fq::one()};
  for (int i = 0; i < 500; ++i) {
    const Fq2 a = random_fq2(rng), b = random_fq2(rng), c = random_fq2(rng);
    ASSERT_EQ(a * b, b * a);
    ASSERT_EQ((a + b) * c, a * c + b * c);
    ASSERT_EQ((a * b) * c, a * (b * c));
    ASSERT_EQ(a + b - b, a);
    ASSERT_EQ(a + a.neg(), Fq2::zero());
    ASSERT_EQ(a.dbl(), a + a);
    ASSERT_EQ(a.sqr(), a * a);
    ASSERT_EQ(a * Fq2::one(), a);
    ASSERT_EQ(a.mul_by_nonresidue(), a * xi);
    ASSERT_EQ(a * c.c0, a * (Fq2{c.c0, Fq::zero()}));
    ASSERT_EQ((a * a.conjugate()).c1, Fq::zero());  // the norm is in Fq
  }
}

TEST(Fq2, InverseIsExactAndZeroMapsToZero) {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 32; ++i) {
    const Fq2 a = random_fq2(rng);
    EXPECT_EQ(a * a.inverse(), Fq2::one());
  }
  // Elements with one coefficient zero take the same path.
  const Fq2 real{Fq::from_u64(3), Fq::zero()}, imaginary{Fq::zero(), Fq::from_u64(5)};
  EXPECT_EQ(real * real.inverse(), Fq2::one());
  EXPECT_EQ(imaginary * imaginary.inverse(), Fq2::one());
  EXPECT_EQ(Fq2::zero().inverse(), Fq2::zero());
}

TEST(Fq2, FrobeniusIsThePowerQ) {
  std::mt19937_64 rng(43);
  for (int i = 0; i < 4; ++i) {
    const Fq2 a = random_fq2(rng);
    EXPECT_EQ(a.frobenius(), a.pow(kQ, 6));
    EXPECT_EQ(a.frobenius().frobenius(), a);
  }
}

TEST(Fq2, SqrtFindsRootsOfSquaresAndRefusesNonSquares) {
  std::mt19937_64 rng(44);
  int refused = 0;
  for (int i = 0; i < 64; ++i) {
    const Fq2 a = random_fq2(rng);
    Fq2 s;
    ASSERT_TRUE(a.sqr().sqrt(s));
    EXPECT_TRUE(s == a || s == -a);
    Fq2 t = Fq2::one();
    if (a.sqrt(t)) {
      EXPECT_EQ(t.sqr(), a);
    } else {
      EXPECT_EQ(t, Fq2::one());  // untouched
      ++refused;
    }
  }
  EXPECT_GT(refused, 16);  // half of the elements are not squares
  EXPECT_LT(refused, 48);
  Fq2 s;
  EXPECT_FALSE(kA.sqrt(s));  // its norm is not a square in Fq
  ASSERT_TRUE(kB.sqrt(s));
  EXPECT_EQ(s.sqr(), kB);
  // The special cases of the algorithm: -1 (alpha = -1), elements of Fq
  // that are not squares there (but are in Fq2), u and zero.
  ASSERT_TRUE((-Fq2::one()).sqrt(s));
  EXPECT_EQ(s.sqr(), -Fq2::one());
  const Fq2 minus_two{Fq::from_u64(2).neg(), Fq::zero()};
  ASSERT_TRUE(minus_two.sqrt(s));
  EXPECT_EQ(s.sqr(), minus_two);
  const Fq2 u{Fq::zero(), Fq::one()};
  ASSERT_TRUE(u.sqrt(s));
  EXPECT_EQ(s.sqr(), u);
  ASSERT_TRUE(Fq2::zero().sqrt(s));
  EXPECT_EQ(s, Fq2::zero());
  // The non-residue of the tower is not a square.
  EXPECT_FALSE((Fq2{Fq::one(), Fq::one()}).sqrt(s));
}

}  // namespace
}  // namespace stoker::kernels
