// The CPU MSM's split of witness scalars, for G1 and G2: the MSM with the
// split forced on and off and chosen, against each other and against the
// points' known logarithms, on witness mixes, dense scalars, all zeros, all
// ones, and points at infinity among them.
#include <gtest/gtest.h>

#include <algorithm>

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
class MsmSplitCpu : public ::testing::Test {};
TYPED_TEST_SUITE(MsmSplitCpu, test::Groups, test::GroupNames);

// The MSM with the split forced each way and chosen, all equal to
// [sum_i s_i log_i] G.
template <typename Affine>
void expect_paths_agree(const test::KnownLogPoints<Affine>& in, const std::vector<Fr>& scalars,
                        const std::string& what) {
  const auto want = test::msm_by_logs(in, scalars);
  for (auto split : {cpu::MsmSplit::automatic, cpu::MsmSplit::never, cpu::MsmSplit::always})
    for (unsigned threads : {1u, 4u})
      EXPECT_TRUE(same_point(
          cpu::msm(in.points.data(), scalars.data(), scalars.size(), threads, split), want))
          << what << ", split " << static_cast<int>(split) << ", threads " << threads;
}

TYPED_TEST(MsmSplitCpu, WitnessMixGivesTheSameResultEitherWay) {
  const std::size_t n = 800;
  const auto in = test::known_log_points<TypeParam>(n, 400);
  expect_paths_agree(in, test::mixed_scalars(n, 40, 50, 401), "40 % zeros, 50 % ones");
  expect_paths_agree(in, test::mixed_scalars(n, 0, 97, 402), "97 % ones");
}

TYPED_TEST(MsmSplitCpu, DenseScalarsGiveTheSameResultEitherWay) {
  const std::size_t n = 200;
  const auto in = test::known_log_points<TypeParam>(n, 410);
  expect_paths_agree(in, test::random_vector(n, 411), "dense");
}

TYPED_TEST(MsmSplitCpu, AllZerosAndAllOnes) {
  const std::size_t n = 2000;
  const auto in = test::known_log_points<TypeParam>(n, 420);
  expect_paths_agree(in, std::vector<Fr>(n, Fr::zero()), "all zeros");
  expect_paths_agree(in, std::vector<Fr>(n, Fr::one()), "all ones");
}

TYPED_TEST(MsmSplitCpu, InfinityAmongTheOnesAndTheRest) {
  using Affine = TypeParam;
  const std::size_t n = 600;
  auto in = test::known_log_points<Affine>(n, 430);
  const auto scalars = test::mixed_scalars(n, 20, 60, 431);
  // A point at infinity adds nothing whatever its scalar: its log is 0.
  for (std::size_t i = 0; i < n; i += 9) {
    in.points[i] = Affine::infinity();
    in.logs[i] = Fr::zero();
  }
  expect_paths_agree(in, scalars, "infinities");
}

// The host's split for gpu::sparse_msm: every non-zero scalar in exactly
// one list, in ascending index order, the rest's values beside their
// indices.
TEST(SplitScalars, EveryNonZeroScalarOnceInAscendingOrder) {
  const std::size_t n = 3000;
  const auto s = test::mixed_scalars(n, 40, 50, 440);
  const auto split = cpu::split_scalars(s.data(), n);
  ASSERT_EQ(split.rest.size(), split.rest_scalars.size());
  std::vector<int> seen(n, 0);
  for (auto i : split.ones) {
    ASSERT_LT(i, n);
    EXPECT_EQ(s[i], Fr::one());
    ++seen[i];
  }
  for (std::size_t j = 0; j < split.rest.size(); ++j) {
    ASSERT_LT(split.rest[j], n);
    EXPECT_EQ(split.rest_scalars[j], s[split.rest[j]]);
    EXPECT_FALSE(s[split.rest[j]].is_zero() || s[split.rest[j]] == Fr::one());
    ++seen[split.rest[j]];
  }
  for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(seen[i], s[i].is_zero() ? 0 : 1) << i;
  EXPECT_TRUE(std::is_sorted(split.ones.begin(), split.ones.end()));
  EXPECT_TRUE(std::is_sorted(split.rest.begin(), split.rest.end()));
}

// Split on several threads, range by range into arrays sized from the
// counts (as a proof's packed input is), equals the one-thread split: ranges
// of 64K scalars, the last a short one, and lists empty in some ranges.
TEST(SplitScalars, RangesOnManyThreadsEqualOneThread) {
  const std::size_t n = 3 * (std::size_t{1} << 16) + 777;
  auto s = test::mixed_scalars(n, 40, 50, 450);
  // The second range all zeros, the third all ones.
  std::fill(s.begin() + (1 << 16), s.begin() + (2 << 16), Fr::zero());
  std::fill(s.begin() + (2 << 16), s.begin() + (3 << 16), Fr::one());
  const auto one = cpu::split_scalars(s.data(), n, 1);
  for (unsigned threads : {2u, 4u, 7u}) {
    const auto counts = cpu::count_split(s.data(), n, threads);
    EXPECT_GT(counts.ones_before.size(), 1u) << threads;
    ASSERT_EQ(counts.ones, one.ones.size()) << threads;
    ASSERT_EQ(counts.rest, one.rest.size()) << threads;
    std::vector<std::uint32_t> ones(counts.ones), rest(counts.rest);
    std::vector<Fr> rest_scalars(counts.rest);
    cpu::split_scalars_into(counts, s.data(), n, ones.data(), rest.data(), rest_scalars.data(),
                            threads);
    EXPECT_EQ(ones, one.ones) << threads;
    EXPECT_EQ(rest, one.rest) << threads;
    EXPECT_TRUE(std::equal(rest_scalars.begin(), rest_scalars.end(), one.rest_scalars.begin()))
        << threads;
    const auto many = cpu::split_scalars(s.data(), n, threads);
    EXPECT_EQ(many.ones, one.ones) << threads;
    EXPECT_EQ(many.rest, one.rest) << threads;
  }
  const auto none = cpu::count_split(s.data(), 0, 4);
  EXPECT_EQ(none.ones + none.rest, 0u);
  EXPECT_TRUE(none.ones_before.empty());
}

}  // namespace
}  // namespace stoker::kernels
