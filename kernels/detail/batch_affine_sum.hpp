// The sum of many affine points by a tree of affine additions: each level
// adds the points in pairs, and the pairs' denominators (x2 - x1, or 2y for
// a doubling) share one field inversion (Montgomery's trick). An affine
// addition then costs about 6 field products (3 for the shared inversion,
// the slope, its square, the new y) against 10 for a mixed XYZZ addition;
// a level's inversion is spread over its pairs, and the tree stops where
// that no longer pays (CpuGroup::kTreeStop), the rest going into an XYZZ
// sum by mixed additions.
//
// Complete (affine_pair.hpp, the pair steps it shares with the GPU's sum of
// a sparse MSM's ones): infinity, P + P and P + (-P) among the inputs. The
// inputs must be on the curve.
//
// BatchAffineSum is one thread's state (its scratch is reused across
// calls); sum_points runs one per thread over ranges of the input.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/detail/affine_pair.hpp"
#include "kernels/detail/cpu_group.hpp"
#include "kernels/detail/parallel.hpp"

namespace stoker::kernels::detail {

template <typename Affine>
class BatchAffineSum {
  using Xyzz = XyzzOf<Affine>;
  using Field = typename CpuGroup<Affine>::Field;

 public:
  // Points gathered per round: the tree's levels down from it take about
  // log2(kChunk / kTreeStop) inversions per kChunk points, and a round's
  // points (1.5 MiB in G1, 3 in G2) stay near the cache.
  static constexpr std::size_t kChunk = std::size_t{1} << 14;

  // acc += get(0) + ... + get(n - 1); get(i) returns an Affine.
  template <typename Get>
  void add(Xyzz& acc, std::size_t n, Get&& get) {
    const std::size_t stop = CpuGroup<Affine>::kTreeStop;
    points_.resize(kChunk + stop);
    // What a round's tree leaves (at most `stop` points) opens the next
    // round, so mixed additions are paid once, at the end.
    std::size_t held = 0;
    for (std::size_t begin = 0; begin < n;) {
      const std::size_t take = std::min(n - begin, kChunk);
      for (std::size_t i = 0; i < take; ++i) points_[held + i] = get(begin + i);
      begin += take;
      held = reduce(held + take, stop);
    }
    for (std::size_t i = 0; i < held; ++i) add_mixed(acc, points_[i]);
  }

 private:
  // Levels over points_[0, m) until at most `stop` are left; returns the count.
  std::size_t reduce(std::size_t m, std::size_t stop) {
    while (m > stop) {
      const std::size_t half = m / 2;
      level(half);
      if (m % 2) points_[half] = points_[m - 1];
      m = half + m % 2;
    }
    return m;
  }

  // points_[i] = points_[i] + points_[i + half] for i < half. Pairing i
  // with i + half lets the results overwrite the first halves in place.
  void level(std::size_t half) {
    kind_.resize(half);
    prefix_.resize(half);
    denom_.resize(half);
    Field acc = Field::one();
    for (std::size_t i = 0; i < half; ++i) {
      const Affine& a = points_[i];
      const Affine& b = points_[i + half];
      const AffinePair k = classify_pair(a, b);
      kind_[i] = k;
      if (k != AffinePair::add && k != AffinePair::dbl) continue;
      denom_[i] = pair_denominator(k, a.x, b.x, a.y);
      prefix_[i] = acc;
      acc = acc * denom_[i];
    }
    Field inv = acc.inverse();
    for (std::size_t i = half; i-- > 0;) {
      const AffinePair k = kind_[i];
      if (k == AffinePair::keep_first) continue;
      Field d_inv = Field::zero();
      if (k == AffinePair::add || k == AffinePair::dbl) {
        d_inv = inv * prefix_[i];
        inv = inv * denom_[i];
      }
      points_[i] = pair_sum(k, points_[i], points_[i + half], d_inv);
    }
  }

  std::vector<Affine> points_;
  std::vector<AffinePair> kind_;
  std::vector<Field> prefix_, denom_;
};

// get(0) + ... + get(n - 1) on `threads` threads (0: hardware), each
// summing a contiguous range by a BatchAffineSum.
template <typename Affine, typename Get>
XyzzOf<Affine> sum_points(std::size_t n, unsigned threads, Get&& get) {
  using Xyzz = XyzzOf<Affine>;
  threads = resolve_threads(threads);
  std::vector<Xyzz> partial(threads, Xyzz::infinity());
  parallel_for(
      n, threads,
      [&](std::size_t t, std::size_t b, std::size_t e) {
        BatchAffineSum<Affine> sum;
        sum.add(partial[t], e - b, [&](std::size_t i) { return get(b + i); });
      },
      /*grain=*/4 * CpuGroup<Affine>::kTreeStop);
  Xyzz total = Xyzz::infinity();
  for (const Xyzz& p : partial) add(total, p);
  return total;
}

}  // namespace stoker::kernels::detail
