// cpu::check_points from 4096 points on, where the group is checked by
// random buckets' sums: every bad point is found, whatever its place, its
// kind (off the curve, of small order, torsion plus a point of the group)
// or company (bad points whose torsion parts cancel), on one thread or
// several; good points, infinity among them, all pass.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "g1_test_util.hpp"
#include "g2_test_util.hpp"
#include "kernels/detail/group_batch_check.hpp"
#include "kernels/g1.cuh"
#include "kernels/g2.cuh"
#include "kernels/msm.hpp"

namespace stoker::kernels {
namespace {

using test::g1_point_of_order_3;
using test::plus;

TEST(PointCheckBatch, G1FindsEveryKindOfBadPointAnywhere) {
  // 8200 points: two threads' ranges at the batch's grain.
  const std::size_t n = 8200;
  auto good = test::random_g1_vector(n, 41);
  good[5] = G1Affine::infinity();
  good[6000] = G1Affine::infinity();
  EXPECT_EQ(cpu::check_points(good.data(), n, 1), n);
  EXPECT_EQ(cpu::check_points(good.data(), n, 2), n);
  // The batch itself, without the per-point test behind it.
  EXPECT_TRUE(cpu::detail::all_in_group(good.data(), n, 2));

  const G1Affine t3 = g1_point_of_order_3();
  ASSERT_TRUE(on_curve(t3));
  G1Affine off = good[7];
  off.y = off.y + Fq::one();
  const G1Affine shifted = plus(good[100], t3);  // G1 plus torsion
  // Where the per-point search after a failed batch is short, every kind;
  // at the end, once, on two threads.
  for (std::size_t at : {0ul, 40ul}) {
    for (const G1Affine& bad : {t3, shifted}) {
      auto p = good;
      p[at] = bad;
      EXPECT_EQ(cpu::check_points(p.data(), n, 2), at) << at;
      EXPECT_FALSE(cpu::detail::all_in_group(p.data(), n, 2)) << at;
    }
  }
  // Only one off the curve, past the batch's threshold: the batch passes
  // the points before it and that point is named.
  {
    auto q = good;
    q[5000] = off;
    EXPECT_EQ(cpu::check_points(q.data(), n, 2), 5000u);
    EXPECT_TRUE(cpu::detail::all_in_group(q.data(), 5000, 2));
  }
  auto p = good;
  p[n - 1] = shifted;
  EXPECT_EQ(cpu::check_points(p.data(), n, 2), n - 1);
  // Torsion parts that cancel in pairs: T and -T on two points (and a
  // second pair) are still found, the first of them named.
  p = good;
  p[60] = plus(good[60], t3);
  p[5000] = plus(good[5000], neg(t3));
  p[7000] = plus(good[7000], t3);
  p[8000] = plus(good[8000], neg(t3));
  EXPECT_EQ(cpu::check_points(p.data(), n, 2), 60u);
  EXPECT_FALSE(cpu::detail::all_in_group(p.data(), n, 2));
  // Off the curve after one outside the group, and before it: the first.
  p = good;
  p[30] = shifted;
  p[7000] = off;
  EXPECT_EQ(cpu::check_points(p.data(), n, 2), 30u);
  p[20] = off;
  EXPECT_EQ(cpu::check_points(p.data(), n, 2), 20u);
}

TEST(PointCheckBatch, G2FindsAPointOutsideG2AndOneOffTheCurve) {
  const std::size_t n = 4200;
  std::mt19937_64 rng(42);
  std::vector<G2Affine> good(n);
  const G2Affine g = test::random_g2(rng);
  // Multiples of one point by consecutive steps: cheap to make, all in G2.
  G2Xyzz acc = to_xyzz(g);
  for (auto& q : good) {
    q = to_affine(acc);
    add_mixed(acc, g);
  }
  good[17] = G2Affine::infinity();
  EXPECT_EQ(cpu::check_points(good.data(), n, 2), n);
  EXPECT_TRUE(cpu::detail::all_in_group(good.data(), n, 2));

  const G2Affine e = test::random_e2_point(rng);  // on E', outside G2
  const G2Affine torsion = to_affine(scalar_mul(e, test::kGroupOrder));
  ASSERT_FALSE(torsion.is_infinity());
  for (const G2Affine& bad : {e, torsion, plus(good[25], torsion)}) {
    auto p = good;
    p[25] = bad;
    EXPECT_EQ(cpu::check_points(p.data(), n, 2), 25u);
    EXPECT_FALSE(cpu::detail::all_in_group(p.data(), n, 2));
  }
  auto p = good;
  p[n - 1] = torsion;
  EXPECT_EQ(cpu::check_points(p.data(), n, 2), n - 1);
  p[3000].y = p[3000].y + Fq2::one();
  EXPECT_EQ(cpu::check_points(p.data(), n, 2), 3000u);
}

}  // namespace
}  // namespace stoker::kernels
