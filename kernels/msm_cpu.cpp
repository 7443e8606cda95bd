// The CPU MSM: Pippenger's bucket method with signed digits, over threads.
//
// Scalars are first sorted into three kinds. Zeros add nothing and are
// dropped; ones (the bulk of a prover's A, B and L scalars) are summed with
// plain mixed additions, one per point, split over the threads; the rest go
// through the buckets.
//
// Bucket method for window size c: a scalar k < r < 2^255 is rewritten in
// W = ceil(257 / c) signed digits d_w in [-2^(c-1), 2^(c-1)) with
// k = sum_w d_w 2^(cw): adding H = sum_w 2^(c-1) 2^(cw) to k once turns each
// window of k + H, minus 2^(c-1), into its digit, carries already
// propagated (W c >= 257 keeps k + H inside W windows). Window w's sum is
// V_w = sum_i d_(i,w) P_i = sum_b b B_b with bucket B_b collecting the
// points whose digit is +-b (negated for a negative digit): one mixed
// addition per point and window, 2^(c-1) buckets. sum_b b B_b is the
// running-sum reduction (two XYZZ additions per bucket), and the windows
// combine by Horner's rule: result = sum_w 2^(cw) V_w.
//
// Work is split into tasks (window, range of points), enough of them to
// keep every thread busy; threads take tasks from a shared counter, each
// with its own buckets, and the partial window sums are added at the end.
// Splitting points costs one more bucket reduction per extra range, so it
// is done only when there are fewer windows than threads.
//
// c minimises W (m + 1.4 * 2^c) for m bucketed points: a mixed addition
// costs about 10 Fq products and the reduction two XYZZ additions (28) per
// bucket. c is capped at 16 so a thread's buckets (2^15 x 192 bytes =
// 6 MiB) stay near its cache.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "kernels/detail/parallel.hpp"
#include "kernels/msm.hpp"

namespace stoker::kernels::cpu {
namespace {

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

// sum_b b B_b over buckets[0..m) holding B_1..B_m.
G1Xyzz reduce_buckets(const std::vector<G1Xyzz>& buckets) {
  G1Xyzz running = G1Xyzz::infinity(), sum = G1Xyzz::infinity();
  for (std::size_t b = buckets.size(); b-- > 0;) {
    add(running, buckets[b]);
    add(sum, running);
  }
  return sum;
}

// Runs f(task) for task in [0, tasks) on `threads` threads pulling from a
// shared counter, f(thread, task) so each thread can keep its own state.
template <typename F>
void run_tasks(std::size_t tasks, unsigned threads, F&& f) {
  const unsigned t = static_cast<unsigned>(std::min<std::size_t>(threads, tasks));
  std::atomic<std::size_t> next{0};
  auto worker = [&](unsigned id) {
    for (std::size_t task; (task = next.fetch_add(1, std::memory_order_relaxed)) < tasks;)
      f(id, task);
  };
  std::vector<std::thread> pool;
  for (unsigned i = 1; i < t; ++i) pool.emplace_back(worker, i);
  worker(0);
  for (auto& th : pool) th.join();
}

}  // namespace

G1Xyzz msm(const G1Affine* points, const Fr* scalars, std::size_t n, unsigned threads) {
  threads = detail::resolve_threads(threads);

  // Sort the scalars: the ones' points and the others' indices.
  const Fr one = Fr::one();
  std::vector<std::size_t> ones, big;
  for (std::size_t i = 0; i < n; ++i) {
    if (scalars[i].is_zero() || points[i].is_infinity()) continue;
    (scalars[i] == one ? ones : big).push_back(i);
  }

  // Ones: plain additions, one partial sum per range.
  std::vector<G1Xyzz> one_sums(threads, G1Xyzz::infinity());
  detail::parallel_for(
      ones.size(), threads,
      [&](std::size_t t, std::size_t b, std::size_t e) {
        G1Xyzz acc = G1Xyzz::infinity();
        for (std::size_t j = b; j < e; ++j) add_mixed(acc, points[ones[j]]);
        one_sums[t] = acc;
      },
      1024);
  G1Xyzz result = G1Xyzz::infinity();
  for (const G1Xyzz& s : one_sums) add(result, s);
  if (big.empty()) return result;

  const std::size_t m = big.size();
  const unsigned c = choose_window(m);
  const unsigned windows = windows_for(c);
  std::vector<Recoded> digits(m);
  detail::parallel_for(m, threads, [&](std::size_t b, std::size_t e) {
    for (std::size_t j = b; j < e; ++j) {
      std::uint64_t k[4];
      scalars[big[j]].to_canonical(k);
      digits[j] = recode(k, c, windows);
    }
  });

  // Point ranges per window: enough tasks for every thread, each range at
  // least a few thousand points so its bucket reduction stays small beside
  // its additions.
  std::size_t ranges = (threads + windows - 1) / windows;
  ranges = std::max<std::size_t>(1, std::min<std::size_t>(ranges, m / 4096));
  const std::size_t range = (m + ranges - 1) / ranges;
  std::vector<G1Xyzz> partial(std::size_t{windows} * ranges, G1Xyzz::infinity());
  std::vector<std::vector<G1Xyzz>> buckets(threads);
  run_tasks(partial.size(), threads, [&](unsigned id, std::size_t task) {
    const unsigned w = static_cast<unsigned>(task / ranges);
    const std::size_t r = task % ranges, b = r * range, e = std::min(m, b + range);
    std::vector<G1Xyzz>& bk = buckets[id];
    bk.assign(std::size_t{1} << (c - 1), G1Xyzz::infinity());
    for (std::size_t j = b; j < e; ++j) {
      const int d = digit(digits[j], c, w);
      if (d > 0)
        add_mixed(bk[d - 1], points[big[j]]);
      else if (d < 0)
        add_mixed(bk[-d - 1], neg(points[big[j]]));
    }
    partial[task] = reduce_buckets(bk);
  });

  G1Xyzz acc = G1Xyzz::infinity();
  for (unsigned w = windows; w-- > 0;) {
    for (unsigned i = 0; i < c; ++i) acc = dbl(acc);
    for (std::size_t r = 0; r < ranges; ++r) add(acc, partial[std::size_t{w} * ranges + r]);
  }
  add(result, acc);
  return result;
}

}  // namespace stoker::kernels::cpu
