// The encodings of G1 points (zcash / IETF pairing-friendly-curves; the
// flags in point_encoding.hpp):
// - 96 bytes uncompressed, as the msm command's files and the SRS hold
//   them: x then y, each 48 bytes big-endian. 0x80 (compressed) must be
//   clear, 0x40 marks the point at infinity (then every other bit of the 96
//   bytes is zero, 0x20 included), and 0x20 must be clear.
// - 48 bytes compressed, as bellman's proofs hold them: x alone, 0x80 set,
//   0x40 for the point at infinity (0xc0 then zeros), 0x20 set when y is the
//   larger of y and -y.
//
// decode_g1 checks the form (flags, coordinates below q); check_g1 checks
// the point (on the curve, in G1), so a caller can run the second on a GPU
// or skip it for trusted input. decode_g1_compressed checks everything: the
// form, that x has a point on the curve, and membership of G1 unless told
// to skip it. Errors come as std::error_code of g1_category(), one code per
// reason, so a caller can name the element's index beside the code's
// message. Thread safe; nothing allocates.
#pragma once

#include <cstddef>
#include <system_error>

#include "kernels/g1.cuh"
#include "kernels/point_encoding.hpp"

namespace stoker::kernels {

inline constexpr std::size_t kG1EncodedBytes = 96;
inline constexpr std::size_t kG1CompressedBytes = 48;

enum class G1Error {
  ok = 0,
  compressed_flag,  // 0x80 set: only the uncompressed form is read
  sign_flag,        // 0x20 set on a finite point
  bad_infinity,     // 0x40 set, but another bit is not zero
  x_not_below_q,    // x >= q
  y_not_below_q,    // y >= q
  not_on_curve,     // y^2 != x^3 + 4
  not_in_subgroup,  // on the curve, not in the order-r subgroup G1
  not_compressed,   // 0x80 clear in the 48-byte compressed form
  x_not_on_curve,   // compressed: x^3 + 4 is not a square, no point has this x
};

const std::error_category& g1_category() noexcept;
std::error_code make_error_code(G1Error e) noexcept;

// Bytes to a point in Montgomery form: flags and ranges only, but for
// (0, 0) without the infinity flag, refused as not_on_curve here because
// G1Affine holds the point at infinity as (0, 0).
std::error_code decode_g1(const unsigned char* bytes, G1Affine& out) noexcept;
// The same checks, the coordinates left in canonical form for a device to
// convert (kernels/fq_montgomery.hpp): the conversion is most of a
// decode's time on a CPU.
std::error_code decode_g1_canonical(const unsigned char* bytes, G1Affine& out) noexcept;
// On the curve and in G1; the point at infinity passes.
std::error_code check_g1(const G1Affine& p) noexcept;
// A point to its 96 bytes (the point at infinity as 0x40 and zeros).
void encode_g1(const G1Affine& p, unsigned char* bytes) noexcept;

// 48 compressed bytes to a point: flags, x below q, y from x with the sign
// the flag names, and G1 membership unless `check` is skip. `out` is left
// untouched on error.
std::error_code decode_g1_compressed(const unsigned char* bytes, G1Affine& out,
                                     SubgroupCheck check = SubgroupCheck::yes) noexcept;
// A point to its 48 compressed bytes (the point at infinity as 0xc0 and
// zeros).
void encode_g1_compressed(const G1Affine& p, unsigned char* bytes) noexcept;

}  // namespace stoker::kernels

template <>
struct std::is_error_code_enum<stoker::kernels::G1Error> : std::true_type {};
