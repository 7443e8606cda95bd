// Fq2 = Fq[u] / (u^2 + 1): the field of G2's coordinates, as a small value
// type shared by the CPU and the GPU (every function is __host__ __device__
// and uses nothing but Fq's arithmetic, so both sides give the same bits).
//
// An element is c0 + c1 u, each coefficient an Fq in Montgomery form; zero
// is all-zero words, so zeroed memory holds zeros. The zcash encodings write
// c1 before c0 and snarkjs writes c0 first: the order is the encoders'
// business, not this type's.
//
// The non-residue xi = u + 1 (neither a square nor a cube in Fq2) builds the
// tower above: Fq6 = Fq2[v] / (v^3 - xi), and the twist E' of G2 has
// b' = 4 xi.
#pragma once

#include <cstdint>

#include "common/host_device.hpp"
#include "kernels/fq.cuh"

namespace stoker::kernels {

struct alignas(16) Fq2 {
  Fq c0, c1;

  STOKER_HD static Fq2 zero() { return Fq2{Fq::zero(), Fq::zero()}; }
  STOKER_HD static Fq2 one() { return Fq2{Fq::one(), Fq::zero()}; }

  STOKER_HD bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
  STOKER_HD friend bool operator==(const Fq2& a, const Fq2& b) {
    return a.c0 == b.c0 && a.c1 == b.c1;
  }
  STOKER_HD friend bool operator!=(const Fq2& a, const Fq2& b) { return !(a == b); }

  STOKER_HD friend Fq2 operator+(const Fq2& a, const Fq2& b) {
    return Fq2{a.c0 + b.c0, a.c1 + b.c1};
  }
  STOKER_HD friend Fq2 operator-(const Fq2& a, const Fq2& b) {
    return Fq2{a.c0 - b.c0, a.c1 - b.c1};
  }
  // Karatsuba: three Fq products. With v0 = a0 b0 and v1 = a1 b1,
  // c0 = v0 - v1 (u^2 = -1) and c1 = (a0 + a1)(b0 + b1) - v0 - v1.
  STOKER_HD friend Fq2 operator*(const Fq2& a, const Fq2& b) {
#if defined(__CUDA_ARCH__)
    return mul_device(a, b);
#else
    return karatsuba(a, b);
#endif
  }
  // By an element of the base field: two Fq products.
  STOKER_HD friend Fq2 operator*(const Fq2& a, const Fq& s) { return Fq2{a.c0 * s, a.c1 * s}; }
  STOKER_HD Fq2& operator+=(const Fq2& b) { return *this = *this + b; }
  STOKER_HD Fq2& operator-=(const Fq2& b) { return *this = *this - b; }
  STOKER_HD Fq2& operator*=(const Fq2& b) { return *this = *this * b; }
  STOKER_HD Fq2 operator-() const { return neg(); }
  STOKER_HD Fq2 neg() const { return Fq2{c0.neg(), c1.neg()}; }
  STOKER_HD Fq2 dbl() const { return Fq2{c0.dbl(), c1.dbl()}; }
  // Two Fq products: (c0 + c1)(c0 - c1) + 2 c0 c1 u.
  STOKER_HD Fq2 sqr() const {
#if defined(__CUDA_ARCH__)
    return sqr_device(*this);
#else
    return square(*this);
#endif
  }

  // c0 - c1 u, which is also x^q: the Frobenius map of Fq2.
  STOKER_HD Fq2 conjugate() const { return Fq2{c0, c1.neg()}; }
  STOKER_HD Fq2 frobenius() const { return conjugate(); }
  // x (u + 1) = (c0 - c1) + (c0 + c1) u: additions only.
  STOKER_HD Fq2 mul_by_nonresidue() const { return Fq2{c0 - c1, c0 + c1}; }

  // x^e for an exponent of `words` little-endian 64-bit limbs.
  STOKER_HD Fq2 pow(const std::uint64_t* e, int words) const {
    Fq2 acc = one();
    for (int i = words - 1; i >= 0; --i)
      for (int b = 63; b >= 0; --b) {
        acc = acc.sqr();
        if ((e[i] >> b) & 1) acc *= *this;
      }
    return acc;
  }
  // 1 / x = conj(x) / (c0^2 + c1^2): one Fq inversion. Zero maps to zero.
  STOKER_HD Fq2 inverse() const {
    const Fq t = (c0.sqr() + c1.sqr()).inverse();
    return Fq2{c0 * t, (c1 * t).neg()};
  }

  // A square root when one exists (returns false, out untouched, when x is
  // not a square). Algorithm 9 of Adj and Rodriguez-Henriquez, "Square root
  // computation over even extension fields" (q = 3 mod 4): two
  // exponentiations in Fq2, no Fq square root. Which of the two roots comes
  // out is fixed by x alone, so every caller gets the same one; encoders pick
  // the sign they need afterwards.
  STOKER_HD bool sqrt(Fq2& out) const {
    using namespace fq_detail;
    // (q - 3) / 4 = q >> 2 and (q - 1) / 2 = q >> 1, since q = 3 mod 4.
    const std::uint64_t e1[6] = {kQ0 >> 2 | kQ1 << 62, kQ1 >> 2 | kQ2 << 62, kQ2 >> 2 | kQ3 << 62,
                                 kQ3 >> 2 | kQ4 << 62, kQ4 >> 2 | kQ5 << 62, kQ5 >> 2};
    const std::uint64_t e2[6] = {kQ0 >> 1 | kQ1 << 63, kQ1 >> 1 | kQ2 << 63, kQ2 >> 1 | kQ3 << 63,
                                 kQ3 >> 1 | kQ4 << 63, kQ4 >> 1 | kQ5 << 63, kQ5 >> 1};
    const Fq2 minus_one{Fq::one().neg(), Fq::zero()};
    const Fq2 a1 = pow(e1, 6);
    const Fq2 x0 = a1 * *this;                                 // x^((q + 1) / 4)
    const Fq2 alpha = a1 * x0;                                 // x^((q - 1) / 2)
    if (alpha.conjugate() * alpha == minus_one) return false;  // alpha^(q + 1) = -1
    Fq2 s;
    if (alpha == minus_one) {
      s = Fq2{x0.c1.neg(), x0.c0};  // u x0
    } else {
      s = (alpha + one()).pow(e2, 6) * x0;
    }
    // The algorithm guarantees s^2 = x here; checking costs two products
    // beside two exponentiations and keeps a decoder from ever taking a
    // wrong root.
    if (s.sqr() != *this) return false;
    out = s;
    return true;
  }

  STOKER_HD static Fq2 karatsuba(const Fq2& a, const Fq2& b) {
    const Fq v0 = a.c0 * b.c0;
    const Fq v1 = a.c1 * b.c1;
    return Fq2{v0 - v1, (a.c0 + a.c1) * (b.c0 + b.c1) - v0 - v1};
  }
  STOKER_HD static Fq2 square(const Fq2& a) {
    return Fq2{(a.c0 + a.c1) * (a.c0 - a.c1), (a.c0 * a.c1).dbl()};
  }
#if defined(__CUDA_ARCH__)
  // On the GPU the product and the square are calls, not inlined (the CPU
  // inlines them). A G2 addition holds about ten of them; inlined, each
  // kernel of G2's MSM grew to tens of thousands of instructions, which
  // ptxas did not finish compiling in 8 minutes and which spilled
  // kilobytes at 255 registers. As calls, each Fq2 product is compiled once
  // per translation unit, its three Fq products inlined in it.
  __device__ __noinline__ static Fq2 mul_device(Fq2 a, Fq2 b) { return karatsuba(a, b); }
  __device__ __noinline__ static Fq2 sqr_device(Fq2 a) { return square(a); }
#endif
};

static_assert(sizeof(Fq2) == 96, "Fq2 is two Fq");
static_assert(alignof(Fq2) == 16, "Fq2 is 16-byte aligned");

}  // namespace stoker::kernels
