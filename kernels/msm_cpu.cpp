// The CPU MSM: Pippenger's bucket method with signed digits, over threads,
// for G1 and G2 alike (the group's types come from detail/cpu_group.hpp).
//
// Witness scalars are mostly 0 and 1. When enough of them are
// (kSplitPercent), the scalars are sorted into three kinds: zeros add
// nothing and are dropped, ones are summed by a tree of batched affine
// additions (detail/batch_affine_sum.hpp, about 6 field products a point),
// and only the rest go through the buckets, whose window is then chosen
// for their count. Otherwise every scalar goes through the buckets, where a
// zero costs its digits' scan and a one an addition in its first window.
//
// Bucket method for window size c: a scalar k < r < 2^255 is rewritten in
// W = ceil(257 / c) signed digits d_w in [-2^(c-1), 2^(c-1)) with
// k = sum_w d_w 2^(cw): adding H = sum_w 2^(c-1) 2^(cw) to k once turns each
// window of k + H, minus 2^(c-1), into its digit, carries already
// propagated (W c >= 257 keeps k + H inside W windows). Window w's sum is
// V_w = sum_i d_(i,w) P_i = sum_b b B_b with bucket B_b collecting the
// points whose digit is +-b (negated for a negative digit): one addition
// per point and window, into 2^(c-1) affine buckets with batched inversions
// (detail/affine_buckets.hpp). sum_b b B_b is the running-sum reduction
// (two XYZZ additions per bucket), and the windows combine by Horner's
// rule: result = sum_w 2^(cw) V_w.
//
// Work is split into tasks (window, range of points), enough of them to
// keep every thread busy; threads take tasks from a shared counter, each
// with its own buckets, and the partial window sums are added at the end.
// Splitting points costs one more bucket reduction per extra range, so it
// is done only when there are fewer windows than threads.
//
// c minimises W (m + 1.4 * 2^c) for m bucketed points: the reduction's
// two XYZZ additions per bucket (2^(c-1) buckets, about 24 Fq products
// each) against about 7 to 10 per point's addition. c is capped at 16 so a
// thread's buckets (2^15 of them) stay near its cache. G2 keeps these
// ratios (each count about 3 times as large, in Fq2's products), so it
// chooses the same windows.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "common/start_thread.hpp"
#include "kernels/detail/affine_buckets.hpp"
#include "kernels/detail/batch_affine_sum.hpp"
#include "kernels/detail/cpu_group.hpp"
#include "kernels/detail/parallel.hpp"
#include "kernels/msm.hpp"

namespace stoker::kernels::cpu {
namespace {

// Split when at least this many percent of the scalars are 0 or 1: with
// none the split's index costs about 1 %, from 2 % on it saves 2 to 3 %
// (G1, 2^16, one thread), and at a witness's 90 % it saves 10 to 25 %.
constexpr std::size_t kSplitPercent = 2;

constexpr unsigned kMaxWindow = 16;
constexpr unsigned kDigitLimbs = 5;  // k + H < 2^(W c) <= 2^(257 + 15) fits 320 bits

unsigned windows_for(unsigned c) {
  return (257 + c - 1) / c;
}

unsigned choose_window(std::size_t m) {
  unsigned best = 1;
  double best_cost = -1;
  for (unsigned c = 1; c <= kMaxWindow; ++c) {
    const double cost = windows_for(c) * (static_cast<double>(m) + 1.4 * double(1u << c));
    if (best_cost < 0 || cost < best_cost) {
      best = c;
      best_cost = cost;
    }
  }
  return best;
}

// The scalar's c-bit window w of k + H, as a signed digit.
struct Recoded {
  std::uint64_t v[kDigitLimbs];
};

Recoded recode(const std::uint64_t k[4], unsigned c, unsigned windows) {
  std::uint64_t h[kDigitLimbs] = {};
  for (unsigned w = 0; w < windows; ++w) {
    const unsigned bit = w * c + c - 1;
    h[bit / 64] |= std::uint64_t{1} << (bit % 64);
  }
  Recoded out;
  unsigned __int128 carry = 0;
  for (unsigned i = 0; i < kDigitLimbs; ++i) {
    carry += static_cast<unsigned __int128>(i < 4 ? k[i] : 0) + h[i];
    out.v[i] = static_cast<std::uint64_t>(carry);
    carry >>= 64;
  }
  return out;
}

int digit(const Recoded& s, unsigned c, unsigned w) {
  const unsigned bit = w * c, limb = bit / 64, shift = bit % 64;
  std::uint64_t x = s.v[limb] >> shift;
  if (shift + c > 64 && limb + 1 < kDigitLimbs) x |= s.v[limb + 1] << (64 - shift);
  const int raw = static_cast<int>(x & ((std::uint64_t{1} << c) - 1));
  return raw - (1 << (c - 1));
}

// Runs f(task) for task in [0, tasks) on `threads` threads pulling from a
// shared counter, f(thread, task) so each thread can keep its own state.
// The first exception f throws ends the tasks not yet taken and is thrown
// here once every thread has joined.
template <typename F>
void run_tasks(std::size_t tasks, unsigned threads, F&& f) {
  const unsigned t = static_cast<unsigned>(std::min<std::size_t>(threads, tasks));
  std::atomic<std::size_t> next{0};
  detail::FirstException thrown;
  auto worker = [&](unsigned id) {
    thrown.run([&] {
      try {
        for (std::size_t task; (task = next.fetch_add(1, std::memory_order_relaxed)) < tasks;)
          f(id, task);
      } catch (...) {
        next.store(tasks, std::memory_order_relaxed);
        throw;
      }
    });
  };
  // Fewer threads pull the tasks where the system refuses some.
  std::vector<std::thread> pool;
  for (unsigned i = 1; i < t; ++i) {
    std::thread th;
    if (common::start_thread(th, "an MSM thread", [&worker, i] { worker(i); })) break;
    pool.push_back(std::move(th));
  }
  worker(0);
  for (auto& th : pool) th.join();
  thrown.rethrow();
}

// sum_j scalars[index(j)] points[index(j)] for j < m by the bucket method.
template <typename Affine, typename Index>
detail::XyzzOf<Affine> bucket_msm(const Affine* points, const Fr* scalars, std::size_t m,
                                  Index index, unsigned threads) {
  using Xyzz = detail::XyzzOf<Affine>;
  if (m == 0) return Xyzz::infinity();
  const unsigned c = choose_window(m);
  const unsigned windows = windows_for(c);
  std::vector<Recoded> digits(m);
  detail::parallel_for(m, threads, [&](std::size_t b, std::size_t e) {
    for (std::size_t j = b; j < e; ++j) {
      std::uint64_t k[4];
      scalars[index(j)].to_canonical(k);
      digits[j] = recode(k, c, windows);
    }
  });

  // Point ranges per window: enough tasks for every thread, each range at
  // least a few thousand points so its bucket reduction stays small beside
  // its additions.
  std::size_t ranges = (threads + windows - 1) / windows;
  ranges = std::max<std::size_t>(1, std::min<std::size_t>(ranges, m / 4096));
  const std::size_t range = (m + ranges - 1) / ranges;
  std::vector<Xyzz> partial(std::size_t{windows} * ranges, Xyzz::infinity());
  std::vector<detail::AffineBuckets<Affine>> buckets(threads);
  run_tasks(partial.size(), threads, [&](unsigned id, std::size_t task) {
    const unsigned w = static_cast<unsigned>(task / ranges);
    const std::size_t r = task % ranges, b = r * range, e = std::min(m, b + range);
    detail::AffineBuckets<Affine>& bk = buckets[id];
    bk.reset(std::size_t{1} << (c - 1));
    for (std::size_t j = b; j < e; ++j) {
      const int d = digit(digits[j], c, w);
      if (d > 0)
        bk.add(static_cast<std::uint32_t>(d - 1), points[index(j)]);
      else if (d < 0)
        bk.add(static_cast<std::uint32_t>(-d - 1), neg(points[index(j)]));
    }
    partial[task] = bk.weighted_sum();
  });

  Xyzz acc = Xyzz::infinity();
  for (unsigned w = windows; w-- > 0;) {
    for (unsigned i = 0; i < c; ++i) acc = dbl(acc);
    for (std::size_t r = 0; r < ranges; ++r) add(acc, partial[std::size_t{w} * ranges + r]);
  }
  return acc;
}

template <typename Affine>
detail::XyzzOf<Affine> msm_of(const Affine* points, const Fr* scalars, std::size_t n,
                              unsigned threads, MsmSplit split) {
  threads = detail::resolve_threads(threads);
  const Fr one = Fr::one();
  const auto adds_nothing = [&](std::size_t i) {
    return scalars[i].is_zero() || points[i].is_infinity();
  };

  if (split == MsmSplit::automatic) {
    std::vector<std::size_t> trivial(threads, 0);
    detail::parallel_for(
        n, threads,
        [&](std::size_t t, std::size_t b, std::size_t e) {
          std::size_t count = 0;
          for (std::size_t i = b; i < e; ++i) count += adds_nothing(i) || scalars[i] == one;
          trivial[t] = count;
        },
        /*grain=*/std::size_t{1} << 16);
    std::size_t total = 0;
    for (std::size_t t : trivial) total += t;
    split = total * 100 >= n * kSplitPercent ? MsmSplit::always : MsmSplit::never;
  }
  if (split == MsmSplit::never)
    return bucket_msm(
        points, scalars, n, [](std::size_t j) { return j; }, threads);

  std::vector<std::size_t> ones, rest;
  for (std::size_t i = 0; i < n; ++i) {
    if (adds_nothing(i)) continue;
    (scalars[i] == one ? ones : rest).push_back(i);
  }
  auto result = detail::sum_points<Affine>(ones.size(), threads,
                                           [&](std::size_t j) { return points[ones[j]]; });
  add(result, bucket_msm(
                  points, scalars, rest.size(), [&](std::size_t j) { return rest[j]; }, threads));
  return result;
}

}  // namespace

ScalarSplitCounts count_split(const Fr* scalars, std::size_t n, unsigned threads) {
  ScalarSplitCounts c;
  const std::size_t t = detail::resolve_threads(threads);
  // A range per thread, of at least 64K scalars: fewer are not worth one.
  c.range_size = std::max<std::size_t>(std::size_t{1} << 16, (n + t - 1) / t);
  const std::size_t ranges = (n + c.range_size - 1) / c.range_size;
  std::vector<std::size_t> ones(ranges, 0), rest(ranges, 0);
  const Fr one = Fr::one();
  detail::parallel_for(
      ranges, threads,
      [&](std::size_t rb, std::size_t re) {
        for (std::size_t r = rb; r < re; ++r) {
          std::size_t o = 0, x = 0;
          const std::size_t end = std::min(n, (r + 1) * c.range_size);
          for (std::size_t i = r * c.range_size; i < end; ++i) {
            if (scalars[i].is_zero()) continue;
            if (scalars[i] == one)
              ++o;
            else
              ++x;
          }
          ones[r] = o;
          rest[r] = x;
        }
      },
      1);
  c.ones_before.resize(ranges);
  c.rest_before.resize(ranges);
  for (std::size_t r = 0; r < ranges; ++r) {
    c.ones_before[r] = c.ones;
    c.rest_before[r] = c.rest;
    c.ones += ones[r];
    c.rest += rest[r];
  }
  return c;
}

void split_scalars_into(const ScalarSplitCounts& c, const Fr* scalars, std::size_t n,
                        std::uint32_t* ones, std::uint32_t* rest, Fr* rest_scalars,
                        unsigned threads) {
  const Fr one = Fr::one();
  detail::parallel_for(
      c.ones_before.size(), threads,
      [&](std::size_t rb, std::size_t re) {
        for (std::size_t r = rb; r < re; ++r) {
          std::uint32_t* o = ones + c.ones_before[r];
          std::uint32_t* x = rest + c.rest_before[r];
          Fr* xs = rest_scalars + c.rest_before[r];
          const std::size_t end = std::min(n, (r + 1) * c.range_size);
          for (std::size_t i = r * c.range_size; i < end; ++i) {
            if (scalars[i].is_zero()) continue;
            const auto index = static_cast<std::uint32_t>(i);
            if (scalars[i] == one) {
              *o++ = index;
            } else {
              *x++ = index;
              *xs++ = scalars[i];
            }
          }
        }
      },
      1);
}

ScalarSplit split_scalars(const Fr* scalars, std::size_t n, unsigned threads) {
  const auto counts = count_split(scalars, n, threads);
  ScalarSplit out;
  out.ones.resize(counts.ones);
  out.rest.resize(counts.rest);
  out.rest_scalars.resize(counts.rest);
  split_scalars_into(counts, scalars, n, out.ones.data(), out.rest.data(), out.rest_scalars.data(),
                     threads);
  return out;
}

G1Xyzz msm(const G1Affine* points, const Fr* scalars, std::size_t n, unsigned threads) {
  return msm_of(points, scalars, n, threads, MsmSplit::automatic);
}
G1Xyzz msm(const G1Affine* points, const Fr* scalars, std::size_t n, unsigned threads,
           MsmSplit split) {
  return msm_of(points, scalars, n, threads, split);
}
G2Xyzz msm(const G2Affine* points, const Fr* scalars, std::size_t n, unsigned threads) {
  return msm_of(points, scalars, n, threads, MsmSplit::automatic);
}
G2Xyzz msm(const G2Affine* points, const Fr* scalars, std::size_t n, unsigned threads,
           MsmSplit split) {
  return msm_of(points, scalars, n, threads, split);
}

}  // namespace stoker::kernels::cpu
