// CPU point check: on the curve point by point, and in the group by a
// batched test (see check_points in msm.hpp): 64 random subsets of the
// points, each subset's sum tested exactly (g1.cuh's and g2.cuh's
// in_subgroup), the per-point test only where a sum fails, to name the
// first bad point.
//
// Why a batch is sound: write each point as its part in the group plus a
// part T_i in the cofactor's torsion (the group's order is prime to the
// cofactor). A subset's sum is in the group iff the sum of its points' T_i
// is zero. If some T_j is not zero, fix every coin but point j's: of its
// two values at most one makes that sum zero (both would need T_j = 0). So
// each subset misses a bad point with probability at most 1/2, and 64
// independent subsets miss it with at most 2^-64, whatever the cofactor's
// primes. The coins come from the operating system's CSPRNG (getrandom),
// after the points are read: a file cannot be made to fit them.
//
// Cost: each point joins 32 subsets on average, 32 mixed additions: about
// 320 Fq products in G1 against about 1020 for its own test, about 900
// against 1150 in G2 (over Fq2); below kBatchFrom points the per-point
// test is cheaper than the 64 sums' tests.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <span>
#include <vector>

#include "common/os_random.hpp"
#include "kernels/detail/group_batch_check.hpp"
#include "kernels/detail/parallel.hpp"
#include "kernels/g1.cuh"
#include "kernels/g2.cuh"
#include "kernels/msm.hpp"

namespace stoker::kernels::cpu {
namespace {

constexpr int kSubsets = 64;
constexpr std::size_t kBatchFrom = 4096;
constexpr std::size_t kCoinsAtOnce = 4096;  // 32 KiB of coins a getrandom call

template <typename Affine>
std::size_t first_bad_point_by_point(const Affine* points, std::size_t n, unsigned threads) {
  const unsigned t = kernels::detail::resolve_threads(threads);
  std::vector<std::size_t> first(t, n);
  kernels::detail::parallel_for(
      n, t,
      [&](std::size_t thread, std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i)
          if (!on_curve(points[i]) || !in_subgroup(points[i])) {
            first[thread] = i;
            return;
          }
      },
      /*grain=*/256);
  return *std::min_element(first.begin(), first.end());
}

template <typename Affine>
std::size_t first_off_curve(const Affine* points, std::size_t n, unsigned t) {
  std::vector<std::size_t> first(t, n);
  kernels::detail::parallel_for(n, t, [&](std::size_t thread, std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i)
      if (!on_curve(points[i])) {
        first[thread] = i;
        return;
      }
  });
  return *std::min_element(first.begin(), first.end());
}

// Whether every point of [0, n), all on the curve, is in the group, but
// for a chance of at most 2^-64 (the file comment); false too when the
// coins could not be had.
template <typename Affine, typename Xyzz>
bool batch_in_group(const Affine* points, std::size_t n, unsigned t) {
  std::vector<std::array<Xyzz, kSubsets>> sums(t);
  for (auto& s : sums) s.fill(Xyzz::infinity());
  std::vector<char> coins_missing(t, 0);
  kernels::detail::parallel_for(n, t, [&](std::size_t thread, std::size_t b, std::size_t e) {
    auto& s = sums[thread];
    std::vector<std::uint64_t> coins(std::min(kCoinsAtOnce, e - b));
    for (std::size_t at = b; at < e; at += coins.size()) {
      const std::size_t m = std::min(coins.size(), e - at);
      // No coins (a broken system): the per-point test rather than a pass
      // on coins it did not get.
      if (common::os_random(std::as_writable_bytes(std::span(coins.data(), m)))) {
        coins_missing[thread] = 1;
        return;
      }
      for (std::size_t i = 0; i < m; ++i)
        for (std::uint64_t c = coins[i]; c; c &= c - 1)  // point at + i joins subset k
          add_mixed(s[std::countr_zero(c)], points[at + i]);
    }
  });
  if (std::find(coins_missing.begin(), coins_missing.end(), 1) != coins_missing.end())
    return false;
  for (int k = 0; k < kSubsets; ++k) {
    Xyzz total = Xyzz::infinity();
    for (const auto& s : sums) add(total, s[k]);
    if (!in_subgroup(to_affine(total))) return false;
  }
  return true;
}

template <typename Affine, typename Xyzz>
std::size_t first_bad(const Affine* points, std::size_t n, unsigned threads) {
  if (n < kBatchFrom) return first_bad_point_by_point(points, n, threads);
  const unsigned t = kernels::detail::resolve_threads(threads);
  // Points past the first one off the curve cannot change the answer.
  const std::size_t on = first_off_curve(points, n, t);
  if (on >= kBatchFrom && batch_in_group<Affine, Xyzz>(points, on, t)) return on;
  return first_bad_point_by_point(points, on, threads);
}

}  // namespace

namespace detail {
bool all_in_group(const G1Affine* points, std::size_t n, unsigned threads) {
  return batch_in_group<G1Affine, G1Xyzz>(points, n, kernels::detail::resolve_threads(threads));
}
bool all_in_group(const G2Affine* points, std::size_t n, unsigned threads) {
  return batch_in_group<G2Affine, G2Xyzz>(points, n, kernels::detail::resolve_threads(threads));
}
}  // namespace detail

std::size_t check_points(const G1Affine* points, std::size_t n, unsigned threads) {
  return first_bad<G1Affine, G1Xyzz>(points, n, threads);
}
std::size_t check_points(const G2Affine* points, std::size_t n, unsigned threads) {
  return first_bad<G2Affine, G2Xyzz>(points, n, threads);
}

}  // namespace stoker::kernels::cpu
