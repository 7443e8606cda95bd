// Fr's Montgomery product eight at a time in AVX-512 IFMA lanes
// (VPMADD52LUQ/HUQ: 52 x 52 -> low or high 52 bits, added to 64-bit lanes),
// where the scalar product is a chain of dependent MULX/ADCX/ADOX: the
// hpoly producer's c = a * b takes 12.6-15.0 ns per element this way against
// 25 on the ADX path (one thread, development host).
//
// Radix 2^52, five limbs, Montgomery with R' = 2^260: mont(x, y) = x y
// 2^-260 mod r. Fr's product is the 2^256 one, so the second operand goes in
// as 16 b: mont(a, 16 b) = a b 2^-256, the same words Fr's a * b gives.
// 16 b < 2^259 fits five limbs unreduced, and with a < r the result before
// the last subtraction is below (16 r^2 + 2^260 r) / 2^260 < 1.5 r.
//
// Header-only and always inlined into the caller's lane loop (which carries
// __attribute__((target("avx512f,avx512dq,avx512ifma")))), x86-64 with GCC or
// Clang; only a CPU where cpu_has_ifma() holds may run it. GCC 12's own
// avx512fintrin.h trips -W(maybe-)uninitialized wherever its shifts and
// products are inlined (GCC bug 105593): a caller's file turns those off
// before it includes this header.
#pragma once

#include <array>
#include <cstdint>

#include "kernels/field.cuh"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define STOKER_FR_MUL_IFMA 1
#include <immintrin.h>

namespace stoker::kernels::detail {

namespace fr = kernels::fr_detail;

#define STOKER_FR_IFMA_INLINE \
  __attribute__((target("avx512f,avx512dq,avx512ifma"), always_inline)) inline

inline constexpr std::uint64_t kMask52 = (std::uint64_t{1} << 52) - 1;

// Four 64-bit words -> five 52-bit limbs.
constexpr std::array<std::uint64_t, 5> to_limbs(const std::uint64_t (&w)[4]) {
  return {w[0] & kMask52, (w[0] >> 52 | w[1] << 12) & kMask52, (w[1] >> 40 | w[2] << 24) & kMask52,
          (w[2] >> 28 | w[3] << 36) & kMask52, w[3] >> 16};
}
inline constexpr std::uint64_t kFrWords[4] = {fr::kP0, fr::kP1, fr::kP2, fr::kP3};
inline constexpr std::array<std::uint64_t, 5> kFrLimbs52 = to_limbs(kFrWords);
// -r^-1 mod 2^52 (r's inverse mod 2^64, reduced).
inline constexpr std::uint64_t kFrInv52 = fr::kInv64 & kMask52;

STOKER_FR_IFMA_INLINE void fr_limbs52(const __m512i (&w)[4], __m512i (&x)[5]) {
  const __m512i m = _mm512_set1_epi64(static_cast<long long>(kMask52));
  x[0] = _mm512_and_si512(w[0], m);
  x[1] = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(w[0], 52), _mm512_slli_epi64(w[1], 12)),
                          m);
  x[2] = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(w[1], 40), _mm512_slli_epi64(w[2], 24)),
                          m);
  x[3] = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(w[2], 28), _mm512_slli_epi64(w[3], 36)),
                          m);
  x[4] = _mm512_srli_epi64(w[3], 16);
}

// Eight products a b in the lanes (Fr's product: the same words as a * b);
// a and b as four 64-bit word vectors (word k of eight elements), fully
// reduced, the result likewise.
STOKER_FR_IFMA_INLINE void fr_mul_ifma8(const __m512i (&aw)[4], const __m512i (&bw)[4],
                                        __m512i (&cw)[4]) {
  __m512i a[5], b[5];
  fr_limbs52(aw, a);
  __m512i b16[4];  // 16 b: each word shifted by 4, the top bits carried in
  b16[0] = _mm512_slli_epi64(bw[0], 4);
  for (int k = 1; k < 4; ++k)
    b16[k] = _mm512_or_si512(_mm512_slli_epi64(bw[k], 4), _mm512_srli_epi64(bw[k - 1], 60));
  fr_limbs52(b16, b);
  b[4] = _mm512_or_si512(b[4], _mm512_slli_epi64(_mm512_srli_epi64(bw[3], 60), 48));

  const __m512i zero = _mm512_setzero_si512();
  const __m512i inv = _mm512_set1_epi64(static_cast<long long>(kFrInv52));
  __m512i r[5];
  for (int j = 0; j < 5; ++j) r[j] = _mm512_set1_epi64(static_cast<long long>(kFrLimbs52[j]));
  // t[0..5]: 64-bit lanes holding 52-bit limbs plus the carries not yet
  // moved up; each gains at most four terms below 2^52 a round, five rounds.
  __m512i t[6] = {zero, zero, zero, zero, zero, zero};
  for (int i = 0; i < 5; ++i) {
    for (int j = 0; j < 5; ++j) {
      t[j] = _mm512_madd52lo_epu64(t[j], a[j], b[i]);
      t[j + 1] = _mm512_madd52hi_epu64(t[j + 1], a[j], b[i]);
    }
    // m = t0 * -r^-1 mod 2^52 (IFMA reads the low 52 bits of t0).
    const __m512i m = _mm512_madd52lo_epu64(zero, t[0], inv);
    for (int j = 0; j < 5; ++j) {
      t[j] = _mm512_madd52lo_epu64(t[j], m, r[j]);
      t[j + 1] = _mm512_madd52hi_epu64(t[j + 1], m, r[j]);
    }
    // t0 is now 0 mod 2^52: its carry moves up and the limbs shift down.
    t[1] = _mm512_add_epi64(t[1], _mm512_srli_epi64(t[0], 52));
    for (int j = 0; j < 5; ++j) t[j] = t[j + 1];
    t[5] = zero;
  }
  // Normalize to 52-bit limbs (t4 takes the top), then subtract r unless
  // that borrows: limbwise with the borrow as the sign of each difference.
  const __m512i m52 = _mm512_set1_epi64(static_cast<long long>(kMask52));
  for (int j = 0; j < 4; ++j) {
    t[j + 1] = _mm512_add_epi64(t[j + 1], _mm512_srli_epi64(t[j], 52));
    t[j] = _mm512_and_si512(t[j], m52);
  }
  __m512i d[5], borrow = zero;
  for (int j = 0; j < 5; ++j) {
    const __m512i diff = _mm512_sub_epi64(_mm512_sub_epi64(t[j], r[j]), borrow);
    borrow = _mm512_srli_epi64(diff, 63);
    d[j] = j < 4 ? _mm512_and_si512(diff, m52) : diff;
  }
  const __mmask8 keep = _mm512_cmpneq_epi64_mask(borrow, zero);  // t < r: keep t
  for (int j = 0; j < 5; ++j) t[j] = _mm512_mask_blend_epi64(keep, d[j], t[j]);
  cw[0] = _mm512_or_si512(t[0], _mm512_slli_epi64(t[1], 52));
  cw[1] = _mm512_or_si512(_mm512_srli_epi64(t[1], 12), _mm512_slli_epi64(t[2], 40));
  cw[2] = _mm512_or_si512(_mm512_srli_epi64(t[2], 24), _mm512_slli_epi64(t[3], 28));
  cw[3] = _mm512_or_si512(_mm512_srli_epi64(t[3], 36), _mm512_slli_epi64(t[4], 16));
}

// Whether this CPU has AVX-512 F, DQ and IFMA.
inline bool cpu_has_ifma() {
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                          __builtin_cpu_supports("avx512ifma");
  return has;
}

// c[e] = a[e] * b[e] for e < 8 through the lanes, elements in memory order
// (tests).
__attribute__((target("avx512f,avx512dq,avx512ifma"))) inline void fr_mul_ifma8(const Fr* a,
                                                                                const Fr* b,
                                                                                Fr* c) {
  alignas(64) std::uint64_t aw[4][8], bw[4][8], cw[4][8];
  for (int e = 0; e < 8; ++e)
    for (int k = 0; k < 4; ++k) {
      aw[k][e] = a[e].l[k];
      bw[k][e] = b[e].l[k];
    }
  __m512i av[4], bv[4], cv[4];
  for (int k = 0; k < 4; ++k) {
    av[k] = _mm512_load_si512(aw[k]);
    bv[k] = _mm512_load_si512(bw[k]);
  }
  fr_mul_ifma8(av, bv, cv);
  for (int k = 0; k < 4; ++k) _mm512_store_si512(cw[k], cv[k]);
  for (int e = 0; e < 8; ++e)
    for (int k = 0; k < 4; ++k) c[e].l[k] = cw[k][e];
}

}  // namespace stoker::kernels::detail

#endif
