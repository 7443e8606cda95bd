// The hpoly producer, eight elements at a time in AVX-512 lanes: the draws,
// their reduction, the product c = a * b (IFMA) and the stores.
//
// Measured on the development host (one thread, non-temporal stores): the adx
// path takes 25 ns per element, about 13 of them the two draws and the rest
// the one Montgomery product (a chain of dependent MULX/ADCX/ADOX); this
// path 12.6-15.0 ns. The producers are what bounded `stoker run --workload
// hpoly` on a 16-core host (28-31 GB/s; 67-73 with this path). IFMA
// (VPMADD52LUQ/HUQ: 52 x 52 -> low or high 52 bits, added to 64-bit lanes)
// does eight independent products in the lanes of one register.
//
// Radix 2^52, five limbs, Montgomery with R' = 2^260: mont(x, y) = x y
// 2^-260 mod r. Fr's product is the 2^256 one, so the second operand goes in
// as 16 b: mont(a, 16 b) = a b 2^-256, the same words Fr's a * b gives.
// 16 b < 2^259 fits five limbs unreduced, and with a < r the result before
// the last subtraction is below (16 r^2 + 2^260 r) / 2^260 < 1.5 r.
#include "engine/workloads/detail/hpoly_fill_ifma.hpp"

#include "engine/workloads/detail/hpoly_fill.hpp"

#if defined(STOKER_HPOLY_IFMA)
// GCC 12's own avx512fintrin.h trips -W(maybe-)uninitialized wherever its
// shifts and products are inlined (GCC bug 105593, the headers'
// undefined-vector idiom): off for this file, which holds only this code.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <array>

namespace stoker::engine::workloads::detail {
namespace {

using kernels::Fr;
namespace fr = kernels::fr_detail;

constexpr std::uint64_t kMask52 = (std::uint64_t{1} << 52) - 1;

// Four 64-bit words -> five 52-bit limbs.
constexpr std::array<std::uint64_t, 5> to_limbs(const std::uint64_t (&w)[4]) {
  return {w[0] & kMask52, (w[0] >> 52 | w[1] << 12) & kMask52, (w[1] >> 40 | w[2] << 24) & kMask52,
          (w[2] >> 28 | w[3] << 36) & kMask52, w[3] >> 16};
}
constexpr std::uint64_t kR64[4] = {fr::kP0, fr::kP1, fr::kP2, fr::kP3};
constexpr std::array<std::uint64_t, 5> kR = to_limbs(kR64);
// -r^-1 mod 2^52 (r's inverse mod 2^64, reduced).
constexpr std::uint64_t kInv52 = fr::kInv64 & kMask52;

#define STOKER_IFMA __attribute__((target("avx512f,avx512dq,avx512ifma"), always_inline)) inline

STOKER_IFMA void limbs_of(const __m512i (&w)[4], __m512i (&x)[5]) {
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

// Eight products mont(a, 16 b) in the lanes; a and b as four 64-bit word
// vectors (word k of eight elements), the result likewise, canonical.
STOKER_IFMA void mont_mul8(const __m512i (&aw)[4], const __m512i (&bw)[4], __m512i (&cw)[4]) {
  __m512i a[5], b[5];
  limbs_of(aw, a);
  __m512i b16[4];  // 16 b: each word shifted by 4, the top bits carried in
  b16[0] = _mm512_slli_epi64(bw[0], 4);
  for (int k = 1; k < 4; ++k)
    b16[k] = _mm512_or_si512(_mm512_slli_epi64(bw[k], 4), _mm512_srli_epi64(bw[k - 1], 60));
  limbs_of(b16, b);
  b[4] = _mm512_or_si512(b[4], _mm512_slli_epi64(_mm512_srli_epi64(bw[3], 60), 48));

  const __m512i zero = _mm512_setzero_si512();
  const __m512i inv = _mm512_set1_epi64(static_cast<long long>(kInv52));
  __m512i r[5];
  for (int j = 0; j < 5; ++j) r[j] = _mm512_set1_epi64(static_cast<long long>(kR[j]));
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

STOKER_IFMA __m512i splat(std::uint64_t v) {
  return _mm512_set1_epi64(static_cast<long long>(v));
}

// wyrand's output function on eight states: the 128-bit product s (s ^ mix)
// from four 32 x 32 -> 64 products (AVX-512 has no wider one), its halves
// XORed.
STOKER_IFMA __m512i wy8(__m512i s) {
  const __m512i t = _mm512_xor_si512(s, splat(kWyMix));
  const __m512i sh = _mm512_srli_epi64(s, 32), th = _mm512_srli_epi64(t, 32);
  const __m512i ll = _mm512_mul_epu32(s, t), lh = _mm512_mul_epu32(s, th),
                hl = _mm512_mul_epu32(sh, t), hh = _mm512_mul_epu32(sh, th);
  const __m512i low32 = splat(0xffffffffull);
  const __m512i mid = _mm512_add_epi64(lh, _mm512_srli_epi64(ll, 32));
  const __m512i mid2 = _mm512_add_epi64(hl, _mm512_and_si512(mid, low32));
  const __m512i hi = _mm512_add_epi64(
      hh, _mm512_add_epi64(_mm512_srli_epi64(mid, 32), _mm512_srli_epi64(mid2, 32)));
  const __m512i lo = _mm512_or_si512(_mm512_slli_epi64(mid2, 32), _mm512_and_si512(ll, low32));
  return _mm512_xor_si512(lo, hi);
}

// Elements index .. index + 7 of the stream `key`, as four word vectors,
// reduced once below r (Fr::reduce_once_host's rule).
STOKER_IFMA void draw8(std::uint64_t key, std::uint64_t index, __m512i (&w)[4]) {
  const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
  // s = key + (4 (index + e) + j) step: lane e's start, then + step per word.
  const __m512i s0 = _mm512_add_epi64(splat(key + 4 * index * kWyStep),
                                      _mm512_mullo_epi64(lane, splat(4 * kWyStep)));
  for (int j = 0; j < 4; ++j) w[j] = wy8(_mm512_add_epi64(s0, splat(j * kWyStep)));
  w[3] = _mm512_srli_epi64(w[3], 1);
  // w - r with the borrows as masks; keep w where that borrows (w < r).
  __m512i d[4];
  __mmask8 borrow = 0;
  for (int j = 0; j < 4; ++j) {
    const __m512i r = splat(kR64[j]);
    const __mmask8 below = _mm512_cmplt_epu64_mask(w[j], r);
    const __mmask8 equal = _mm512_cmpeq_epu64_mask(w[j], r);
    const __m512i diff = _mm512_sub_epi64(w[j], r);
    d[j] = _mm512_mask_sub_epi64(diff, borrow, diff, splat(1));  // minus the borrow in
    borrow = static_cast<__mmask8>(below | (equal & borrow));
  }
  for (int j = 0; j < 4; ++j) w[j] = _mm512_mask_blend_epi64(borrow, d[j], w[j]);
}

// Word vectors (word j of elements 0..7) to eight 32-byte elements in
// memory order, four vectors of two elements each.
STOKER_IFMA void to_elements(const __m512i (&w)[4], __m512i (&e)[4]) {
  const __m512i t0 = _mm512_unpacklo_epi64(w[0], w[1]), t1 = _mm512_unpackhi_epi64(w[0], w[1]);
  const __m512i t2 = _mm512_unpacklo_epi64(w[2], w[3]), t3 = _mm512_unpackhi_epi64(w[2], w[3]);
  // t0's 128-bit lane q is words 0, 1 of element 2q; t1's of 2q + 1; t2, t3
  // words 2, 3 likewise.
  const __m512i u0 = _mm512_shuffle_i64x2(t0, t2, 0x44), u1 = _mm512_shuffle_i64x2(t1, t3, 0x44);
  const __m512i u2 = _mm512_shuffle_i64x2(t0, t2, 0xee), u3 = _mm512_shuffle_i64x2(t1, t3, 0xee);
  e[0] = _mm512_shuffle_i64x2(u0, u1, 0x88);
  e[1] = _mm512_shuffle_i64x2(u0, u1, 0xdd);
  e[2] = _mm512_shuffle_i64x2(u2, u3, 0x88);
  e[3] = _mm512_shuffle_i64x2(u2, u3, 0xdd);
}

template <bool kStream>
STOKER_IFMA void put8(Fr* dst, const __m512i (&w)[4]) {
  __m512i e[4];
  to_elements(w, e);
  auto* p = reinterpret_cast<__m512i*>(dst);
  for (int i = 0; i < 4; ++i) {
    if constexpr (kStream)
      _mm512_stream_si512(p + i, e[i]);
    else
      _mm512_storeu_si512(p + i, e[i]);
  }
}

template <bool kStream>
__attribute__((target("avx512f,avx512dq,avx512ifma"))) void fill_lanes(
    std::uint64_t ka, std::uint64_t kb, std::size_t first, std::size_t count, Fr* a, Fr* b, Fr* c) {
  for (std::size_t k = 0; k < count; k += 8) {
    __m512i x[4], y[4];
    draw8(ka, first + k, x);
    draw8(kb, first + k, y);
    put8<kStream>(a + k, x);
    put8<kStream>(b + k, y);
    if (c) {
      __m512i z[4];
      mont_mul8(x, y, z);
      put8<kStream>(c + k, z);
    }
  }
  if constexpr (kStream) _mm_sfence();
}

}  // namespace

void fill_ifma_lanes(std::uint64_t ka, std::uint64_t kb, std::size_t first, std::size_t count,
                     Fr* a, Fr* b, Fr* c, bool nontemporal) {
  const auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 64 == 0; };
  if (nontemporal && aligned(a) && aligned(b) && (!c || aligned(c)))
    fill_lanes<true>(ka, kb, first, count, a, b, c);
  else
    fill_lanes<false>(ka, kb, first, count, a, b, c);
}

bool fill_ifma_supported() {
  static const bool supported = __builtin_cpu_supports("avx512f") &&
                                __builtin_cpu_supports("avx512dq") &&
                                __builtin_cpu_supports("avx512ifma");
  return supported;
}

__attribute__((target("avx512f,avx512dq,avx512ifma"))) void mont_mul_ifma8(const Fr* a, const Fr* b,
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
  mont_mul8(av, bv, cv);
  for (int k = 0; k < 4; ++k) _mm512_store_si512(cw[k], cv[k]);
  for (int e = 0; e < 8; ++e)
    for (int k = 0; k < 4; ++k) c[e].l[k] = cw[k][e];
}

}  // namespace stoker::engine::workloads::detail
#endif  // STOKER_HPOLY_IFMA
