// Fq6 = Fq2[v] / (v^3 - xi), xi = u + 1: the middle of the pairing's tower
// Fq -> Fq2 -> Fq6 -> Fq12 (the tower of zcash's bls12_381, blst and
// @noble/curves, so elements have the same coordinates as theirs). A value
// type of three Fq2, c0 + c1 v + c2 v^2, __host__ __device__ like Fq2.
//
// Products follow Devegili, O hEigeartaigh, Scott and Dahab, "Multiplication
// and squaring on pairing-friendly fields" (Karatsuba: 6 Fq2 products;
// CH-SQR2 squaring: 2 products and 3 squarings); the sparse products take
// the shapes the Miller loop's lines have.
#pragma once

#include "common/host_device.hpp"
#include "kernels/fq2.cuh"

namespace stoker::kernels {

namespace fq6_detail {
// xi^((q - 1) / 3) and xi^(2 (q - 1) / 3): v^q = v xi^((q - 1) / 3) gives
// the Frobenius map's factors for v and v^2.
STOKER_HD Fq2 frobenius_v() {
  return Fq2{Fq::zero(), Fq{{0xcd03c9e48671f071ull, 0x5dab22461fcda5d2ull, 0x587042afd3851b95ull,
                             0x8eb60ebe01bacb9eull, 0x03f97d6e83d050d2ull, 0x18f0206554638741ull}}};
}
STOKER_HD Fq2 frobenius_v2() {
  return Fq2{Fq{{0x890dc9e4867545c3ull, 0x2af322533285a5d5ull, 0x50880866309b7e2cull,
                 0xa20d1b8c7e881024ull, 0x14e4f04fe2db9068ull, 0x14e56d3f1564853aull}},
             Fq::zero()};
}
}  // namespace fq6_detail

struct Fq6 {
  Fq2 c0, c1, c2;

  STOKER_HD static Fq6 zero() { return Fq6{Fq2::zero(), Fq2::zero(), Fq2::zero()}; }
  STOKER_HD static Fq6 one() { return Fq6{Fq2::one(), Fq2::zero(), Fq2::zero()}; }

  STOKER_HD bool is_zero() const { return c0.is_zero() && c1.is_zero() && c2.is_zero(); }
  STOKER_HD friend bool operator==(const Fq6& a, const Fq6& b) {
    return a.c0 == b.c0 && a.c1 == b.c1 && a.c2 == b.c2;
  }
  STOKER_HD friend bool operator!=(const Fq6& a, const Fq6& b) { return !(a == b); }

  STOKER_HD friend Fq6 operator+(const Fq6& a, const Fq6& b) {
    return Fq6{a.c0 + b.c0, a.c1 + b.c1, a.c2 + b.c2};
  }
  STOKER_HD friend Fq6 operator-(const Fq6& a, const Fq6& b) {
    return Fq6{a.c0 - b.c0, a.c1 - b.c1, a.c2 - b.c2};
  }
  STOKER_HD friend Fq6 operator*(const Fq6& a, const Fq6& b) {
    const Fq2 t0 = a.c0 * b.c0, t1 = a.c1 * b.c1, t2 = a.c2 * b.c2;
    return Fq6{((a.c1 + a.c2) * (b.c1 + b.c2) - t1 - t2).mul_by_nonresidue() + t0,
               (a.c0 + a.c1) * (b.c0 + b.c1) - t0 - t1 + t2.mul_by_nonresidue(),
               (a.c0 + a.c2) * (b.c0 + b.c2) - t0 - t2 + t1};
  }
  // By an element of Fq2: three Fq2 products.
  STOKER_HD friend Fq6 operator*(const Fq6& a, const Fq2& s) {
    return Fq6{a.c0 * s, a.c1 * s, a.c2 * s};
  }
  STOKER_HD Fq6& operator+=(const Fq6& b) { return *this = *this + b; }
  STOKER_HD Fq6& operator-=(const Fq6& b) { return *this = *this - b; }
  STOKER_HD Fq6& operator*=(const Fq6& b) { return *this = *this * b; }
  STOKER_HD Fq6 operator-() const { return neg(); }
  STOKER_HD Fq6 neg() const { return Fq6{c0.neg(), c1.neg(), c2.neg()}; }
  STOKER_HD Fq6 dbl() const { return Fq6{c0.dbl(), c1.dbl(), c2.dbl()}; }

  // CH-SQR2.
  STOKER_HD Fq6 sqr() const {
    const Fq2 s0 = c0.sqr();
    const Fq2 s1 = (c0 * c1).dbl();
    const Fq2 s2 = (c0 - c1 + c2).sqr();
    const Fq2 s3 = (c1 * c2).dbl();
    const Fq2 s4 = c2.sqr();
    return Fq6{s3.mul_by_nonresidue() + s0, s4.mul_by_nonresidue() + s1, s1 + s2 + s3 - s0 - s4};
  }

  // x v = xi c2 + c0 v + c1 v^2 (v^3 = xi): additions only.
  STOKER_HD Fq6 mul_by_nonresidue() const { return Fq6{c2.mul_by_nonresidue(), c0, c1}; }

  // x (b0 + b1 v): five Fq2 products.
  STOKER_HD Fq6 mul_by_01(const Fq2& b0, const Fq2& b1) const {
    const Fq2 t0 = c0 * b0, t1 = c1 * b1;
    return Fq6{((c1 + c2) * b1 - t1).mul_by_nonresidue() + t0, (c0 + c1) * (b0 + b1) - t0 - t1,
               (c0 + c2) * b0 - t0 + t1};
  }
  // x (b1 v): three Fq2 products.
  STOKER_HD Fq6 mul_by_1(const Fq2& b1) const {
    return Fq6{(c2 * b1).mul_by_nonresidue(), c0 * b1, c1 * b1};
  }

  // With t0 = c0^2 - xi c1 c2, t1 = xi c2^2 - c0 c1, t2 = c1^2 - c0 c2, the
  // inverse is (t0 + t1 v + t2 v^2) / (c0 t0 + xi (c2 t1 + c1 t2)): one Fq2
  // inversion. Zero maps to zero.
  STOKER_HD Fq6 inverse() const {
    const Fq2 t0 = c0.sqr() - (c1 * c2).mul_by_nonresidue();
    const Fq2 t1 = c2.sqr().mul_by_nonresidue() - c0 * c1;
    const Fq2 t2 = c1.sqr() - c0 * c2;
    const Fq2 d = ((c2 * t1 + c1 * t2).mul_by_nonresidue() + c0 * t0).inverse();
    return Fq6{t0 * d, t1 * d, t2 * d};
  }

  // x^q.
  STOKER_HD Fq6 frobenius() const {
    return Fq6{c0.frobenius(), c1.frobenius() * fq6_detail::frobenius_v(),
               c2.frobenius() * fq6_detail::frobenius_v2()};
  }
};

static_assert(sizeof(Fq6) == 288, "Fq6 is three Fq2");

}  // namespace stoker::kernels
