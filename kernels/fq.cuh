// Fq: the base field of BLS12-381 (the coordinates of G1 points) as a small
// value type shared by the CPU reference and the GPU kernels.
//
// q = 0x1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f624
//       1eabfffeb153ffffb9feffffffffaaab   (381 bits).
// An element is kept in Montgomery form (x * 2^384 mod q), fully reduced to
// [0, q), so its representation is unique: the host path (six 64-bit limbs,
// unsigned __int128, or MULX/ADCX/ADOX where the CPU has them) and the
// device path (twelve 32-bit words, PTX carry chains) give the same bits for
// the same inputs. Zero is all-zero words, so zero-initialised memory holds
// zeros.
//
// The device product is the even/odd interleaved CIOS of
// detail/mont_even_odd.cuh over the PTX carry policy; the host tests run
// that same instruction sequence with an emulated flag (test/kernels).
//
// Trivially copyable, 48 bytes, 16-byte aligned: a G1 affine point is six
// 16-byte words and device buffers are plain arrays.
#pragma once

#include <cstdint>

#include "common/host_device.hpp"
#include "kernels/detail/fq_constants.hpp"
#include "kernels/detail/mont_even_odd.cuh"
// The CPU's product through MULX/ADCX/ADOX where the CPU has them; nvcc's
// host pass keeps the portable one (its host code does no field arithmetic
// that counts).
#if !defined(__CUDACC__)
#include "kernels/detail/fq_mul_adx.hpp"
#endif

// Host loops fully unrolled by the C++ compiler (-O2 alone does not unroll);
// nvcc's host pass does not know the pragma and needs no speed there.
#if defined(__CUDACC__)
#define STOKER_FQ_HOST_UNROLL(n)
#else
#define STOKER_FQ_HOST_UNROLL(n) _Pragma(#n)
#endif

namespace stoker::kernels {

struct alignas(16) Fq {
  // Montgomery form, little-endian limbs, always < q.
  std::uint64_t l[6];

  STOKER_HD static Fq zero() { return Fq{{0, 0, 0, 0, 0, 0}}; }
  STOKER_HD static Fq one() {
    using namespace fq_detail;
    return Fq{{kOne0, kOne1, kOne2, kOne3, kOne4, kOne5}};
  }

  // From canonical little-endian limbs; the caller guarantees v < q.
  STOKER_HD static Fq from_canonical(const std::uint64_t v[6]) {
    using namespace fq_detail;
    const Fq x{{v[0], v[1], v[2], v[3], v[4], v[5]}};
    return mont_mul(x, Fq{{kR20, kR21, kR22, kR23, kR24, kR25}});
  }
  STOKER_HD static Fq from_u64(std::uint64_t v) {
    const std::uint64_t w[6] = {v, 0, 0, 0, 0, 0};
    return from_canonical(w);
  }
  // Canonical little-endian limbs.
  STOKER_HD void to_canonical(std::uint64_t v[6]) const {
    const Fq c = mont_mul(*this, Fq{{1, 0, 0, 0, 0, 0}});
    for (int i = 0; i < 6; ++i) v[i] = c.l[i];
  }
  // Whether 6 little-endian limbs hold a value < q.
  STOKER_HD static bool is_canonical(const std::uint64_t v[6]) {
    using namespace fq_detail;
    const std::uint64_t q[6] = {kQ0, kQ1, kQ2, kQ3, kQ4, kQ5};
    for (int i = 5; i >= 0; --i) {
      if (v[i] < q[i]) return true;
      if (v[i] > q[i]) return false;
    }
    return false;  // equal to q
  }

  STOKER_HD bool is_zero() const { return (l[0] | l[1] | l[2] | l[3] | l[4] | l[5]) == 0; }
  STOKER_HD friend bool operator==(const Fq& a, const Fq& b) {
    return ((a.l[0] ^ b.l[0]) | (a.l[1] ^ b.l[1]) | (a.l[2] ^ b.l[2]) | (a.l[3] ^ b.l[3]) |
            (a.l[4] ^ b.l[4]) | (a.l[5] ^ b.l[5])) == 0;
  }
  STOKER_HD friend bool operator!=(const Fq& a, const Fq& b) { return !(a == b); }

  STOKER_HD friend Fq operator+(const Fq& a, const Fq& b) { return add(a, b); }
  STOKER_HD friend Fq operator-(const Fq& a, const Fq& b) { return sub(a, b); }
  STOKER_HD friend Fq operator*(const Fq& a, const Fq& b) { return mont_mul(a, b); }
  STOKER_HD Fq& operator+=(const Fq& b) { return *this = add(*this, b); }
  STOKER_HD Fq& operator-=(const Fq& b) { return *this = sub(*this, b); }
  STOKER_HD Fq& operator*=(const Fq& b) { return *this = mont_mul(*this, b); }
  STOKER_HD Fq operator-() const { return sub(zero(), *this); }
  STOKER_HD Fq neg() const { return sub(zero(), *this); }
  STOKER_HD Fq dbl() const { return add(*this, *this); }
  STOKER_HD Fq sqr() const { return mont_mul(*this, *this); }

  // x^e for an exponent of `words` little-endian 64-bit limbs.
  STOKER_HD Fq pow(const std::uint64_t* e, int words) const {
    Fq acc = one();
    for (int i = words - 1; i >= 0; --i)
      for (int b = 63; b >= 0; --b) {
        acc = acc.sqr();
        if ((e[i] >> b) & 1) acc *= *this;
      }
    return acc;
  }
  // x^e as pow, by a sliding window of 4 bits over the odd powers x, x^3,
  // ..., x^15: for a 381-bit exponent about 377 squarings and 78 products
  // (8 more for the table) where pow takes 384 and one per set bit.
  STOKER_HD Fq pow_sliding(const std::uint64_t* e, int words) const {
    Fq odd[8];
    odd[0] = *this;
    const Fq x2 = sqr();
    for (int i = 1; i < 8; ++i) odd[i] = odd[i - 1] * x2;
    Fq acc = one();
    bool started = false;  // no squarings of one ahead of the top bit
    for (int i = words * 64 - 1; i >= 0;) {
      if (!exponent_bit(e, i)) {
        if (started) acc = acc.sqr();
        --i;
        continue;
      }
      // The window: bits i down to low, at most 4, ending in a set bit.
      int low = i >= 3 ? i - 3 : 0;
      while (!exponent_bit(e, low)) ++low;
      unsigned odd_value = 0;
      for (int j = i; j >= low; --j) {
        odd_value = odd_value << 1 | exponent_bit(e, j);
        if (started) acc = acc.sqr();
      }
      acc = started ? acc * odd[odd_value >> 1] : odd[odd_value >> 1];
      started = true;
      i = low - 1;
    }
    return acc;
  }
  // x^(q-2) = x^-1 (Fermat); the inverse of zero is zero. 463 products
  // against pow's 613: the batched affine additions pay one a round, about
  // a fifth of a G2 addition's share.
  STOKER_HD Fq inverse() const {
    using namespace fq_detail;
    const std::uint64_t e[6] = {kQ0 - 2, kQ1, kQ2, kQ3, kQ4, kQ5};
    return pow_sliding(e, 6);
  }
  // A square root when one exists: q = 3 mod 4, so x^((q+1)/4) is one
  // whenever x is a square. Returns false (out untouched) otherwise.
  STOKER_HD bool sqrt(Fq& out) const {
    using namespace fq_detail;
    // (q + 1) / 4: q's low limb ends in ...aaab, so q + 1 does not carry.
    const std::uint64_t e[6] = {(kQ0 + 1) >> 2 | kQ1 << 62, kQ1 >> 2 | kQ2 << 62,
                                kQ2 >> 2 | kQ3 << 62,       kQ3 >> 2 | kQ4 << 62,
                                kQ4 >> 2 | kQ5 << 62,       kQ5 >> 2};
    const Fq s = pow(e, 6);
    if (s.sqr() != *this) return false;
    out = s;
    return true;
  }

  // ---- arithmetic cores ----------------------------------------------------

  STOKER_HD static unsigned exponent_bit(const std::uint64_t* e, int i) {
    return static_cast<unsigned>(e[i >> 6] >> (i & 63)) & 1u;
  }

  STOKER_HD static Fq add(const Fq& a, const Fq& b) {
#if defined(__CUDA_ARCH__)
    return add_device(a, b);
#else
    return add_host(a, b);
#endif
  }
  STOKER_HD static Fq sub(const Fq& a, const Fq& b) {
#if defined(__CUDA_ARCH__)
    return sub_device(a, b);
#else
    return sub_host(a, b);
#endif
  }
  STOKER_HD static Fq mont_mul(const Fq& a, const Fq& b) {
#if defined(__CUDA_ARCH__)
    return mul_device(a, b);
#else
    return mul_host(a, b);
#endif
  }

  // The twelve 32-bit words of an element, little-endian, and back: how the
  // device arithmetic (and its host emulation in the tests) sees it.
  STOKER_HD void to_words(std::uint32_t w[12]) const {
    for (int i = 0; i < 6; ++i) {
      w[2 * i] = static_cast<std::uint32_t>(l[i]);
      w[2 * i + 1] = static_cast<std::uint32_t>(l[i] >> 32);
    }
  }
  STOKER_HD static Fq from_words(const std::uint32_t w[12]) {
    Fq a;
    for (int i = 0; i < 6; ++i)
      a.l[i] =
          static_cast<std::uint64_t>(w[2 * i]) | (static_cast<std::uint64_t>(w[2 * i + 1]) << 32);
    return a;
  }
#if !defined(__CUDA_ARCH__)
  // Host: 64-bit limbs with unsigned __int128; the loops are fully
  // unrolled, so every limb stays in a register.
  using u128_host = unsigned __int128;

  static inline Fq reduce_once_host(const Fq& s) {
    using namespace fq_detail;
    const std::uint64_t q[6] = {kQ0, kQ1, kQ2, kQ3, kQ4, kQ5};
    std::uint64_t d[6], borrow = 0;
    STOKER_FQ_HOST_UNROLL(GCC unroll 6)
    for (int i = 0; i < 6; ++i) {
      const u128_host t = static_cast<u128_host>(s.l[i]) - q[i] - borrow;
      d[i] = static_cast<std::uint64_t>(t);
      borrow = static_cast<std::uint64_t>(t >> 64) & 1;
    }
    // Branch-free: for random operands the outcome is a coin toss.
    const std::uint64_t keep = 0 - borrow;  // s < q
    Fq out;
    STOKER_FQ_HOST_UNROLL(GCC unroll 6)
    for (int i = 0; i < 6; ++i) out.l[i] = (s.l[i] & keep) | (d[i] & ~keep);
    return out;
  }
  // q < 2^381, so a + b < 2^382 never carries out of six limbs.
  static inline Fq add_host(const Fq& a, const Fq& b) {
    Fq s;
    std::uint64_t c = 0;
    STOKER_FQ_HOST_UNROLL(GCC unroll 6)
    for (int i = 0; i < 6; ++i) {
      const u128_host t = static_cast<u128_host>(a.l[i]) + b.l[i] + c;
      s.l[i] = static_cast<std::uint64_t>(t);
      c = static_cast<std::uint64_t>(t >> 64);
    }
    return reduce_once_host(s);
  }
  static inline Fq sub_host(const Fq& a, const Fq& b) {
    using namespace fq_detail;
    const std::uint64_t q[6] = {kQ0, kQ1, kQ2, kQ3, kQ4, kQ5};
    Fq d;
    std::uint64_t borrow = 0;
    STOKER_FQ_HOST_UNROLL(GCC unroll 6)
    for (int i = 0; i < 6; ++i) {
      const u128_host t = static_cast<u128_host>(a.l[i]) - b.l[i] - borrow;
      d.l[i] = static_cast<std::uint64_t>(t);
      borrow = static_cast<std::uint64_t>(t >> 64) & 1;
    }
    // Went below zero: add q back (the carry out is the borrow, dropped).
    const std::uint64_t mask = 0 - borrow;
    std::uint64_t c = 0;
    STOKER_FQ_HOST_UNROLL(GCC unroll 6)
    for (int i = 0; i < 6; ++i) {
      const u128_host t = static_cast<u128_host>(d.l[i]) + (q[i] & mask) + c;
      d.l[i] = static_cast<std::uint64_t>(t);
      c = static_cast<std::uint64_t>(t >> 64);
    }
    return d;
  }
  // The product: the ADX one where this CPU runs it (the same words).
  static inline Fq mul_host(const Fq& a, const Fq& b) {
#if defined(STOKER_FQ_MUL_ADX)
    if (detail::kFqMulAdx) {
      Fq r;
      detail::fq_mul_adx(r.l, a.l, b.l);
      return r;
    }
#endif
    return mul_portable_host(a, b);
  }
  // CIOS Montgomery product. q's top limb is below 2^63 - 1, so each row's
  // value stays below 2q and fits six limbs (the "no-carry" CIOS: the
  // textbook's extra carry words are always zero).
  static inline Fq mul_portable_host(const Fq& a, const Fq& b) {
    using namespace fq_detail;
    const std::uint64_t q[6] = {kQ0, kQ1, kQ2, kQ3, kQ4, kQ5};
    std::uint64_t t[6] = {0, 0, 0, 0, 0, 0};
    STOKER_FQ_HOST_UNROLL(GCC unroll 6)
    for (int i = 0; i < 6; ++i) {
      const std::uint64_t bi = b.l[i];
      u128_host s = static_cast<u128_host>(a.l[0]) * bi + t[0];
      std::uint64_t ca = static_cast<std::uint64_t>(s >> 64);
      const std::uint64_t t0 = static_cast<std::uint64_t>(s);
      const std::uint64_t m = t0 * kInv64;
      u128_host r = static_cast<u128_host>(m) * q[0] + t0;
      std::uint64_t cm = static_cast<std::uint64_t>(r >> 64);
      STOKER_FQ_HOST_UNROLL(GCC unroll 5)
      for (int j = 1; j < 6; ++j) {
        s = static_cast<u128_host>(a.l[j]) * bi + t[j] + ca;
        ca = static_cast<std::uint64_t>(s >> 64);
        r = static_cast<u128_host>(m) * q[j] + static_cast<std::uint64_t>(s) + cm;
        cm = static_cast<std::uint64_t>(r >> 64);
        t[j - 1] = static_cast<std::uint64_t>(r);
      }
      t[5] = ca + cm;
    }
    return reduce_once_host(Fq{{t[0], t[1], t[2], t[3], t[4], t[5]}});
  }
#endif

#if defined(__CUDACC__)
  __device__ __forceinline__ static Fq add_device(const Fq& a, const Fq& b) {
    constexpr std::uint32_t mod[12] = {0xffffaaabu, 0xb9feffffu, 0xb153ffffu, 0x1eabfffeu,
                                       0xf6b0f624u, 0x6730d2a0u, 0xf38512bfu, 0x64774b84u,
                                       0x434bacd7u, 0x4b1ba7b6u, 0x397fe69au, 0x1a0111eau};
    std::uint32_t x[12], y[12], z[12];
    a.to_words(x);
    b.to_words(y);
    detail::PtxCarry cc;
    detail::add_mod_words<12>(cc, z, x, y, mod);
    return from_words(z);
  }
  __device__ __forceinline__ static Fq sub_device(const Fq& a, const Fq& b) {
    constexpr std::uint32_t mod[12] = {0xffffaaabu, 0xb9feffffu, 0xb153ffffu, 0x1eabfffeu,
                                       0xf6b0f624u, 0x6730d2a0u, 0xf38512bfu, 0x64774b84u,
                                       0x434bacd7u, 0x4b1ba7b6u, 0x397fe69au, 0x1a0111eau};
    std::uint32_t x[12], y[12], z[12];
    a.to_words(x);
    b.to_words(y);
    detail::PtxCarry cc;
    detail::sub_mod_words<12>(cc, z, x, y, mod);
    return from_words(z);
  }
  __device__ __forceinline__ static Fq mul_device(const Fq& a, const Fq& b) {
    constexpr std::uint32_t mod[12] = {0xffffaaabu, 0xb9feffffu, 0xb153ffffu, 0x1eabfffeu,
                                       0xf6b0f624u, 0x6730d2a0u, 0xf38512bfu, 0x64774b84u,
                                       0x434bacd7u, 0x4b1ba7b6u, 0x397fe69au, 0x1a0111eau};
    std::uint32_t x[12], y[12], z[12];
    a.to_words(x);
    b.to_words(y);
    detail::PtxCarry cc;
    detail::mont_mul_even_odd<12>(cc, z, x, y, mod, fq_detail::kInv32);
    return from_words(z);
  }
#endif
};

static_assert(sizeof(Fq) == 48, "Fq is 48 bytes");
static_assert(alignof(Fq) == 16, "Fq is 16-byte aligned");

}  // namespace stoker::kernels
