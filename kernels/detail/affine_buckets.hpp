// The CPU MSM's buckets (msm_cpu.cpp), for G1 and G2 alike.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/detail/cpu_group.hpp"

namespace stoker::kernels::detail {

// One thread's buckets for one task, summed in affine coordinates with
// additions in batches that share one inversion (Montgomery's trick): an
// affine addition is then about 6 products (3 for the shared inversion, the
// slope, its square, the new y) against 10 for a mixed XYZZ addition, and
// the inversion itself (about 570 products) is spread over kBatch of them.
// A batch holds at most one addition per bucket; a point for a bucket
// already in the batch waits for the next one. When too many wait (many
// equal digits), they go into XYZZ overflow buckets instead, so no input
// degrades into one inversion per addition.
template <typename Affine>
class AffineBuckets {
  using Xyzz = XyzzOf<Affine>;
  using Field = typename CpuGroup<Affine>::Field;

 public:
  static constexpr std::size_t kBatch = 1024;

  void reset(std::size_t count) {
    sums_.assign(count, Affine::infinity());
    stamp_.assign(count, 0);
    overflow_.clear();
    batch_ = 1;
  }

  // A point at infinity adds nothing; the batch's formula has no room for it.
  void add(std::uint32_t b, const Affine& p) {
    if (p.is_infinity()) return;
    offer(b, p);
    if (pending_.size() >= kBatch) flush();
  }

  // sum_b b B_b (B_b = buckets[b - 1]) after the last additions.
  Xyzz weighted_sum() {
    while (!pending_.empty() || !waiting_.empty()) flush();
    Xyzz running = Xyzz::infinity(), sum = Xyzz::infinity();
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
    Affine point;
  };

  void offer(std::uint32_t b, const Affine& p) {
    Affine& s = sums_[b];
    if (s.is_infinity()) {
      s = p;
    } else if (stamp_[b] == batch_) {
      waiting_.push_back({b, p});
    } else if (s.x == p.x) {
      // The same point (double it, rare: one inversion) or its negation.
      s = s.y == p.y ? to_affine(dbl(to_xyzz(s))) : Affine::infinity();
    } else {
      stamp_[b] = batch_;
      pending_.push_back({b, p});
    }
  }

  void flush() {
    const std::size_t n = pending_.size();
    prefix_.resize(n);
    diff_.resize(n);
    Field acc = Field::one();
    for (std::size_t i = 0; i < n; ++i) {
      prefix_[i] = acc;
      diff_[i] = pending_[i].point.x - sums_[pending_[i].bucket].x;
      acc = acc * diff_[i];
    }
    Field inv = acc.inverse();
    for (std::size_t i = n; i-- > 0;) {
      const Field d_inv = inv * prefix_[i];
      inv = inv * diff_[i];
      Affine& s = sums_[pending_[i].bucket];
      const Affine& p = pending_[i].point;
      const Field lambda = (p.y - s.y) * d_inv;
      const Field x3 = lambda.sqr() - s.x - p.x;
      s.y = lambda * (s.x - x3) - s.y;
      s.x = x3;
    }
    pending_.clear();
    ++batch_;
    retry_.swap(waiting_);
    waiting_.clear();
    if (retry_.size() > kBatch) {
      if (overflow_.empty()) overflow_.assign(sums_.size(), Xyzz::infinity());
      for (const Entry& e : retry_) add_mixed(overflow_[e.bucket], e.point);
    } else {
      for (const Entry& e : retry_) offer(e.bucket, e.point);
    }
    retry_.clear();
  }

  std::vector<Affine> sums_;
  std::vector<std::uint32_t> stamp_;  // the batch a bucket is in
  std::vector<Xyzz> overflow_;        // empty until needed
  std::vector<Entry> pending_, waiting_, retry_;
  std::vector<Field> prefix_, diff_;
  std::uint32_t batch_ = 1;
};

}  // namespace stoker::kernels::detail
