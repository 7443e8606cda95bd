// Fq6: field identities on random elements, the inverse, the sparse and
// non-residue products against full products, and the Frobenius map's
// constants and action against their definitions.
#include "kernels/fq6.cuh"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include "fq12_test_util.hpp"

namespace stoker::kernels {
namespace {

using test::random_fq2;
using test::random_fq6;

TEST(Fq6, FieldIdentitiesHoldOnRandomElements) {
  std::mt19937_64 rng(71);
  for (int i = 0; i < 100; ++i) {
    const Fq6 a = random_fq6(rng), b = random_fq6(rng), c = random_fq6(rng);
    ASSERT_EQ(a * b, b * a);
    ASSERT_EQ((a + b) * c, a * c + b * c);
    ASSERT_EQ((a * b) * c, a * (b * c));
    ASSERT_EQ(a + b - b, a);
    ASSERT_EQ(a + a.neg(), Fq6::zero());
    ASSERT_EQ(a.dbl(), a + a);
    ASSERT_EQ(a.sqr(), a * a);
    ASSERT_EQ(a * Fq6::one(), a);
  }
}

TEST(Fq6, VCubedIsTheNonResidue) {
  const Fq6 v{Fq2::zero(), Fq2::one(), Fq2::zero()};
  EXPECT_EQ(v * v * v, (Fq6{Fq2{Fq::one(), Fq::one()}, Fq2::zero(), Fq2::zero()}));
  std::mt19937_64 rng(72);
  const Fq6 a = random_fq6(rng);
  EXPECT_EQ(a.mul_by_nonresidue(), a * v);
}

TEST(Fq6, SparseProductsEqualFullProducts) {
  std::mt19937_64 rng(73);
  for (int i = 0; i < 20; ++i) {
    const Fq6 a = random_fq6(rng);
    const Fq2 b0 = random_fq2(rng), b1 = random_fq2(rng);
    EXPECT_EQ(a.mul_by_01(b0, b1), a * (Fq6{b0, b1, Fq2::zero()}));
    EXPECT_EQ(a.mul_by_1(b1), a * (Fq6{Fq2::zero(), b1, Fq2::zero()}));
    EXPECT_EQ(a * b0, a * (Fq6{b0, Fq2::zero(), Fq2::zero()}));
  }
}

TEST(Fq6, InverseIsExactAndZeroMapsToZero) {
  std::mt19937_64 rng(74);
  for (int i = 0; i < 16; ++i) {
    const Fq6 a = random_fq6(rng);
    EXPECT_EQ(a * a.inverse(), Fq6::one());
  }
  const Fq6 sparse{Fq2::zero(), Fq2::one(), Fq2::zero()};
  EXPECT_EQ(sparse * sparse.inverse(), Fq6::one());
  EXPECT_EQ(Fq6::zero().inverse(), Fq6::zero());
}

TEST(Fq6, FrobeniusConstantsArePowersOfTheNonResidue) {
  std::uint64_t third[6];
  test::q_minus_1_over(3, third);
  const Fq2 xi{Fq::one(), Fq::one()};
  const Fq2 g = xi.pow(third, 6);
  EXPECT_EQ(fq6_detail::frobenius_v(), g);
  EXPECT_EQ(fq6_detail::frobenius_v2(), g.sqr());
}

TEST(Fq6, FrobeniusIsAnAutomorphismOfOrderSix) {
  std::mt19937_64 rng(75);
  for (int i = 0; i < 4; ++i) {
    const Fq6 a = random_fq6(rng), b = random_fq6(rng);
    EXPECT_EQ((a * b).frobenius(), a.frobenius() * b.frobenius());
    EXPECT_EQ((a + b).frobenius(), a.frobenius() + b.frobenius());
    Fq6 f = a;
    for (int k = 0; k < 6; ++k) {
      if (k > 0) {
        EXPECT_NE(f, a) << k;
      }
      f = f.frobenius();
    }
    EXPECT_EQ(f, a);
  }
  // On Fq2 it is Fq2's: conjugation.
  const Fq2 c = random_fq2(rng);
  EXPECT_EQ((Fq6{c, Fq2::zero(), Fq2::zero()}).frobenius().c0, c.conjugate());
}

}  // namespace
}  // namespace stoker::kernels
