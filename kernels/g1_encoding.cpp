// The G1 point encoding; see g1_encoding.hpp.
#include "kernels/g1_encoding.hpp"

#include <cstdint>
#include <string>

namespace stoker::kernels {
namespace {

using namespace point_encoding_detail;

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
      case G1Error::not_compressed:
        return "compressed flag (0x80) clear: a 48-byte compressed point must set it";
      case G1Error::x_not_on_curve:
        return "no point of the curve has this x (x^3 + 4 is not a square)";
    }
    return "unknown g1 point error " + std::to_string(c);
  }
};

}  // namespace

const std::error_category& g1_category() noexcept {
  static const G1Category c;
  return c;
}

std::error_code make_error_code(G1Error e) noexcept {
  return {static_cast<int>(e), g1_category()};
}

std::error_code decode_g1_canonical(const unsigned char* bytes, G1Affine& out) noexcept {
  const unsigned char flags = bytes[0];
  if (flags & kCompressed) return G1Error::compressed_flag;
  if (flags & kInfinity) {
    if (flags != kInfinity || !rest_is_zero(bytes, kG1EncodedBytes)) return G1Error::bad_infinity;
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
  for (int i = 0; i < 6; ++i) {
    out.x.l[i] = x[i];
    out.y.l[i] = y[i];
  }
  return {};
}

std::error_code decode_g1(const unsigned char* bytes, G1Affine& out) noexcept {
  G1Affine p;
  if (auto ec = decode_g1_canonical(bytes, p)) return ec;
  // The point at infinity is (0, 0) in either form.
  out = G1Affine{Fq::from_canonical(p.x.l), Fq::from_canonical(p.y.l)};
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
  write_fq(p.x, bytes);
  write_fq(p.y, bytes + 48);
}

std::error_code decode_g1_compressed(const unsigned char* bytes, G1Affine& out,
                                     SubgroupCheck check) noexcept {
  const unsigned char flags = bytes[0];
  if (!(flags & kCompressed)) return G1Error::not_compressed;
  if (flags & kInfinity) {
    if (flags != (kCompressed | kInfinity) || !rest_is_zero(bytes, kG1CompressedBytes))
      return G1Error::bad_infinity;
    out = G1Affine::infinity();
    return {};
  }
  unsigned char xb[48];
  for (int i = 0; i < 48; ++i) xb[i] = bytes[i];
  xb[0] &= 0x1f;
  std::uint64_t v[6];
  read_be48(xb, v);
  if (!Fq::is_canonical(v)) return G1Error::x_not_below_q;
  const Fq x = Fq::from_canonical(v);
  Fq y;
  if (!(x.sqr() * x + g1_detail::curve_b()).sqrt(y)) return G1Error::x_not_on_curve;
  if (is_larger_root(y) != ((flags & kSign) != 0)) y = y.neg();
  const G1Affine p{x, y};
  if (check == SubgroupCheck::yes && !in_subgroup(p)) return G1Error::not_in_subgroup;
  out = p;
  return {};
}

void encode_g1_compressed(const G1Affine& p, unsigned char* bytes) noexcept {
  if (p.is_infinity()) {
    bytes[0] = kCompressed | kInfinity;
    for (std::size_t i = 1; i < kG1CompressedBytes; ++i) bytes[i] = 0;
    return;
  }
  write_fq(p.x, bytes);
  bytes[0] |= kCompressed | (is_larger_root(p.y) ? kSign : 0);
}

}  // namespace stoker::kernels
