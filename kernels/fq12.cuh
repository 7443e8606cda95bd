// Fq12 = Fq6[w] / (w^2 - v): where the pairing takes its values, c0 + c1 w
// (so w^6 = xi = u + 1, the twist's constant). __host__ __device__ like
// Fq2 and Fq6; coordinates as in zcash's bls12_381, blst and @noble/curves.
//
// Besides the field operations: the sparse product by a Miller-loop line
// (mul_by_014) and a squaring that holds only in the cyclotomic subgroup,
// the elements whose order divides q^4 - q^2 + 1. The final
// exponentiation's easy part lands there and its hard part runs there; in
// it conjugation is inversion, and Granger and Scott's squaring ("Faster
// squaring in the cyclotomic subgroup of sixth degree extensions", 2010)
// costs 9 Fq2 squarings (18 Fq products) against a general square's 12
// Fq2 products (36).
#pragma once

#include <cstdint>

#include "common/host_device.hpp"
#include "kernels/fq6.cuh"

namespace stoker::kernels {

namespace fq12_detail {
// xi^((q - 1) / 6): w^q = w xi^((q - 1) / 6), the Frobenius map's factor of w.
STOKER_HD Fq2 frobenius_w() {
  return Fq2{Fq{{0x07089552b319d465ull, 0xc6695f92b50a8313ull, 0x97e83cccd117228full,
                 0xa35baecab2dc29eeull, 0x1ce393ea5daace4dull, 0x08f2220fb0fb66ebull}},
             Fq{{0xb2f66aad4ce5d646ull, 0x5842a06bfc497cecull, 0xcf4895d42599d394ull,
                 0xc11b9cba40a8e8d0ull, 0x2e3813cbe5a0de89ull, 0x110eefda88847fafull}}};
}

// (a + b s)^2 in Fq4 = Fq2[s] / (s^2 - xi): (a^2 + xi b^2, (a + b)^2 - a^2 - b^2).
STOKER_HD void fq4_sqr(const Fq2& a, const Fq2& b, Fq2& c0, Fq2& c1) {
  const Fq2 t0 = a.sqr(), t1 = b.sqr();
  c0 = t1.mul_by_nonresidue() + t0;
  c1 = (a + b).sqr() - t0 - t1;
}
}  // namespace fq12_detail

struct Fq12 {
  Fq6 c0, c1;

  STOKER_HD static Fq12 zero() { return Fq12{Fq6::zero(), Fq6::zero()}; }
  STOKER_HD static Fq12 one() { return Fq12{Fq6::one(), Fq6::zero()}; }

  STOKER_HD bool is_one() const { return c0 == Fq6::one() && c1.is_zero(); }
  STOKER_HD friend bool operator==(const Fq12& a, const Fq12& b) {
    return a.c0 == b.c0 && a.c1 == b.c1;
  }
  STOKER_HD friend bool operator!=(const Fq12& a, const Fq12& b) { return !(a == b); }

  STOKER_HD friend Fq12 operator+(const Fq12& a, const Fq12& b) {
    return Fq12{a.c0 + b.c0, a.c1 + b.c1};
  }
  STOKER_HD friend Fq12 operator-(const Fq12& a, const Fq12& b) {
    return Fq12{a.c0 - b.c0, a.c1 - b.c1};
  }
  // Karatsuba over Fq6: three Fq6 products (w^2 = v).
  STOKER_HD friend Fq12 operator*(const Fq12& a, const Fq12& b) {
    const Fq6 aa = a.c0 * b.c0, bb = a.c1 * b.c1;
    return Fq12{bb.mul_by_nonresidue() + aa, (a.c0 + a.c1) * (b.c0 + b.c1) - aa - bb};
  }
  STOKER_HD Fq12& operator*=(const Fq12& b) { return *this = *this * b; }

  // Complex squaring: two Fq6 products.
  STOKER_HD Fq12 sqr() const {
    const Fq6 ab = c0 * c1;
    const Fq6 t = (c0 + c1) * (c0 + c1.mul_by_nonresidue());
    return Fq12{t - ab - ab.mul_by_nonresidue(), ab.dbl()};
  }

  // c0 - c1 w, which is x^(q^6).
  STOKER_HD Fq12 conjugate() const { return Fq12{c0, c1.neg()}; }

  // 1 / x = conj(x) / (c0^2 - v c1^2): one Fq6 inversion. Zero maps to zero.
  STOKER_HD Fq12 inverse() const {
    const Fq6 t = (c0.sqr() - c1.sqr().mul_by_nonresidue()).inverse();
    return Fq12{c0 * t, (c1 * t).neg()};
  }

  // x^q.
  STOKER_HD Fq12 frobenius() const {
    return Fq12{c0.frobenius(), c1.frobenius() * fq12_detail::frobenius_w()};
  }

  // x (o0 + o1 v + o4 v w), the shape of a line of the Miller loop for the
  // M-type twist (coefficients at positions 0, 1 and 4 of the basis 1, v,
  // v^2, w, v w, v^2 w): 13 Fq2 products against a general product's 18.
  STOKER_HD Fq12 mul_by_014(const Fq2& o0, const Fq2& o1, const Fq2& o4) const {
    const Fq6 aa = c0.mul_by_01(o0, o1);
    const Fq6 bb = c1.mul_by_1(o4);
    return Fq12{bb.mul_by_nonresidue() + aa, (c0 + c1).mul_by_01(o0, o1 + o4) - aa - bb};
  }

  // x^2 for x in the cyclotomic subgroup only (Granger-Scott): x seen as
  // three elements of Fq4 = Fq2[w^3], each squared once. For other x the
  // result is not x^2.
  STOKER_HD Fq12 cyclotomic_sqr() const {
    using fq12_detail::fq4_sqr;
    Fq2 z0 = c0.c0, z4 = c0.c1, z3 = c0.c2, z2 = c1.c0, z1 = c1.c1, z5 = c1.c2;
    Fq2 t0, t1, t2, t3;
    fq4_sqr(z0, z1, t0, t1);
    z0 = (t0 - z0).dbl() + t0;  // 3 t0 - 2 z0
    z1 = (t1 + z1).dbl() + t1;  // 3 t1 + 2 z1
    fq4_sqr(z2, z3, t0, t1);
    fq4_sqr(z4, z5, t2, t3);
    z4 = (t0 - z4).dbl() + t0;
    z5 = (t1 + z5).dbl() + t1;
    t0 = t3.mul_by_nonresidue();
    z2 = (t0 + z2).dbl() + t0;
    z3 = (t2 - z3).dbl() + t2;
    return Fq12{Fq6{z0, z4, z3}, Fq6{z2, z1, z5}};
  }

  // x^e for an exponent of `words` little-endian 64-bit limbs, with general
  // squarings: for any x.
  STOKER_HD Fq12 pow(const std::uint64_t* e, int words) const {
    Fq12 acc = one();
    for (int i = words - 1; i >= 0; --i)
      for (int b = 63; b >= 0; --b) {
        acc = acc.sqr();
        if ((e[i] >> b) & 1) acc *= *this;
      }
    return acc;
  }
};

static_assert(sizeof(Fq12) == 576, "Fq12 is two Fq6");

}  // namespace stoker::kernels
