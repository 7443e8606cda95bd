// Jacobian coordinates (x = X / Z^2, y = Y / Z^3) on a curve y^2 = x^3 + b
// over a field F (Fq for G1, Fq2 for G2), for the long chains of doublings
// of the membership tests. A doubling costs 2M + 5S here (dbl-2009-l)
// against 6M + 3S in XYZZ: a G1 test is 126 doublings and 10 additions, so
// about 1020 products a point instead of about 1260, and a G2 test (63
// doublings over Fq2) about 1150 Fq products instead of about 1650. The MSMs
// keep XYZZ, whose mixed addition (8M + 2S) is what buckets do.
//
// Complete for the chains' needs: either side at infinity (Z = 0), P + P
// (doubles) and P + (-P) (infinity) are handled, so points of small order
// from a hostile file walk through the chain like any other. Neither curve
// has a point of order 2 (both groups' orders are odd), so a doubling gives
// infinity only from infinity, where Z3 = 2 Y Z stays 0.
#pragma once

#include <cstdint>

#include "common/host_device.hpp"

namespace stoker::kernels::detail {

template <typename F>
struct Jacobian {
  F x, y, z;

  STOKER_HD bool is_infinity() const { return z.is_zero(); }
  STOKER_HD static Jacobian infinity() { return Jacobian{F::one(), F::one(), F::zero()}; }
  STOKER_HD static Jacobian from_affine(const F& x, const F& y) { return Jacobian{x, y, F::one()}; }
};

// dbl-2009-l for a = 0: A = X^2, B = Y^2, C = B^2, D = 2((X + B)^2 - A - C),
// E = 3A, X3 = E^2 - 2D, Y3 = E (D - X3) - 8C, Z3 = 2 Y Z.
template <typename F>
STOKER_HD Jacobian<F> jacobian_dbl(const Jacobian<F>& p) {
  const F a = p.x.sqr();
  const F b = p.y.sqr();
  const F c = b.sqr();
  const F d = ((p.x + b).sqr() - a - c).dbl();
  const F e = a.dbl() + a;
  const F x3 = e.sqr() - d.dbl();
  const F y3 = e * (d - x3) - c.dbl().dbl().dbl();
  return Jacobian<F>{x3, y3, (p.y * p.z).dbl()};
}

// acc += (x2, y2), an affine point other than infinity (madd-2007-bl,
// 7M + 4S): Z1Z1 = Z1^2, U2 = x2 Z1Z1, S2 = y2 Z1 Z1Z1, H = U2 - X1,
// HH = H^2, I = 4 HH, J = H I, r = 2 (S2 - Y1), V = X1 I,
// X3 = r^2 - J - 2V, Y3 = r (V - X3) - 2 Y1 J, Z3 = (Z1 + H)^2 - Z1Z1 - HH.
template <typename F>
STOKER_HD void jacobian_add_affine(Jacobian<F>& acc, const F& x2, const F& y2) {
  if (acc.is_infinity()) {
    acc = Jacobian<F>::from_affine(x2, y2);
    return;
  }
  const F z1z1 = acc.z.sqr();
  const F h = x2 * z1z1 - acc.x;
  const F s = y2 * acc.z * z1z1 - acc.y;  // r / 2
  if (h.is_zero()) {
    // Same x: the same point (double it) or its negation (infinity).
    acc = s.is_zero() ? jacobian_dbl(acc) : Jacobian<F>::infinity();
    return;
  }
  const F hh = h.sqr();
  const F i = hh.dbl().dbl();
  const F j = h * i;
  const F r = s.dbl();
  const F v = acc.x * i;
  const F x3 = r.sqr() - j - v.dbl();
  const F y3 = r * (v - x3) - (acc.y * j).dbl();
  const F z3 = (acc.z + h).sqr() - z1z1 - hh;
  acc = Jacobian<F>{x3, y3, z3};
}

// acc += p, both Jacobian (add-2007-bl, 11M + 5S): U1 = X1 Z2Z2,
// U2 = X2 Z1Z1, S1 = Y1 Z2 Z2Z2, S2 = Y2 Z1 Z1Z1, H = U2 - U1,
// I = (2H)^2, J = H I, r = 2 (S2 - S1), V = U1 I, X3 = r^2 - J - 2V,
// Y3 = r (V - X3) - 2 S1 J, Z3 = ((Z1 + Z2)^2 - Z1Z1 - Z2Z2) H.
template <typename F>
STOKER_HD void jacobian_add(Jacobian<F>& acc, const Jacobian<F>& p) {
  if (p.is_infinity()) return;
  if (acc.is_infinity()) {
    acc = p;
    return;
  }
  const F z1z1 = acc.z.sqr();
  const F z2z2 = p.z.sqr();
  const F u1 = acc.x * z2z2;
  const F s1 = acc.y * p.z * z2z2;
  const F h = p.x * z1z1 - u1;
  const F s = p.y * acc.z * z1z1 - s1;  // r / 2
  if (h.is_zero()) {
    acc = s.is_zero() ? jacobian_dbl(acc) : Jacobian<F>::infinity();
    return;
  }
  const F i = h.dbl().sqr();
  const F j = h * i;
  const F r = s.dbl();
  const F v = u1 * i;
  const F x3 = r.sqr() - j - v.dbl();
  const F y3 = r * (v - x3) - (s1 * j).dbl();
  const F z3 = ((acc.z + p.z).sqr() - z1z1 - z2z2) * h;
  acc = Jacobian<F>{x3, y3, z3};
}

STOKER_HD int top_bit(std::uint64_t k) {
  int b = 63;
  while (b > 0 && !((k >> b) & 1)) --b;
  return b;
}

// [k] P for k >= 1 by double-and-add from k's top bit, the base affine
// (mixed additions) or Jacobian (full additions).
template <typename F>
STOKER_HD Jacobian<F> jacobian_mul_u64(const F& x, const F& y, std::uint64_t k) {
  Jacobian<F> acc = Jacobian<F>::from_affine(x, y);
  for (int b = top_bit(k) - 1; b >= 0; --b) {
    acc = jacobian_dbl(acc);
    if ((k >> b) & 1) jacobian_add_affine(acc, x, y);
  }
  return acc;
}
template <typename F>
STOKER_HD Jacobian<F> jacobian_mul_u64(const Jacobian<F>& p, std::uint64_t k) {
  Jacobian<F> acc = p;
  for (int b = top_bit(k) - 1; b >= 0; --b) {
    acc = jacobian_dbl(acc);
    if ((k >> b) & 1) jacobian_add(acc, p);
  }
  return acc;
}

// Whether the affine point (x, y) equals -p, without an inversion:
// x Z^2 = X and y Z^3 = -Y. False for p at infinity (the caller's point is
// finite).
template <typename F>
STOKER_HD bool jacobian_is_negation_of(const Jacobian<F>& p, const F& x, const F& y) {
  if (p.is_infinity()) return false;
  const F zz = p.z.sqr();
  return x * zz == p.x && y * (zz * p.z) == p.y.neg();
}

}  // namespace stoker::kernels::detail
