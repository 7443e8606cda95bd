// The CPU fixed-base multiplication against plain double-and-add from the
// generator, on edge and random scalars, across thread counts and batch
// boundaries, in G1 and in G2; and the CPU point check's first bad index.
#include "kernels/fixed_base.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "fr_test_util.hpp"
#include "g1_test_util.hpp"
#include "kernels/g2.cuh"
#include "kernels/msm.hpp"

namespace stoker::kernels {
namespace {

G1Affine naive(const Fr& s) {
  std::uint64_t k[4];
  s.to_canonical(k);
  return to_affine(scalar_mul(G1Affine::generator(), k));
}

bool same(const G1Affine& a, const G1Affine& b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

std::vector<G1Affine> fixed_base(const std::vector<Fr>& s, unsigned threads = 0) {
  std::vector<G1Affine> out(s.size());
  cpu::fixed_base_mul(out.data(), s.data(), s.size(), threads);
  return out;
}

TEST(FixedBaseCpu, EdgeScalars) {
  // 0, 1, r - 1, 2^k for every window boundary, and 0xff in every byte.
  std::vector<Fr> s = {Fr::zero(),      Fr::one(),         -Fr::one(),
                       Fr::from_u64(2), Fr::from_u64(255), Fr::from_u64(256)};
  for (unsigned k = 8; k < 255; k += 8) {
    std::uint64_t v[4] = {0, 0, 0, 0};
    v[k / 64] = std::uint64_t{1} << (k % 64);
    s.push_back(Fr::from_canonical(v));
  }
  const std::uint64_t ones[4] = {~0ull, ~0ull, ~0ull, 0x3fffffffffffffffull};  // < r
  s.push_back(Fr::from_canonical(ones));
  const auto out = fixed_base(s);
  EXPECT_TRUE(out[0].is_infinity());
  EXPECT_TRUE(same(out[1], G1Affine::generator()));
  EXPECT_TRUE(same(out[2], neg(G1Affine::generator())));
  for (std::size_t i = 0; i < s.size(); ++i)
    EXPECT_TRUE(same(out[i], naive(s[i]))) << "scalar " << test::fr_to_hex(s[i]);
}

TEST(FixedBaseCpu, RandomScalarsMatchDoubleAndAdd) {
  const auto s = test::random_vector(40, 11);
  const auto out = fixed_base(s);
  for (std::size_t i = 0; i < s.size(); ++i)
    EXPECT_TRUE(same(out[i], naive(s[i]))) << "scalar " << i;
}

// G2's table and sums: every window boundary, 0, 1, r - 1 and random
// scalars, against double-and-add from G2's generator, across a batch
// boundary and on several threads.
TEST(FixedBaseCpuG2, EdgeAndRandomScalarsMatchDoubleAndAdd) {
  std::vector<Fr> s = {Fr::zero(), Fr::one(), -Fr::one(), Fr::from_u64(255), Fr::from_u64(256)};
  for (unsigned k = 8; k < 255; k += 8) {
    std::uint64_t v[4] = {0, 0, 0, 0};
    v[k / 64] = std::uint64_t{1} << (k % 64);
    s.push_back(Fr::from_canonical(v));
  }
  const auto random = test::random_vector(300, 12);
  s.insert(s.end(), random.begin(), random.end());
  std::vector<G2Affine> out(s.size());
  cpu::fixed_base_mul(out.data(), s.data(), s.size(), 3);
  EXPECT_TRUE(out[0].is_infinity());
  for (std::size_t i = 0; i < s.size(); ++i) {
    std::uint64_t k[4];
    s[i].to_canonical(k);
    const G2Affine want = to_affine(scalar_mul(G2Affine::generator(), k));
    EXPECT_EQ(std::memcmp(&out[i], &want, sizeof want), 0) << "scalar " << i;
  }
}

TEST(FixedBaseCpu, SumOfMultiplesIsMultipleOfSum) {
  // [a] G + [b] G == [a + b] G, a + b taken mod r (so it wraps too).
  const auto a = test::random_vector(64, 21), b = test::random_vector(64, 22);
  std::vector<Fr> ab(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) ab[i] = a[i] + b[i];
  const auto pa = fixed_base(a), pb = fixed_base(b), pab = fixed_base(ab);
  for (std::size_t i = 0; i < a.size(); ++i) {
    G1Xyzz sum = to_xyzz(pa[i]);
    add_mixed(sum, pb[i]);
    EXPECT_TRUE(same(to_affine(sum), pab[i])) << i;
  }
}

TEST(FixedBaseCpu, ThreadCountsAndBatchesGiveTheSameBits) {
  // 1000 points: several batches of 256 with a ragged end, one thread or many.
  auto s = test::random_vector(1000, 31);
  s[300] = Fr::zero();  // an infinity inside a batch
  const auto one = fixed_base(s, 1), many = fixed_base(s, 7);
  ASSERT_EQ(one.size(), many.size());
  for (std::size_t i = 0; i < s.size(); ++i) EXPECT_TRUE(same(one[i], many[i])) << i;
  EXPECT_TRUE(one[300].is_infinity());
  for (std::size_t i : {0, 255, 256, 299, 301, 511, 999})
    EXPECT_TRUE(same(one[i], naive(s[i]))) << i;
}

TEST(PointCheckCpu, FindsTheFirstBadPoint) {
  auto points = test::random_g1_vector(2000, 5);
  points[10] = G1Affine::infinity();  // passes
  EXPECT_EQ(cpu::check_points(points.data(), points.size(), 4), points.size());
  EXPECT_EQ(cpu::check_points(points.data(), 0, 4), 0u);

  // (4, sqrt(68)): on the curve, outside G1.
  G1Affine outside{Fq::from_u64(4), Fq::zero()};
  ASSERT_TRUE(Fq::from_u64(68).sqrt(outside.y));
  ASSERT_TRUE(on_curve(outside));
  G1Affine off = points[3];
  off.y = off.y + Fq::one();
  points[1500] = outside;
  points[1700] = off;
  for (unsigned threads : {1u, 3u, 8u})
    EXPECT_EQ(cpu::check_points(points.data(), points.size(), threads), 1500u) << threads;
  points[900] = off;
  EXPECT_EQ(cpu::check_points(points.data(), points.size(), 3), 900u);
}

}  // namespace
}  // namespace stoker::kernels
