// The Jacobian doubling chains of the membership tests (detail/
// jacobian_chain.cuh) against the XYZZ double-and-add of scalar_mul, for G1
// and G2, on every special case of their additions; and the G1 test on
// points of small order, which walk through those special cases.
#include "kernels/detail/jacobian_chain.cuh"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include "g1_test_util.hpp"
#include "g2_test_util.hpp"
#include "kernels/g1.cuh"
#include "kernels/g2.cuh"

namespace stoker::kernels {
namespace {

using detail::Jacobian;
using detail::jacobian_add;
using detail::jacobian_add_affine;
using detail::jacobian_dbl;
using detail::jacobian_mul_u64;

// Whether a Jacobian point is the affine (or XYZZ) point: X = x Z^2, Y = y Z^3.
template <typename F, typename Affine>
bool same(const Jacobian<F>& j, const Affine& a) {
  if (j.is_infinity() || a.is_infinity()) return j.is_infinity() && a.is_infinity();
  const F zz = j.z.sqr();
  return a.x * zz == j.x && a.y * (zz * j.z) == j.y;
}

// [k] P through XYZZ, the independent reference.
template <typename Affine>
Affine times(const Affine& p, std::uint64_t k) {
  const std::uint64_t w[4] = {k, 0, 0, 0};
  return to_affine(scalar_mul(p, w));
}

// A Jacobian form of p with Z != 1: (x l^2, y l^3, l).
template <typename F, typename Affine>
Jacobian<F> scaled(const Affine& p, const F& l) {
  const F ll = l.sqr();
  return Jacobian<F>{p.x * ll, p.y * (ll * l), l};
}

template <typename Affine, typename F>
void expect_chains_agree(const Affine& p, const F& l, std::mt19937_64& rng) {
  const std::uint64_t ks[] = {1, 2, 3, 5, 0xd201000000010000ull, 1ull << 63, ~0ull, rng(), rng()};
  for (const std::uint64_t k : ks) {
    const Affine want = times(p, k);
    EXPECT_TRUE(same(jacobian_mul_u64(p.x, p.y, k), want)) << "k = " << k;
    EXPECT_TRUE(same(jacobian_mul_u64(scaled<F>(p, l), k), want)) << "k = " << k;
  }
}

template <typename Affine, typename F>
void expect_special_cases(const Affine& p, const Affine& q, const F& l) {
  const Jacobian<F> jp = scaled<F>(p, l), inf = Jacobian<F>::infinity();
  const Affine p2 = times(p, 2);
  // Doubling, and addition of the point to itself, both ways.
  EXPECT_TRUE(same(jacobian_dbl(jp), p2));
  Jacobian<F> acc = jp;
  jacobian_add_affine(acc, p.x, p.y);
  EXPECT_TRUE(same(acc, p2));
  acc = jp;
  jacobian_add(acc, scaled<F>(p, l + l));
  EXPECT_TRUE(same(acc, p2));
  // P + (-P) is infinity, both ways.
  acc = jp;
  jacobian_add_affine(acc, p.x, p.y.neg());
  EXPECT_TRUE(acc.is_infinity());
  acc = jp;
  jacobian_add(acc, scaled<F>(neg(p), l));
  EXPECT_TRUE(acc.is_infinity());
  // Infinity on either side, and doubled.
  acc = inf;
  jacobian_add_affine(acc, p.x, p.y);
  EXPECT_TRUE(same(acc, p));
  acc = inf;
  jacobian_add(acc, jp);
  EXPECT_TRUE(same(acc, p));
  acc = jp;
  jacobian_add(acc, inf);
  EXPECT_TRUE(same(acc, p));
  EXPECT_TRUE(jacobian_dbl(inf).is_infinity());
  // A general sum.
  const std::uint64_t one[4] = {1, 0, 0, 0};
  auto sum = scalar_mul(p, one);
  add_mixed(sum, q);
  acc = jp;
  jacobian_add_affine(acc, q.x, q.y);
  EXPECT_TRUE(same(acc, to_affine(sum)));
  acc = jp;
  jacobian_add(acc, scaled<F>(q, l + F::one()));
  EXPECT_TRUE(same(acc, to_affine(sum)));
}

TEST(JacobianChain, G1AgreesWithXyzz) {
  std::mt19937_64 rng(71);
  const G1Affine p = test::random_g1(rng), q = test::random_g1(rng);
  const Fq l = test::random_fq(rng);
  expect_chains_agree(p, l, rng);
  expect_special_cases(p, q, l);
}

TEST(JacobianChain, G2AgreesWithXyzz) {
  std::mt19937_64 rng(72);
  const G2Affine p = test::random_g2(rng), q = test::random_e2_point(rng);
  const Fq2 l = test::random_fq2(rng);
  expect_chains_agree(p, l, rng);
  expect_chains_agree(q, l, rng);  // outside G2: the chain does not care
  expect_special_cases(p, q, l);
}

// Points of order 3 and 11 (the smallest primes of G1's cofactor) and of
// orders dividing the cofactor: their chains meet P + P and P + (-P) and
// infinity; each is refused, and a point of G1 plus one of them too.
TEST(JacobianChain, G1TestRefusesPointsOfSmallOrder) {
  // 11^2 divides h and the 11-part of the cofactor's group is Z_11 x Z_11:
  // [h / 121] leaves a point of order 11 (or infinity).
  const std::uint64_t h_over_121[4] = {0x627ab75c63702343ull, 0x00797dfbc5773068ull, 0, 0};
  const std::uint64_t three[4] = {3, 0, 0, 0}, eleven[4] = {11, 0, 0, 0};
  int of_order_3 = 0, of_order_11 = 0, torsion = 0;
  for (std::uint64_t x = 1; x < 60; ++x) {
    const Fq fx = Fq::from_u64(x);
    Fq y;
    if (!(fx.sqr() * fx + Fq::from_u64(4)).sqrt(y)) continue;
    const G1Affine t = to_affine(scalar_mul(G1Affine{fx, y}, test::kGroupOrder));  // order divides h
    if (t.is_infinity()) continue;
    ++torsion;
    EXPECT_FALSE(in_subgroup(t)) << "x = " << x;
    G1Xyzz mixed = to_xyzz(G1Affine::generator());
    add_mixed(mixed, t);
    EXPECT_FALSE(in_subgroup(to_affine(mixed))) << "x = " << x;
    const G1Affine t3 = to_affine(scalar_mul(t, test::kG1CofactorOver3));
    if (!t3.is_infinity()) {
      ++of_order_3;
      ASSERT_TRUE(scalar_mul(t3, three).is_infinity());
      EXPECT_FALSE(in_subgroup(t3)) << "x = " << x;
      EXPECT_FALSE(in_subgroup(neg(t3))) << "x = " << x;
    }
    const G1Affine t11 = to_affine(scalar_mul(t, h_over_121));
    if (!t11.is_infinity()) {
      ++of_order_11;
      ASSERT_TRUE(scalar_mul(t11, eleven).is_infinity());
      EXPECT_FALSE(in_subgroup(t11)) << "x = " << x;
    }
  }
  EXPECT_GT(torsion, 5);
  EXPECT_GT(of_order_3, 0);
  EXPECT_GT(of_order_11, 0);
}

}  // namespace
}  // namespace stoker::kernels
