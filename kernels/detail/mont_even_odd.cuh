// Multi-word modular arithmetic over 32-bit words for any odd modulus M of
// N words (N even) with M < 2^(32N - 1): the device arithmetic of Fq (N = 12),
// written over a carry-flag policy `Cc` (detail/ptx_carry.cuh) so that the
// host runs the very same instruction sequence with an emulated flag.
//
// The Montgomery product is the even/odd interleaved CIOS that
// detail/mont32.cuh explains for Fr, without Fr's shortcuts for its special
// low words: each row adds a * b_i as two carry chains of mad.lo / madc.hi
// pairs (the even limbs of a into p, the odd limbs into o, so that no pair
// inside a chain overlaps its neighbour) and m * M the same way, then the
// frame moves up one word by renaming. A 12-word row is 24 multiply-adds
// for a * b_i plus 24 for m * M and one multiplication for m: 2 N^2 + N
// products in all (300 for Fq), the textbook count, with every addition
// folded into a multiply-add.
//
// Bounds. With T_0 = 0 and a, b < M, T_(i+1) = (T_i + a b_i + m M) / 2^32
// < 2M by induction. Inside a row every partial sum is below
// T_i + 2 (2^32 - 1) M < 2^33 M < 2^(32 (N + 1)) (M < 2^(32N - 1)), so no
// chain can carry out of frame word N: the chains that end there use the
// forms without carry out. After the last row T_N < 2M < 2^(32N): merging
// the two arrays carries nothing out and one conditional subtraction of M
// leaves the product fully reduced.
#pragma once

#include <cstdint>

#include "common/host_device.hpp"
#include "kernels/detail/ptx_carry.cuh"

namespace stoker::kernels::detail {

// Row i of the product. On entry p holds frame words 0..N-1 and o (but for
// the first row) holds word 0 in o[1] and words 1..N-2 in o[2..N-1]: the
// previous row's even array, moved down one word by the caller's renaming.
// On return p holds words 0..N-1 (p[0] = 0) and o words 1..N.
template <int N, typename Cc>
STOKER_HD void mont_row_even_odd(Cc& cc, std::uint32_t p[N], std::uint32_t o[N],
                                 const std::uint32_t a[N], std::uint32_t bi,
                                 const std::uint32_t mod[N], std::uint32_t inv, bool first) {
  if (first) {
    // Neither product's words overlap: no carries.
    STOKER_UNROLL
    for (int j = 0; j < N; j += 2) {
      cc.mul_lo(p[j], a[j], bi);
      cc.mul_hi(p[j + 1], a[j], bi);
      cc.mul_lo(o[j], a[j + 1], bi);
      cc.mul_hi(o[j + 1], a[j + 1], bi);
    }
  } else {
    // Word 0 of the previous frame's even array goes into p[0]; its carry
    // enters word 1, where the odd chain starts, as o moves down two places.
    cc.add_cc(p[0], o[1]);
    STOKER_UNROLL
    for (int j = 0; j < N - 2; ++j) o[j] = o[j + 2];
    o[N - 2] = 0;
    o[N - 1] = 0;
    STOKER_UNROLL
    for (int j = 0; j < N - 2; j += 2) {
      cc.madc_lo_cc(o[j], a[j + 1], bi);
      cc.madc_hi_cc(o[j + 1], a[j + 1], bi);
    }
    cc.madc_lo_cc(o[N - 2], a[N - 1], bi);
    cc.madc_hi(o[N - 1], a[N - 1], bi);  // word N
    cc.mad_lo_cc(p[0], a[0], bi);
    cc.madc_hi_cc(p[1], a[0], bi);
    STOKER_UNROLL
    for (int j = 2; j < N; j += 2) {
      cc.madc_lo_cc(p[j], a[j], bi);
      cc.madc_hi_cc(p[j + 1], a[j], bi);
    }
    cc.addc_flag(o[N - 1]);  // carry out of word N-1
  }

  // m * M with m = p[0] * (-M^-1) mod 2^32, which clears word 0.
  std::uint32_t m;
  cc.mul_lo(m, p[0], inv);
  cc.mad_lo_cc(p[0], m, mod[0]);
  cc.madc_hi_cc(p[1], m, mod[0]);
  STOKER_UNROLL
  for (int j = 2; j < N; j += 2) {
    cc.madc_lo_cc(p[j], m, mod[j]);
    cc.madc_hi_cc(p[j + 1], m, mod[j]);
  }
  cc.addc_flag(o[N - 1]);  // carry out of word N-1
  cc.mad_lo_cc(o[0], m, mod[1]);
  cc.madc_hi_cc(o[1], m, mod[1]);
  STOKER_UNROLL
  for (int j = 2; j < N - 2; j += 2) {
    cc.madc_lo_cc(o[j], m, mod[j + 1]);
    cc.madc_hi_cc(o[j + 1], m, mod[j + 1]);
  }
  cc.madc_lo_cc(o[N - 2], m, mod[N - 1]);
  cc.madc_hi(o[N - 1], m, mod[N - 1]);  // word N
}

// s < 2M: out = s - M if that does not borrow, else s.
template <int N, typename Cc>
STOKER_HD void reduce_once_words(Cc& cc, std::uint32_t out[N], const std::uint32_t s[N],
                                 const std::uint32_t mod[N]) {
  std::uint32_t d[N];
  STOKER_UNROLL
  for (int j = 0; j < N; ++j) d[j] = s[j];
  cc.sub_cc(d[0], mod[0]);
  STOKER_UNROLL
  for (int j = 1; j < N; ++j) cc.subc_cc(d[j], mod[j]);
  std::uint32_t borrow = 0;
  cc.subc_flag(borrow);  // all ones when s < M
  STOKER_UNROLL
  for (int j = 0; j < N; ++j) out[j] = borrow ? s[j] : d[j];
}

// out = a * b * 2^(-32N) mod M for a, b < M, fully reduced.
template <int N, typename Cc>
STOKER_HD void mont_mul_even_odd(Cc& cc, std::uint32_t out[N], const std::uint32_t a[N],
                                 const std::uint32_t b[N], const std::uint32_t mod[N],
                                 std::uint32_t inv) {
  static_assert(N % 2 == 0, "rows are unrolled in pairs so that the arrays' swap is a renaming");
  std::uint32_t x[N], y[N];
  STOKER_UNROLL
  for (int i = 0; i < N; i += 2) {
    mont_row_even_odd<N>(cc, x, y, a, b[i], mod, inv, i == 0);
    mont_row_even_odd<N>(cc, y, x, a, b[i + 1], mod, inv, false);
  }
  // The last row left words 1..N in x and words 0..N-1 in y (y[0] = 0):
  // one word down, x holds words 0..N-1 and y[1..N-1] words 0..N-2.
  std::uint32_t s[N];
  STOKER_UNROLL
  for (int j = 0; j < N; ++j) s[j] = x[j];
  cc.add_cc(s[0], y[1]);
  STOKER_UNROLL
  for (int j = 1; j < N - 1; ++j) cc.addc_cc(s[j], y[j + 1]);
  cc.addc_flag(s[N - 1]);
  reduce_once_words<N>(cc, out, s, mod);
}

// out = a + b mod M for a, b < M (a + b < 2M < 2^(32N): no carry out).
template <int N, typename Cc>
STOKER_HD void add_mod_words(Cc& cc, std::uint32_t out[N], const std::uint32_t a[N],
                             const std::uint32_t b[N], const std::uint32_t mod[N]) {
  std::uint32_t s[N];
  STOKER_UNROLL
  for (int j = 0; j < N; ++j) s[j] = a[j];
  cc.add_cc(s[0], b[0]);
  STOKER_UNROLL
  for (int j = 1; j < N; ++j) cc.addc_cc(s[j], b[j]);
  reduce_once_words<N>(cc, out, s, mod);
}

// out = a - b mod M for a, b < M: on a borrow, M is added back (whose own
// carry out cancels the borrow).
template <int N, typename Cc>
STOKER_HD void sub_mod_words(Cc& cc, std::uint32_t out[N], const std::uint32_t a[N],
                             const std::uint32_t b[N], const std::uint32_t mod[N]) {
  std::uint32_t d[N];
  STOKER_UNROLL
  for (int j = 0; j < N; ++j) d[j] = a[j];
  cc.sub_cc(d[0], b[0]);
  STOKER_UNROLL
  for (int j = 1; j < N; ++j) cc.subc_cc(d[j], b[j]);
  std::uint32_t mask = 0;
  cc.subc_flag(mask);  // all ones on a borrow
  cc.add_cc(d[0], mod[0] & mask);
  STOKER_UNROLL
  for (int j = 1; j < N; ++j) cc.addc_cc(d[j], mod[j] & mask);
  STOKER_UNROLL
  for (int j = 0; j < N; ++j) out[j] = d[j];
}

}  // namespace stoker::kernels::detail
