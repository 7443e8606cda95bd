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
// row is split into the even limbs of a (landing on words i..i+7) and the
// odd limbs (words i+1..i+8): two chains with no overlap inside either. This
// is the even/odd accumulation of Emmart, Zheng and Weems ("Optimizing
// modular multiplication for NVIDIA's Maxwell GPUs", ARITH 2016), here as a
// separated product-then-reduce (SOS) with the reduction's carries kept
// aside, which makes each step easy to bound:
//
//  product   t[0..15] = a * b. Row i adds a * b_i. Before it, t < 2^(32(i+8)),
//            so word i+8 is still zero and receives the even chain's carry;
//            after it t < 2^(32(i+9)), so the odd chain cannot carry out.
//  reduce    for i = 0..7: m = t_i * (-r^-1) mod 2^32 (= -t_i for this r;
//            r_0 = 1 and r_1 = 2^32 - 1 make their products additions),
//            t += m * r * 2^(32i),
//            which clears word i. The chains' carries out of words i+8 and
//            i+9 go into c[i] and c[i+1] instead of rippling up t. The sum
//            stays below a*b + r*2^256 < 2^512, so row 7's odd chain cannot
//            carry out of word 15.
//  result    t[8..15] + c[0..7] < 2r < 2^256 (r < 2^255), then one
//            conditional subtraction of r.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define STOKER_MONT_HD __host__ __device__ __forceinline__
#define STOKER_MONT_UNROLL _Pragma("unroll")
#else
#define STOKER_MONT_HD inline
#define STOKER_MONT_UNROLL
#endif

namespace stoker::kernels::fr_detail {

// r as eight little-endian 32-bit words.
inline constexpr std::uint32_t kR32_0 = 0x00000001u, kR32_1 = 0xffffffffu, kR32_2 = 0xfffe5bfeu,
                               kR32_3 = 0x53bda402u, kR32_4 = 0x09a1d805u, kR32_5 = 0x3339d808u,
                               kR32_6 = 0x299d7d48u, kR32_7 = 0x73eda753u;
// -r^-1 mod 2^32.
inline constexpr std::uint32_t kMontInv32 = 0xffffffffu;

#if defined(__CUDACC__)
// One PTX instruction per call; see the file comment for why volatile.
struct PtxCarry {
  __device__ __forceinline__ void mul_lo(std::uint32_t& d, std::uint32_t a, std::uint32_t b) {
    asm volatile("mul.lo.u32 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  }
  __device__ __forceinline__ void mul_hi(std::uint32_t& d, std::uint32_t a, std::uint32_t b) {
    asm volatile("mul.hi.u32 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  }
  // d += lo(a*b), sets the flag.
  __device__ __forceinline__ void mad_lo_cc(std::uint32_t& d, std::uint32_t a, std::uint32_t b) {
    asm volatile("mad.lo.cc.u32 %0, %1, %2, %0;" : "+r"(d) : "r"(a), "r"(b));
  }
  // d += lo(a*b) + flag, sets the flag.
  __device__ __forceinline__ void madc_lo_cc(std::uint32_t& d, std::uint32_t a, std::uint32_t b) {
    asm volatile("madc.lo.cc.u32 %0, %1, %2, %0;" : "+r"(d) : "r"(a), "r"(b));
  }
  // d += hi(a*b) + flag, sets the flag.
  __device__ __forceinline__ void madc_hi_cc(std::uint32_t& d, std::uint32_t a, std::uint32_t b) {
    asm volatile("madc.hi.cc.u32 %0, %1, %2, %0;" : "+r"(d) : "r"(a), "r"(b));
  }
  // d += hi(a*b) + flag; the caller proves no carry out.
  __device__ __forceinline__ void madc_hi(std::uint32_t& d, std::uint32_t a, std::uint32_t b) {
    asm volatile("madc.hi.u32 %0, %1, %2, %0;" : "+r"(d) : "r"(a), "r"(b));
  }
  // d += a, sets the flag.
  __device__ __forceinline__ void add_cc(std::uint32_t& d, std::uint32_t a) {
    asm volatile("add.cc.u32 %0, %0, %1;" : "+r"(d) : "r"(a));
  }
  // d += a + flag, sets the flag.
  __device__ __forceinline__ void addc_cc(std::uint32_t& d, std::uint32_t a) {
    asm volatile("addc.cc.u32 %0, %0, %1;" : "+r"(d) : "r"(a));
  }
  // d += flag.
  __device__ __forceinline__ void addc_flag(std::uint32_t& d) {
    asm volatile("addc.u32 %0, %0, 0;" : "+r"(d));
  }
  // d -= a, sets the borrow.
  __device__ __forceinline__ void sub_cc(std::uint32_t& d, std::uint32_t a) {
    asm volatile("sub.cc.u32 %0, %0, %1;" : "+r"(d) : "r"(a));
  }
  // d -= a + borrow, sets the borrow.
  __device__ __forceinline__ void subc_cc(std::uint32_t& d, std::uint32_t a) {
    asm volatile("subc.cc.u32 %0, %0, %1;" : "+r"(d) : "r"(a));
  }
  // d -= borrow.
  __device__ __forceinline__ void subc_flag(std::uint32_t& d) {
    asm volatile("subc.u32 %0, %0, 0;" : "+r"(d));
  }
};
#endif

// Montgomery product of two elements < r given as 8 little-endian words:
// out = a * b * 2^-256 mod r, fully reduced.
template <typename Cc>
STOKER_MONT_HD void mont_mul_8x32(Cc& cc, std::uint32_t out[8], const std::uint32_t a[8],
                                  const std::uint32_t b[8]) {
  constexpr std::uint32_t r[8] = {kR32_0, kR32_1, kR32_2, kR32_3,
                                  kR32_4, kR32_5, kR32_6, kR32_7};
  std::uint32_t t[16];

  // Row 0: the even chain needs no carries (its words do not overlap).
STOKER_MONT_UNROLL
  for (int j = 0; j < 8; j += 2) {
    cc.mul_lo(t[j], a[j], b[0]);
    cc.mul_hi(t[j + 1], a[j], b[0]);
  }
STOKER_MONT_UNROLL
  for (int j = 8; j < 16; ++j) t[j] = 0;
  cc.mad_lo_cc(t[1], a[1], b[0]);
  cc.madc_hi_cc(t[2], a[1], b[0]);
STOKER_MONT_UNROLL
  for (int j = 3; j < 8; j += 2) {
    cc.madc_lo_cc(t[j], a[j], b[0]);
    cc.madc_hi_cc(t[j + 1], a[j], b[0]);
  }
  // t[8] was zero and a * b_0 < 2^288: no carry out.

  // Rows 1..7.
STOKER_MONT_UNROLL
  for (int i = 1; i < 8; ++i) {
    cc.mad_lo_cc(t[i], a[0], b[i]);
    cc.madc_hi_cc(t[i + 1], a[0], b[i]);
STOKER_MONT_UNROLL
    for (int j = 2; j < 8; j += 2) {
      cc.madc_lo_cc(t[i + j], a[j], b[i]);
      cc.madc_hi_cc(t[i + j + 1], a[j], b[i]);
    }
    cc.addc_flag(t[i + 8]);  // word i+8 was zero
    cc.mad_lo_cc(t[i + 1], a[1], b[i]);
    cc.madc_hi_cc(t[i + 2], a[1], b[i]);
STOKER_MONT_UNROLL
    for (int j = 3; j < 7; j += 2) {
      cc.madc_lo_cc(t[i + j], a[j], b[i]);
      cc.madc_hi_cc(t[i + j + 1], a[j], b[i]);
    }
    cc.madc_lo_cc(t[i + 7], a[7], b[i]);
    cc.madc_hi(t[i + 8], a[7], b[i]);  // t < 2^(32(i+9)) afterwards
  }

  // Reduction, carries set aside in c.
  std::uint32_t c[8];
STOKER_MONT_UNROLL
  for (int j = 0; j < 8; ++j) c[j] = 0;
STOKER_MONT_UNROLL
  for (int i = 0; i < 8; ++i) {
    // -r^-1 = 2^32 - 1 and r_0 = 1, so m = -t_i and m * r_0 = m: the first
    // pair of the even chain is two additions instead of two multiply-adds
    // (integer ALU instead of the multiplier, which is the bottleneck).
    // r_1 = 2^32 - 1 likewise: m * r_1 = (m - f) * 2^32 + (2^32 - m) with
    // f = [t_i != 0], and 2^32 - m = t_i, so that pair of the odd chain is
    // two additions of words we already have. The borrow of m = 0 - t_i is f.
    static_assert(kMontInv32 == 0xffffffffu && kR32_0 == 1u && kR32_1 == 0xffffffffu,
                  "r's low words are built in");
    const std::uint32_t ti = t[i];
    std::uint32_t m = 0;
    cc.sub_cc(m, ti);  // m = -t_i, borrow f
    std::uint32_t m_hi = m;
    cc.subc_flag(m_hi);       // hi(m * r_1) = m - f
    cc.add_cc(t[i], m);       // becomes 0; carries unless t_i was 0
    cc.addc_cc(t[i + 1], 0);  // hi(m * r_0) = 0
STOKER_MONT_UNROLL
    for (int j = 2; j < 8; j += 2) {
      cc.madc_lo_cc(t[i + j], m, r[j]);
      cc.madc_hi_cc(t[i + j + 1], m, r[j]);
    }
    cc.addc_flag(c[i]);  // carry out of word i+7 into word i+8
    cc.add_cc(t[i + 1], ti);     // lo(m * r_1)
    cc.addc_cc(t[i + 2], m_hi);  // hi(m * r_1)
STOKER_MONT_UNROLL
    for (int j = 3; j < 7; j += 2) {
      cc.madc_lo_cc(t[i + j], m, r[j]);
      cc.madc_hi_cc(t[i + j + 1], m, r[j]);
    }
    cc.madc_lo_cc(t[i + 7], m, r[7]);
    if (i < 7) {
      cc.madc_hi_cc(t[i + 8], m, r[7]);
      cc.addc_flag(c[i + 1]);  // carry out of word i+8 into word i+9
    } else {
      cc.madc_hi(t[i + 8], m, r[7]);  // the sum stays below 2^512
    }
  }

  // out = t[8..15] + c, below 2r, then subtract r once if that fits.
  std::uint32_t s[8];
STOKER_MONT_UNROLL
  for (int j = 0; j < 8; ++j) s[j] = t[8 + j];
  cc.add_cc(s[0], c[0]);
STOKER_MONT_UNROLL
  for (int j = 1; j < 8; ++j) cc.addc_cc(s[j], c[j]);
  // The sum is below 2^256: the final flag is clear.
  std::uint32_t d[8];
STOKER_MONT_UNROLL
  for (int j = 0; j < 8; ++j) d[j] = s[j];
  std::uint32_t borrow = 0;
  cc.sub_cc(d[0], r[0]);
STOKER_MONT_UNROLL
  for (int j = 1; j < 8; ++j) cc.subc_cc(d[j], r[j]);
  cc.subc_flag(borrow);  // 0 - 0 - borrow: all ones when s < r
STOKER_MONT_UNROLL
  for (int j = 0; j < 8; ++j) out[j] = borrow ? s[j] : d[j];
}

}  // namespace stoker::kernels::fr_detail
