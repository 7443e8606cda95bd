// The GPU MSM's host-side arithmetic: signed digits that put back together
// give the scalar, and window plans that hold every scalar and stay sorted
// within their key bits.
#include "kernels/detail/msm_digits.cuh"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "fr_test_util.hpp"
#include "kernels/detail/msm_group.hpp"
#include "kernels/detail/msm_window.hpp"

namespace stoker::kernels::gpu::detail {
namespace {

// sum_w d_w 2^(c w), negated when the scalar was folded, as an Fr; also
// checks every digit's range.
Fr rebuild(const Fr& x, unsigned c) {
  std::uint64_t k[4];
  x.to_canonical(k);
  const bool folded = fold_above_half(k);
  EXPECT_LT(k[3] >> 62, 1u) << "folded scalar must be below 2^254";
  const unsigned windows = window_count(c);
  Fr sum = Fr::zero();
  const Fr two_c = Fr::from_u64(2).pow(std::uint64_t{c});
  Fr weight = Fr::one();
  signed_digits(k, c, windows, [&](unsigned, std::uint32_t mag, bool negative) {
    EXPECT_LE(mag, buckets_per_window(c)) << "c " << c;
    const Fr d = Fr::from_u64(mag) * weight;
    sum = negative ? sum - d : sum + d;
    weight = weight * two_c;
  });
  EXPECT_EQ(k[0] | k[1] | k[2] | k[3], 0u) << "bits left above the last window, c " << c;
  return folded ? -sum : sum;
}

std::vector<Fr> edge_scalars() {
  const Fr one = Fr::one();
  const Fr half = test::fr_from_hex(
      "0x39f6d3a994cebea4199cec0404d0ec02a9ded2017fff2dff7fffffff80000000");  // (r-1)/2
  return {Fr::zero(),
          one,
          -one,
          half,
          half + one,
          half - one,
          Fr::from_u64(2).pow(253),
          -Fr::from_u64(2).pow(253)};
}

TEST(MsmDigits, RebuildTheScalarForEveryWindowSize) {
  std::mt19937_64 rng(11);
  std::vector<Fr> xs = edge_scalars();
  for (int i = 0; i < 200; ++i) xs.push_back(test::random_fr(rng));
  for (unsigned c = kMinWindowBits; c <= kMaxWindowBits; ++c)
    for (const Fr& x : xs) ASSERT_EQ(rebuild(x, c), x) << "c " << c << " x " << test::fr_to_hex(x);
}

TEST(MsmDigits, ZeroHasOnlyZeroDigits) {
  std::uint64_t k[4] = {0, 0, 0, 0};
  EXPECT_FALSE(fold_above_half(k));
  signed_digits(k, 16, window_count(16),
                [](unsigned w, std::uint32_t mag, bool) { EXPECT_EQ(mag, 0u) << "window " << w; });
}

TEST(MsmDigits, OneAndMinusOneAreOneDigit) {
  for (const Fr& x : {Fr::one(), -Fr::one()}) {
    std::uint64_t k[4];
    x.to_canonical(k);
    const bool folded = fold_above_half(k);
    EXPECT_EQ(folded, x != Fr::one());
    unsigned nonzero = 0;
    signed_digits(k, 20, window_count(20), [&](unsigned w, std::uint32_t mag, bool negative) {
      if (mag) {
        ++nonzero;
        EXPECT_EQ(w, 0u);
        EXPECT_EQ(mag, 1u);
        EXPECT_FALSE(negative);
      }
    });
    EXPECT_EQ(nonzero, 1u);
  }
}

TEST(MsmWindow, KeysFitTheirBitsAndTheSentinelSortsLast) {
  for (unsigned c = kMinWindowBits; c <= kMaxWindowBits; ++c) {
    for (unsigned parts = 1; parts <= kMaxParts; ++parts) {
      // The whole-array sort sees key_bits bits: the last key of the last
      // part must stay below the zero digits' key there.
      const std::uint64_t last = keys_per_part(c) * parts - 1;
      const std::uint64_t mask = (std::uint64_t{1} << key_bits(c, parts)) - 1;
      EXPECT_LT(last, kNoKey & mask) << "c " << c << " parts " << parts;
      EXPECT_LE(last, std::uint64_t{kNoKey}) << "c " << c;
      if (sort_by_window(c, parts)) {
        EXPECT_EQ(parts, 1u);
        // One window's sort sees c bits: a bucket's key below the zero
        // digits', and every key of the last window below kNoKey.
        const std::uint64_t low = (std::uint64_t{1} << (c - 1)) - 1;
        EXPECT_LT(low, kNoKey & ((std::uint64_t{1} << c) - 1)) << "c " << c;
        EXPECT_LT((std::uint64_t{window_count(c)} - 1) << c | low, std::uint64_t{kNoKey});
        EXPECT_LT(radix_passes(c), sort_passes(c)) << "c " << c;
      }
    }
    EXPECT_GE(window_count(c) * c, kScalarBits) << "c " << c;
  }
  // At 2^26 (c = 22) the windows sort in 3 passes instead of 4.
  EXPECT_TRUE(sort_by_window(22, 1));
  EXPECT_FALSE(sort_by_window(22, 2));
}

TEST(MsmWindow, CostModelPicksLargerWindowsForLargerInputs) {
  auto best = [](std::size_t n) {
    unsigned b = kMinWindowBits;
    for (unsigned c = kMinWindowBits; c <= kMaxWindowBits; ++c)
      if (window_cost(n, c) < window_cost(n, b)) b = c;
    return b;
  };
  unsigned last = 0;
  for (unsigned log_n = 0; log_n <= 27; ++log_n) {
    const unsigned c = best(std::size_t{1} << log_n);
    EXPECT_GE(c, last) << "log_n " << log_n;
    last = c;
  }
  // DESIGN.md's range for the XYZZ model at 2^20 .. 2^26.
  EXPECT_GE(best(std::size_t{1} << 20), 15u);
  EXPECT_LE(best(std::size_t{1} << 26), 23u);
}

// G2's additions cost 3 times G1's (msm_group.hpp) and the sort the same:
// the sort's smaller share moves no choice at the bench's sizes, so both
// groups run with the same windows and keys.
TEST(MsmWindow, G2ChoosesG1sWindowsAtTheBenchSizes) {
  auto best = [](std::size_t n, double addition_cost) {
    unsigned b = kMinWindowBits;
    for (unsigned c = kMinWindowBits; c <= kMaxWindowBits; ++c)
      if (window_cost(n, c, addition_cost) < window_cost(n, b, addition_cost)) b = c;
    return b;
  };
  const double g1 = MsmGroupTraits<G1Affine>::kAdditionCost;
  const double g2 = MsmGroupTraits<G2Affine>::kAdditionCost;
  EXPECT_EQ(g1, 1.0);
  for (unsigned log_n : {16u, 20u, 22u, 24u, 26u}) {
    const std::size_t n = std::size_t{1} << log_n;
    EXPECT_EQ(best(n, g2), best(n, g1)) << "log_n " << log_n;
  }
}

TEST(MsmWindow, SlicesShrinkForSmallInputsOnly) {
  EXPECT_EQ(entries_per_thread(std::uint64_t{1} << 30, 1u << 18), 256u);
  EXPECT_EQ(entries_per_thread(1000, 1u << 18), 4u);
}

// The reduction's first fold: 2^6 buckets a thread unless that leaves the
// level under a quarter of the device's threads, then down to 2^3, and
// only for 2^19 buckets or more.
TEST(MsmWindow, ReductionFoldsFewerWhereThreadsWouldBeFew) {
  const std::uint64_t h200 = 132 * 2048;  // SMs x resident threads an SM
  // A sparse 2^26 rest: c = 17, W = 15.
  const std::uint64_t rest = 15 * std::uint64_t{buckets_per_window(17)};
  EXPECT_EQ(reduce_first_log(rest, h200), 3u);
  EXPECT_GE(rest >> reduce_first_log(rest, h200), h200 / 4);
  // Twice the device: one step fewer than the least allowed is enough.
  EXPECT_EQ(reduce_first_log(rest, 2 * h200), 3u);
  EXPECT_EQ(reduce_first_log(rest, h200 / 2), 4u);
  EXPECT_EQ(reduce_first_log(rest, h200 / 8), kReduceFirstGroupLog);
  // A dense 2^26 plan (c = 22, W = 12) has threads enough at 2^6.
  EXPECT_EQ(reduce_first_log(12 * std::uint64_t{buckets_per_window(22)}, h200),
            kReduceFirstGroupLog);
  // Below 2^19 buckets the fold stays, however few threads that leaves.
  EXPECT_EQ(reduce_first_log((std::uint64_t{1} << 19) - 1, h200), kReduceFirstGroupLog);
  EXPECT_EQ(reduce_first_log(std::uint64_t{1} << 19, h200), kReduceGroupLog);
  EXPECT_EQ(reduce_first_log(0, h200), kReduceFirstGroupLog);
}

// A thread's work at a batch, as accumulate_batch counts it.
double lane_work(std::uint64_t entries, std::uint64_t threads, unsigned batch,
                 const AffineStepProducts& p) {
  const std::uint64_t lanes = threads * batch, slice = (entries + lanes - 1) / lanes;
  return double(slice - 1) * (batch * p.affine + p.inversion) + double(batch) * p.mixed;
}

TEST(MsmWindow, AffineBucketsTakeTheBatchOfLeastWork) {
  const std::uint64_t threads = 132 * 256;  // an H200's SMs x the kernel's threads an SM
  // A sparse 2^26 rest: 10 % of 2^26 points, W = 15 windows.
  const std::uint64_t rest = 6'710'886ull * 15;
  const unsigned b = accumulate_batch(rest, threads, 20, kG2AffineSteps);
  EXPECT_EQ(b, 149u);
  EXPECT_EQ((rest + threads * b - 1) / (threads * b), 20u);  // lanes of 20 entries, not 24
  EXPECT_LT(lane_work(rest, threads, b, kG2AffineSteps),
            0.96 * lane_work(rest, threads, 128, kG2AffineSteps));
  // Whatever the size: lanes long enough, no batch in range does less.
  std::mt19937_64 rng(160);
  for (int i = 0; i < 200; ++i) {
    const std::uint64_t entries = 50'000'000 + rng() % 400'000'000;
    const std::uint64_t t = 1024 + rng() % 60'000;
    for (const auto& p : {kG1AffineSteps, kG2AffineSteps}) {
      const unsigned got = accumulate_batch(entries, t, 20, p);
      if (got == 0) {
        EXPECT_LT((entries + t * kAccumulateBatchLeast - 1) / (t * kAccumulateBatchLeast), 20u);
        continue;
      }
      ASSERT_GE(got, kAccumulateBatchLeast);
      ASSERT_LE(got, kAccumulateBatchMost);
      ASSERT_GE((entries + t * got - 1) / (t * got), 20u) << entries << " " << t;
      for (unsigned other = kAccumulateBatchLeast; other <= kAccumulateBatchMost; ++other)
        if ((entries + t * other - 1) / (t * other) >= 20) {
          ASSERT_LE(lane_work(entries, t, got, p), lane_work(entries, t, other, p))
              << entries << " " << t << " " << other;
        }
    }
  }
  // Where 128 lanes would get fewer than 20 entries, none (the plan keeps
  // mixed additions there), though fewer lanes would be long enough.
  const std::uint64_t short_at_128 = threads * 128 * 19;
  EXPECT_EQ(accumulate_batch(short_at_128, threads, 20, kG2AffineSteps), 0u);
  EXPECT_EQ(accumulate_batch(short_at_128 + 1, threads, 20, kG2AffineSteps), 128u);
  // Lanes too short at every batch (a 2^24 rest), no entries or no threads: none.
  EXPECT_EQ(accumulate_batch(1'677'722ull * 15, threads, 20, kG2AffineSteps), 0u);
  EXPECT_EQ(accumulate_batch(0, threads, 20, kG2AffineSteps), 0u);
  EXPECT_EQ(accumulate_batch(rest, 0, 20, kG2AffineSteps), 0u);
}

}  // namespace
}  // namespace stoker::kernels::gpu::detail
