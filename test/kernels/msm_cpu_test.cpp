// The CPU MSM against the naive sum of scalar multiplications, on random
// and edge-case inputs, for several thread counts (so both splits, over
// windows and over point ranges, are exercised).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "fr_test_util.hpp"
#include "g1_test_util.hpp"
#include "kernels/msm.hpp"

namespace stoker::kernels {
namespace {

G1Xyzz naive_msm(const std::vector<G1Affine>& points, const std::vector<Fr>& scalars) {
  G1Xyzz acc = G1Xyzz::infinity();
  for (std::size_t i = 0; i < points.size(); ++i) {
    std::uint64_t k[4];
    scalars[i].to_canonical(k);
    add(acc, scalar_mul(points[i], k));
  }
  return acc;
}

Fr r_minus_1() {
  return -Fr::one();
}

void expect_same(const G1Xyzz& got, const G1Xyzz& want, const char* what) {
  EXPECT_TRUE(equal(got, want)) << what;
  const G1Affine a = to_affine(got), b = to_affine(want);
  EXPECT_EQ(a.x, b.x) << what;
  EXPECT_EQ(a.y, b.y) << what;
}

TEST(MsmCpu, EmptySumIsInfinity) {
  EXPECT_TRUE(cpu::msm(static_cast<const G1Affine*>(nullptr), nullptr, 0).is_infinity());
}

TEST(MsmCpu, RandomInputsMatchNaiveSum) {
  for (std::size_t n : {1u, 2u, 3u, 7u, 16u, 33u, 100u}) {
    const auto points = test::random_g1_vector(n, 40 + n);
    const auto scalars = test::random_vector(n, 50 + n);
    const G1Xyzz want = naive_msm(points, scalars);
    for (unsigned threads : {1u, 3u, 64u})
      expect_same(cpu::msm(points.data(), scalars.data(), n, threads), want,
                  ("n = " + std::to_string(n) + ", threads = " + std::to_string(threads)).c_str());
  }
}

TEST(MsmCpu, EdgeScalarsAndPointsMatchNaiveSum) {
  const std::size_t n = 24;
  auto points = test::random_g1_vector(n, 60);
  auto scalars = test::random_vector(n, 61);
  scalars[0] = Fr::zero();
  scalars[1] = Fr::one();
  scalars[2] = r_minus_1();
  scalars[3] = Fr::from_u64(2);
  points[5] = points[4];  // a point repeated, with different scalars
  points[7] = points[6];  // a point repeated, with the same scalar
  scalars[7] = scalars[6];
  points[9] = neg(points[8]);  // P and -P with one scalar: they cancel
  scalars[9] = scalars[8];
  points[10] = G1Affine::infinity();  // infinity with a non-zero scalar
  points[11] = points[2];             // (r - 1) P + P = 0
  scalars[11] = Fr::one();
  const G1Xyzz want = naive_msm(points, scalars);
  for (unsigned threads : {1u, 4u})
    expect_same(cpu::msm(points.data(), scalars.data(), n, threads), want, "edge mix");
}

TEST(MsmCpu, CancellingInputsGiveInfinity) {
  const auto p = test::random_g1_vector(4, 70);
  const auto s = test::random_vector(2, 71);
  // s0 P0 + s0 (-P0) + s1 P1 + (r - s1) P1 = 0.
  const std::vector<G1Affine> points = {p[0], neg(p[0]), p[1], p[1]};
  const std::vector<Fr> scalars = {s[0], s[0], s[1], -s[1]};
  EXPECT_TRUE(cpu::msm(points.data(), scalars.data(), 4).is_infinity());

  const std::vector<Fr> zeros(4, Fr::zero());
  EXPECT_TRUE(cpu::msm(points.data(), zeros.data(), 4).is_infinity());

  const std::vector<G1Affine> infinities(4, G1Affine::infinity());
  EXPECT_TRUE(cpu::msm(infinities.data(), s.data(), 2).is_infinity());

  // (r - 1) G + G.
  const std::vector<G1Affine> g2 = {G1Affine::generator(), G1Affine::generator()};
  const std::vector<Fr> rm1 = {r_minus_1(), Fr::one()};
  EXPECT_TRUE(cpu::msm(g2.data(), rm1.data(), 2).is_infinity());
}

TEST(MsmCpu, OneScalarIsScalarMultiplication) {
  const std::vector<G1Affine> g = {G1Affine::generator()};
  for (const Fr& s : {Fr::one(), Fr::from_u64(2), r_minus_1(), Fr::from_u64(0xdeadbeef)}) {
    std::uint64_t k[4];
    s.to_canonical(k);
    expect_same(cpu::msm(g.data(), &s, 1), scalar_mul(g[0], k), "single");
  }
}

TEST(MsmCpu, SparseScalarsMatchNaiveSum) {
  // A witness-like mix: 40 % zeros, 50 % ones, 10 % full-size values, at a
  // size where the ones are split over threads.
  const std::size_t n = 3000;
  const auto points = test::random_g1_vector(n, 80);
  std::mt19937_64 rng(81);
  std::vector<Fr> scalars(n);
  G1Xyzz want = G1Xyzz::infinity();
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned pick = rng() % 100;
    scalars[i] = pick < 40 ? Fr::zero() : pick < 90 ? Fr::one() : test::random_fr(rng);
  }
  // Naive over the non-trivial ones only (scalar_mul is slow); the ones and
  // zeros by plain additions.
  for (std::size_t i = 0; i < n; ++i) {
    if (scalars[i].is_zero()) continue;
    if (scalars[i] == Fr::one()) {
      add_mixed(want, points[i]);
    } else {
      std::uint64_t k[4];
      scalars[i].to_canonical(k);
      add(want, scalar_mul(points[i], k));
    }
  }
  for (unsigned threads : {1u, 4u})
    expect_same(cpu::msm(points.data(), scalars.data(), n, threads), want, "sparse");
  // All ones: the sum of the points.
  const std::vector<Fr> ones(n, Fr::one());
  G1Xyzz sum = G1Xyzz::infinity();
  for (const auto& p : points) add_mixed(sum, p);
  expect_same(cpu::msm(points.data(), ones.data(), n, 4), sum, "all ones");
}

TEST(MsmCpu, EqualScalarsMatchScalarTimesSum) {
  // Every point's digit is the same in every window: all land in one bucket
  // per window, far more than one batch of affine additions can take.
  const std::size_t n = 3000;
  const auto points = test::random_g1_vector(n, 95);
  G1Affine sum;
  {
    G1Xyzz acc = G1Xyzz::infinity();
    for (const auto& p : points) add_mixed(acc, p);
    sum = to_affine(acc);
  }
  for (const Fr& s : {Fr::from_u64(2), test::fr_from_hex("0x1234567890abcdef"), -Fr::from_u64(3)}) {
    const std::vector<Fr> scalars(n, s);
    std::uint64_t k[4];
    s.to_canonical(k);
    expect_same(cpu::msm(points.data(), scalars.data(), n, 2), scalar_mul(sum, k), "equal scalars");
  }
}

TEST(MsmCpu, LargerSizesAgreeAcrossThreadCounts) {
  // Big enough for wide windows and several point ranges per window: the
  // result may not depend on how the work was split.
  const std::size_t n = 9000;
  const auto points = test::random_g1_vector(n, 90);
  const auto scalars = test::random_vector(n, 91);
  const G1Xyzz one_thread = cpu::msm(points.data(), scalars.data(), n, 1);
  const G1Xyzz many = cpu::msm(points.data(), scalars.data(), n, 64);
  expect_same(many, one_thread, "1 vs 64 threads");
  // Linearity: splitting the input in two and adding gives the same.
  const G1Xyzz lo = cpu::msm(points.data(), scalars.data(), n / 2, 2);
  G1Xyzz hi = cpu::msm(points.data() + n / 2, scalars.data() + n / 2, n - n / 2, 2);
  add(hi, lo);
  expect_same(hi, one_thread, "halves");
}

}  // namespace
}  // namespace stoker::kernels
