// One affine addition a + b of a batch whose slopes' denominators share one
// field inversion (Montgomery's trick): what the pair needs, the
// denominator it contributes to the shared product, and its sum once the
// denominator's inverse is known. The CPU's tree of affine additions
// (batch_affine_sum.hpp) and the GPU's sum of a sparse MSM's ones
// (ones_batch_affine.cuh) both take their pairs through these steps.
//
// Complete: a pair with the point at infinity takes the other point,
// P + P doubles (slope 3x^2 / 2y; no point but infinity has y = 0 in G1 or
// on E'), P + (-P) gives infinity. The inputs must be on the curve.
#pragma once

#include <cstdint>

#include "common/host_device.hpp"
#include "kernels/detail/msm_group.hpp"

namespace stoker::kernels::detail {

template <typename Affine>
using FieldOf = typename MsmGroupTraits<Affine>::Field;

enum class AffinePair : std::uint8_t { keep_first, take_second, add, dbl, cancel };

// What a + b needs, from the x coordinates and, where they do not settle
// it, the y coordinates: most pairs differ in x and neither is at infinity,
// so a caller that loads y only on demand (load_ys(ay, by)) reads x alone.
template <typename Field, typename LoadYs>
STOKER_HD AffinePair classify_pair(const Field& ax, const Field& bx, LoadYs&& load_ys) {
  if (ax != bx && !ax.is_zero() && !bx.is_zero()) return AffinePair::add;
  Field ay, by;
  load_ys(ay, by);
  if (bx.is_zero() && by.is_zero()) return AffinePair::keep_first;
  if (ax.is_zero() && ay.is_zero()) return AffinePair::take_second;
  if (ax != bx) return AffinePair::add;
  return ay == by ? AffinePair::dbl : AffinePair::cancel;
}

template <typename Affine>
STOKER_HD AffinePair classify_pair(const Affine& a, const Affine& b) {
  return classify_pair(a.x, b.x, [&](FieldOf<Affine>& ay, FieldOf<Affine>& by) {
    ay = a.y;
    by = b.y;
  });
}

// The slope's denominator of an add (x2 - x1) or dbl (2 y1) pair.
template <typename Field>
STOKER_HD Field pair_denominator(AffinePair kind, const Field& ax, const Field& bx,
                                 const Field& ay) {
  return kind == AffinePair::add ? bx - ax : ay.dbl();
}

// a + b; for add and dbl, d_inverse is the inverse of pair_denominator
// (ignored for the other kinds).
template <typename Affine>
STOKER_HD Affine pair_sum(AffinePair kind, const Affine& a, const Affine& b,
                          const FieldOf<Affine>& d_inverse) {
  using Field = FieldOf<Affine>;
  switch (kind) {
    case AffinePair::keep_first:
      return a;
    case AffinePair::take_second:
      return b;
    case AffinePair::cancel:
      return Affine::infinity();
    case AffinePair::add:
    case AffinePair::dbl:
      break;
  }
  Field numerator;
  if (kind == AffinePair::add) {
    numerator = b.y - a.y;
  } else {
    const Field x2 = a.x.sqr();
    numerator = x2.dbl() + x2;
  }
  const Field lambda = numerator * d_inverse;
  const Field x3 = lambda.sqr() - a.x - b.x;
  return Affine{x3, lambda * (a.x - x3) - a.y};
}

}  // namespace stoker::kernels::detail
