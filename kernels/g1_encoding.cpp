// The G1 point encoding; see g1_encoding.hpp.
#include "kernels/g1_encoding.hpp"

#include <cstdint>
#include <string>

namespace stoker::kernels {
namespace {

constexpr unsigned char kCompressed = 0x80, kInfinity = 0x40, kSign = 0x20;

class G1Category final : public std::error_category {
 public:
  const char* name() const noexcept override { return "g1 point"; }
  std::string message(int c) const override {
    switch (static_cast<G1Error>(c)) {
      case G1Error::ok:
        return "ok";
      case G1Error::compressed_flag:
        return "compressed flag (0x80) set: points must be in the 96-byte uncompressed form";
      case G1Error::sign_flag:
        return "sign flag (0x20) set: it must be clear in the uncompressed form";
      case G1Error::bad_infinity:
        return "infinity flag (0x40) set but the other bits are not all zero";
      case G1Error::x_not_below_q:
        return "x is not below the field modulus q";
      case G1Error::y_not_below_q:
        return "y is not below the field modulus q";
      case G1Error::not_on_curve:
        return "point is not on the curve y^2 = x^3 + 4";
      case G1Error::not_in_subgroup:
        return "point is on the curve but not in the order-r subgroup G1";
    }
    return "unknown g1 point error " + std::to_string(c);
  }
};

// 48 big-endian bytes to little-endian limbs.
void read_be48(const unsigned char* b, std::uint64_t v[6]) {
  for (int i = 0; i < 6; ++i) {
    std::uint64_t w = 0;
    for (int k = 0; k < 8; ++k) w = (w << 8) | b[8 * (5 - i) + k];
    v[i] = w;
  }
}

void write_be48(const std::uint64_t v[6], unsigned char* b) {
  for (int i = 0; i < 6; ++i)
    for (int k = 0; k < 8; ++k)
      b[8 * (5 - i) + k] = static_cast<unsigned char>(v[i] >> (8 * (7 - k)));
}

}  // namespace

const std::error_category& g1_category() noexcept {
  static const G1Category c;
  return c;
}

std::error_code make_error_code(G1Error e) noexcept {
  return {static_cast<int>(e), g1_category()};
}

std::error_code decode_g1(const unsigned char* bytes, G1Affine& out) noexcept {
  const unsigned char flags = bytes[0];
  if (flags & kCompressed) return G1Error::compressed_flag;
  if (flags & kInfinity) {
    if (flags != kInfinity) return G1Error::bad_infinity;
    for (std::size_t i = 1; i < kG1EncodedBytes; ++i)
      if (bytes[i]) return G1Error::bad_infinity;
    out = G1Affine::infinity();
    return {};
  }
  if (flags & kSign) return G1Error::sign_flag;
  std::uint64_t x[6], y[6];
  read_be48(bytes, x);
  read_be48(bytes + 48, y);
  if (!Fq::is_canonical(x)) return G1Error::x_not_below_q;
  if (!Fq::is_canonical(y)) return G1Error::y_not_below_q;
  // (0, 0) is how G1Affine holds the point at infinity; without the flag
  // these bytes are the point (0, 0), which is not on the curve.
  if (((x[0] | x[1] | x[2] | x[3] | x[4] | x[5]) | (y[0] | y[1] | y[2] | y[3] | y[4] | y[5])) == 0)
    return G1Error::not_on_curve;
  out = G1Affine{Fq::from_canonical(x), Fq::from_canonical(y)};
  return {};
}

std::error_code check_g1(const G1Affine& p) noexcept {
  if (!on_curve(p)) return G1Error::not_on_curve;
  if (!in_subgroup(p)) return G1Error::not_in_subgroup;
  return {};
}

void encode_g1(const G1Affine& p, unsigned char* bytes) noexcept {
  if (p.is_infinity()) {
    bytes[0] = kInfinity;
    for (std::size_t i = 1; i < kG1EncodedBytes; ++i) bytes[i] = 0;
    return;
  }
  std::uint64_t v[6];
  p.x.to_canonical(v);
  write_be48(v, bytes);
  p.y.to_canonical(v);
  write_be48(v, bytes + 48);
}

}  // namespace stoker::kernels
