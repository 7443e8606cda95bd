// Fq12: field identities, the inverse, the line product against a full
// product, the Frobenius map against x^q, and the cyclotomic squaring
// against a plain square inside the cyclotomic subgroup.
#include "kernels/fq12.cuh"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include "fq12_test_util.hpp"

namespace stoker::kernels {
namespace {

using test::random_fq12;
using test::random_fq2;

TEST(Fq12, FieldIdentitiesHoldOnRandomElements) {
  std::mt19937_64 rng(81);
  for (int i = 0; i < 40; ++i) {
    const Fq12 a = random_fq12(rng), b = random_fq12(rng), c = random_fq12(rng);
    ASSERT_EQ(a * b, b * a);
    ASSERT_EQ((a + b) * c, a * c + b * c);
    ASSERT_EQ((a * b) * c, a * (b * c));
    ASSERT_EQ(a.sqr(), a * a);
    ASSERT_EQ(a * Fq12::one(), a);
    ASSERT_EQ(a + b - b, a);
  }
  const Fq12 w{Fq6::zero(), Fq6::one()};
  EXPECT_EQ(w * w, (Fq12{Fq6{Fq2::zero(), Fq2::one(), Fq2::zero()}, Fq6::zero()}));  // w^2 = v
  EXPECT_TRUE(Fq12::one().is_one());
  EXPECT_FALSE(w.is_one());
}

TEST(Fq12, InverseIsExact) {
  std::mt19937_64 rng(82);
  for (int i = 0; i < 8; ++i) {
    const Fq12 a = random_fq12(rng);
    EXPECT_TRUE((a * a.inverse()).is_one());
  }
}

TEST(Fq12, LineProductEqualsFullProduct) {
  std::mt19937_64 rng(83);
  for (int i = 0; i < 16; ++i) {
    const Fq12 f = random_fq12(rng);
    const Fq2 o0 = random_fq2(rng), o1 = random_fq2(rng), o4 = random_fq2(rng);
    const Fq12 line{Fq6{o0, o1, Fq2::zero()}, Fq6{Fq2::zero(), o4, Fq2::zero()}};
    EXPECT_EQ(f.mul_by_014(o0, o1, o4), f * line);
  }
}

TEST(Fq12, FrobeniusIsThePowerQ) {
  std::uint64_t sixth[6];
  test::q_minus_1_over(6, sixth);
  EXPECT_EQ(fq12_detail::frobenius_w(), (Fq2{Fq::one(), Fq::one()}).pow(sixth, 6));

  std::mt19937_64 rng(84);
  const Fq12 a = random_fq12(rng);
  EXPECT_EQ(a.frobenius(), a.pow(test::q_limbs(), 6));
  Fq12 f = a;
  for (int k = 0; k < 6; ++k) f = f.frobenius();
  EXPECT_EQ(f, a.conjugate());  // x^(q^6) conjugates
  for (int k = 0; k < 6; ++k) f = f.frobenius();
  EXPECT_EQ(f, a);
}

TEST(Fq12, CyclotomicSquareIsTheSquareInTheCyclotomicSubgroup) {
  std::mt19937_64 rng(85);
  for (int i = 0; i < 8; ++i) {
    const Fq12 c = test::cyclotomic(random_fq12(rng));
    EXPECT_TRUE((c * c.conjugate()).is_one());  // conjugation inverts there
    EXPECT_EQ(c.cyclotomic_sqr(), c.sqr());
    EXPECT_EQ(c.cyclotomic_sqr().cyclotomic_sqr(), c.sqr().sqr());
  }
}

}  // namespace
}  // namespace stoker::kernels
