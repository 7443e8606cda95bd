// cpu::sum_points, the batched affine tree that also sums the CPU MSM's
// scalars of one, for G1 and G2: against plain mixed additions at sizes
// around the tree's stopping points and its gathering rounds, and on every
// special case of an affine addition (infinity, P + P, P - P).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "fr_test_util.hpp"
#include "kernels/g1.cuh"
#include "kernels/g2.cuh"
#include "kernels/msm.hpp"
#include "msm_cpu_test_util.hpp"

namespace stoker::kernels {
namespace {

using test::same_point;

template <typename Affine>
class SumPointsCpu : public ::testing::Test {};
TYPED_TEST_SUITE(SumPointsCpu, test::Groups, test::GroupNames);

template <typename Affine>
test::XyzzOf<Affine> mixed_sum(const std::vector<Affine>& points) {
  auto acc = test::XyzzOf<Affine>::infinity();
  for (const Affine& p : points) add_mixed(acc, p);
  return acc;
}

TYPED_TEST(SumPointsCpu, MatchesMixedAdditionsAtEverySize) {
  using Affine = TypeParam;
  // Around the tree's stopping points, and past one gathering round
  // (2^14 points), so that a round's remainder opens the next.
  const auto all = test::known_log_points<Affine>(17000, 300).points;
  for (std::size_t n : {0u, 1u, 2u, 3u, 95u, 96u, 97u, 255u, 256u, 257u, 513u, 1000u, 17000u}) {
    const std::vector<Affine> points(all.begin(), all.begin() + n);
    const auto want = mixed_sum(points);
    // One thread takes all 17000 points through two rounds; three split
    // them into ranges of one round each.
    for (unsigned threads : {1u, 3u})
      EXPECT_TRUE(same_point(cpu::sum_points(points.data(), n, threads), want))
          << "n = " << n << ", threads = " << threads;
  }
}

TYPED_TEST(SumPointsCpu, HandlesInfinityRepeatsAndOpposites) {
  using Affine = TypeParam;
  const std::size_t n = 1200;
  auto points = test::known_log_points<Affine>(n, 310).points;
  std::mt19937_64 rng(311);
  // Scattered special cases: the tree pairs i with i + half, so these meet
  // at the first level and, as sums, further up.
  for (std::size_t i = 0; i < n; i += 7) points[i] = Affine::infinity();
  for (std::size_t i = 3; i + n / 2 < n; i += 11) points[i + n / 2] = points[i];       // P + P
  for (std::size_t i = 5; i + n / 2 < n; i += 13) points[i + n / 2] = neg(points[i]);  // P - P
  for (int k = 0; k < 50; ++k) points[rng() % n] = points[rng() % n];
  const auto want = mixed_sum(points);
  for (unsigned threads : {1u, 4u})
    EXPECT_TRUE(same_point(cpu::sum_points(points.data(), n, threads), want)) << threads;
}

TYPED_TEST(SumPointsCpu, OnePointRepeatedIsItsMultiple) {
  using Affine = TypeParam;
  const Affine p = test::known_log_points<Affine>(1, 320).points[0];
  for (std::size_t n : {2u, 300u, 1000u}) {
    const std::vector<Affine> points(n, p);
    EXPECT_TRUE(same_point(cpu::sum_points(points.data(), n, 2), test::mul(p, Fr::from_u64(n))))
        << n;
  }
}

TYPED_TEST(SumPointsCpu, OppositesAndInfinitiesCancel) {
  using Affine = TypeParam;
  const auto half = test::known_log_points<Affine>(400, 330).points;
  std::vector<Affine> points = half;
  for (const Affine& p : half) points.push_back(neg(p));
  EXPECT_TRUE(cpu::sum_points(points.data(), points.size(), 2).is_infinity());
  const std::vector<Affine> infinities(500, Affine::infinity());
  EXPECT_TRUE(cpu::sum_points(infinities.data(), infinities.size(), 2).is_infinity());
}

}  // namespace
}  // namespace stoker::kernels
