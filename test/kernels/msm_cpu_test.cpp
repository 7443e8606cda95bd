// The CPU MSM against the naive sum of scalar multiplications, on random
// and edge-case inputs, for several thread counts (so both splits, over
// windows and over point ranges, are exercised); each test runs for G1 and
// for G2.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "fr_test_util.hpp"
#include "kernels/msm.hpp"
#include "msm_test_util.hpp"

namespace stoker::kernels {
namespace {

template <typename Affine>
class MsmCpu : public ::testing::Test {
 public:
  using Xyzz = detail::XyzzOf<Affine>;
  static std::vector<Affine> points(std::size_t n, std::uint64_t seed) {
    return test::random_point_vector<Affine>(n, seed);
  }
};
TYPED_TEST_SUITE(MsmCpu, test::MsmGroups, test::MsmGroupName);

Fr r_minus_1() {
  return -Fr::one();
}

template <typename Xyzz>
void expect_same(const Xyzz& got, const Xyzz& want, const char* what) {
  EXPECT_TRUE(equal(got, want)) << what;
  const auto a = to_affine(got), b = to_affine(want);
  EXPECT_EQ(a.x, b.x) << what;
  EXPECT_EQ(a.y, b.y) << what;
}

TYPED_TEST(MsmCpu, EmptySumIsInfinity) {
  EXPECT_TRUE(cpu::msm(static_cast<const TypeParam*>(nullptr), nullptr, 0).is_infinity());
}

TYPED_TEST(MsmCpu, RandomInputsMatchNaiveSum) {
  using Xyzz = typename TestFixture::Xyzz;
  for (std::size_t n : {1u, 2u, 3u, 7u, 16u, 33u, 100u}) {
    const auto points = TestFixture::points(n, 40 + n);
    const auto scalars = test::random_vector(n, 50 + n);
    const Xyzz want = test::naive_msm(points, scalars);
    for (unsigned threads : {1u, 3u, 64u})
      expect_same(cpu::msm(points.data(), scalars.data(), n, threads), want,
                  ("n = " + std::to_string(n) + ", threads = " + std::to_string(threads)).c_str());
  }
}

TYPED_TEST(MsmCpu, EdgeScalarsAndPointsMatchNaiveSum) {
  using Xyzz = typename TestFixture::Xyzz;
  const std::size_t n = 24;
  auto points = TestFixture::points(n, 60);
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
  points[10] = TypeParam::infinity();  // infinity with a non-zero scalar
  points[11] = points[2];              // (r - 1) P + P = 0
  scalars[11] = Fr::one();
  const Xyzz want = test::naive_msm(points, scalars);
  for (unsigned threads : {1u, 4u})
    expect_same(cpu::msm(points.data(), scalars.data(), n, threads), want, "edge mix");
}

TYPED_TEST(MsmCpu, CancellingInputsGiveInfinity) {
  const auto p = TestFixture::points(4, 70);
  const auto s = test::random_vector(2, 71);
  // s0 P0 + s0 (-P0) + s1 P1 + (r - s1) P1 = 0.
  const std::vector<TypeParam> points = {p[0], neg(p[0]), p[1], p[1]};
  const std::vector<Fr> scalars = {s[0], s[0], s[1], -s[1]};
  EXPECT_TRUE(cpu::msm(points.data(), scalars.data(), 4).is_infinity());

  const std::vector<Fr> zeros(4, Fr::zero());
  EXPECT_TRUE(cpu::msm(points.data(), zeros.data(), 4).is_infinity());

  const std::vector<TypeParam> infinities(4, TypeParam::infinity());
  EXPECT_TRUE(cpu::msm(infinities.data(), s.data(), 2).is_infinity());

  // (r - 1) G + G.
  const std::vector<TypeParam> gs = {TypeParam::generator(), TypeParam::generator()};
  const std::vector<Fr> rm1 = {r_minus_1(), Fr::one()};
  EXPECT_TRUE(cpu::msm(gs.data(), rm1.data(), 2).is_infinity());
}

TYPED_TEST(MsmCpu, OneScalarIsScalarMultiplication) {
  const std::vector<TypeParam> g = {TypeParam::generator()};
  for (const Fr& s : {Fr::one(), Fr::from_u64(2), r_minus_1(), Fr::from_u64(0xdeadbeef)}) {
    std::uint64_t k[4];
    s.to_canonical(k);
    expect_same(cpu::msm(g.data(), &s, 1), scalar_mul(g[0], k), "single");
  }
}

TYPED_TEST(MsmCpu, SparseScalarsMatchNaiveSum) {
  using Xyzz = typename TestFixture::Xyzz;
  // A witness-like mix: 40 % zeros, 50 % ones, 10 % full-size values, at a
  // size where the ones are split over threads.
  const std::size_t n = 3000;
  const auto points = TestFixture::points(n, 80);
  std::mt19937_64 rng(81);
  std::vector<Fr> scalars(n);
  Xyzz want = Xyzz::infinity();
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
  Xyzz sum = Xyzz::infinity();
  for (const auto& p : points) add_mixed(sum, p);
  expect_same(cpu::msm(points.data(), ones.data(), n, 4), sum, "all ones");
}

TYPED_TEST(MsmCpu, EqualScalarsMatchScalarTimesSum) {
  using Xyzz = typename TestFixture::Xyzz;
  // Every point's digit is the same in every window: all land in one bucket
  // per window, far more than one batch of affine additions can take.
  const std::size_t n = 3000;
  const auto points = TestFixture::points(n, 95);
  TypeParam sum;
  {
    Xyzz acc = Xyzz::infinity();
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

TYPED_TEST(MsmCpu, LargerSizesAgreeAcrossThreadCounts) {
  using Xyzz = typename TestFixture::Xyzz;
  // Big enough for wide windows and several point ranges per window: the
  // result may not depend on how the work was split.
  const std::size_t n = 9000;
  const auto points = TestFixture::points(n, 90);
  const auto scalars = test::random_vector(n, 91);
  const Xyzz one_thread = cpu::msm(points.data(), scalars.data(), n, 1);
  const Xyzz many = cpu::msm(points.data(), scalars.data(), n, 64);
  expect_same(many, one_thread, "1 vs 64 threads");
  // Linearity: splitting the input in two and adding gives the same.
  const Xyzz lo = cpu::msm(points.data(), scalars.data(), n / 2, 2);
  Xyzz hi = cpu::msm(points.data() + n / 2, scalars.data() + n / 2, n - n / 2, 2);
  add(hi, lo);
  expect_same(hi, one_thread, "halves");
}

}  // namespace
}  // namespace stoker::kernels
