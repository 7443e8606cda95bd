// The hpoly producer, eight elements at a time in AVX-512 lanes: the draws,
// their reduction, the product c = a * b (kernels/detail/fr_mul_ifma.hpp)
// and the stores.
//
// Measured on the development host (one thread, non-temporal stores): the adx
// path takes 25 ns per element, about 13 of them the two draws and the rest
// the one Montgomery product (a chain of dependent MULX/ADCX/ADOX); this
// path 12.6-15.0 ns. The producers are what bounded `stoker run --workload
// hpoly` on a 16-core host (28-31 GB/s; 67-73 with this path).
#include "engine/workloads/detail/hpoly_fill_ifma.hpp"

#include "engine/workloads/detail/hpoly_fill.hpp"

#if defined(STOKER_HPOLY_IFMA)
// GCC 12's own avx512fintrin.h trips -W(maybe-)uninitialized wherever its
// shifts and products are inlined (GCC bug 105593, the headers'
// undefined-vector idiom): off for this file, which holds only this code.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include "kernels/detail/fr_mul_ifma.hpp"

namespace stoker::engine::workloads::detail {
namespace {

using kernels::Fr;
using kernels::detail::kFrWords;

#define STOKER_IFMA __attribute__((target("avx512f,avx512dq,avx512ifma"), always_inline)) inline

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
    const __m512i r = splat(kFrWords[j]);
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
      kernels::detail::fr_mul_ifma8(x, y, z);
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
  return kernels::detail::cpu_has_ifma();
}

}  // namespace stoker::engine::workloads::detail
#endif  // STOKER_HPOLY_IFMA
