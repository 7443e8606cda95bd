// The Montgomery product of Fr on x86-64 CPUs with BMI2 and ADX (Intel
// since Broadwell, AMD since Zen), written in inline assembly for this
// modulus: the CPU's fast product where Fr's portable one (field.cuh, through
// unsigned __int128) is the bound, as in the hpoly producer. fr_mul_adx(a, b)
// gives the same words as a * b for every pair of fully reduced operands;
// fr_reduce_once_asm is Fr::reduce_once_host in the same style.
//
// Header-only and always inlined: the caller's loop keeps the constants and
// the nine registers of the product in place, which an out-of-line call
// would spill. Compiled where STOKER_FR_MUL_ADX is defined (x86-64, GCC or
// Clang, an optimizing build: without optimization the compiler gives each
// memory operand of the product its own address register, and the product
// needs nine registers of its own). Only a CPU where cpu_has_adx() holds may
// run fr_mul_adx; a caller that wants it in a loop marks that function
// __attribute__((target("bmi2,adx"))).
#pragma once

#include <cstdint>

#include "kernels/field.cuh"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && defined(__OPTIMIZE__)
#define STOKER_FR_MUL_ADX 1
#include <cpuid.h>
#endif

#if defined(STOKER_FR_MUL_ADX)

namespace stoker::kernels::detail {

// r's limbs and -r^-1 mod 2^64, as memory operands for the assembly.
// Not inline: internal linkage keeps them RIP-relative memory operands in
// position-independent code, where an inline variable would be reached
// through the GOT and cost the product a register it does not have.
alignas(64) constexpr std::uint64_t kFrAsm[5] = {fr_detail::kP0, fr_detail::kP1, fr_detail::kP2,
                                                 fr_detail::kP3, fr_detail::kInv64};

// Fr::reduce_once_host in 12 instructions: SUB/SBB and CMOV (GCC makes about
// 60 of the portable version's borrows through unsigned __int128).
__attribute__((always_inline)) inline void fr_reduce_once_asm(Fr& v) {
  std::uint64_t d0, d1, d2, d3;
  asm("movq %[v0], %[d0]\n\t"
      "subq %[p0], %[d0]\n\t"
      "movq %[v1], %[d1]\n\t"
      "sbbq %[p1], %[d1]\n\t"
      "movq %[v2], %[d2]\n\t"
      "sbbq %[p2], %[d2]\n\t"
      "movq %[v3], %[d3]\n\t"
      "sbbq %[p3], %[d3]\n\t"
      "cmovaeq %[d0], %[v0]\n\t"
      "cmovaeq %[d1], %[v1]\n\t"
      "cmovaeq %[d2], %[v2]\n\t"
      "cmovaeq %[d3], %[v3]"
      : [v0] "+r"(v.l[0]), [v1] "+r"(v.l[1]), [v2] "+r"(v.l[2]), [v3] "+r"(v.l[3]), [d0] "=&r"(d0),
        [d1] "=&r"(d1), [d2] "=&r"(d2), [d3] "=&r"(d3)
      : [p0] "m"(kFrAsm[0]), [p1] "m"(kFrAsm[1]), [p2] "m"(kFrAsm[2]), [p3] "m"(kFrAsm[3])
      : "cc");
}

// Montgomery multiplication, CIOS, the running value in five registers that
// rotate names from round to round instead of moving. Each round adds a * b_i
// (ROW) and then m * r with m = t0 * -r^-1 (REDUCE), dropping the zero low
// word. MULX leaves the flags alone, so the low halves of the products add up
// on the OF chain (ADOX) while the high halves add up on the CF chain (ADCX).
// r's top word is below 2^63 - 1, so t < 2r fits four words between rounds
// and the fifth never carries out (the "no-carry" CIOS); one conditional
// subtraction at the end makes the result canonical, as Fr keeps it.
// clang-format off
#define STOKER_ADX_OP(x) "%[" #x "]"
#define STOKER_ADX_ROW(BI, T0, T1, T2, T3, T4) \
  "movq " STOKER_ADX_OP(BI) ", %%rdx\n\t"      \
  "xorl %k[" #T4 "], %k[" #T4 "]\n\t"          \
  "mulxq %[a0], %[lo], %[hi]\n\t"              \
  "adoxq %[lo], " STOKER_ADX_OP(T0) "\n\t"     \
  "mulxq %[a1], %[lo], %[h1]\n\t"              \
  "adcxq %[hi], " STOKER_ADX_OP(T1) "\n\t"     \
  "adoxq %[lo], " STOKER_ADX_OP(T1) "\n\t"     \
  "mulxq %[a2], %[lo], %[hi]\n\t"              \
  "adcxq %[h1], " STOKER_ADX_OP(T2) "\n\t"     \
  "adoxq %[lo], " STOKER_ADX_OP(T2) "\n\t"     \
  "mulxq %[a3], %[lo], %[h1]\n\t"              \
  "adcxq %[hi], " STOKER_ADX_OP(T3) "\n\t"     \
  "adoxq %[lo], " STOKER_ADX_OP(T3) "\n\t"     \
  "adcxq %[h1], " STOKER_ADX_OP(T4) "\n\t"     \
  "adoxq %[zero], " STOKER_ADX_OP(T4) "\n\t"
#define STOKER_ADX_REDUCE(T0, T1, T2, T3, T4)  \
  "movq " STOKER_ADX_OP(T0) ", %%rdx\n\t"      \
  "imulq %[inv], %%rdx\n\t"                    \
  "xorl %k[lo], %k[lo]\n\t"                    \
  "mulxq %[p0], %[lo], %[hi]\n\t"              \
  "adcxq " STOKER_ADX_OP(T0) ", %[lo]\n\t"     \
  "mulxq %[p1], %[lo], %[h1]\n\t"              \
  "adcxq %[hi], " STOKER_ADX_OP(T1) "\n\t"     \
  "adoxq %[lo], " STOKER_ADX_OP(T1) "\n\t"     \
  "mulxq %[p2], %[lo], %[hi]\n\t"              \
  "adcxq %[h1], " STOKER_ADX_OP(T2) "\n\t"     \
  "adoxq %[lo], " STOKER_ADX_OP(T2) "\n\t"     \
  "mulxq %[p3], %[lo], %[h1]\n\t"              \
  "adcxq %[hi], " STOKER_ADX_OP(T3) "\n\t"     \
  "adoxq %[lo], " STOKER_ADX_OP(T3) "\n\t"     \
  "adcxq %[h1], " STOKER_ADX_OP(T4) "\n\t"     \
  "adoxq %[zero], " STOKER_ADX_OP(T4) "\n\t"
// clang-format on

__attribute__((always_inline)) inline Fr fr_mul_adx(const Fr& a, const Fr& b) {
  std::uint64_t t0, t1, t2, t3, t4, lo, hi, h1;
  asm(  // Round 0: t = a * b0 (plain ADD/ADC: t starts at zero).
      "movq %[b0], %%rdx\n\t"
      "mulxq %[a0], %[t0], %[t1]\n\t"
      "mulxq %[a1], %[lo], %[t2]\n\t"
      "addq %[lo], %[t1]\n\t"
      "mulxq %[a2], %[lo], %[t3]\n\t"
      "adcq %[lo], %[t2]\n\t"
      "mulxq %[a3], %[lo], %[t4]\n\t"
      "adcq %[lo], %[t3]\n\t"
      "adcq $0, %[t4]\n\t"                                                          //
      STOKER_ADX_REDUCE(t0, t1, t2, t3, t4)                                         //
      STOKER_ADX_ROW(b1, t1, t2, t3, t4, t0) STOKER_ADX_REDUCE(t1, t2, t3, t4, t0)  //
      STOKER_ADX_ROW(b2, t2, t3, t4, t0, t1) STOKER_ADX_REDUCE(t2, t3, t4, t0, t1)  //
      STOKER_ADX_ROW(b3, t3, t4, t0, t1, t2) STOKER_ADX_REDUCE(t3, t4, t0, t1, t2)  //
      // (t4, t0, t1, t2) < 2r: minus r unless that borrows.
      "movq %[t4], %[lo]\n\t"
      "subq %[p0], %[lo]\n\t"
      "movq %[t0], %[hi]\n\t"
      "sbbq %[p1], %[hi]\n\t"
      "movq %[t1], %[h1]\n\t"
      "sbbq %[p2], %[h1]\n\t"
      "movq %[t2], %[t3]\n\t"
      "sbbq %[p3], %[t3]\n\t"
      "cmovaeq %[lo], %[t4]\n\t"
      "cmovaeq %[hi], %[t0]\n\t"
      "cmovaeq %[h1], %[t1]\n\t"
      "cmovaeq %[t3], %[t2]"
      : [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [t4] "=&r"(t4),
        [lo] "=&r"(lo), [hi] "=&r"(hi), [h1] "=&r"(h1)
      : [a0] "m"(a.l[0]), [a1] "m"(a.l[1]), [a2] "m"(a.l[2]), [a3] "m"(a.l[3]), [b0] "m"(b.l[0]),
        [b1] "m"(b.l[1]), [b2] "m"(b.l[2]), [b3] "m"(b.l[3]), [p0] "m"(kFrAsm[0]),
        [p1] "m"(kFrAsm[1]), [p2] "m"(kFrAsm[2]), [p3] "m"(kFrAsm[3]), [inv] "m"(kFrAsm[4]),
        [zero] "r"(std::uint64_t{0})
      : "rdx", "cc");
  return Fr{{t4, t0, t1, t2}};
}
#undef STOKER_ADX_REDUCE
#undef STOKER_ADX_ROW
#undef STOKER_ADX_OP

// CPUID leaf 7: EBX bit 8 is BMI2 (MULX), bit 19 is ADX (ADCX, ADOX).
inline bool cpu_has_adx() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  return (ebx >> 8 & 1) && (ebx >> 19 & 1);
}

}  // namespace stoker::kernels::detail

#endif  // STOKER_FR_MUL_ADX
