// G2: the generator's known coordinates, [r] G = infinity, known multiples
// (computed independently with Python integers), the psi subgroup test
// against [r] P on points of G2 and on points of E' outside it, and the
// addition formulas' consistency on every special case.
#include "kernels/g2.cuh"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include "g2_test_util.hpp"

namespace stoker::kernels {
namespace {

using test::fq2_from_hex;

const std::uint64_t kR[4] = {0xffffffff00000001ull, 0x53bda402fffe5bfeull, 0x3339d80809a1d805ull,
                             0x73eda753299d7d48ull};
// The cofactor h' of G2: #E'(Fq2) = h' r.
const std::uint64_t kCofactor[8] = {
    0xcf1c38e31c7238e5ull, 0x1616ec6e786f0c70ull, 0x21537e293a6691aeull, 0xa628f1cb4d9e82efull,
    0xa68a205b2e5a7ddfull, 0xcd91de4547085abaull, 0x091d50792876a202ull, 0x05d543a95414e7f1ull};

// [k] p for a scalar of any number of limbs.
G2Xyzz mul_wide(const G2Affine& p, const std::uint64_t* k, int words) {
  G2Xyzz acc = G2Xyzz::infinity();
  for (int i = words - 1; i >= 0; --i)
    for (int b = 63; b >= 0; --b) {
      acc = dbl(acc);
      if ((k[i] >> b) & 1) add_mixed(acc, p);
    }
  return acc;
}

void expect_same(const G2Affine& a, const G2Affine& b) {
  EXPECT_EQ(a.x, b.x);
  EXPECT_EQ(a.y, b.y);
}

TEST(G2, GeneratorHasKnownCoordinates) {
  const G2Affine g = G2Affine::generator();
  expect_same(g,
              G2Affine{fq2_from_hex("0x024aa2b2f08f0a91260805272dc51051c6e47ad4fa403b02b4510b647ae3"
                                    "d1770bac0326a805bbefd48056c8c121bdb8",
                                    "0x13e02b6052719f607dacd3a088274f65596bd0d09920b61ab5da61bbdc7f"
                                    "5049334cf11213945d57e5ac7d055d042b7e"),
                       fq2_from_hex("0x0ce5d527727d6e118cc9cdc6da2e351aadfd9baa8cbdd3a76d429a695160"
                                    "d12c923ac9cc3baca289e193548608b82801",
                                    "0x0606c4a02ea734cc32acd2b02bc28b99cb3e287e85a763af267492ab572e"
                                    "99ab3f370d275cec1da1aaa9075ff05f79be")});
  EXPECT_TRUE(on_curve(g));
  EXPECT_TRUE(in_subgroup(g));
  EXPECT_FALSE(g.is_infinity());
  EXPECT_EQ(g2_detail::curve_b(), (Fq2{Fq::from_u64(4), Fq::from_u64(4)}));
}

TEST(G2, PsiConstantsAreThePowersOfTheNonResidue) {
  using namespace fq_detail;
  // (q - 1) / 3 and (q - 1) / 2 from q's limbs by long division.
  const std::uint64_t q[6] = {kQ0, kQ1, kQ2, kQ3, kQ4, kQ5};
  auto divide = [&](std::uint64_t d, std::uint64_t out[6]) {
    unsigned __int128 rem = 0;
    for (int i = 5; i >= 0; --i) {
      const unsigned __int128 cur = (rem << 64) | (i == 0 ? q[0] - 1 : q[i]);
      out[i] = static_cast<std::uint64_t>(cur / d);
      rem = cur % d;
    }
    return static_cast<std::uint64_t>(rem);
  };
  std::uint64_t third[6], half[6];
  ASSERT_EQ(divide(3, third), 0u);
  ASSERT_EQ(divide(2, half), 0u);
  const Fq2 xi{Fq::one(), Fq::one()};
  EXPECT_EQ(g2_detail::psi_cx(), xi.pow(third, 6).inverse());
  EXPECT_EQ(g2_detail::psi_cy(), xi.pow(half, 6).inverse());
}

TEST(G2, OrderRTimesGeneratorIsInfinity) {
  EXPECT_TRUE(scalar_mul(G2Affine::generator(), kR).is_infinity());
  const std::uint64_t r_minus_1[4] = {kR[0] - 1, kR[1], kR[2], kR[3]};
  const G2Affine minus_g = to_affine(scalar_mul(G2Affine::generator(), r_minus_1));
  expect_same(minus_g, neg(G2Affine::generator()));
}

TEST(G2, MultiplicationByOneGivesThePoint) {
  std::mt19937_64 rng(59);
  const G2Affine p = test::random_g2(rng);
  const std::uint64_t one[4] = {1, 0, 0, 0};
  expect_same(to_affine(scalar_mul(p, one)), p);
  expect_same(to_affine(scalar_mul(G2Affine::generator(), one)), G2Affine::generator());
}

TEST(G2, MultiplesMatchKnownValues) {
  const std::uint64_t two[4] = {2, 0, 0, 0};
  expect_same(to_affine(scalar_mul(G2Affine::generator(), two)),
              G2Affine{fq2_from_hex("0x1638533957d540a9d2370f17cc7ed5863bc0b995b8825e0ee1ea1e1e4d00"
                                    "dbae81f14b0bf3611b78c952aacab827a053",
                                    "0x0a4edef9c1ed7f729f520e47730a124fd70662a904ba1074728114d1031e"
                                    "1572c6c886f6b57ec72a6178288c47c33577"),
                       fq2_from_hex("0x0468fb440d82b0630aeb8dca2b5256789a66da69bf91009cbfe6bd221e47"
                                    "aa8ae88dece9764bf3bd999d95d71e4c9899",
                                    "0x0f6d4552fa65dd2638b361543f887136a43253d9c66c411697003f7a13c3"
                                    "08f5422e1aa0a59c8967acdefd8b6e36ccf3")});
  // k = 0x2a5f9c7e3d1b0a8f6e4c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6.
  const std::uint64_t k[4] = {0x4d3c2b1a09f8e7d6ull, 0xc5b4a39281706f5eull, 0x6e4c2b1a09f8e7d6ull,
                              0x2a5f9c7e3d1b0a8full};
  expect_same(to_affine(scalar_mul(G2Affine::generator(), k)),
              G2Affine{fq2_from_hex("0x06c4c577676c9617947b7e314a4cce4c1fdd3c0a99a5a687ac19a4cafb94"
                                    "9597c31e9a7567c64e65f8ebcf4371df08ff",
                                    "0x116e47545907da6daa9db4fbfcca04eaaa7b9910598a0bdbd89599c9d6e8"
                                    "53b6551fa738ef40c8f4457fc38f1f35db45"),
                       fq2_from_hex("0x01588e479cadc7d90592ef8ed0cfc561f6a9b3873f9a30f934a1f5bf7280"
                                    "b6e56b573130bca1111252805ffbe636376d",
                                    "0x08b763699e931d904bfccb39aec05f629b72dc72af34504096147c24ec29"
                                    "f0fb35fe89f6cfd79113d6dce8e6057f279e")});
}

TEST(G2, SubgroupTestAgreesWithOrderOnPointsOfG2) {
  std::mt19937_64 rng(51);
  for (int i = 0; i < 6; ++i) {
    const G2Affine p = test::random_g2(rng);
    EXPECT_TRUE(on_curve(p));
    EXPECT_TRUE(in_subgroup(p));
    EXPECT_TRUE(in_subgroup(neg(p)));
    EXPECT_TRUE(scalar_mul(p, kR).is_infinity());
  }
  EXPECT_TRUE(in_subgroup(G2Affine::infinity()));
}

TEST(G2, SubgroupTestAgreesWithOrderOnPointsOutsideG2) {
  // Points of E' from hashed x, the cofactor not cleared; then the same
  // points with the cofactor cleared ([h'] P is in G2), and [r] P, which
  // lies wholly in the cofactor's part.
  std::mt19937_64 rng(52);
  for (int i = 0; i < 6; ++i) {
    const G2Affine p = test::random_e2_point(rng);
    ASSERT_TRUE(on_curve(p));
    EXPECT_FALSE(scalar_mul(p, kR).is_infinity());
    EXPECT_FALSE(in_subgroup(p));
    EXPECT_FALSE(in_subgroup(neg(p)));

    const G2Affine cleared = to_affine(mul_wide(p, kCofactor, 8));
    ASSERT_FALSE(cleared.is_infinity());
    EXPECT_TRUE(on_curve(cleared));
    EXPECT_TRUE(scalar_mul(cleared, kR).is_infinity());
    EXPECT_TRUE(in_subgroup(cleared));

    const G2Affine torsion = to_affine(scalar_mul(p, kR));
    EXPECT_TRUE(on_curve(torsion));
    EXPECT_TRUE(mul_wide(torsion, kCofactor, 8).is_infinity());  // #E' = h' r
    EXPECT_FALSE(in_subgroup(torsion));

    // A point of G2 plus a point outside it is outside it.
    G2Xyzz mixed = to_xyzz(G2Affine::generator());
    add_mixed(mixed, torsion);
    EXPECT_FALSE(in_subgroup(to_affine(mixed)));
  }
}

TEST(G2, PsiActsOnG2AsMultiplicationByZ) {
  std::mt19937_64 rng(53);
  const G2Affine p = test::random_g2(rng);
  // [|z|] P = -psi(P), and psi keeps points on E'.
  const std::uint64_t abs_z[4] = {g1_detail::kAbsU, 0, 0, 0};
  expect_same(to_affine(scalar_mul(p, abs_z)), neg(psi(p)));
  const G2Affine outside = test::random_e2_point(rng);
  EXPECT_TRUE(on_curve(psi(outside)));
  EXPECT_TRUE(psi(G2Affine::infinity()).is_infinity());
}

TEST(G2, OffCurvePointIsRefused) {
  G2Affine p = G2Affine::generator();
  p.y = p.y + Fq2::one();
  EXPECT_FALSE(on_curve(p));
  p = G2Affine::generator();
  p.x.c1 = p.x.c1 + Fq::one();
  EXPECT_FALSE(on_curve(p));
  EXPECT_TRUE(on_curve(G2Affine{}));
  EXPECT_TRUE(G2Affine{}.is_infinity());
}

TEST(G2, AdditionFormsAgree) {
  std::mt19937_64 rng(54);
  const G2Affine p = test::random_g2(rng), q = test::random_g2(rng), s = test::random_g2(rng);
  G2Xyzz a = to_xyzz(p);
  add_mixed(a, q);
  G2Xyzz b = to_xyzz(q);
  add(b, to_xyzz(p));
  EXPECT_TRUE(equal(a, b));
  G2Xyzz pq = a, qs = to_xyzz(q);
  add_mixed(qs, s);
  add_mixed(pq, s);  // (p + q) + s
  G2Xyzz p_qs = to_xyzz(p);
  add(p_qs, qs);  // p + (q + s)
  EXPECT_TRUE(equal(pq, p_qs));
  const G2Affine x = to_affine(pq), y = to_affine(p_qs);
  expect_same(x, y);
  EXPECT_TRUE(on_curve(x));
  EXPECT_TRUE(in_subgroup(x));
}

TEST(G2, DoublingAgreesWithAdditionToItself) {
  std::mt19937_64 rng(55);
  const G2Affine p = test::random_g2(rng), q = test::random_g2(rng);
  G2Xyzz pq = to_xyzz(p);
  add_mixed(pq, q);
  G2Xyzz via_add = pq;
  add(via_add, pq);
  EXPECT_TRUE(equal(dbl(pq), via_add));
  G2Xyzz pp = to_xyzz(p);
  add_mixed(pp, p);
  EXPECT_TRUE(equal(pp, dbl(to_xyzz(p))));
  const std::uint64_t two[4] = {2, 0, 0, 0};
  EXPECT_TRUE(equal(pp, scalar_mul(p, two)));
  EXPECT_TRUE(dbl(G2Xyzz::infinity()).is_infinity());
}

TEST(G2, AddingTheNegationGivesInfinity) {
  std::mt19937_64 rng(56);
  const G2Affine p = test::random_g2(rng), q = test::random_g2(rng);
  G2Xyzz a = to_xyzz(p);
  add_mixed(a, neg(p));
  EXPECT_TRUE(a.is_infinity());
  G2Xyzz pq = to_xyzz(p);
  add_mixed(pq, q);
  G2Xyzz b = pq;
  add(b, neg(pq));
  EXPECT_TRUE(b.is_infinity());
  G2Xyzz c = pq;
  add_mixed(c, neg(to_affine(pq)));
  EXPECT_TRUE(c.is_infinity());
  add_mixed(c, q);
  EXPECT_TRUE(equal(c, to_xyzz(q)));
}

TEST(G2, InfinityIsTheIdentityOnEitherSide) {
  std::mt19937_64 rng(57);
  const G2Affine p = test::random_g2(rng);
  G2Xyzz a = G2Xyzz::infinity();
  add_mixed(a, p);
  EXPECT_TRUE(equal(a, to_xyzz(p)));
  add_mixed(a, G2Affine::infinity());
  EXPECT_TRUE(equal(a, to_xyzz(p)));
  G2Xyzz b = G2Xyzz::infinity();
  add(b, a);
  EXPECT_TRUE(equal(b, a));
  add(b, G2Xyzz::infinity());
  EXPECT_TRUE(equal(b, a));
  EXPECT_TRUE(to_xyzz(G2Affine::infinity()).is_infinity());
  EXPECT_TRUE(to_affine(G2Xyzz::infinity()).is_infinity());
  EXPECT_TRUE(equal(G2Xyzz::infinity(), neg(G2Xyzz::infinity())));
  EXPECT_FALSE(equal(G2Xyzz::infinity(), a));
  const std::uint64_t zero[4] = {0, 0, 0, 0};
  EXPECT_TRUE(scalar_mul(p, zero).is_infinity());
  const std::uint64_t five[4] = {5, 0, 0, 0};
  EXPECT_TRUE(scalar_mul(G2Affine::infinity(), five).is_infinity());
}

TEST(G2, ScalarMultiplicationIsLinear) {
  std::mt19937_64 rng(58);
  const G2Affine p = test::random_g2(rng);
  const std::uint64_t a[4] = {rng(), rng(), rng(), rng() >> 3};
  const std::uint64_t b[4] = {rng(), rng(), rng(), rng() >> 3};
  std::uint64_t s[4];
  unsigned __int128 c = 0;
  for (int i = 0; i < 4; ++i) {
    c += static_cast<unsigned __int128>(a[i]) + b[i];
    s[i] = static_cast<std::uint64_t>(c);
    c >>= 64;
  }
  G2Xyzz sum = scalar_mul(p, a);
  add(sum, scalar_mul(p, b));
  EXPECT_TRUE(equal(sum, scalar_mul(p, s)));
}

}  // namespace
}  // namespace stoker::kernels
