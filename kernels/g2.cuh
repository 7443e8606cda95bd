// G2 of BLS12-381: points of the twist E': y^2 = x^3 + 4 (u + 1) over Fq2
// in the subgroup of prime order r, as value types shared by the CPU and
// the GPU (every function is __host__ __device__).
//
// The conventions are G1's (g1.cuh), with Fq2 for Fq:
// - G2Affine holds the point at infinity as x = y = 0; (0, 0) is not on E'
//   (0 != 4 (u + 1)), so zeroed memory is the point at infinity.
// - G2Xyzz (X, Y, ZZ, ZZZ) stands for (X / ZZ, Y / ZZZ) with ZZ^3 = ZZZ^2,
//   ZZ = 0 for infinity; the same a = 0 formulas (madd-2008-s, add-2008-s,
//   dbl-2008-s-1), complete for infinity on either side, P + P and P - P.
//   E'(Fq2) has odd order (r times an odd cofactor), so no point but
//   infinity has Y = 0 and doubling needs no special case.
// - to_affine gives the unique representation; `equal` compares points.
//
// E' is the M-type sextic twist of E: y^2 = x^3 + 4 over Fq12, with
// (x, y) -> (x / w^2, y / w^3) mapping E' into E, w^6 = u + 1.
//
// z = -0xd201000000010000 is the curve's parameter (g1.cuh calls it u; here
// u is Fq2's generator).
#pragma once

#include <cstdint>

#include "common/host_device.hpp"
#include "kernels/detail/double_and_add.cuh"
#include "kernels/detail/jacobian_chain.cuh"
#include "kernels/fq2.cuh"
#include "kernels/g1.cuh"

namespace stoker::kernels {

namespace g2_detail {
// Montgomery forms of the generator's coordinates (the zcash / IETF G2
// generator) and of the constants of psi below.
STOKER_HD Fq2 generator_x() {
  return Fq2{Fq{{0xf5f28fa202940a10ull, 0xb3f5fb2687b4961aull, 0xa1a893b53e2ae580ull,
                 0x9894999d1a3caee9ull, 0x6f67b7631863366bull, 0x058191924350bcd7ull}},
             Fq{{0xa5a9c0759e23f606ull, 0xaaa0c59dbccd60c3ull, 0x3bb17e18e2867806ull,
                 0x1b1ab6cc8541b367ull, 0xc2b6ed0ef2158547ull, 0x11922a097360edf3ull}}};
}
STOKER_HD Fq2 generator_y() {
  return Fq2{Fq{{0x4c730af860494c4aull, 0x597cfa1f5e369c5aull, 0xe7e6856caa0a635aull,
                 0xbbefb5e96e0d495full, 0x07d3a975f0ef25a2ull, 0x0083fd8e7e80dae5ull}},
             Fq{{0xadc0fc92df64b05dull, 0x18aa270a2b1461dcull, 0x86adac6a3be4eba0ull,
                 0x79495c4ec93da33aull, 0xe7175850a43ccaedull, 0x0b2bc2a163de1bf2ull}}};
}
// b' = 4 (u + 1) = 4 + 4u.
STOKER_HD Fq2 curve_b() {
  return Fq2{g1_detail::curve_b(), g1_detail::curve_b()};
}
// psi = twist o Frobenius o untwist: (x, y) -> (conj(x) cx, conj(y) cy) with
// cx = 1 / (u + 1)^((q - 1) / 3) = w^(2 - 2q) and
// cy = 1 / (u + 1)^((q - 1) / 2) = w^(3 - 3q).
STOKER_HD Fq2 psi_cx() {
  return Fq2{Fq::zero(), Fq{{0x890dc9e4867545c3ull, 0x2af322533285a5d5ull, 0x50880866309b7e2cull,
                             0xa20d1b8c7e881024ull, 0x14e4f04fe2db9068ull, 0x14e56d3f1564853aull}}};
}
STOKER_HD Fq2 psi_cy() {
  return Fq2{Fq{{0x3e2f585da55c9ad1ull, 0x4294213d86c18183ull, 0x382844c88b623732ull,
                 0x92ad2afd19103e18ull, 0x1d794e4fac7cf0b9ull, 0x0bd592fc7d825ec8ull}},
             Fq{{0x7bcfa7a25aa30fdaull, 0xdc17dec12a927e7cull, 0x2f088dd86b4ebef1ull,
                 0xd1ca2087da74d4a7ull, 0x2da2596696cebc1dull, 0x0e2b7eedbbfd87d2ull}}};
}
}  // namespace g2_detail

struct G2Affine {
  Fq2 x, y;

  STOKER_HD bool is_infinity() const { return x.is_zero() && y.is_zero(); }
  STOKER_HD static G2Affine infinity() { return G2Affine{Fq2::zero(), Fq2::zero()}; }
  STOKER_HD static G2Affine generator() {
    return G2Affine{g2_detail::generator_x(), g2_detail::generator_y()};
  }
};

struct G2Xyzz {
  Fq2 x, y, zz, zzz;

  STOKER_HD bool is_infinity() const { return zz.is_zero(); }
  STOKER_HD static G2Xyzz infinity() {
    return G2Xyzz{Fq2::zero(), Fq2::zero(), Fq2::zero(), Fq2::zero()};
  }
};

static_assert(sizeof(G2Affine) == 192, "G2Affine is two Fq2");
static_assert(sizeof(G2Xyzz) == 384, "G2Xyzz is four Fq2");

STOKER_HD G2Xyzz to_xyzz(const G2Affine& p) {
  if (p.is_infinity()) return G2Xyzz::infinity();
  return G2Xyzz{p.x, p.y, Fq2::one(), Fq2::one()};
}

// One inversion: with z = ZZZ / ZZ, 1 / ZZ = (ZZ / ZZZ)^2.
STOKER_HD G2Affine to_affine(const G2Xyzz& p) {
  if (p.is_infinity()) return G2Affine::infinity();
  const Fq2 zzz_inv = p.zzz.inverse();
  const Fq2 z_inv = p.zz * zzz_inv;
  return G2Affine{p.x * z_inv.sqr(), p.y * zzz_inv};
}

STOKER_HD G2Affine neg(const G2Affine& p) {
  return G2Affine{p.x, p.y.neg()};
}
STOKER_HD G2Xyzz neg(const G2Xyzz& p) {
  return G2Xyzz{p.x, p.y.neg(), p.zz, p.zzz};
}

// 2P (dbl-2008-s-1 for a = 0): U = 2Y, V = U^2, W = U V, S = X V,
// M = 3 X^2, X3 = M^2 - 2S, Y3 = M (S - X3) - W Y, ZZ3 = V ZZ, ZZZ3 = W ZZZ.
STOKER_HD G2Xyzz dbl(const G2Xyzz& p) {
  const Fq2 u = p.y.dbl();
  const Fq2 v = u.sqr();
  const Fq2 w = u * v;
  const Fq2 s = p.x * v;
  const Fq2 x2 = p.x.sqr();
  const Fq2 m = x2.dbl() + x2;
  const Fq2 x3 = m.sqr() - s.dbl();
  const Fq2 y3 = m * (s - x3) - w * p.y;
  return G2Xyzz{x3, y3, v * p.zz, w * p.zzz};
}

namespace g2_detail {
// 2P for affine P != infinity (mdbl-2008-s-1): ZZ3 = V, ZZZ3 = W.
STOKER_HD G2Xyzz dbl_affine(const G2Affine& p) {
  const Fq2 u = p.y.dbl();
  const Fq2 v = u.sqr();
  const Fq2 w = u * v;
  const Fq2 s = p.x * v;
  const Fq2 x2 = p.x.sqr();
  const Fq2 m = x2.dbl() + x2;
  const Fq2 x3 = m.sqr() - s.dbl();
  const Fq2 y3 = m * (s - x3) - w * p.y;
  return G2Xyzz{x3, y3, v, w};
}
}  // namespace g2_detail

// acc += p (madd-2008-s): U2 = x ZZ, S2 = y ZZZ, P = U2 - X, R = S2 - Y,
// PP = P^2, PPP = P PP, Q = X PP, X3 = R^2 - PPP - 2Q, Y3 = R (Q - X3) - Y PPP,
// ZZ3 = ZZ PP, ZZZ3 = ZZZ PPP.
STOKER_HD void add_mixed(G2Xyzz& acc, const G2Affine& p) {
  if (p.is_infinity()) return;
  if (acc.is_infinity()) {
    acc = to_xyzz(p);
    return;
  }
  const Fq2 u2 = p.x * acc.zz;
  const Fq2 s2 = p.y * acc.zzz;
  const Fq2 pd = u2 - acc.x;
  const Fq2 r = s2 - acc.y;
  if (pd.is_zero()) {
    // Same x: the same point (double it) or its negation (infinity).
    acc = r.is_zero() ? g2_detail::dbl_affine(p) : G2Xyzz::infinity();
    return;
  }
  const Fq2 pp = pd.sqr();
  const Fq2 ppp = pd * pp;
  const Fq2 q = acc.x * pp;
  const Fq2 x3 = r.sqr() - ppp - q.dbl();
  const Fq2 y3 = r * (q - x3) - acc.y * ppp;
  acc = G2Xyzz{x3, y3, acc.zz * pp, acc.zzz * ppp};
}

// acc += p (add-2008-s): U1 = X1 ZZ2, U2 = X2 ZZ1, S1 = Y1 ZZZ2,
// S2 = Y2 ZZZ1, P = U2 - U1, R = S2 - S1, then as the mixed addition with
// ZZ3 = ZZ1 ZZ2 PP, ZZZ3 = ZZZ1 ZZZ2 PPP.
STOKER_HD void add(G2Xyzz& acc, const G2Xyzz& p) {
  if (p.is_infinity()) return;
  if (acc.is_infinity()) {
    acc = p;
    return;
  }
  const Fq2 u1 = acc.x * p.zz;
  const Fq2 u2 = p.x * acc.zz;
  const Fq2 s1 = acc.y * p.zzz;
  const Fq2 s2 = p.y * acc.zzz;
  const Fq2 pd = u2 - u1;
  const Fq2 r = s2 - s1;
  if (pd.is_zero()) {
    acc = r.is_zero() ? dbl(acc) : G2Xyzz::infinity();
    return;
  }
  const Fq2 pp = pd.sqr();
  const Fq2 ppp = pd * pp;
  const Fq2 q = u1 * pp;
  const Fq2 x3 = r.sqr() - ppp - q.dbl();
  const Fq2 y3 = r * (q - x3) - s1 * ppp;
  acc = G2Xyzz{x3, y3, acc.zz * p.zz * pp, acc.zzz * p.zzz * ppp};
}

// Same point, whatever the representations: X1 ZZ2 = X2 ZZ1 and
// Y1 ZZZ2 = Y2 ZZZ1.
STOKER_HD bool equal(const G2Xyzz& a, const G2Xyzz& b) {
  const bool ai = a.is_infinity(), bi = b.is_infinity();
  if (ai || bi) return ai && bi;
  return a.x * b.zz == b.x * a.zz && a.y * b.zzz == b.y * a.zzz;
}

// y^2 = x^3 + 4 (u + 1); the point at infinity counts as on the curve.
STOKER_HD bool on_curve(const G2Affine& p) {
  if (p.is_infinity()) return true;
  return p.y.sqr() == p.x.sqr() * p.x + g2_detail::curve_b();
}

// The endomorphism psi of E' (untwist, q-power Frobenius, twist back). On
// G2 it acts as multiplication by q, which is z modulo r; on E' points
// outside G2 it does not.
STOKER_HD G2Affine psi(const G2Affine& p) {
  if (p.is_infinity()) return p;
  return G2Affine{p.x.conjugate() * g2_detail::psi_cx(), p.y.conjugate() * g2_detail::psi_cy()};
}

// Membership of G2 for a point on E', by Scott's endomorphism test ("A note
// on group membership tests for G1, G2 and GT on BLS pairing-friendly
// curves", 2021): P is in G2 iff psi(P) = [z] P = -[|z|] P.
// 63 doublings and 5 additions, against 255 doublings and about 128
// additions for [r] P, in Jacobian coordinates over Fq2
// (detail/jacobian_chain.cuh: 16 Fq products a doubling instead of XYZZ's
// 24). Meaningless for a point off E': check on_curve first.
STOKER_HD bool in_subgroup(const G2Affine& p) {
  if (p.is_infinity()) return true;
  const auto zp = detail::jacobian_mul_u64(p.x, p.y, g1_detail::kAbsU);  // [|z|] P
  const G2Affine s = psi(p);
  return detail::jacobian_is_negation_of(zp, s.x, s.y);
}

// [k] p for a 256-bit scalar (little-endian limbs, any value), by plain
// double-and-add: for tests and checks, not for speed.
STOKER_HD G2Xyzz scalar_mul(const G2Affine& p, const std::uint64_t k[4]) {
  return detail::double_and_add<G2Xyzz>(p, k);
}

}  // namespace stoker::kernels
