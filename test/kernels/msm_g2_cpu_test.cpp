// The CPU MSM over G2 against the naive sum of scalar multiplications (and,
// at sizes where that is slow, against one multiplication of the generator
// by the sum of the scalars times the points' known logarithms), on random
// and edge-case inputs for several thread counts; and the G2 point check.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "fr_test_util.hpp"
#include "g2_test_util.hpp"
#include "kernels/g2.cuh"
#include "kernels/msm.hpp"
#include "msm_cpu_test_util.hpp"

namespace stoker::kernels {
namespace {

using test::same_point;

G2Xyzz naive_msm(const std::vector<G2Affine>& points, const std::vector<Fr>& scalars) {
  G2Xyzz acc = G2Xyzz::infinity();
  for (std::size_t i = 0; i < points.size(); ++i) add(acc, test::mul(points[i], scalars[i]));
  return acc;
}

std::string where(std::size_t n, unsigned threads) {
  return "n = " + std::to_string(n) + ", threads = " + std::to_string(threads);
}

TEST(MsmG2Cpu, EmptySumIsInfinity) {
  EXPECT_TRUE(cpu::msm(static_cast<const G2Affine*>(nullptr), nullptr, 0).is_infinity());
}

TEST(MsmG2Cpu, RandomInputsMatchNaiveSum) {
  std::mt19937_64 rng(200);
  for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{7},
                        std::size_t{34 + rng() % 100}}) {
    const auto in = test::known_log_points<G2Affine>(n, 210 + n);
    const auto scalars = test::random_vector(n, 220 + n);
    const G2Xyzz want = naive_msm(in.points, scalars);
    for (unsigned threads : {1u, 3u})
      EXPECT_TRUE(same_point(cpu::msm(in.points.data(), scalars.data(), n, threads), want))
          << where(n, threads);
  }
}

TEST(MsmG2Cpu, RandomSizesMatchKnownLogarithms) {
  std::mt19937_64 rng(230);
  std::vector<std::size_t> sizes;
  for (int i = 0; i < 3; ++i) sizes.push_back(1 + rng() % 300);
  sizes.push_back(1000);  // a wider window
  for (std::size_t n : sizes) {
    const auto in = test::known_log_points<G2Affine>(n, 240 + n);
    const auto scalars = test::random_vector(n, 250 + n);
    const G2Xyzz want = test::msm_by_logs(in, scalars);
    for (unsigned threads : {1u, 4u})
      EXPECT_TRUE(same_point(cpu::msm(in.points.data(), scalars.data(), n, threads), want))
          << where(n, threads);
  }
}

TEST(MsmG2Cpu, EdgeScalarsAndPointsMatchNaiveSum) {
  const std::size_t n = 24;
  auto points = test::known_log_points<G2Affine>(n, 260).points;
  auto scalars = test::random_vector(n, 261);
  scalars[0] = Fr::zero();
  scalars[1] = Fr::one();
  scalars[2] = -Fr::one();  // r - 1
  scalars[3] = Fr::from_u64(2);
  points[5] = points[4];  // a point repeated, with different scalars
  points[7] = points[6];  // a point repeated, with the same scalar
  scalars[7] = scalars[6];
  points[9] = neg(points[8]);  // P and -P with one scalar: they cancel
  scalars[9] = scalars[8];
  points[10] = G2Affine::infinity();  // infinity with a non-zero scalar
  points[11] = points[2];             // (r - 1) P + P = 0
  scalars[11] = Fr::one();
  points[12] = points[1];  // P + P among the ones
  scalars[12] = Fr::one();
  points[13] = neg(points[3]);  // 2 P - P among the ones
  scalars[13] = Fr::one();
  const G2Xyzz want = naive_msm(points, scalars);
  for (unsigned threads : {1u, 4u})
    for (auto split : {cpu::MsmSplit::never, cpu::MsmSplit::always})
      EXPECT_TRUE(same_point(cpu::msm(points.data(), scalars.data(), n, threads, split), want))
          << where(n, threads) << (split == cpu::MsmSplit::always ? ", split" : ", whole");
}

TEST(MsmG2Cpu, CancellingInputsGiveInfinity) {
  const auto p = test::known_log_points<G2Affine>(2, 270).points;
  const auto s = test::random_vector(2, 271);
  // s0 P0 + s0 (-P0) + s1 P1 + (r - s1) P1 = 0.
  const std::vector<G2Affine> points = {p[0], neg(p[0]), p[1], p[1]};
  const std::vector<Fr> scalars = {s[0], s[0], s[1], -s[1]};
  EXPECT_TRUE(cpu::msm(points.data(), scalars.data(), 4).is_infinity());

  const std::vector<G2Affine> infinities(2, G2Affine::infinity());
  EXPECT_TRUE(cpu::msm(infinities.data(), s.data(), 2).is_infinity());

  // (r - 1) G + G.
  const std::vector<G2Affine> gs = {G2Affine::generator(), G2Affine::generator()};
  const std::vector<Fr> rm1 = {-Fr::one(), Fr::one()};
  EXPECT_TRUE(cpu::msm(gs.data(), rm1.data(), 2).is_infinity());
}

TEST(MsmG2Cpu, AllZerosGiveInfinityAndAllOnesTheSumOfThePoints) {
  const std::size_t n = 700;
  const auto in = test::known_log_points<G2Affine>(n, 280);
  const std::vector<Fr> zeros(n, Fr::zero()), ones(n, Fr::one());
  G2Xyzz sum = G2Xyzz::infinity();
  for (const auto& p : in.points) add_mixed(sum, p);
  for (auto split : {cpu::MsmSplit::automatic, cpu::MsmSplit::never, cpu::MsmSplit::always}) {
    EXPECT_TRUE(cpu::msm(in.points.data(), zeros.data(), n, 2, split).is_infinity());
    EXPECT_TRUE(same_point(cpu::msm(in.points.data(), ones.data(), n, 2, split), sum));
  }
}

TEST(MsmG2Cpu, OneScalarIsScalarMultiplication) {
  const G2Affine g = G2Affine::generator();
  for (const Fr& s : {Fr::one(), Fr::from_u64(2), -Fr::one(), Fr::from_u64(0xdeadbeef)})
    EXPECT_TRUE(same_point(cpu::msm(&g, &s, 1), test::mul(g, s)));
}

// Points of G2 with a point off E' at `off` and a point of E' outside G2
// at `outside`.
std::vector<G2Affine> points_with_bad(std::size_t n, std::size_t off, std::size_t outside) {
  auto points = test::known_log_points<G2Affine>(n, 290).points;
  std::mt19937_64 rng(291);
  if (off < n) points[off].y = points[off].y + Fq2::one();
  if (outside < n) points[outside] = test::random_e2_point(rng);
  return points;
}

TEST(CheckPointsG2Cpu, GoodPointsAndInfinityPass) {
  auto points = points_with_bad(150, 150, 150);
  points[17] = G2Affine::infinity();
  EXPECT_EQ(cpu::check_points(points.data(), points.size(), 3), points.size());
  EXPECT_EQ(cpu::check_points(points.data(), 0, 3), 0u);
}

TEST(CheckPointsG2Cpu, FindsTheFirstPointOffTheTwist) {
  const auto points = points_with_bad(150, 90, 150);
  ASSERT_FALSE(on_curve(points[90]));
  for (unsigned threads : {1u, 2u, 5u})
    EXPECT_EQ(cpu::check_points(points.data(), 150, threads), 90u);
}

TEST(CheckPointsG2Cpu, FindsTheFirstPointOutsideG2) {
  const auto points = points_with_bad(150, 150, 70);
  ASSERT_TRUE(on_curve(points[70]));
  for (unsigned threads : {1u, 2u, 5u})
    EXPECT_EQ(cpu::check_points(points.data(), 150, threads), 70u);
}

TEST(CheckPointsG2Cpu, ReportsTheSmallerOfTwoBadIndices) {
  for (unsigned threads : {1u, 4u}) {
    const auto a = points_with_bad(150, 120, 30);
    EXPECT_EQ(cpu::check_points(a.data(), 150, threads), 30u);
    const auto b = points_with_bad(150, 40, 130);
    EXPECT_EQ(cpu::check_points(b.data(), 150, threads), 40u);
  }
}

}  // namespace
}  // namespace stoker::kernels
