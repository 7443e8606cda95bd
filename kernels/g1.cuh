// G1 of BLS12-381: points of y^2 = x^3 + 4 over Fq in the subgroup of
// prime order r, as value types shared by the CPU reference and the GPU
// kernels (every function is __host__ __device__).
//
// G1Affine is what files hold and kernels read: (x, y), with the point at
// infinity as x = y = 0. (0, 0) is not on the curve (0 != 4), so the
// encoding is unambiguous, and zeroed memory is the point at infinity.
//
// G1Xyzz is the accumulation form: (X, Y, ZZ, ZZZ) stands for
// (X / ZZ, Y / ZZZ) with ZZ^3 = ZZZ^2, and ZZ = 0 for the point at
// infinity. Why XYZZ rather than Jacobian: adding an affine point costs
// 8 multiplications and 2 squarings (Jacobian mixed addition 7M + 4S plus
// more additions, and its doubling-on-equality path is costlier), adding two
// XYZZ points 12M + 2S, and no step needs an inversion. A Pippenger bucket
// sum is almost only mixed additions, so the cheapest mixed addition wins;
// sppark and other GPU MSMs use XYZZ for the same reason. The formulas are
// those of the Explicit-Formulas Database for a = 0 (madd-2008-s,
// add-2008-s, dbl-2008-s-1, mdbl-2008-s-1), made complete: either side at
// infinity, P + P (doubles) and P + (-P) (gives infinity) are handled.
//
// Several representations stand for one point; to_affine gives the unique
// one, and `equal` compares points, not words.
#pragma once

#include <cstdint>

#include "common/host_device.hpp"
#include "kernels/detail/double_and_add.cuh"
#include "kernels/detail/jacobian_chain.cuh"
#include "kernels/fq.cuh"

namespace stoker::kernels {

namespace g1_detail {
// Montgomery forms of the generator's coordinates, of b = 4 and of beta, the
// cube root of unity in Fq for which (x, y) -> (beta x, y) acts on G1 as
// multiplication by -u^2 (a cube root of unity mod r, since
// r = u^4 - u^2 + 1).
STOKER_HD Fq generator_x() {
  return Fq{{0x5cb38790fd530c16ull, 0x7817fc679976fff5ull, 0x154f95c7143ba1c1ull,
             0xf0ae6acdf3d0e747ull, 0xedce6ecc21dbf440ull, 0x120177419e0bfb75ull}};
}
STOKER_HD Fq generator_y() {
  return Fq{{0xbaac93d50ce72271ull, 0x8c22631a7918fd8eull, 0xdd595f13570725ceull,
             0x51ac582950405194ull, 0x0e1c8c3fad0059c0ull, 0x0bbc3efc5008a26aull}};
}
STOKER_HD Fq curve_b() {
  return Fq{{0xaa270000000cfff3ull, 0x53cc0032fc34000aull, 0x478fe97a6b0a807full,
             0xb1d37ebee6ba24d7ull, 0x8ec9733bbf78ab2full, 0x09d645513d83de7eull}};
}
STOKER_HD Fq beta() {
  return Fq{{0x30f1361b798a64e8ull, 0xf3b8ddab7ece5a2aull, 0x16a8ca3ac61577f7ull,
             0xc26a2ff874fd029bull, 0x3636b76660701c6eull, 0x051ba4ab241b6160ull}};
}
// |u| for the curve's parameter u = -0xd201000000010000.
inline constexpr std::uint64_t kAbsU = 0xd201000000010000ull;
}  // namespace g1_detail

struct G1Affine {
  Fq x, y;

  STOKER_HD bool is_infinity() const { return x.is_zero() && y.is_zero(); }
  STOKER_HD static G1Affine infinity() { return G1Affine{Fq::zero(), Fq::zero()}; }
  STOKER_HD static G1Affine generator() {
    return G1Affine{g1_detail::generator_x(), g1_detail::generator_y()};
  }
};

struct G1Xyzz {
  Fq x, y, zz, zzz;

  STOKER_HD bool is_infinity() const { return zz.is_zero(); }
  STOKER_HD static G1Xyzz infinity() {
    return G1Xyzz{Fq::zero(), Fq::zero(), Fq::zero(), Fq::zero()};
  }
};

static_assert(sizeof(G1Affine) == 96, "G1Affine is two Fq");
static_assert(sizeof(G1Xyzz) == 192, "G1Xyzz is four Fq");

STOKER_HD G1Xyzz to_xyzz(const G1Affine& p) {
  if (p.is_infinity()) return G1Xyzz::infinity();
  return G1Xyzz{p.x, p.y, Fq::one(), Fq::one()};
}

// One inversion: with z = ZZZ / ZZ, 1 / ZZ = (ZZ / ZZZ)^2.
STOKER_HD G1Affine to_affine(const G1Xyzz& p) {
  if (p.is_infinity()) return G1Affine::infinity();
  const Fq zzz_inv = p.zzz.inverse();
  const Fq z_inv = p.zz * zzz_inv;
  return G1Affine{p.x * z_inv.sqr(), p.y * zzz_inv};
}

STOKER_HD G1Affine neg(const G1Affine& p) {
  return G1Affine{p.x, p.y.neg()};
}
STOKER_HD G1Xyzz neg(const G1Xyzz& p) {
  return G1Xyzz{p.x, p.y.neg(), p.zz, p.zzz};
}

// 2P (dbl-2008-s-1 for a = 0, 6M + 3S): U = 2Y, V = U^2, W = U V,
// S = X V, M = 3 X^2, X3 = M^2 - 2S, Y3 = M (S - X3) - W Y, ZZ3 = V ZZ,
// ZZZ3 = W ZZZ. Infinity stays infinity (ZZ3 = V * 0); G1 has no point of
// order 2, so Y = 0 only there.
STOKER_HD G1Xyzz dbl(const G1Xyzz& p) {
  const Fq u = p.y.dbl();
  const Fq v = u.sqr();
  const Fq w = u * v;
  const Fq s = p.x * v;
  const Fq x2 = p.x.sqr();
  const Fq m = x2.dbl() + x2;
  const Fq x3 = m.sqr() - s.dbl();
  const Fq y3 = m * (s - x3) - w * p.y;
  return G1Xyzz{x3, y3, v * p.zz, w * p.zzz};
}

namespace g1_detail {
// 2P for affine P != infinity (mdbl-2008-s-1): ZZ3 = V, ZZZ3 = W.
STOKER_HD G1Xyzz dbl_affine(const G1Affine& p) {
  const Fq u = p.y.dbl();
  const Fq v = u.sqr();
  const Fq w = u * v;
  const Fq s = p.x * v;
  const Fq x2 = p.x.sqr();
  const Fq m = x2.dbl() + x2;
  const Fq x3 = m.sqr() - s.dbl();
  const Fq y3 = m * (s - x3) - w * p.y;
  return G1Xyzz{x3, y3, v, w};
}
}  // namespace g1_detail

// acc += p (madd-2008-s, 8M + 2S): U2 = x ZZ, S2 = y ZZZ, P = U2 - X,
// R = S2 - Y, PP = P^2, PPP = P PP, Q = X PP, X3 = R^2 - PPP - 2Q,
// Y3 = R (Q - X3) - Y PPP, ZZ3 = ZZ PP, ZZZ3 = ZZZ PPP.
STOKER_HD void add_mixed(G1Xyzz& acc, const G1Affine& p) {
  if (p.is_infinity()) return;
  if (acc.is_infinity()) {
    acc = to_xyzz(p);
    return;
  }
  const Fq u2 = p.x * acc.zz;
  const Fq s2 = p.y * acc.zzz;
  const Fq pd = u2 - acc.x;
  const Fq r = s2 - acc.y;
  if (pd.is_zero()) {
    // Same x: the same point (double it) or its negation (infinity).
    acc = r.is_zero() ? g1_detail::dbl_affine(p) : G1Xyzz::infinity();
    return;
  }
  const Fq pp = pd.sqr();
  const Fq ppp = pd * pp;
  const Fq q = acc.x * pp;
  const Fq x3 = r.sqr() - ppp - q.dbl();
  const Fq y3 = r * (q - x3) - acc.y * ppp;
  acc = G1Xyzz{x3, y3, acc.zz * pp, acc.zzz * ppp};
}

// acc += p (add-2008-s, 12M + 2S): U1 = X1 ZZ2, U2 = X2 ZZ1, S1 = Y1 ZZZ2,
// S2 = Y2 ZZZ1, P = U2 - U1, R = S2 - S1, then as the mixed addition with
// ZZ3 = ZZ1 ZZ2 PP, ZZZ3 = ZZZ1 ZZZ2 PPP.
STOKER_HD void add(G1Xyzz& acc, const G1Xyzz& p) {
  if (p.is_infinity()) return;
  if (acc.is_infinity()) {
    acc = p;
    return;
  }
  const Fq u1 = acc.x * p.zz;
  const Fq u2 = p.x * acc.zz;
  const Fq s1 = acc.y * p.zzz;
  const Fq s2 = p.y * acc.zzz;
  const Fq pd = u2 - u1;
  const Fq r = s2 - s1;
  if (pd.is_zero()) {
    acc = r.is_zero() ? dbl(acc) : G1Xyzz::infinity();
    return;
  }
  const Fq pp = pd.sqr();
  const Fq ppp = pd * pp;
  const Fq q = u1 * pp;
  const Fq x3 = r.sqr() - ppp - q.dbl();
  const Fq y3 = r * (q - x3) - s1 * ppp;
  acc = G1Xyzz{x3, y3, acc.zz * p.zz * pp, acc.zzz * p.zzz * ppp};
}

// Same point, whatever the representations: X1 ZZ2 = X2 ZZ1 and
// Y1 ZZZ2 = Y2 ZZZ1.
STOKER_HD bool equal(const G1Xyzz& a, const G1Xyzz& b) {
  const bool ai = a.is_infinity(), bi = b.is_infinity();
  if (ai || bi) return ai && bi;
  return a.x * b.zz == b.x * a.zz && a.y * b.zzz == b.y * a.zzz;
}

// y^2 = x^3 + 4; the point at infinity counts as on the curve.
STOKER_HD bool on_curve(const G1Affine& p) {
  if (p.is_infinity()) return true;
  return p.y.sqr() == p.x.sqr() * p.x + g1_detail::curve_b();
}

// Membership of G1 for a point on the curve, by Scott's endomorphism test
// ("A note on group membership tests for G1, G2 and GT on BLS
// pairing-friendly curves", 2021): P is in G1 iff phi(P) = -[u^2] P with
// phi(x, y) = (beta x, y). [u^2] P = [|u|] [|u|] P: 126 doublings and 10
// additions, against 255 doublings and ~128 additions for [r] P, in
// Jacobian coordinates (detail/jacobian_chain.cuh: 7 products a doubling
// instead of XYZZ's 9). The result means nothing for a point off the curve:
// check on_curve first.
STOKER_HD bool in_subgroup(const G1Affine& p) {
  if (p.is_infinity()) return true;
  using detail::jacobian_mul_u64;
  const auto u2p = jacobian_mul_u64(jacobian_mul_u64(p.x, p.y, g1_detail::kAbsU), g1_detail::kAbsU);
  // phi(P) = -[u^2] P, compared without inversion.
  return detail::jacobian_is_negation_of(u2p, g1_detail::beta() * p.x, p.y);
}

// [k] p for a 256-bit scalar (little-endian limbs, any value), by plain
// double-and-add: for tests and checks, not for speed.
STOKER_HD G1Xyzz scalar_mul(const G1Affine& p, const std::uint64_t k[4]) {
  return detail::double_and_add<G1Xyzz>(p, k);
}

}  // namespace stoker::kernels
