// The Montgomery product of Fq on x86-64 CPUs with BMI2 and ADX, in inline
// assembly for this modulus, in the style of fr_mul_adx.hpp (which also
// gives cpu_has_adx). Fq's host product (fq.cuh) calls it where the CPU has
// the instructions (kFqMulAdx): 1.8-2.4x the portable product's rate
// through unsigned __int128 (26-35 against 63-64 ns on the development VM),
// which is most of a CPU MSM's, a pairing's and a bellman key's decoding
// time. It gives the same words as the portable product for every pair of
// fully reduced operands.
//
// Six limbs need twelve registers of the product's own (seven for the
// running value, three for the halves of the products, RDX and a zero) and
// two for a and b's addresses: fifteen are there. Out of line (one copy per translation unit, as the constants it reads are), so that the
// callers' code does not carry a copy each: the call costs about 1 ns.
// Defined where STOKER_FR_MUL_ADX is (an optimizing x86-64 GCC or Clang
// build).
#pragma once

#include <cstdint>

#include "kernels/detail/fq_constants.hpp"
#include "kernels/detail/fr_mul_adx.hpp"

#if defined(STOKER_FR_MUL_ADX)
#define STOKER_FQ_MUL_ADX 1

namespace stoker::kernels::detail {

alignas(64) constexpr std::uint64_t kFqAsm[7] = {fq_detail::kQ0, fq_detail::kQ1, fq_detail::kQ2,
                                                 fq_detail::kQ3, fq_detail::kQ4, fq_detail::kQ5,
                                                 fq_detail::kInv64};

// CIOS as in fr_mul_adx: each round adds a * b_i (ROW), then m * q with
// m = t0 * -q^-1 (REDUCE), and drops the zero low word; the seven names of
// the running value rotate from round to round. q's top word is below
// 2^63 - 1, so t < 2q between rounds and the top word never carries out.
// clang-format off
#define STOKER_FQ_OP(x) "%[" #x "]"
#define STOKER_FQ_ROW(BI, T0, T1, T2, T3, T4, T5, T6) \
  "movq " BI ", %%rdx\n\t"              \
  "xorl %k[" #T6 "], %k[" #T6 "]\n\t"                 \
  "mulxq (%[a]), %[lo], %[hi]\n\t"                     \
  "adoxq %[lo], " STOKER_FQ_OP(T0) "\n\t"             \
  "mulxq 8(%[a]), %[lo], %[h1]\n\t"                     \
  "adcxq %[hi], " STOKER_FQ_OP(T1) "\n\t"             \
  "adoxq %[lo], " STOKER_FQ_OP(T1) "\n\t"             \
  "mulxq 16(%[a]), %[lo], %[hi]\n\t"                     \
  "adcxq %[h1], " STOKER_FQ_OP(T2) "\n\t"             \
  "adoxq %[lo], " STOKER_FQ_OP(T2) "\n\t"             \
  "mulxq 24(%[a]), %[lo], %[h1]\n\t"                     \
  "adcxq %[hi], " STOKER_FQ_OP(T3) "\n\t"             \
  "adoxq %[lo], " STOKER_FQ_OP(T3) "\n\t"             \
  "mulxq 32(%[a]), %[lo], %[hi]\n\t"                     \
  "adcxq %[h1], " STOKER_FQ_OP(T4) "\n\t"             \
  "adoxq %[lo], " STOKER_FQ_OP(T4) "\n\t"             \
  "mulxq 40(%[a]), %[lo], %[h1]\n\t"                     \
  "adcxq %[hi], " STOKER_FQ_OP(T5) "\n\t"             \
  "adoxq %[lo], " STOKER_FQ_OP(T5) "\n\t"             \
  "adcxq %[h1], " STOKER_FQ_OP(T6) "\n\t"             \
  "adoxq %[zero], " STOKER_FQ_OP(T6) "\n\t"
#define STOKER_FQ_REDUCE(T0, T1, T2, T3, T4, T5, T6)  \
  "movq " STOKER_FQ_OP(T0) ", %%rdx\n\t"              \
  "imulq 48+%[q], %%rdx\n\t"                           \
  "xorl %k[lo], %k[lo]\n\t"                           \
  "mulxq %[q], %[lo], %[hi]\n\t"                     \
  "adcxq " STOKER_FQ_OP(T0) ", %[lo]\n\t"             \
  "mulxq 8+%[q], %[lo], %[h1]\n\t"                     \
  "adcxq %[hi], " STOKER_FQ_OP(T1) "\n\t"             \
  "adoxq %[lo], " STOKER_FQ_OP(T1) "\n\t"             \
  "mulxq 16+%[q], %[lo], %[hi]\n\t"                     \
  "adcxq %[h1], " STOKER_FQ_OP(T2) "\n\t"             \
  "adoxq %[lo], " STOKER_FQ_OP(T2) "\n\t"             \
  "mulxq 24+%[q], %[lo], %[h1]\n\t"                     \
  "adcxq %[hi], " STOKER_FQ_OP(T3) "\n\t"             \
  "adoxq %[lo], " STOKER_FQ_OP(T3) "\n\t"             \
  "mulxq 32+%[q], %[lo], %[hi]\n\t"                     \
  "adcxq %[h1], " STOKER_FQ_OP(T4) "\n\t"             \
  "adoxq %[lo], " STOKER_FQ_OP(T4) "\n\t"             \
  "mulxq 40+%[q], %[lo], %[h1]\n\t"                     \
  "adcxq %[hi], " STOKER_FQ_OP(T5) "\n\t"             \
  "adoxq %[lo], " STOKER_FQ_OP(T5) "\n\t"             \
  "adcxq %[h1], " STOKER_FQ_OP(T6) "\n\t"             \
  "adoxq %[zero], " STOKER_FQ_OP(T6) "\n\t"
// clang-format on

// Whether this CPU runs fq_mul_adx. Read before its initialisation (by
// another translation unit's static initialiser) it is false: the portable
// product, the same words.
inline const bool kFqMulAdx = cpu_has_adx();

// out = a * b / 2^384 mod q; out may be a or b.
static inline __attribute__((noinline)) void fq_mul_adx(std::uint64_t out[6], const std::uint64_t a[6],
                                                 const std::uint64_t b[6]) {
  std::uint64_t t0, t1, t2, t3, t4, t5, t6, lo, hi, h1, zero = 0;
  asm(  // Round 0: t = a * b0 (plain ADD/ADC: t starts at zero).
      "movq (%[b]), %%rdx\n\t"
      "mulxq (%[a]), %[t0], %[t1]\n\t"
      "mulxq 8(%[a]), %[lo], %[t2]\n\t"
      "addq %[lo], %[t1]\n\t"
      "mulxq 16(%[a]), %[lo], %[t3]\n\t"
      "adcq %[lo], %[t2]\n\t"
      "mulxq 24(%[a]), %[lo], %[t4]\n\t"
      "adcq %[lo], %[t3]\n\t"
      "mulxq 32(%[a]), %[lo], %[t5]\n\t"
      "adcq %[lo], %[t4]\n\t"
      "mulxq 40(%[a]), %[lo], %[t6]\n\t"
      "adcq %[lo], %[t5]\n\t"
      "adcq $0, %[t6]\n\t"                                                                        //
      STOKER_FQ_REDUCE(t0, t1, t2, t3, t4, t5, t6)                                                //
      STOKER_FQ_ROW("8(%[b])", t1, t2, t3, t4, t5, t6, t0) STOKER_FQ_REDUCE(t1, t2, t3, t4, t5, t6, t0)  //
      STOKER_FQ_ROW("16(%[b])", t2, t3, t4, t5, t6, t0, t1) STOKER_FQ_REDUCE(t2, t3, t4, t5, t6, t0, t1)  //
      STOKER_FQ_ROW("24(%[b])", t3, t4, t5, t6, t0, t1, t2) STOKER_FQ_REDUCE(t3, t4, t5, t6, t0, t1, t2)  //
      STOKER_FQ_ROW("32(%[b])", t4, t5, t6, t0, t1, t2, t3) STOKER_FQ_REDUCE(t4, t5, t6, t0, t1, t2, t3)  //
      STOKER_FQ_ROW("40(%[b])", t5, t6, t0, t1, t2, t3, t4) STOKER_FQ_REDUCE(t5, t6, t0, t1, t2, t3, t4)  //
      // (t6, t0, t1, t2, t3, t4) < 2q: minus q unless that borrows, into
      // the registers the product no longer needs (t5, the halves, RDX and
      // the zero).
      "movq %[t6], %[lo]\n\t"
      "subq %[q], %[lo]\n\t"
      "movq %[t0], %[hi]\n\t"
      "sbbq 8+%[q], %[hi]\n\t"
      "movq %[t1], %[h1]\n\t"
      "sbbq 16+%[q], %[h1]\n\t"
      "movq %[t2], %[t5]\n\t"
      "sbbq 24+%[q], %[t5]\n\t"
      "movq %[t3], %%rdx\n\t"
      "sbbq 32+%[q], %%rdx\n\t"
      "movq %[t4], %[zero]\n\t"
      "sbbq 40+%[q], %[zero]\n\t"
      "cmovaeq %[lo], %[t6]\n\t"
      "cmovaeq %[hi], %[t0]\n\t"
      "cmovaeq %[h1], %[t1]\n\t"
      "cmovaeq %[t5], %[t2]\n\t"
      "cmovaeq %%rdx, %[t3]\n\t"
      "cmovaeq %[zero], %[t4]"
      : [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [t4] "=&r"(t4),
        [t5] "=&r"(t5), [t6] "=&r"(t6), [lo] "=&r"(lo), [hi] "=&r"(hi), [h1] "=&r"(h1),
        [zero] "+&r"(zero)
      : [a] "r"(a), [b] "r"(b), [q] "m"(kFqAsm),
        "m"(*reinterpret_cast<const std::uint64_t(*)[6]>(a)),
        "m"(*reinterpret_cast<const std::uint64_t(*)[6]>(b))
      : "rdx", "cc");
  out[0] = t6;
  out[1] = t0;
  out[2] = t1;
  out[3] = t2;
  out[4] = t3;
  out[5] = t4;
}
#undef STOKER_FQ_REDUCE
#undef STOKER_FQ_ROW
#undef STOKER_FQ_OP

}  // namespace stoker::kernels::detail

#endif  // STOKER_FR_MUL_ADX
