// The encodings of G2 points (zcash / IETF pairing-friendly-curves, as
// bellman's .params and proofs and @noble/curves write them; the flags in
// point_encoding.hpp). An Fq2 coordinate c0 + c1 u is written c1 first,
// each half 48 bytes big-endian:
// - 192 bytes uncompressed: x.c1, x.c0, y.c1, y.c0. 0x80 must be clear,
//   0x40 marks the point at infinity (then every other bit is zero), 0x20
//   must be clear.
// - 96 bytes compressed: x.c1, x.c0. 0x80 set, 0x40 for the point at
//   infinity (0xc0 then zeros), 0x20 set when y is the larger of y and -y,
//   comparing y.c1 or, when y.c1 is zero, y.c0.
//
// Decoding checks everything: flags, each coordinate below q, the point on
// E' (for the compressed form: that x has a point), and membership of G2
// unless the caller asks to skip it (check_g2 runs the point checks alone).
// Errors come as std::error_code of g2_category(), one code per reason,
// naming the coordinate that is out of range; `out` is left untouched on
// error. Thread safe; nothing allocates.
#pragma once

#include <cstddef>
#include <system_error>

#include "kernels/g2.cuh"
#include "kernels/point_encoding.hpp"

namespace stoker::kernels {

inline constexpr std::size_t kG2EncodedBytes = 192;
inline constexpr std::size_t kG2CompressedBytes = 96;

enum class G2Error {
  ok = 0,
  compressed_flag,   // 0x80 set in the 192-byte uncompressed form
  not_compressed,    // 0x80 clear in the 96-byte compressed form
  sign_flag,         // 0x20 set on a finite point in the uncompressed form
  bad_infinity,      // 0x40 set, but another bit is not zero
  x_c1_not_below_q,  // x.c1 >= q
  x_c0_not_below_q,  // x.c0 >= q
  y_c1_not_below_q,  // y.c1 >= q
  y_c0_not_below_q,  // y.c0 >= q
  not_on_curve,      // y^2 != x^3 + 4 (u + 1)
  x_not_on_curve,    // compressed: x^3 + 4 (u + 1) is not a square
  not_in_subgroup,   // on E', not in the order-r subgroup G2
};

const std::error_category& g2_category() noexcept;
std::error_code make_error_code(G2Error e) noexcept;

std::error_code decode_g2(const unsigned char* bytes, G2Affine& out,
                          SubgroupCheck check = SubgroupCheck::yes) noexcept;
std::error_code decode_g2_compressed(const unsigned char* bytes, G2Affine& out,
                                     SubgroupCheck check = SubgroupCheck::yes) noexcept;
// The uncompressed form with its flags and coordinates checked (each below
// q; (0, 0) without the infinity flag refused), the curve and the subgroup
// not: for points checked in bulk elsewhere (a key's on the GPU as they
// land) or trusted. On one core of the development machine: 341 ns a
// point, against decode_g2's 521.
std::error_code decode_g2_coordinates(const unsigned char* bytes, G2Affine& out) noexcept;
// decode_g2_coordinates's checks, the coordinates left in canonical form
// for a device to convert (kernels/fq_montgomery.hpp).
std::error_code decode_g2_canonical(const unsigned char* bytes, G2Affine& out) noexcept;
// On E' and in G2; the point at infinity passes.
std::error_code check_g2(const G2Affine& p) noexcept;

// A point to its 192 bytes (the point at infinity as 0x40 and zeros).
void encode_g2(const G2Affine& p, unsigned char* bytes) noexcept;
// A point to its 96 compressed bytes (the point at infinity as 0xc0 and
// zeros).
void encode_g2_compressed(const G2Affine& p, unsigned char* bytes) noexcept;

}  // namespace stoker::kernels

template <>
struct std::is_error_code_enum<stoker::kernels::G2Error> : std::true_type {};
