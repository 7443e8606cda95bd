// G1: the generator's known coordinates, [r] G = infinity, known multiples
// (computed independently with Python integers), the subgroup test against
// [r] P, and the addition formulas' consistency on every special case.
#include "kernels/g1.cuh"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include "g1_test_util.hpp"

namespace stoker::kernels {
namespace {

using test::fq_from_hex;
using test::fq_to_hex;

const std::uint64_t kR[4] = {0xffffffff00000001ull, 0x53bda402fffe5bfeull, 0x3339d80809a1d805ull,
                             0x73eda753299d7d48ull};

G1Affine affine(const char* x, const char* y) {
  return G1Affine{fq_from_hex(x), fq_from_hex(y)};
}

// The first x = 1, 2, ... with x^3 + 4 a square: on the curve, and (the
// cofactor being about 2^126) not in G1.
G1Affine on_curve_outside_g1() {
  for (std::uint64_t x = 1;; ++x) {
    const Fq fx = Fq::from_u64(x);
    Fq y;
    if ((fx.sqr() * fx + Fq::from_u64(4)).sqrt(y)) return G1Affine{fx, y};
  }
}

TEST(G1, GeneratorHasKnownCoordinates) {
  const G1Affine g = G1Affine::generator();
  EXPECT_EQ(
      fq_to_hex(g.x),
      "0x17f1d3a73197d7942695638c4fa9ac0fc3688c4f9774b905a14e3a3f171bac586c55e83ff97a1aeffb3af0"
      "0adb22c6bb");
  EXPECT_EQ(
      fq_to_hex(g.y),
      "0x08b3f481e3aaa0f1a09e30ed741d8ae4fcf5e095d5d00af600db18cb2c04b3edd03cc744a2888ae40caa23"
      "2946c5e7e1");
  EXPECT_TRUE(on_curve(g));
  EXPECT_TRUE(in_subgroup(g));
  EXPECT_FALSE(g.is_infinity());
}

TEST(G1, OrderRTimesGeneratorIsInfinity) {
  EXPECT_TRUE(scalar_mul(G1Affine::generator(), kR).is_infinity());
  std::uint64_t r_minus_1[4] = {kR[0] - 1, kR[1], kR[2], kR[3]};
  const G1Affine minus_g = to_affine(scalar_mul(G1Affine::generator(), r_minus_1));
  EXPECT_TRUE(equal(to_xyzz(minus_g), to_xyzz(neg(G1Affine::generator()))));
}

TEST(G1, MultiplesMatchKnownValues) {
  const G1Affine two_g = affine(
      "0x0572cbea904d67468808c8eb50a9450c9721db309128012543902d0ac358a62ae28f75bb8f1c7c42c39a8c5529"
      "bf0f4e",
      "0x166a9d8cabc673a322fda673779d8e3822ba3ecb8670e461f73bb9021d5fd76a4c56d9d4cd16bd1bba86881979"
      "749d28");
  const std::uint64_t two[4] = {2, 0, 0, 0};
  const G1Affine got2 = to_affine(scalar_mul(G1Affine::generator(), two));
  EXPECT_EQ(got2.x, two_g.x);
  EXPECT_EQ(got2.y, two_g.y);

  // k = 0x2a5f9c7e3d1b0a8f6e4c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6.
  const std::uint64_t k[4] = {0x4d3c2b1a09f8e7d6ull, 0xc5b4a39281706f5eull, 0x6e4c2b1a09f8e7d6ull,
                              0x2a5f9c7e3d1b0a8full};
  const G1Affine kg = to_affine(scalar_mul(G1Affine::generator(), k));
  EXPECT_EQ(
      fq_to_hex(kg.x),
      "0x02b5327cf56a0c3a9e8fd37d776511e6aebc715b8bebc4ca4884df744f6de393be498df931053a72a6687c"
      "af647baf2d");
  EXPECT_EQ(
      fq_to_hex(kg.y),
      "0x0bb4f2bc55105de8bac0ff974aebbbf7dc7cfb9913dead6e4604d575f08e65883478a7711871e8189d6d27"
      "52b0d31a2d");
}

TEST(G1, SubgroupTestRefusesCurvePointOutsideG1) {
  const G1Affine p = on_curve_outside_g1();
  ASSERT_TRUE(on_curve(p));
  EXPECT_FALSE(scalar_mul(p, kR).is_infinity());  // [r] P != 0: not in G1
  EXPECT_FALSE(in_subgroup(p));
  EXPECT_FALSE(in_subgroup(neg(p)));
}

TEST(G1, SubgroupTestAgreesWithOrderOnRandomPoints) {
  std::mt19937_64 rng(21);
  for (int i = 0; i < 8; ++i) {
    const G1Affine p = test::random_g1(rng);
    EXPECT_TRUE(on_curve(p));
    EXPECT_TRUE(in_subgroup(p));
    EXPECT_TRUE(scalar_mul(p, kR).is_infinity());
  }
  // Curve points outside G1 for x = 1..: each refused, each with [r] P != 0.
  int outside = 0;
  for (std::uint64_t x = 1; x < 40; ++x) {
    const Fq fx = Fq::from_u64(x);
    Fq y;
    if (!(fx.sqr() * fx + Fq::from_u64(4)).sqrt(y)) continue;
    const G1Affine p{fx, y};
    EXPECT_EQ(in_subgroup(p), scalar_mul(p, kR).is_infinity()) << "x = " << x;
    ++outside;
  }
  EXPECT_GT(outside, 5);
  EXPECT_TRUE(in_subgroup(G1Affine::infinity()));
}

TEST(G1, OffCurvePointIsRefused) {
  G1Affine p = G1Affine::generator();
  p.y = p.y + Fq::one();
  EXPECT_FALSE(on_curve(p));
  p = G1Affine::generator();
  p.x = p.x + Fq::one();
  EXPECT_FALSE(on_curve(p));
  EXPECT_FALSE(on_curve(G1Affine{Fq::zero(), Fq::one()}));
  // (0, 0) is the point at infinity, which counts as on the curve.
  EXPECT_TRUE(on_curve(G1Affine{}));
  EXPECT_TRUE(G1Affine{}.is_infinity());
}

TEST(G1, AdditionFormsAgree) {
  std::mt19937_64 rng(22);
  const G1Affine p = test::random_g1(rng), q = test::random_g1(rng), s = test::random_g1(rng);
  // Mixed, full and via-affine additions give the same point.
  G1Xyzz a = to_xyzz(p);
  add_mixed(a, q);
  G1Xyzz b = to_xyzz(q);
  add(b, to_xyzz(p));
  EXPECT_TRUE(equal(a, b));
  // Associativity with a non-trivial Z on both sides.
  G1Xyzz pq = a, qs = to_xyzz(q);
  add_mixed(qs, s);
  add_mixed(pq, s);  // (p + q) + s
  G1Xyzz p_qs = to_xyzz(p);
  add(p_qs, qs);  // p + (q + s)
  EXPECT_TRUE(equal(pq, p_qs));
  // The affine form is unique.
  const G1Affine x = to_affine(pq), y = to_affine(p_qs);
  EXPECT_EQ(x.x, y.x);
  EXPECT_EQ(x.y, y.y);
  EXPECT_TRUE(on_curve(x));
  EXPECT_TRUE(in_subgroup(x));
}

TEST(G1, DoublingAgreesWithAdditionToItself) {
  std::mt19937_64 rng(23);
  const G1Affine p = test::random_g1(rng), q = test::random_g1(rng);
  G1Xyzz pq = to_xyzz(p);
  add_mixed(pq, q);  // a representation with ZZ != 1
  const G1Xyzz d = dbl(pq);
  G1Xyzz via_add = pq;
  add(via_add, pq);  // full addition of equal points doubles
  EXPECT_TRUE(equal(d, via_add));
  G1Xyzz pp = to_xyzz(p);
  add_mixed(pp, p);  // mixed addition of equal points doubles
  EXPECT_TRUE(equal(pp, dbl(to_xyzz(p))));
  const std::uint64_t two[4] = {2, 0, 0, 0};
  EXPECT_TRUE(equal(pp, scalar_mul(p, two)));
  EXPECT_TRUE(dbl(G1Xyzz::infinity()).is_infinity());
}

TEST(G1, AddingTheNegationGivesInfinity) {
  std::mt19937_64 rng(24);
  const G1Affine p = test::random_g1(rng), q = test::random_g1(rng);
  G1Xyzz a = to_xyzz(p);
  add_mixed(a, neg(p));
  EXPECT_TRUE(a.is_infinity());
  G1Xyzz pq = to_xyzz(p);
  add_mixed(pq, q);
  G1Xyzz b = pq;
  add(b, neg(pq));
  EXPECT_TRUE(b.is_infinity());
  G1Xyzz c = pq;
  add_mixed(c, neg(to_affine(pq)));
  EXPECT_TRUE(c.is_infinity());
  // ... and adding to infinity restarts cleanly.
  add_mixed(c, q);
  EXPECT_TRUE(equal(c, to_xyzz(q)));
}

TEST(G1, InfinityIsTheIdentityOnEitherSide) {
  std::mt19937_64 rng(25);
  const G1Affine p = test::random_g1(rng);
  G1Xyzz a = G1Xyzz::infinity();
  add_mixed(a, p);
  EXPECT_TRUE(equal(a, to_xyzz(p)));
  add_mixed(a, G1Affine::infinity());
  EXPECT_TRUE(equal(a, to_xyzz(p)));
  G1Xyzz b = G1Xyzz::infinity();
  add(b, a);
  EXPECT_TRUE(equal(b, a));
  add(b, G1Xyzz::infinity());
  EXPECT_TRUE(equal(b, a));
  EXPECT_TRUE(to_xyzz(G1Affine::infinity()).is_infinity());
  EXPECT_TRUE(to_affine(G1Xyzz::infinity()).is_infinity());
  EXPECT_TRUE(equal(G1Xyzz::infinity(), neg(G1Xyzz::infinity())));
  EXPECT_FALSE(equal(G1Xyzz::infinity(), a));
  const std::uint64_t zero[4] = {0, 0, 0, 0};
  EXPECT_TRUE(scalar_mul(p, zero).is_infinity());
  const std::uint64_t five[4] = {5, 0, 0, 0};
  EXPECT_TRUE(scalar_mul(G1Affine::infinity(), five).is_infinity());
}

TEST(G1, ScalarMultiplicationIsLinear) {
  std::mt19937_64 rng(26);
  const G1Affine p = test::random_g1(rng);
  const std::uint64_t a[4] = {rng(), rng(), rng(), rng() >> 3};
  const std::uint64_t b[4] = {rng(), rng(), rng(), rng() >> 3};
  std::uint64_t s[4];
  unsigned __int128 c = 0;
  for (int i = 0; i < 4; ++i) {
    c += static_cast<unsigned __int128>(a[i]) + b[i];
    s[i] = static_cast<std::uint64_t>(c);
    c >>= 64;
  }
  G1Xyzz sum = scalar_mul(p, a);
  add(sum, scalar_mul(p, b));
  EXPECT_TRUE(equal(sum, scalar_mul(p, s)));
}

}  // namespace
}  // namespace stoker::kernels
