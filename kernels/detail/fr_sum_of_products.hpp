// FrSumOfProducts: sum_i a_i * b_i + sum_j x_j over Fr with one Montgomery
// reduction at the end instead of one per product, for the CPU's long inner
// products (the barycentric sums that verify hpoly and ntt_msm_h).
//
// Fr's product a * b is the Montgomery product of the two representations,
// A B 2^-256 mod r. Here a_i b_i is added as the plain 512-bit integer A B,
// x_j as X 2^256, into nine 64-bit words (512 bits and a carry word), and
// value() reduces the total W once: W 2^-256 mod r is the sum Fr would have
// given term by term, word for word (the representation is unique). A
// product costs 16 word multiplications instead of the Montgomery
// product's 32, and its additions carry no conditional subtraction.
//
// Operands are Fr as Fr keeps them (fully reduced), so each term is below
// 2^511 and the words hold 2^65 terms: no caller comes near. Value type,
// no sharing: one per thread, their value()s added.
//
// add_product and add are portable (unsigned __int128, as Fr's host
// arithmetic). Where STOKER_FR_MUL_ADX is defined (fr_mul_adx.hpp: x86-64,
// GCC or Clang, an optimizing build) add_product_adx and add_adx give the
// same words with MULX and ADCX/ADOX, always inlined for the same reason as
// fr_mul_adx; only a CPU where cpu_has_adx() holds may run them.
#pragma once

#include <cstdint>

#include "kernels/detail/fr_mul_adx.hpp"
#include "kernels/field.cuh"

namespace stoker::kernels::detail {

#if defined(STOKER_FR_MUL_ADX)
// A memory operand for the ADOX that ends a row, so the product needs no
// register for zero (it has none to spare). Internal linkage, as kFrAsm.
constexpr std::uint64_t kFrSumZero[1] = {0};
#endif

class FrSumOfProducts {
 public:
  static constexpr int kWords = 9;

  // += a * b: the Fr product's value, not yet reduced.
  void add_product(const Fr& a, const Fr& b) {
    std::uint64_t p0 = 0, p1 = 0, p2 = 0, p3 = 0, p4, p5, p6, p7;
    row(a, b.l[0], p0, p1, p2, p3, p4);
    row(a, b.l[1], p1, p2, p3, p4, p5);
    row(a, b.l[2], p2, p3, p4, p5, p6);
    row(a, b.l[3], p3, p4, p5, p6, p7);
    std::uint64_t c = 0;
    w_[0] = Fr::adc_host(w_[0], p0, c);
    w_[1] = Fr::adc_host(w_[1], p1, c);
    w_[2] = Fr::adc_host(w_[2], p2, c);
    w_[3] = Fr::adc_host(w_[3], p3, c);
    w_[4] = Fr::adc_host(w_[4], p4, c);
    w_[5] = Fr::adc_host(w_[5], p5, c);
    w_[6] = Fr::adc_host(w_[6], p6, c);
    w_[7] = Fr::adc_host(w_[7], p7, c);
    w_[8] += c;
  }

  // += x: added as x 2^256, which the final 2^-256 takes back off.
  void add(const Fr& x) {
    std::uint64_t c = 0;
    w_[4] = Fr::adc_host(w_[4], x.l[0], c);
    w_[5] = Fr::adc_host(w_[5], x.l[1], c);
    w_[6] = Fr::adc_host(w_[6], x.l[2], c);
    w_[7] = Fr::adc_host(w_[7], x.l[3], c);
    w_[8] += c;
  }

#if defined(STOKER_FR_MUL_ADX)
  // add_product in one pass, row by row as in fr_mul_adx: the low halves
  // of a row's products on the OF chain (ADOX), the high halves on the CF
  // chain (ADCX). Each row's lowest word is final once the row is done and
  // goes straight into the sum, ADOX again, so that its carry into the next
  // word rides in OF into the next row's OF chain; the word's register takes
  // the next row's top word. The partial product plus that carry never
  // passes 2^256 between rows (a carry needs a nonzero low word, which the
  // largest partial product does not have), so neither chain carries out of
  // a row. Five registers for the product, two for the halves, RDX and one
  // pointer each for a, b and the sum: clang and sanitizer builds (a frame
  // pointer) leave no more, and GCC allows no more than 30 operands, fewer
  // than a word each would take.
  // clang-format off
#define STOKER_SOP_OP(x) "%[" #x "]"
#define STOKER_SOP_ROW(BI, T0, T1, T2, T3, T4) \
  "movq " BI "(%[b]), %%rdx\n\t"                \
  "movl $0, %k[" #T4 "]\n\t"                    \
  "mulxq (%[a]), %[lo], %[hi]\n\t"              \
  "adoxq %[lo], " STOKER_SOP_OP(T0) "\n\t"      \
  "adcxq %[hi], " STOKER_SOP_OP(T1) "\n\t"      \
  "mulxq 8(%[a]), %[lo], %[hi]\n\t"             \
  "adoxq %[lo], " STOKER_SOP_OP(T1) "\n\t"      \
  "adcxq %[hi], " STOKER_SOP_OP(T2) "\n\t"      \
  "mulxq 16(%[a]), %[lo], %[hi]\n\t"            \
  "adoxq %[lo], " STOKER_SOP_OP(T2) "\n\t"      \
  "adcxq %[hi], " STOKER_SOP_OP(T3) "\n\t"      \
  "mulxq 24(%[a]), %[lo], %[hi]\n\t"            \
  "adoxq %[lo], " STOKER_SOP_OP(T3) "\n\t"      \
  "adcxq %[hi], " STOKER_SOP_OP(T4) "\n\t"      \
  "adoxq %[zero], " STOKER_SOP_OP(T4) "\n\t"
// Word W of the sum += T + OF, the carry out in OF.
#define STOKER_SOP_ACC(W, T)                    \
  "movq " W "(%[w]), %[lo]\n\t"                \
  "adoxq " STOKER_SOP_OP(T) ", %[lo]\n\t"      \
  "movq %[lo], " W "(%[w])\n\t"
  // clang-format on
  __attribute__((always_inline)) void add_product_adx(const Fr& a, const Fr& b) {
    std::uint64_t t0, t1, t2, t3, t4, lo, hi;
    asm(  // Row 0: t = a * b0 (plain ADD/ADC: t starts at zero).
        "movq (%[b]), %%rdx\n\t"
        "mulxq (%[a]), %[t0], %[t1]\n\t"
        "mulxq 8(%[a]), %[lo], %[t2]\n\t"
        "addq %[lo], %[t1]\n\t"
        "mulxq 16(%[a]), %[lo], %[t3]\n\t"
        "adcq %[lo], %[t2]\n\t"
        "mulxq 24(%[a]), %[lo], %[t4]\n\t"
        "adcq %[lo], %[t3]\n\t"
        "adcq $0, %[t4]\n\t"
        "xorl %k[lo], %k[lo]\n\t"                                          //
        STOKER_SOP_ACC("0", t0)                                            //
        STOKER_SOP_ROW("8", t1, t2, t3, t4, t0) STOKER_SOP_ACC("8", t1)    //
        STOKER_SOP_ROW("16", t2, t3, t4, t0, t1) STOKER_SOP_ACC("16", t2)  //
        STOKER_SOP_ROW("24", t3, t4, t0, t1, t2) STOKER_SOP_ACC("24", t3)  //
        STOKER_SOP_ACC("32", t4)                                           //
        STOKER_SOP_ACC("40", t0)                                           //
        STOKER_SOP_ACC("48", t1)                                           //
        STOKER_SOP_ACC("56", t2)                                           //
        STOKER_SOP_ACC("64", zero)
        : [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [t4] "=&r"(t4),
          [lo] "=&r"(lo), [hi] "=&r"(hi), "+m"(w_)
        : [a] "r"(a.l), [b] "r"(b.l), [w] "r"(w_), "m"(a.l), "m"(b.l), [zero] "m"(kFrSumZero[0])
        : "rdx", "cc");
  }
#undef STOKER_SOP_ACC
#undef STOKER_SOP_ROW
#undef STOKER_SOP_OP

  __attribute__((always_inline)) void add_adx(const Fr& x) {
    asm("addq %[x0], %[w4]\n\t"
        "adcq %[x1], %[w5]\n\t"
        "adcq %[x2], %[w6]\n\t"
        "adcq %[x3], %[w7]\n\t"
        "adcq $0, %[w8]"
        : [w4] "+m"(w_[4]), [w5] "+m"(w_[5]), [w6] "+m"(w_[6]), [w7] "+m"(w_[7]), [w8] "+m"(w_[8])
        : [x0] "r"(x.l[0]), [x1] "r"(x.l[1]), [x2] "r"(x.l[2]), [x3] "r"(x.l[3])
        : "cc");
  }
#endif  // STOKER_FR_MUL_ADX

  // The sum as Fr: W 2^-256 mod r. With W = L + 2^256 M + 2^512 T (L and M
  // four words, T the ninth), that is L 2^-256 + M + T 2^256 mod r: the
  // Montgomery product of L (below 2^256 < 3r, reduced) by the word 1, M
  // reduced, and T 2^256 = Fr::from_u64(T)'s representation.
  Fr value() const {
    const Fr low = reduce(Fr{{w_[0], w_[1], w_[2], w_[3]}});
    const Fr middle = reduce(Fr{{w_[4], w_[5], w_[6], w_[7]}});
    return Fr::mont_mul(low, Fr{{1, 0, 0, 0}}) + middle + Fr::from_u64(w_[8]);
  }

  // The unreduced total, least significant word first.
  const std::uint64_t* words() const {
    return w_;
  }

 private:
  // (t0..t3) += a * bi, its fifth word into t4.
  static void row(const Fr& a, std::uint64_t bi, std::uint64_t& t0, std::uint64_t& t1,
                  std::uint64_t& t2, std::uint64_t& t3, std::uint64_t& t4) {
    std::uint64_t c = 0;
    t0 = Fr::mac_host(a.l[0], bi, t0, c);
    t1 = Fr::mac_host(a.l[1], bi, t1, c);
    t2 = Fr::mac_host(a.l[2], bi, t2, c);
    t3 = Fr::mac_host(a.l[3], bi, t3, c);
    t4 = c;
  }
  // Any four words (< 2^256 < 3r) to [0, r).
  static Fr reduce(const Fr& v) {
    return Fr::reduce_once_host(Fr::reduce_once_host(v));
  }

  std::uint64_t w_[kWords] = {};
};

}  // namespace stoker::kernels::detail
