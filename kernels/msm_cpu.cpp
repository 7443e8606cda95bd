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
// points whose digit is +-b (negated for a negative digit): one addition
// per point and window, into 2^(c-1) affine buckets with batched inversions
// (AffineBuckets below). sum_b b B_b is the running-sum reduction (two XYZZ
// additions per bucket), and the windows combine by Horner's rule:
// result = sum_w 2^(cw) V_w.
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
// thread's buckets (2^15 of them) stay near its cache.
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

// One thread's buckets for one task, summed in affine coordinates with
// additions in batches that share one inversion (Montgomery's trick): an
// affine addition is then about 6 products (3 for the shared inversion, the
// slope, its square, the new y) against 10 for a mixed XYZZ addition, and
// the inversion itself (about 570 products) is spread over kBatch of them.
// A batch holds at most one addition per bucket; a point for a bucket
// already in the batch waits for the next one. When too many wait (many
// equal digits), they go into XYZZ overflow buckets instead, so no input
// degrades into one inversion per addition.
class AffineBuckets {
 public:
  static constexpr std::size_t kBatch = 1024;

  void reset(std::size_t count) {
    sums_.assign(count, G1Affine::infinity());
    stamp_.assign(count, 0);
    overflow_.clear();
    batch_ = 1;
  }

  void add(std::uint32_t b, const G1Affine& p) {
    offer(b, p);
    if (pending_.size() >= kBatch) flush();
  }

  // sum_b b B_b (B_b = buckets[b - 1]) after the last additions.
  G1Xyzz weighted_sum() {
    while (!pending_.empty() || !waiting_.empty()) flush();
    G1Xyzz running = G1Xyzz::infinity(), sum = G1Xyzz::infinity();
    for (std::size_t b = sums_.size(); b-- > 0;) {
      add_mixed(running, sums_[b]);
      if (!overflow_.empty()) kernels::add(running, overflow_[b]);
      kernels::add(sum, running);
    }
    return sum;
  }

 private:
  struct Entry {
    std::uint32_t bucket;
    G1Affine point;
  };

  void offer(std::uint32_t b, const G1Affine& p) {
    G1Affine& s = sums_[b];
    if (s.is_infinity()) {
      s = p;
    } else if (stamp_[b] == batch_) {
      waiting_.push_back({b, p});
    } else if (s.x == p.x) {
      // The same point (double it, rare: one inversion) or its negation.
      s = s.y == p.y ? to_affine(dbl(to_xyzz(s))) : G1Affine::infinity();
    } else {
      stamp_[b] = batch_;
      pending_.push_back({b, p});
    }
  }

  void flush() {
    const std::size_t n = pending_.size();
    prefix_.resize(n);
    diff_.resize(n);
    Fq acc = Fq::one();
    for (std::size_t i = 0; i < n; ++i) {
      prefix_[i] = acc;
      diff_[i] = pending_[i].point.x - sums_[pending_[i].bucket].x;
      acc = acc * diff_[i];
    }
    Fq inv = acc.inverse();
    for (std::size_t i = n; i-- > 0;) {
      const Fq d_inv = inv * prefix_[i];
      inv = inv * diff_[i];
      G1Affine& s = sums_[pending_[i].bucket];
      const G1Affine& p = pending_[i].point;
      const Fq lambda = (p.y - s.y) * d_inv;
      const Fq x3 = lambda.sqr() - s.x - p.x;
      s.y = lambda * (s.x - x3) - s.y;
      s.x = x3;
    }
    pending_.clear();
    ++batch_;
    retry_.swap(waiting_);
    waiting_.clear();
    if (retry_.size() > kBatch) {
      if (overflow_.empty()) overflow_.assign(sums_.size(), G1Xyzz::infinity());
      for (const Entry& e : retry_) add_mixed(overflow_[e.bucket], e.point);
    } else {
      for (const Entry& e : retry_) offer(e.bucket, e.point);
    }
    retry_.clear();
  }

  std::vector<G1Affine> sums_;
  std::vector<std::uint32_t> stamp_;  // the batch a bucket is in
  std::vector<G1Xyzz> overflow_;      // empty until needed
  std::vector<Entry> pending_, waiting_, retry_;
  std::vector<Fq> prefix_, diff_;
  std::uint32_t batch_ = 1;
};

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
  std::vector<AffineBuckets> buckets(threads);
  run_tasks(partial.size(), threads, [&](unsigned id, std::size_t task) {
    const unsigned w = static_cast<unsigned>(task / ranges);
    const std::size_t r = task % ranges, b = r * range, e = std::min(m, b + range);
    AffineBuckets& bk = buckets[id];
    bk.reset(std::size_t{1} << (c - 1));
    for (std::size_t j = b; j < e; ++j) {
      const int d = digit(digits[j], c, w);
      if (d > 0)
        bk.add(static_cast<std::uint32_t>(d - 1), points[big[j]]);
      else if (d < 0)
        bk.add(static_cast<std::uint32_t>(-d - 1), neg(points[big[j]]));
    }
    partial[task] = bk.weighted_sum();
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
