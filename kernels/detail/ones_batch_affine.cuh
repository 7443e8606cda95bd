// One GPU thread's share of a sparse MSM's ones summed by batched affine
// additions (msm.hpp, OnesSum::batch_affine). Of `threads` threads, thread
// t takes the ones' points k * threads + t (k = 0, 1, ...: neighbouring
// threads read neighbouring indices) and holds `batch` affine accumulators
// in scratch. The first `batch` points open them; each round after that
// adds the next `batch` points into them, one each, and the round's
// denominators (x2 - x1, or 2y for a doubling) share one field inversion
// (Montgomery's trick: a prefix product forward, the inverse walked back).
// At the end the thread sums its accumulators by mixed XYZZ additions.
//
// Cost in Fq products, a G2 addition: the slope, its square and the new y
// (3 + 2 + 3), the prefix product forward and two products back (9), and
// the round's inversion (x^(q-2) by Fq::inverse's sliding window: 463
// products) spread over the batch, 3.6 at 128: about 20.6 against 28 for a
// mixed addition, 0.74x (measured on an H200 at 2^25 ones with the
// bit-by-bit inversion's 613: 39.2 against 44.1 ms). In G1 the same steps
// cost 6 + 3.6 against 10, less than the accumulators' scratch traffic
// takes back (17.2 against 14.9 ms at 2^25 with 6 + 4.8), so G1 keeps mixed
// additions unless asked (msm.hpp). What the inversion costs bounds the batch from
// below; the scratch, batch * threads accumulators and prefixes (288 bytes
// each in G2), from above.
//
// Complete like cpu::sum_points, through the same pair steps
// (affine_pair.hpp). The inputs must be points of the group (no y = 0 but
// at infinity: a zero denominator would spoil the round's shared inverse).
//
// __host__ __device__ over a memory policy, so that the host tests run the
// same steps as the kernel (msm_ones.cuh) over plain memory:
//   Affine Mem::point(const Affine*)        a point of the key (read-only)
//   Field  Mem::point_x(const Affine*)      its x alone
//   Affine Mem::load(const Affine*)         an accumulator
//   Field  Mem::load_x(const Affine*)       its x alone
//   void   Mem::store(Affine*, const Affine&)
//   Field  Mem::load(const Field*)          a prefix product
//   void   Mem::store(Field*, const Field&)
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/host_device.hpp"
#include "kernels/detail/affine_pair.hpp"
#include "kernels/detail/msm_group.hpp"

namespace stoker::kernels::gpu::detail {

using kernels::detail::AffinePair;
using kernels::detail::FieldOf;

// Thread t's XYZZ sum of its ones' points: points[index[k * threads + t]]
// for k * threads + t < count. Accumulator j and its prefix live at
// acc[j * threads + t] and prefix[j * threads + t].
template <typename Mem, typename Affine>
STOKER_HD kernels::detail::XyzzOf<Affine> sum_ones_batch_affine(
    const Affine* points, const std::uint32_t* index, std::size_t count, std::size_t threads,
    std::size_t t, unsigned batch, Affine* acc, FieldOf<Affine>* prefix) {
  using Field = FieldOf<Affine>;
  using Xyzz = kernels::detail::XyzzOf<Affine>;
  const std::size_t n = t < count ? (count - t + threads - 1) / threads : 0;
  auto point = [&](std::size_t k) { return Mem::point(points + index[k * threads + t]); };
  auto slot = [&](unsigned j) { return std::size_t{j} * threads + t; };
  const std::size_t rounds = (n + batch - 1) / batch;
  for (std::size_t r = 1; r < rounds; ++r) {
    // In the first round the accumulators are the thread's first points,
    // read from the key; the sums go to scratch.
    const bool first = r == 1;
    const std::size_t base = r * batch;
    const unsigned pairs = n - base < batch ? static_cast<unsigned>(n - base) : batch;
    auto first_of = [&](unsigned j) { return first ? point(j) : Mem::load(acc + slot(j)); };
    Field product = Field::one();
    for (unsigned j = 0; j < pairs; ++j) {
      const Field ax = first ? Mem::point_x(points + index[std::size_t{j} * threads + t])
                             : Mem::load_x(acc + slot(j));
      const Field bx = Mem::point_x(points + index[(base + j) * threads + t]);
      Field ay;
      const AffinePair kind =
          kernels::detail::classify_pair(ax, bx, [&](Field& a_y, Field& b_y) {
            a_y = ay = first_of(j).y;
            b_y = point(base + j).y;
          });
      if (kind != AffinePair::add && kind != AffinePair::dbl) continue;
      Mem::store(prefix + slot(j), product);
      product = product * kernels::detail::pair_denominator(kind, ax, bx, ay);
    }
    if (first)
      for (unsigned j = pairs; j < batch; ++j) Mem::store(acc + slot(j), point(j));
    Field inverse = product.inverse();
    for (unsigned j = pairs; j-- > 0;) {
      const Affine a = first_of(j), b = point(base + j);
      const AffinePair kind = kernels::detail::classify_pair(a, b);
      // A kept accumulator stays where it is, except in the first round,
      // when it is still the key's point.
      if (kind == AffinePair::keep_first && !first) continue;
      Field d_inverse = Field::zero();
      if (kind == AffinePair::add || kind == AffinePair::dbl) {
        d_inverse = inverse * Mem::load(prefix + slot(j));
        inverse = inverse * kernels::detail::pair_denominator(kind, a.x, b.x, a.y);
      }
      Mem::store(acc + slot(j), kernels::detail::pair_sum(kind, a, b, d_inverse));
    }
  }
  Xyzz sum = Xyzz::infinity();
  if (rounds > 1)
    for (unsigned j = 0; j < batch; ++j) add_mixed(sum, Mem::load(acc + slot(j)));
  else
    for (std::size_t k = 0; k < n; ++k) add_mixed(sum, point(k));
  return sum;
}

}  // namespace stoker::kernels::gpu::detail
