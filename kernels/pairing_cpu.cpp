// The CPU pairing; see pairing.hpp.
#include <vector>

#include "kernels/pairing.hpp"

namespace stoker::kernels::cpu {
namespace {

// T of the Miller loop in homogeneous projective coordinates on E':
// (X : Y : Z) stands for (X / Z, Y / Z). No inversions inside the loop.
struct G2Projective {
  Fq2 x, y, z;
};

// A line through points of E', untwisted and evaluated at P = (xP, yP) of
// G1, times w^3 and a factor in Fq2 (both vanish in the final
// exponentiation): c0 + (c1 xP) v + (c2 yP) v w. For slope lambda through
// (x, y) the line is yP - lambda w^-1 xP + (lambda x - y) w^-3, hence
// c0 = lambda x - y, c1 = -lambda, c2 = 1 before scaling.
struct Line {
  Fq2 c0, c1, c2;
};

Fq12 apply(const Fq12& f, const Line& l, const G1Affine& p) {
  return f.mul_by_014(l.c0, l.c1 * p.x, l.c2 * p.y);
}

// T = 2T and the tangent at T (Costello, Lange and Naehrig, "Faster pairing
// computations on curves with high-degree twists", 2010, for b' = 4 xi):
// with lambda = 3X^2 / (2YZ) and the curve's equation, the tangent scaled
// by 2YZ is c0 = Y^2 - 3b'Z^2, c1 = -3X^2, c2 = 2YZ; the doubled point is
// CLN's scaled by 4 so that no halving is needed:
// X3 = 2XY (Y^2 - 9b'Z^2), Y3 = (Y^2 + 9b'Z^2)^2 - 108 b'^2 Z^4, Z3 = 8Y^3 Z.
Line double_step(G2Projective& t) {
  const Fq2 xx = t.x.sqr(), yy = t.y.sqr(), zz = t.z.sqr();
  const Fq2 yz2 = (t.y + t.z).sqr() - yy - zz;         // 2YZ
  const Fq2 bzz = zz.mul_by_nonresidue().dbl().dbl();  // b'Z^2 = 4 xi Z^2
  const Fq2 b3 = bzz.dbl() + bzz;                      // 3b'Z^2
  const Fq2 b9 = b3.dbl() + b3;                        // 9b'Z^2
  const Line line{yy - b3, (xx.dbl() + xx).neg(), yz2};
  const Fq2 b3sq = b3.sqr();
  t.x = ((yy - b9) * t.x * t.y).dbl();
  t.y = (yy + b9).sqr() - (b3sq.dbl() + b3sq).dbl().dbl();  // - 12 (3b'Z^2)^2
  t.z = (yy * yz2).dbl().dbl();
  return line;
}

// T = T + Q for affine Q != +-T and the line through them: with
// t0 = Y - yQ Z and t1 = X - xQ Z (lambda = t0 / t1), the line scaled by t1
// is c0 = t0 xQ - t1 yQ, c1 = -t0, c2 = t1; the sum by the mixed addition
// of homogeneous coordinates (as CLN and @noble/curves).
Line add_step(G2Projective& t, const G2Affine& q) {
  const Fq2 t0 = t.y - q.y * t.z;
  const Fq2 t1 = t.x - q.x * t.z;
  const Line line{t0 * q.x - t1 * q.y, t0.neg(), t1};
  const Fq2 t2 = t1.sqr();
  const Fq2 t3 = t2 * t1;
  const Fq2 t4 = t2 * t.x;
  const Fq2 t5 = t3 - t4.dbl() + t0.sqr() * t.z;
  t.x = t1 * t5;
  t.y = (t4 - t5) * t0 - t3 * t.y;
  t.z = t.z * t3;
  return line;
}

// x^|z| for x in the cyclotomic subgroup: 63 squarings, 5 products.
Fq12 cyclotomic_pow_abs_z(const Fq12& x) {
  Fq12 acc = x;
  for (int b = 62; b >= 0; --b) {
    acc = acc.cyclotomic_sqr();
    if ((g1_detail::kAbsU >> b) & 1) acc *= x;
  }
  return acc;
}

// x^z = conj(x^|z|): conjugation inverts in the cyclotomic subgroup.
Fq12 pow_z(const Fq12& x) {
  return cyclotomic_pow_abs_z(x).conjugate();
}

}  // namespace

Fq12 miller_loop(std::span<const PairingTerm> terms) {
  std::vector<PairingTerm> live;
  live.reserve(terms.size());
  for (const PairingTerm& term : terms)
    if (!term.p.is_infinity() && !term.q.is_infinity()) live.push_back(term);
  std::vector<G2Projective> t(live.size());
  for (std::size_t i = 0; i < live.size(); ++i) t[i] = {live[i].q.x, live[i].q.y, Fq2::one()};

  // T runs through [m] Q for the prefixes m of |z| (m < |z| < r): never
  // infinity, never +-Q at an addition (m >= 2 there), so no special case.
  Fq12 f = Fq12::one();
  for (int b = 62; b >= 0; --b) {
    if (b != 62) f = f.sqr();
    for (std::size_t i = 0; i < live.size(); ++i) f = apply(f, double_step(t[i]), live[i].p);
    if ((g1_detail::kAbsU >> b) & 1)
      for (std::size_t i = 0; i < live.size(); ++i)
        f = apply(f, add_step(t[i], live[i].q), live[i].p);
  }
  return f.conjugate();  // z < 0
}

Fq12 final_exponentiation(const Fq12& f) {
  // Easy part: f^((q^6 - 1)(q^2 + 1)), which lands in the cyclotomic
  // subgroup (conj(f) = f^(q^6)).
  const Fq12 t0 = f.conjugate() * f.inverse();
  const Fq12 t1 = t0.frobenius().frobenius() * t0;
  // Hard part: 3 (q^4 - q^2 + 1) / r = l0 + l1 q + l2 q^2 + l3 q^3 with
  // l3 = (z - 1)^2, l2 = z l3, l1 = z l2 - l3, l0 = z l1 + 3. Exponents of
  // t1 in the comments.
  const Fq12 t2 = pow_z(t1);                                      // z
  const Fq12 t3 = t1.cyclotomic_sqr().conjugate() * t2;           // z - 2
  const Fq12 t4 = pow_z(t3);                                      // z (z - 2)
  const Fq12 t5 = pow_z(t4);                                      // z^2 (z - 2)
  const Fq12 t6 = pow_z(t5) * t2.cyclotomic_sqr();                // z^3 (z - 2) + 2z
  const Fq12 t7 = pow_z(t6);                                      // z^4 (z - 2) + 2z^2
  const Fq12 e3 = (t4 * t1).frobenius().frobenius().frobenius();  // l3 = z (z - 2) + 1
  const Fq12 e2 = (t2 * t5).frobenius().frobenius();              // l2 = z + z^2 (z - 2)
  const Fq12 e1 = (t6 * t1.conjugate()).frobenius();              // l1 = z^3 (z - 2) + 2z - 1
  const Fq12 e0 = t7 * t3.conjugate() * t1;                       // l0 = t7's - (z - 2) + 1
  return e3 * e2 * e1 * e0;
}

Fq12 pairing(const G1Affine& p, const G2Affine& q) {
  const PairingTerm term{p, q};
  return final_exponentiation(miller_loop({&term, 1}));
}

bool pairing_product_is_one(std::span<const PairingTerm> terms) {
  return final_exponentiation(miller_loop(terms)).is_one();
}

}  // namespace stoker::kernels::cpu
