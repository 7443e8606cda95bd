// The G2 point encodings; see g2_encoding.hpp.
#include "kernels/g2_encoding.hpp"

#include <cstdint>
#include <string>

namespace stoker::kernels {
namespace {

using namespace point_encoding_detail;

class G2Category final : public std::error_category {
 public:
  const char* name() const noexcept override { return "g2 point"; }
  std::string message(int c) const override {
    switch (static_cast<G2Error>(c)) {
      case G2Error::ok:
        return "ok";
      case G2Error::compressed_flag:
        return "compressed flag (0x80) set: points must be in the 192-byte uncompressed form";
      case G2Error::not_compressed:
        return "compressed flag (0x80) clear: a 96-byte compressed point must set it";
      case G2Error::sign_flag:
        return "sign flag (0x20) set: it must be clear in the uncompressed form";
      case G2Error::bad_infinity:
        return "infinity flag (0x40) set but the other bits are not all zero";
      case G2Error::x_c1_not_below_q:
        return "x.c1 (bytes 0-47) is not below the field modulus q";
      case G2Error::x_c0_not_below_q:
        return "x.c0 (bytes 48-95) is not below the field modulus q";
      case G2Error::y_c1_not_below_q:
        return "y.c1 (bytes 96-143) is not below the field modulus q";
      case G2Error::y_c0_not_below_q:
        return "y.c0 (bytes 144-191) is not below the field modulus q";
      case G2Error::not_on_curve:
        return "point is not on the curve y^2 = x^3 + 4(u + 1)";
      case G2Error::x_not_on_curve:
        return "no point of the curve has this x (x^3 + 4(u + 1) is not a square)";
      case G2Error::not_in_subgroup:
        return "point is on the curve but not in the order-r subgroup G2";
    }
    return "unknown g2 point error " + std::to_string(c);
  }
};

// Two 48-byte halves, c1 first, to limbs. With `mask_flags` the top three
// bits of the first byte are dropped (the compressed form's flags); without,
// they count, so that a flag bit left on a coordinate makes it >= q.
void read_fq2_limbs(const unsigned char* b, std::uint64_t c1[6], std::uint64_t c0[6],
                    bool mask_flags) {
  unsigned char first[48];
  for (int i = 0; i < 48; ++i) first[i] = b[i];
  if (mask_flags) first[0] &= 0x1f;
  read_be48(first, c1);
  read_be48(b + 48, c0);
}

Fq2 fq2_from_limbs(const std::uint64_t c0[6], const std::uint64_t c1[6]) {
  return Fq2{Fq::from_canonical(c0), Fq::from_canonical(c1)};
}

void write_fq2(const Fq2& x, unsigned char* b) {
  write_fq(x.c1, b);
  write_fq(x.c0, b + 48);
}

// The compressed form's sign: y.c1 decides unless it is zero.
bool is_larger_root(const Fq2& y) {
  return y.c1.is_zero() ? point_encoding_detail::is_larger_root(y.c0)
                        : point_encoding_detail::is_larger_root(y.c1);
}

std::error_code check_subgroup(const G2Affine& p, SubgroupCheck check) {
  if (check == SubgroupCheck::yes && !in_subgroup(p)) return G2Error::not_in_subgroup;
  return {};
}

}  // namespace

const std::error_category& g2_category() noexcept {
  static const G2Category c;
  return c;
}

std::error_code make_error_code(G2Error e) noexcept {
  return {static_cast<int>(e), g2_category()};
}

std::error_code decode_g2_canonical(const unsigned char* bytes, G2Affine& out) noexcept {
  const unsigned char flags = bytes[0];
  if (flags & kCompressed) return G2Error::compressed_flag;
  if (flags & kInfinity) {
    if (flags != kInfinity || !rest_is_zero(bytes, kG2EncodedBytes)) return G2Error::bad_infinity;
    out = G2Affine::infinity();
    return {};
  }
  if (flags & kSign) return G2Error::sign_flag;
  std::uint64_t x1[6], x0[6], y1[6], y0[6];
  read_fq2_limbs(bytes, x1, x0, false);  // the flags are all clear here
  read_fq2_limbs(bytes + 96, y1, y0, false);
  if (!Fq::is_canonical(x1)) return G2Error::x_c1_not_below_q;
  if (!Fq::is_canonical(x0)) return G2Error::x_c0_not_below_q;
  if (!Fq::is_canonical(y1)) return G2Error::y_c1_not_below_q;
  if (!Fq::is_canonical(y0)) return G2Error::y_c0_not_below_q;
  // (0, 0) is how G2Affine holds the point at infinity; without the flag
  // these bytes are the point (0, 0), which is not on E'.
  std::uint64_t any = 0;
  for (int i = 0; i < 6; ++i) any |= x0[i] | x1[i] | y0[i] | y1[i];
  if (any == 0) return G2Error::not_on_curve;
  for (int i = 0; i < 6; ++i) {
    out.x.c0.l[i] = x0[i];
    out.x.c1.l[i] = x1[i];
    out.y.c0.l[i] = y0[i];
    out.y.c1.l[i] = y1[i];
  }
  return {};
}

namespace {

G2Affine to_montgomery(const G2Affine& c) {
  return G2Affine{fq2_from_limbs(c.x.c0.l, c.x.c1.l), fq2_from_limbs(c.y.c0.l, c.y.c1.l)};
}

}  // namespace

std::error_code decode_g2_coordinates(const unsigned char* bytes, G2Affine& out) noexcept {
  G2Affine c;
  if (auto ec = decode_g2_canonical(bytes, c)) return ec;
  out = to_montgomery(c);  // the point at infinity stays (0, 0)
  return {};
}

std::error_code decode_g2(const unsigned char* bytes, G2Affine& out, SubgroupCheck check) noexcept {
  G2Affine c;
  if (auto ec = decode_g2_canonical(bytes, c)) return ec;
  const G2Affine p = to_montgomery(c);
  if (p.is_infinity()) {
    out = p;
    return {};
  }
  if (!on_curve(p)) return G2Error::not_on_curve;
  if (auto ec = check_subgroup(p, check)) return ec;
  out = p;
  return {};
}

std::error_code decode_g2_compressed(const unsigned char* bytes, G2Affine& out,
                                     SubgroupCheck check) noexcept {
  const unsigned char flags = bytes[0];
  if (!(flags & kCompressed)) return G2Error::not_compressed;
  if (flags & kInfinity) {
    if (flags != (kCompressed | kInfinity) || !rest_is_zero(bytes, kG2CompressedBytes))
      return G2Error::bad_infinity;
    out = G2Affine::infinity();
    return {};
  }
  std::uint64_t x1[6], x0[6];
  read_fq2_limbs(bytes, x1, x0, true);
  if (!Fq::is_canonical(x1)) return G2Error::x_c1_not_below_q;
  if (!Fq::is_canonical(x0)) return G2Error::x_c0_not_below_q;
  const Fq2 x = fq2_from_limbs(x0, x1);
  Fq2 y;
  if (!(x.sqr() * x + g2_detail::curve_b()).sqrt(y)) return G2Error::x_not_on_curve;
  if (is_larger_root(y) != ((flags & kSign) != 0)) y = y.neg();
  const G2Affine p{x, y};
  if (auto ec = check_subgroup(p, check)) return ec;
  out = p;
  return {};
}

std::error_code check_g2(const G2Affine& p) noexcept {
  if (!on_curve(p)) return G2Error::not_on_curve;
  return check_subgroup(p, SubgroupCheck::yes);
}

void encode_g2(const G2Affine& p, unsigned char* bytes) noexcept {
  if (p.is_infinity()) {
    bytes[0] = kInfinity;
    for (std::size_t i = 1; i < kG2EncodedBytes; ++i) bytes[i] = 0;
    return;
  }
  write_fq2(p.x, bytes);
  write_fq2(p.y, bytes + 96);
}

void encode_g2_compressed(const G2Affine& p, unsigned char* bytes) noexcept {
  if (p.is_infinity()) {
    bytes[0] = kCompressed | kInfinity;
    for (std::size_t i = 1; i < kG2CompressedBytes; ++i) bytes[i] = 0;
    return;
  }
  write_fq2(p.x, bytes);
  bytes[0] |= kCompressed | (is_larger_root(p.y) ? kSign : 0);
}

}  // namespace stoker::kernels
