// CPU point check: on the curve point by point, and in the group by a
// batched test (see check_points in msm.hpp): each point joins one random
// bucket in each of W windows of 2^c - 1 buckets, each bucket's sum tested
// exactly (g1.cuh's and g2.cuh's in_subgroup), the per-point test only
// where a sum fails, to name the first bad point. The GPU's check does the
// same (point_check_gpu.cu); kernels/detail/point_check_batch.hpp says why
// a point outside the group passes with probability at most 2^-(c W) <=
// 2^-64. Here the coins come straight from the operating system's CSPRNG
// (getrandom), 16 bytes a point, after the points are read: a file cannot
// be made to fit them.
//
// Cost: W mixed additions a point (G1: about 10 Fq products each, against
// about 1020 for the point's own test), each thread's buckets summed into
// one set (an XYZZ addition a bucket and thread) and W (2^c - 1) tests (an
// inversion and a membership test each, about 150 additions' worth). A
// batch of 64 random subsets' sums, as sound, costs 32 additions a point:
// a 2^16 bellman key's checked read took 3.39 s so against 2.44 s on a VM
// of 2 cores.
#include <algorithm>
#include <array>
#include <atomic>
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

constexpr std::size_t kBatchFrom = 4096;
constexpr std::size_t kCoinsAtOnce = 2048;  // 32 KiB of coins a getrandom call
constexpr unsigned kSecurityBits = 64;
// Each thread's buckets: G2's 6 windows of 2^11 are 4.7 MB; all threads'
// together at most kMaxBucketBytes (a host of 128 threads would otherwise
// hold 600 MB of them), but for the smallest buckets.
constexpr unsigned kMinBucketBits = 4, kMaxBucketBits = 11;
constexpr std::size_t kMaxBucketBytes = std::size_t{256} << 20;
constexpr double kTestCost = 150.0, kMergeCost = 1.4;  // in mixed additions

struct BucketShape {
  unsigned c = 0, windows = 0;
};

// The file comment's costs for n points on t threads, the least over c
// whose buckets (of `bucket_bytes` each) fit kMaxBucketBytes.
BucketShape bucket_shape(std::size_t n, unsigned t, std::size_t bucket_bytes) {
  BucketShape best;
  double best_cost = 0;
  for (unsigned c = kMinBucketBits; c <= kMaxBucketBits; ++c) {
    const unsigned w = (kSecurityBits + c - 1) / c;
    if (c > kMinBucketBits &&
        std::size_t{t} * w * (std::size_t{1} << c) * bucket_bytes > kMaxBucketBytes)
      break;
    const double buckets = double(w) * double((1u << c) - 1);
    const double cost = double(n) * w + buckets * (kMergeCost * t + kTestCost);
    if (best.c == 0 || cost < best_cost) {
      best = {c, w};
      best_cost = cost;
    }
  }
  return best;
}

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
  const BucketShape shape = bucket_shape(n, t, sizeof(Xyzz));
  // Window w's digit d != 0 is bucket w 2^c + d - 1 (0: no bucket).
  const std::size_t per_window = std::size_t{1} << shape.c;
  const std::size_t total = shape.windows * per_window;
  std::vector<std::vector<Xyzz>> buckets(t);
  std::vector<char> coins_missing(t, 0);
  kernels::detail::parallel_for(n, t, [&](std::size_t thread, std::size_t b, std::size_t e) {
    auto& s = buckets[thread];
    s.assign(total, Xyzz::infinity());
    std::vector<std::array<std::uint64_t, 2>> coins(std::min(kCoinsAtOnce, e - b));
    for (std::size_t at = b; at < e; at += coins.size()) {
      const std::size_t m = std::min(coins.size(), e - at);
      // No coins (a broken system): the per-point test rather than a pass
      // on coins it did not get.
      if (common::os_random(std::as_writable_bytes(std::span(coins.data(), m)))) {
        coins_missing[thread] = 1;
        return;
      }
      for (std::size_t i = 0; i < m; ++i) {
        unsigned __int128 coin = (static_cast<unsigned __int128>(coins[i][1]) << 64) | coins[i][0];
        for (unsigned w = 0; w < shape.windows; ++w, coin >>= shape.c) {
          const std::size_t d = static_cast<std::size_t>(coin) & (per_window - 1);
          if (d) add_mixed(s[w * per_window + d - 1], points[at + i]);
        }
      }
    }
  });
  if (std::find(coins_missing.begin(), coins_missing.end(), 1) != coins_missing.end())
    return false;
  // Each bucket summed over the threads that ran, then tested.
  std::atomic<bool> failed{false};
  kernels::detail::parallel_for(
      total, t,
      [&](std::size_t, std::size_t b, std::size_t e) {
        for (std::size_t k = b; k < e && !failed.load(std::memory_order_relaxed); ++k) {
          Xyzz sum = Xyzz::infinity();
          for (const auto& s : buckets)
            if (!s.empty()) add(sum, s[k]);
          if (!in_subgroup(to_affine(sum))) failed.store(true, std::memory_order_relaxed);
        }
      },
      /*grain=*/64);
  return !failed.load();
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
