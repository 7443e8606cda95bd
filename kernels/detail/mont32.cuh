// The device Montgomery product of Fr, written once over a carry-flag
// policy so that the host can run the very same instruction sequence.
//
// `Cc` supplies the PTX integer primitives that read or write the carry flag
// (add.cc, addc, mad.lo.cc, madc.hi.cc, ...). On the device `PtxCarry` issues
// each as one `asm volatile` statement: volatile keeps the statements in
// program order, so the flag set by one is the flag read by the next, and
// ptxas schedules the machine code from there. On the host `EmulatedCarry`
// (test/kernels) executes the same calls with an explicit flag, so the
// algorithm's carry logic is tested on every CI run, not only on a GPU.
//
// Why this shape: a 32x32-bit product has a low and a high word, and the
// cheapest way to add a row a * b_i into an accumulator is one carry chain
// of mad.lo / madc.hi pairs. The pairs of neighbouring limbs overlap (the
// high word of a_j b_i lands where the low word of a_(j+1) b_i does), so each
// row is split into the even limbs of a and the odd limbs: two chains with
// no overlap inside either, kept in two arrays. This is the even/odd
// accumulation of Emmart, Zheng and Weems ("Optimizing modular
// multiplication for NVIDIA's Maxwell GPUs", ARITH 2016), interleaved (CIOS):
// each row adds a * b_i and at once m * r, then the frame moves up one word,
// so only 16 accumulator words are live.
//
// Measured against the separated form (the whole product a * b in 16 words,
// then the reduction with its carries set aside in 8 more), which has the
// same instruction count: the NTT pass kernel needs 62 registers instead of
// 64 and the forward NTT of 2^24 takes 4.97 ms instead of 5.69 on one H200
// (2^27: 43.7 vs 49.9 ms; docs/KERNELS.md).
//
// The value of row i's frame is kept in two arrays: p holds its words 0..7
// and takes the even chains (a_even * b_i and m * r_even), q holds words
// 1..8 and takes the odd chains. Frame word 0 is then p[0] alone, so
// m = -p[0] clears it exactly and p[0] can be dropped. Moving up one word
// turns q into the next row's p (words 0..7), while p's words 1..7 become
// words 0..6 of the next frame: the next row adds p[1] into its p[0] (word
// 0), whose carry starts its odd chain at word 1 over p[2..7] (words 1..6)
// and two fresh words. So the arrays swap roles from row to row, and the
// move down by two words is a renaming once the rows are unrolled.
//
// Bounds. Let T_i be the value at the start of row i: T_0 = 0 and
// T_(i+1) = (T_i + a * b_i + m * r) / 2^32 < (2r + 2 (2^32 - 1) r) / 2^32
// = 2r if T_i < 2r. Inside row i every partial sum is at most
// T_i + a * b_i + m * r < 2^33 r < 2^288 (r < 2^255), and every word is
// nonnegative, so nothing can carry out of frame word 8: the chains that end
// in q[7] (word 8) use the forms without carry out, and the carry out of
// p[7] (word 7) goes into q[7] the same way. After row 7 the value is
// T_8 < 2r < 2^256: merging the arrays carries nothing out, and one
// conditional subtraction of r leaves it fully reduced.
#pragma once

#include <cstdint>

#include "common/host_device.hpp"
#include "kernels/detail/ptx_carry.cuh"

namespace stoker::kernels::fr_detail {

// r as eight little-endian 32-bit words.
inline constexpr std::uint32_t kR32_0 = 0x00000001u, kR32_1 = 0xffffffffu, kR32_2 = 0xfffe5bfeu,
                               kR32_3 = 0x53bda402u, kR32_4 = 0x09a1d805u, kR32_5 = 0x3339d808u,
                               kR32_6 = 0x299d7d48u, kR32_7 = 0x73eda753u;
// -r^-1 mod 2^32.
inline constexpr std::uint32_t kMontInv32 = 0xffffffffu;

#if defined(__CUDACC__)
using PtxCarry = detail::PtxCarry;
#endif

// Row i of the interleaved product; see above. On entry p holds words 0..7
// of the frame and q (but for the first row) holds word 0 in q[1] and words
// 1..6 in q[2..7]. On return p holds words 0..7 (p[0] = 0) and q words 1..8.
template <typename Cc>
STOKER_HD void mont_row_interleaved(Cc& cc, std::uint32_t p[8], std::uint32_t q[8],
                                    const std::uint32_t a[8], std::uint32_t bi, bool first) {
  constexpr std::uint32_t r[8] = {kR32_0, kR32_1, kR32_2, kR32_3, kR32_4, kR32_5, kR32_6, kR32_7};
  if (first) {
    // Neither product's words overlap: no carries.
    STOKER_UNROLL
    for (int j = 0; j < 8; j += 2) {
      cc.mul_lo(p[j], a[j], bi);
      cc.mul_hi(p[j + 1], a[j], bi);
      cc.mul_lo(q[j], a[j + 1], bi);
      cc.mul_hi(q[j + 1], a[j + 1], bi);
    }
  } else {
    // Word 0 from the previous p into p[0]; its carry enters word 1, where
    // the odd chain starts, and q moves down to words 1..8 as it goes.
    cc.add_cc(p[0], q[1]);
    STOKER_UNROLL
    for (int j = 0; j < 6; ++j) q[j] = q[j + 2];
    q[6] = 0;
    q[7] = 0;
    STOKER_UNROLL
    for (int j = 0; j < 6; j += 2) {
      cc.madc_lo_cc(q[j], a[j + 1], bi);
      cc.madc_hi_cc(q[j + 1], a[j + 1], bi);
    }
    cc.madc_lo_cc(q[6], a[7], bi);
    cc.madc_hi(q[7], a[7], bi);  // word 8
    cc.mad_lo_cc(p[0], a[0], bi);
    cc.madc_hi_cc(p[1], a[0], bi);
    STOKER_UNROLL
    for (int j = 2; j < 8; j += 2) {
      cc.madc_lo_cc(p[j], a[j], bi);
      cc.madc_hi_cc(p[j + 1], a[j], bi);
    }
    cc.addc_flag(q[7]);  // carry out of word 7
  }

  // m * r. -r^-1 = 2^32 - 1 and r_0 = 1, so m = -t0 and m * r_0 = m: the
  // first pair of the even chain is two additions instead of two
  // multiply-adds (integer ALU instead of the multiplier, the bottleneck).
  // r_1 = 2^32 - 1 likewise: m * r_1 = (m - f) * 2^32 + (2^32 - m) with
  // f = [t0 != 0], and 2^32 - m = t0, so that pair of the odd chain is two
  // additions of words we already have. The borrow of m = 0 - t0 is f.
  static_assert(kMontInv32 == 0xffffffffu && kR32_0 == 1u && kR32_1 == 0xffffffffu,
                "r's low words are built in");
  const std::uint32_t t0 = p[0];
  std::uint32_t m = 0;
  cc.sub_cc(m, t0);  // m = -t0, borrow f
  std::uint32_t m_hi = m;
  cc.subc_flag(m_hi);   // hi(m * r_1) = m - f
  cc.add_cc(p[0], m);   // becomes 0; carries unless t0 was 0
  cc.addc_cc(p[1], 0);  // hi(m * r_0) = 0
  STOKER_UNROLL
  for (int j = 2; j < 8; j += 2) {
    cc.madc_lo_cc(p[j], m, r[j]);
    cc.madc_hi_cc(p[j + 1], m, r[j]);
  }
  cc.addc_flag(q[7]);      // carry out of word 7
  cc.add_cc(q[0], t0);     // lo(m * r_1)
  cc.addc_cc(q[1], m_hi);  // hi(m * r_1)
  STOKER_UNROLL
  for (int j = 2; j < 6; j += 2) {
    cc.madc_lo_cc(q[j], m, r[j + 1]);
    cc.madc_hi_cc(q[j + 1], m, r[j + 1]);
  }
  cc.madc_lo_cc(q[6], m, r[7]);
  cc.madc_hi(q[7], m, r[7]);  // word 8
}

// Montgomery product of two elements < r given as 8 little-endian words:
// out = a * b * 2^-256 mod r, fully reduced.
template <typename Cc>
STOKER_HD void mont_mul_8x32(Cc& cc, std::uint32_t out[8], const std::uint32_t a[8],
                             const std::uint32_t b[8]) {
  constexpr std::uint32_t r[8] = {kR32_0, kR32_1, kR32_2, kR32_3, kR32_4, kR32_5, kR32_6, kR32_7};
  std::uint32_t x[8], y[8];
  STOKER_UNROLL
  for (int i = 0; i < 8; i += 2) {
    mont_row_interleaved(cc, x, y, a, b[i], i == 0);
    mont_row_interleaved(cc, y, x, a, b[i + 1], false);
  }

  // Row 7 left words 0..7 in x and words 0..6 in y[1..7]; their sum is
  // T_8 < 2^256, so the final flag is clear.
  std::uint32_t s[8];
  STOKER_UNROLL
  for (int j = 0; j < 8; ++j) s[j] = x[j];
  cc.add_cc(s[0], y[1]);
  STOKER_UNROLL
  for (int j = 1; j < 7; ++j) cc.addc_cc(s[j], y[j + 1]);
  cc.addc_flag(s[7]);

  std::uint32_t d[8];
  STOKER_UNROLL
  for (int j = 0; j < 8; ++j) d[j] = s[j];
  std::uint32_t borrow = 0;
  cc.sub_cc(d[0], r[0]);
  STOKER_UNROLL
  for (int j = 1; j < 8; ++j) cc.subc_cc(d[j], r[j]);
  cc.subc_flag(borrow);  // 0 - 0 - borrow: all ones when s < r
  STOKER_UNROLL
  for (int j = 0; j < 8; ++j) out[j] = borrow ? s[j] : d[j];
}

}  // namespace stoker::kernels::fr_detail
