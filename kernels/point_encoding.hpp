// What the G1 and G2 point encodings share (zcash / IETF
// pairing-friendly-curves serialisation, as bellman and @noble/curves write
// it): the three flags of byte 0, field elements as 48 big-endian bytes,
// the "lexicographically largest" rule that the compressed forms' sign flag
// follows, and whether a decoder checks subgroup membership.
//
// Byte 0 of every encoding: 0x80 says the compressed form (x only), 0x40
// the point at infinity (then every other bit is zero), 0x20, in the
// compressed form only, that y is the larger of y and -y. A coordinate's
// top three bits are always free for them since q < 2^381.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/fq.cuh"

namespace stoker::kernels {

// Whether a decoder checks that a point on the curve lies in the order-r
// subgroup. skip is for input already known to be good, or checked in bulk
// elsewhere (on a GPU); a point outside the subgroup breaks the protocols
// built on it, so yes is the default everywhere.
enum class SubgroupCheck { yes, skip };

namespace point_encoding_detail {

inline constexpr unsigned char kCompressed = 0x80, kInfinity = 0x40, kSign = 0x20;

// 48 big-endian bytes to little-endian limbs (the caller masks the flags).
inline void read_be48(const unsigned char* b, std::uint64_t v[6]) {
  for (int i = 0; i < 6; ++i) {
    std::uint64_t w = 0;
    for (int k = 0; k < 8; ++k) w = (w << 8) | b[8 * (5 - i) + k];
    v[i] = w;
  }
}

inline void write_be48(const std::uint64_t v[6], unsigned char* b) {
  for (int i = 0; i < 6; ++i)
    for (int k = 0; k < 8; ++k)
      b[8 * (5 - i) + k] = static_cast<unsigned char>(v[i] >> (8 * (7 - k)));
}

inline void write_fq(const Fq& x, unsigned char* b) {
  std::uint64_t v[6];
  x.to_canonical(v);
  write_be48(v, b);
}

// Whether y > (q - 1) / 2 as integers, i.e. y is the larger of y and -y
// (zcash's lexicographically_largest). (q - 1) / 2 = q >> 1, q being odd.
inline bool is_larger_root(const Fq& y) {
  using namespace fq_detail;
  const std::uint64_t half[6] = {kQ0 >> 1 | kQ1 << 63, kQ1 >> 1 | kQ2 << 63, kQ2 >> 1 | kQ3 << 63,
                                 kQ3 >> 1 | kQ4 << 63, kQ4 >> 1 | kQ5 << 63, kQ5 >> 1};
  std::uint64_t v[6];
  y.to_canonical(v);
  for (int i = 5; i >= 0; --i) {
    if (v[i] > half[i]) return true;
    if (v[i] < half[i]) return false;
  }
  return false;  // y = (q - 1) / 2 is the smaller one
}

// Whether bytes[1..n) are all zero.
inline bool rest_is_zero(const unsigned char* bytes, std::size_t n) {
  for (std::size_t i = 1; i < n; ++i)
    if (bytes[i]) return false;
  return true;
}

}  // namespace point_encoding_detail
}  // namespace stoker::kernels
