// The 96-byte uncompressed encoding of G1 points (zcash / IETF
// pairing-friendly-curves), as the msm command's files and the SRS hold
// them: x then y, each 48 bytes big-endian. Byte 0 carries three flags:
// 0x80 (compressed) must be clear, 0x40 marks the point at infinity (then
// every other bit of the 96 bytes is zero, 0x20 included), and 0x20 (the
// sign of y, meaningful only in the compressed form) must be clear.
//
// decode_g1 checks the form (flags, coordinates below q); check_g1 checks
// the point (on the curve, in G1), so a caller can run the second on a GPU
// or skip it for trusted input. Errors come as std::error_code of
// g1_category(), one code per reason, so a caller can name the element's
// index beside the code's message. Thread safe; nothing allocates.
#pragma once

#include <cstddef>
#include <system_error>

#include "kernels/g1.cuh"

namespace stoker::kernels {

inline constexpr std::size_t kG1EncodedBytes = 96;

enum class G1Error {
  ok = 0,
  compressed_flag,  // 0x80 set: only the uncompressed form is read
  sign_flag,        // 0x20 set on a finite point
  bad_infinity,     // 0x40 set, but another bit is not zero
  x_not_below_q,    // x >= q
  y_not_below_q,    // y >= q
  not_on_curve,     // y^2 != x^3 + 4
  not_in_subgroup,  // on the curve, not in the order-r subgroup G1
};

const std::error_category& g1_category() noexcept;
std::error_code make_error_code(G1Error e) noexcept;

// Bytes to a point in Montgomery form: flags and ranges only, but for
// (0, 0) without the infinity flag, refused as not_on_curve here because
// G1Affine holds the point at infinity as (0, 0).
std::error_code decode_g1(const unsigned char* bytes, G1Affine& out) noexcept;
// On the curve and in G1; the point at infinity passes.
std::error_code check_g1(const G1Affine& p) noexcept;
// A point to its 96 bytes (the point at infinity as 0x40 and zeros).
void encode_g1(const G1Affine& p, unsigned char* bytes) noexcept;

}  // namespace stoker::kernels

template <>
struct std::is_error_code_enum<stoker::kernels::G1Error> : std::true_type {};
