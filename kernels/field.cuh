// Fr: the BLS12-381 scalar field as a small value type shared by the CPU
// reference and the GPU kernels.
//
// r = 0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001.
// Inside, an element is kept in Montgomery form (x * 2^256 mod r), fully
// reduced to [0, r). Because that representation is unique, the host path
// (four 64-bit limbs, unsigned __int128) and the device path (eight 32-bit
// limbs) produce the same bits for the same inputs: CPU and GPU results agree
// bit for bit without sharing one instruction sequence. At the edges (files,
// APIs, tests) an element is its canonical value as 32 little-endian bytes.
//
// The type is trivially copyable, 32 bytes, 32-byte aligned, so device
// buffers are plain arrays of Fr and one element is two 16-byte loads.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/host_device.hpp"
#include "kernels/detail/mont32.cuh"

namespace stoker::kernels {

namespace fr_detail {
// The modulus, little-endian 64-bit limbs.
inline constexpr std::uint64_t kP0 = 0xffffffff00000001ull;
inline constexpr std::uint64_t kP1 = 0x53bda402fffe5bfeull;
inline constexpr std::uint64_t kP2 = 0x3339d80809a1d805ull;
inline constexpr std::uint64_t kP3 = 0x73eda753299d7d48ull;
// -r^-1 mod 2^64 and mod 2^32.
inline constexpr std::uint64_t kInv64 = 0xfffffffeffffffffull;
inline constexpr std::uint32_t kInv32 = 0xffffffffu;
// 2^256 mod r (Montgomery one) and 2^512 mod r (to enter Montgomery form).
// Scalars, not arrays: device code may use constexpr scalars only.
inline constexpr std::uint64_t kOne0 = 0x00000001fffffffeull, kOne1 = 0x5884b7fa00034802ull,
                               kOne2 = 0x998c4fefecbc4ff5ull, kOne3 = 0x1824b159acc5056full;
inline constexpr std::uint64_t kR20 = 0xc999e990f3f29c6dull, kR21 = 0x2b6cedcb87925c23ull,
                               kR22 = 0x05d314967254398full, kR23 = 0x0748d9d99f59ff11ull;
}  // namespace fr_detail

struct alignas(32) Fr {
  // Montgomery form, little-endian limbs, always < r.
  std::uint64_t l[4];

  static constexpr int kTwoAdicity = 32;
  static constexpr std::uint64_t kGenerator = 7;

  STOKER_HD static Fr zero() { return Fr{{0, 0, 0, 0}}; }
  STOKER_HD static Fr one() {
    return Fr{{fr_detail::kOne0, fr_detail::kOne1, fr_detail::kOne2, fr_detail::kOne3}};
  }

  // From canonical little-endian limbs; the caller guarantees v < r.
  STOKER_HD static Fr from_canonical(const std::uint64_t v[4]) {
    Fr x{{v[0], v[1], v[2], v[3]}};
    Fr r2{{fr_detail::kR20, fr_detail::kR21, fr_detail::kR22, fr_detail::kR23}};
    return x * r2;
  }
  STOKER_HD static Fr from_u64(std::uint64_t v) {
    const std::uint64_t w[4] = {v, 0, 0, 0};
    return from_canonical(w);  // any u64 is < r
  }
  // Canonical little-endian limbs.
  STOKER_HD void to_canonical(std::uint64_t v[4]) const {
    Fr c = mont_mul(*this, Fr{{1, 0, 0, 0}});
    for (int i = 0; i < 4; ++i) v[i] = c.l[i];
  }

  // Whether 4 little-endian limbs hold a value < r.
  STOKER_HD static bool is_canonical(const std::uint64_t v[4]) {
    const std::uint64_t p[4] = {fr_detail::kP0, fr_detail::kP1, fr_detail::kP2, fr_detail::kP3};
    for (int i = 3; i >= 0; --i) {
      if (v[i] < p[i]) return true;
      if (v[i] > p[i]) return false;
    }
    return false;  // equal to r
  }

  // 32 little-endian bytes. from_bytes returns false (and leaves `out`
  // untouched) when the value is >= r.
  static bool from_bytes(const unsigned char* bytes, Fr& out) {
    std::uint64_t v[4];
    for (int i = 0; i < 4; ++i) {
      std::uint64_t w = 0;
      for (int b = 7; b >= 0; --b) w = (w << 8) | bytes[8 * i + b];
      v[i] = w;
    }
    if (!is_canonical(v)) return false;
    out = from_canonical(v);
    return true;
  }
  void to_bytes(unsigned char* bytes) const {
    std::uint64_t v[4];
    to_canonical(v);
    for (int i = 0; i < 4; ++i)
      for (int b = 0; b < 8; ++b) bytes[8 * i + b] = static_cast<unsigned char>(v[i] >> (8 * b));
  }

  STOKER_HD friend bool operator==(const Fr& a, const Fr& b) {
    return ((a.l[0] ^ b.l[0]) | (a.l[1] ^ b.l[1]) | (a.l[2] ^ b.l[2]) | (a.l[3] ^ b.l[3])) == 0;
  }
  STOKER_HD friend bool operator!=(const Fr& a, const Fr& b) { return !(a == b); }
  STOKER_HD bool is_zero() const { return (l[0] | l[1] | l[2] | l[3]) == 0; }

  STOKER_HD friend Fr operator+(const Fr& a, const Fr& b) { return add(a, b); }
  STOKER_HD friend Fr operator-(const Fr& a, const Fr& b) { return sub(a, b); }
  STOKER_HD friend Fr operator*(const Fr& a, const Fr& b) { return mont_mul(a, b); }
  STOKER_HD Fr& operator+=(const Fr& b) { return *this = add(*this, b); }
  STOKER_HD Fr& operator-=(const Fr& b) { return *this = sub(*this, b); }
  STOKER_HD Fr& operator*=(const Fr& b) { return *this = mont_mul(*this, b); }
  STOKER_HD Fr operator-() const { return sub(zero(), *this); }
  STOKER_HD Fr square() const { return mont_mul(*this, *this); }

  // x^e for a 64-bit exponent.
  STOKER_HD Fr pow(std::uint64_t e) const {
    Fr acc = one(), base = *this;
    while (e) {
      if (e & 1) acc *= base;
      base = base.square();
      e >>= 1;
    }
    return acc;
  }
  // x^e for a 256-bit exponent given as little-endian limbs.
  STOKER_HD Fr pow(const std::uint64_t e[4]) const {
    Fr acc = one();
    for (int i = 3; i >= 0; --i)
      for (int b = 63; b >= 0; --b) {
        acc = acc.square();
        if ((e[i] >> b) & 1) acc *= *this;
      }
    return acc;
  }
  // x^(r-2) = x^-1 (Fermat); the inverse of zero is zero.
  STOKER_HD Fr inverse() const {
    const std::uint64_t e[4] = {fr_detail::kP0 - 2, fr_detail::kP1, fr_detail::kP2, fr_detail::kP3};
    return pow(e);
  }

  // The multiplicative generator g = 7 and omega_n = g^((r-1)/n) for n = 2^log_n.
  STOKER_HD static Fr generator() { return from_u64(kGenerator); }
  STOKER_HD static Fr root_of_unity(unsigned log_n) {
    // (r-1) >> 32 raised once, then squared down from 2^32 to 2^log_n.
    const std::uint64_t e[4] = {(fr_detail::kP0 >> 32) | (fr_detail::kP1 << 32),
                                (fr_detail::kP1 >> 32) | (fr_detail::kP2 << 32),
                                (fr_detail::kP2 >> 32) | (fr_detail::kP3 << 32),
                                fr_detail::kP3 >> 32};
    Fr w = generator().pow(e);
    for (unsigned i = log_n; i < static_cast<unsigned>(kTwoAdicity); ++i) w = w.square();
    return w;
  }

  // ---- arithmetic cores ----------------------------------------------------

  STOKER_HD static Fr add(const Fr& a, const Fr& b) {
#if defined(__CUDA_ARCH__)
    return add_device(a, b);
#else
    return add_host(a, b);
#endif
  }
  STOKER_HD static Fr sub(const Fr& a, const Fr& b) {
#if defined(__CUDA_ARCH__)
    return sub_device(a, b);
#else
    return sub_host(a, b);
#endif
  }
  STOKER_HD static Fr mont_mul(const Fr& a, const Fr& b) {
#if defined(__CUDA_ARCH__)
    return mul_device(a, b);
#else
    return mul_host(a, b);
#endif
  }

#if !defined(__CUDA_ARCH__)
  // Host: 64-bit limbs, written out limb by limb (no loops, no arrays) so
  // that -O2, which does not unroll, still keeps every word in a register.
  // r < 2^255, so a + b < 2^256 never carries out.
  using u128_host = unsigned __int128;

  // x + y + c; the carry out replaces c (0 or 1).
  static inline std::uint64_t adc_host(std::uint64_t x, std::uint64_t y, std::uint64_t& c) {
    const u128_host s = static_cast<u128_host>(x) + y + c;
    c = static_cast<std::uint64_t>(s >> 64);
    return static_cast<std::uint64_t>(s);
  }
  // x - y - b; the borrow out replaces b (0 or 1).
  static inline std::uint64_t sbb_host(std::uint64_t x, std::uint64_t y, std::uint64_t& b) {
    const u128_host d = static_cast<u128_host>(x) - y - b;
    b = static_cast<std::uint64_t>(d >> 64) & 1;
    return static_cast<std::uint64_t>(d);
  }
  // x * y + z + c; the high word replaces c. At most 2^128 - 1: never overflows.
  static inline std::uint64_t mac_host(std::uint64_t x, std::uint64_t y, std::uint64_t z,
                                       std::uint64_t& c) {
    const u128_host s = static_cast<u128_host>(x) * y + z + c;
    c = static_cast<std::uint64_t>(s >> 64);
    return static_cast<std::uint64_t>(s);
  }

  static inline Fr add_host(const Fr& a, const Fr& b) {
    std::uint64_t c = 0;
    Fr s;
    s.l[0] = adc_host(a.l[0], b.l[0], c);
    s.l[1] = adc_host(a.l[1], b.l[1], c);
    s.l[2] = adc_host(a.l[2], b.l[2], c);
    s.l[3] = adc_host(a.l[3], b.l[3], c);
    return reduce_once_host(s);
  }
  static inline Fr sub_host(const Fr& a, const Fr& b) {
    std::uint64_t borrow = 0;
    Fr d;
    d.l[0] = sbb_host(a.l[0], b.l[0], borrow);
    d.l[1] = sbb_host(a.l[1], b.l[1], borrow);
    d.l[2] = sbb_host(a.l[2], b.l[2], borrow);
    d.l[3] = sbb_host(a.l[3], b.l[3], borrow);
    // Went below zero: add r back (the final carry out is the borrow, dropped).
    const std::uint64_t mask = 0 - borrow;
    std::uint64_t c = 0;
    d.l[0] = adc_host(d.l[0], fr_detail::kP0 & mask, c);
    d.l[1] = adc_host(d.l[1], fr_detail::kP1 & mask, c);
    d.l[2] = adc_host(d.l[2], fr_detail::kP2 & mask, c);
    d.l[3] = adc_host(d.l[3], fr_detail::kP3 & mask, c);
    return d;
  }
  // s < 2r: subtract r once if s >= r. Branch-free: for random operands the
  // outcome is a coin toss the predictor cannot learn.
  static inline Fr reduce_once_host(const Fr& s) {
    std::uint64_t borrow = 0;
    const std::uint64_t d0 = sbb_host(s.l[0], fr_detail::kP0, borrow);
    const std::uint64_t d1 = sbb_host(s.l[1], fr_detail::kP1, borrow);
    const std::uint64_t d2 = sbb_host(s.l[2], fr_detail::kP2, borrow);
    const std::uint64_t d3 = sbb_host(s.l[3], fr_detail::kP3, borrow);
    const std::uint64_t keep = 0 - borrow;  // s < r
    return Fr{{(s.l[0] & keep) | (d0 & ~keep), (s.l[1] & keep) | (d1 & ~keep),
               (s.l[2] & keep) | (d2 & ~keep), (s.l[3] & keep) | (d3 & ~keep)}};
  }
  // One round of CIOS Montgomery multiplication: t = (t + a * bi + m * r) / 2^64
  // with m chosen so the division is exact. Two shortcuts that r allows:
  // - its top word is below 2^63 - 1, so t stays below 2r and fits four words
  //   (the textbook carry words are always zero: the "no-carry" CIOS);
  // - its low word is 2^64 - 2^32 + 1, so hi(m * r0 + s0), with the low
  //   word known to be zero, is m - (m >> 32) + carry(m + s0): no multiply.
  static inline void mul_round_host(std::uint64_t& t0, std::uint64_t& t1, std::uint64_t& t2,
                                    std::uint64_t& t3, const Fr& a, std::uint64_t bi) {
    std::uint64_t ca = 0;
    const std::uint64_t s0 = mac_host(a.l[0], bi, t0, ca);
    const std::uint64_t m = s0 * fr_detail::kInv64;
    std::uint64_t cm = m - (m >> 32) + static_cast<std::uint64_t>(s0 + m < s0);
    const std::uint64_t s1 = mac_host(a.l[1], bi, t1, ca);
    t0 = mac_host(m, fr_detail::kP1, s1, cm);
    const std::uint64_t s2 = mac_host(a.l[2], bi, t2, ca);
    t1 = mac_host(m, fr_detail::kP2, s2, cm);
    const std::uint64_t s3 = mac_host(a.l[3], bi, t3, ca);
    t2 = mac_host(m, fr_detail::kP3, s3, cm);
    t3 = ca + cm;
  }
  static inline Fr mul_host(const Fr& a, const Fr& b) {
    std::uint64_t t0 = 0, t1 = 0, t2 = 0, t3 = 0;
    mul_round_host(t0, t1, t2, t3, a, b.l[0]);
    mul_round_host(t0, t1, t2, t3, a, b.l[1]);
    mul_round_host(t0, t1, t2, t3, a, b.l[2]);
    mul_round_host(t0, t1, t2, t3, a, b.l[3]);
    return reduce_once_host(Fr{{t0, t1, t2, t3}});
  }
#endif

#if defined(__CUDACC__)
  // Device: eight 32-bit limbs, PTX carry chains for add, sub and the
  // Montgomery product.
  __device__ __forceinline__ static void split(const Fr& a, std::uint32_t x[8]) {
    for (int i = 0; i < 4; ++i) {
      x[2 * i] = static_cast<std::uint32_t>(a.l[i]);
      x[2 * i + 1] = static_cast<std::uint32_t>(a.l[i] >> 32);
    }
  }
  __device__ __forceinline__ static Fr join(const std::uint32_t x[8]) {
    Fr a;
    for (int i = 0; i < 4; ++i)
      a.l[i] =
          static_cast<std::uint64_t>(x[2 * i]) | (static_cast<std::uint64_t>(x[2 * i + 1]) << 32);
    return a;
  }
  // x < 2r (fits 256 bits): x - r if that does not borrow, else x.
  __device__ __forceinline__ static void reduce_once_device(std::uint32_t x[8]) {
    std::uint32_t d[8], borrow;
    asm("sub.cc.u32  %0, %9, 0x00000001;\n\t"
        "subc.cc.u32 %1, %10, 0xffffffff;\n\t"
        "subc.cc.u32 %2, %11, 0xfffe5bfe;\n\t"
        "subc.cc.u32 %3, %12, 0x53bda402;\n\t"
        "subc.cc.u32 %4, %13, 0x09a1d805;\n\t"
        "subc.cc.u32 %5, %14, 0x3339d808;\n\t"
        "subc.cc.u32 %6, %15, 0x299d7d48;\n\t"
        "subc.cc.u32 %7, %16, 0x73eda753;\n\t"
        "subc.u32    %8, 0, 0;"
        : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3]), "=r"(d[4]), "=r"(d[5]), "=r"(d[6]),
          "=r"(d[7]), "=r"(borrow)
        : "r"(x[0]), "r"(x[1]), "r"(x[2]), "r"(x[3]), "r"(x[4]), "r"(x[5]), "r"(x[6]), "r"(x[7]));
    for (int i = 0; i < 8; ++i) x[i] = borrow ? x[i] : d[i];
  }
  __device__ __forceinline__ static Fr add_device(const Fr& a, const Fr& b) {
    std::uint32_t x[8], y[8], s[8];
    split(a, x);
    split(b, y);
    asm("add.cc.u32  %0, %8, %16;\n\t"
        "addc.cc.u32 %1, %9, %17;\n\t"
        "addc.cc.u32 %2, %10, %18;\n\t"
        "addc.cc.u32 %3, %11, %19;\n\t"
        "addc.cc.u32 %4, %12, %20;\n\t"
        "addc.cc.u32 %5, %13, %21;\n\t"
        "addc.cc.u32 %6, %14, %22;\n\t"
        "addc.u32    %7, %15, %23;"
        : "=r"(s[0]), "=r"(s[1]), "=r"(s[2]), "=r"(s[3]), "=r"(s[4]), "=r"(s[5]), "=r"(s[6]),
          "=r"(s[7])
        : "r"(x[0]), "r"(x[1]), "r"(x[2]), "r"(x[3]), "r"(x[4]), "r"(x[5]), "r"(x[6]), "r"(x[7]),
          "r"(y[0]), "r"(y[1]), "r"(y[2]), "r"(y[3]), "r"(y[4]), "r"(y[5]), "r"(y[6]), "r"(y[7]));
    reduce_once_device(s);
    return join(s);
  }
  __device__ __forceinline__ static Fr sub_device(const Fr& a, const Fr& b) {
    std::uint32_t x[8], y[8], d[8], borrow;
    split(a, x);
    split(b, y);
    asm("sub.cc.u32  %0, %9, %17;\n\t"
        "subc.cc.u32 %1, %10, %18;\n\t"
        "subc.cc.u32 %2, %11, %19;\n\t"
        "subc.cc.u32 %3, %12, %20;\n\t"
        "subc.cc.u32 %4, %13, %21;\n\t"
        "subc.cc.u32 %5, %14, %22;\n\t"
        "subc.cc.u32 %6, %15, %23;\n\t"
        "subc.cc.u32 %7, %16, %24;\n\t"
        "subc.u32    %8, 0, 0;"
        : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3]), "=r"(d[4]), "=r"(d[5]), "=r"(d[6]),
          "=r"(d[7]), "=r"(borrow)
        : "r"(x[0]), "r"(x[1]), "r"(x[2]), "r"(x[3]), "r"(x[4]), "r"(x[5]), "r"(x[6]), "r"(x[7]),
          "r"(y[0]), "r"(y[1]), "r"(y[2]), "r"(y[3]), "r"(y[4]), "r"(y[5]), "r"(y[6]), "r"(y[7]));
    // borrow is 0 or 0xffffffff: add r & borrow.
    const std::uint32_t m = borrow;
    asm("add.cc.u32  %0, %0, %8;\n\t"
        "addc.cc.u32 %1, %1, %9;\n\t"
        "addc.cc.u32 %2, %2, %10;\n\t"
        "addc.cc.u32 %3, %3, %11;\n\t"
        "addc.cc.u32 %4, %4, %12;\n\t"
        "addc.cc.u32 %5, %5, %13;\n\t"
        "addc.cc.u32 %6, %6, %14;\n\t"
        "addc.u32    %7, %7, %15;"
        : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]),
          "+r"(d[7])
        : "r"(m & 0x00000001u), "r"(m & 0xffffffffu), "r"(m & 0xfffe5bfeu), "r"(m & 0x53bda402u),
          "r"(m & 0x09a1d805u), "r"(m & 0x3339d808u), "r"(m & 0x299d7d48u), "r"(m & 0x73eda753u));
    return join(d);
  }
  // The even/odd carry-chain product of detail/mont32.cuh.
  __device__ __forceinline__ static Fr mul_device(const Fr& a, const Fr& b) {
    std::uint32_t x[8], y[8], z[8];
    split(a, x);
    split(b, y);
    fr_detail::PtxCarry cc;
    fr_detail::mont_mul_8x32(cc, z, x, y);
    return join(z);
  }
#endif
};

static_assert(sizeof(Fr) == 32, "Fr is 32 bytes");

}  // namespace stoker::kernels
