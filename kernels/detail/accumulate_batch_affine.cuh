// The bucket sums' first level by batched affine additions (msm.hpp,
// MsmPlan::accumulate_batch), one GPU thread's share: the same runs and
// heads as msm_accumulate.cuh's mixed additions, at about 0.8x their
// products in G2.
//
// The sorted entries are cut into lanes of `lane` entries; lane g is what a
// slice is to accumulate_kernel: a run that starts in it is its own and
// goes to its bucket, the run it starts in (begun in an earlier lane) goes
// to heads[g] with its key for the join levels, in affine form (the first
// join level adds it by a mixed addition: 28 Fq products in G2 against 40
// for XYZZ + XYZZ, and half the bytes). Thread t walks
// lanes t * batch .. t * batch + batch - 1 side by side, one entry of each
// a round, each lane's running sum an affine accumulator in scratch. A
// round's entries that continue their lane's run are added to it, and the
// denominators of those additions (x2 - x1, or 2y for a doubling) share
// one field inversion (Montgomery's trick: a prefix product forward, the
// inverse walked back); an entry that starts a run opens the accumulator
// with its point, and the run it ends goes out first, as XYZZ.
//
// Per G2 addition that is 17 Fq products plus the inversion's 463 spread
// over the round's additions (3.6 at 128 lanes): about 20.6 against 28 for
// a mixed addition; the join levels then take one mixed addition per lane
// whose first run began before it. In G1 the same count is 9.6 against 10,
// a gain on paper smaller than the scratch traffic it adds (the ones' form
// measured slower in G1), so G1 keeps mixed additions (ones_batch_affine.cuh
// says the same of the ones). What a lane's state is (whether it holds a run, which, and whether
// that run is its head) follows from the sorted keys: the routine keeps
// no more than the accumulators and prefixes in scratch.
//
// Only the plan's shape of one part with the whole bucket range (the first
// part's keys start at 0, and no bucket holds an earlier part's sum):
// lanes store to their buckets. Keys at or above `hi` are zero digits.
//
// __host__ __device__ over a memory policy, so that the host tests run the
// same steps as the kernel over plain memory:
//   std::uint32_t Mem::key(std::size_t)      sorted key of entry i
//   std::uint32_t Mem::value(std::size_t)    its value: point index, sign in bit 31
//   Affine Mem::point(std::uint32_t value)   the entry's point (negated by the sign)
//   Field  Mem::point_x(std::uint32_t value) its x alone
//   Affine Mem::acc(unsigned j)              lane j's accumulator (of this thread)
//   Field  Mem::acc_x(unsigned j)
//   void   Mem::set_acc(unsigned j, const Affine&)
//   Field  Mem::prefix(unsigned j)           lane j's prefix product
//   void   Mem::set_prefix(unsigned j, const Field&)
//   void   Mem::bucket(std::uint32_t key, const Xyzz&)   a run's sum, its owner's
//   void   Mem::head(std::size_t lane, std::uint32_t key, const Affine&)
//   void   Mem::no_head(std::size_t lane)
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/host_device.hpp"
#include "kernels/detail/affine_pair.hpp"
#include "kernels/detail/msm_group.hpp"

namespace stoker::kernels::gpu::detail {

template <typename Affine, typename Mem>
STOKER_HD void accumulate_batch_affine(Mem& mem, std::size_t count, unsigned lane, unsigned batch,
                                       std::size_t t, std::uint32_t hi) {
  using Field = kernels::detail::FieldOf<Affine>;
  using kernels::detail::AffinePair;
  const std::size_t first_lane = t * batch;
  auto begin_of = [&](unsigned j) { return (first_lane + j) * lane; };
  auto end_of = [&](unsigned j) {
    const std::size_t e = begin_of(j) + lane;
    return e < count ? e : count;
  };
  // The lanes that have entries: the last thread's may have fewer.
  unsigned lanes = 0;
  while (lanes < batch && begin_of(lanes) < count) ++lanes;

  constexpr std::uint32_t kNone = ~std::uint32_t{0};
  // The key of the run a lane starting at b starts in, where that run began
  // before it (the lane's head), else kNone.
  auto head_key = [&](std::size_t b) {
    const std::uint32_t k = b > 0 ? mem.key(b) : kNone;
    return k < hi && k == mem.key(b - 1) ? k : kNone;
  };
  // Entry `at` of lane [b, e) continues its run: the pair a round adds.
  auto continues = [&](std::size_t b, std::size_t e, std::size_t at) {
    if (at == b || at >= e) return false;
    const std::uint32_t k = mem.key(at);
    return k < hi && k == mem.key(at - 1);
  };
  for (unsigned j = 0; j < lanes; ++j)
    if (head_key(begin_of(j)) == kNone) mem.no_head(first_lane + j);
  // Round r looks at entry b + r of each lane; round `lane` is one past
  // every lane's end, where the last runs go out.
  for (unsigned r = 0; r <= lane; ++r) {
    Field product = Field::one();
    bool pairs = false;
    for (unsigned j = 0; j < lanes; ++j) {
      const std::size_t b = begin_of(j), e = end_of(j), at = b + r;
      if (at > e) continue;  // a short last lane, done
      const std::uint32_t k = at < e ? mem.key(at) : kNone;
      const bool in = k < hi;
      // The lane's run so far (entries b .. at - 1 of one key), if any.
      const std::uint32_t cur = at > b ? mem.key(at - 1) : kNone;
      const bool pair = in && k == cur;  // continues(b, e, at)
      if (cur < hi && !pair) {
        // The run `cur` ends at `at`: its head if it began before the
        // lane (then it is the lane's first run), else its bucket's.
        if (head_key(b) == cur)
          mem.head(first_lane + j, cur, mem.acc(j));
        else
          mem.bucket(cur, to_xyzz(mem.acc(j)));
      }
      if (!in) continue;
      const std::uint32_t v = mem.value(at);
      if (!pair) {
        mem.set_acc(j, mem.point(v));
        continue;
      }
      pairs = true;
      const Field ax = mem.acc_x(j), bx = mem.point_x(v);
      Field ay;
      const AffinePair kind =
          kernels::detail::classify_pair(ax, bx, [&](Field& a_y, Field& b_y) {
            a_y = ay = mem.acc(j).y;
            b_y = mem.point(v).y;
          });
      if (kind != AffinePair::add && kind != AffinePair::dbl) continue;
      mem.set_prefix(j, product);
      product = product * kernels::detail::pair_denominator(kind, ax, bx, ay);
    }
    if (!pairs) continue;
    Field inverse = product.inverse();
    for (unsigned j = lanes; j-- > 0;) {
      const std::size_t b = begin_of(j), e = end_of(j), at = b + r;
      if (!continues(b, e, at)) continue;
      const Affine a = mem.acc(j), p = mem.point(mem.value(at));
      const AffinePair kind = kernels::detail::classify_pair(a, p);
      if (kind == AffinePair::keep_first) continue;
      Field d_inverse = Field::zero();
      if (kind == AffinePair::add || kind == AffinePair::dbl) {
        d_inverse = inverse * mem.prefix(j);
        inverse = inverse * kernels::detail::pair_denominator(kind, a.x, p.x, a.y);
      }
      mem.set_acc(j, kernels::detail::pair_sum(kind, a, p, d_inverse));
    }
  }
}

}  // namespace stoker::kernels::gpu::detail
