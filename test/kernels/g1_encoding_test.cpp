// The G1 encodings, 96 bytes uncompressed and 48 compressed: known bytes of
// the generator, round trips, and each malformed form refused with its own
// error. (bls_vectors_test holds both against @noble/curves.)
#include "kernels/g1_encoding.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <random>

#include "g1_test_util.hpp"
#include "kernels/fq_montgomery.hpp"

namespace stoker::kernels {
namespace {

using Bytes = std::array<unsigned char, kG1EncodedBytes>;
using Compressed = std::array<unsigned char, kG1CompressedBytes>;

Bytes encode(const G1Affine& p) {
  Bytes b;
  encode_g1(p, b.data());
  return b;
}

std::error_code decode(const Bytes& b, G1Affine& out) {
  return decode_g1(b.data(), out);
}

Compressed compress(const G1Affine& p) {
  Compressed b;
  encode_g1_compressed(p, b.data());
  return b;
}

std::error_code decompress(const Compressed& b, G1Affine& out,
                           SubgroupCheck check = SubgroupCheck::yes) {
  return decode_g1_compressed(b.data(), out, check);
}

// x = q - 1 + delta in the first 48 bytes (big-endian), delta in {0, 1, 2}.
void write_q_plus(unsigned char* b, int delta) {
  const std::uint64_t q[6] = {fq_detail::kQ0, fq_detail::kQ1, fq_detail::kQ2,
                              fq_detail::kQ3, fq_detail::kQ4, fq_detail::kQ5};
  for (int i = 0; i < 6; ++i)
    for (int k = 0; k < 8; ++k)
      b[8 * (5 - i) + k] = static_cast<unsigned char>(q[i] >> (8 * (7 - k)));
  b[47] = static_cast<unsigned char>(b[47] - 1 + delta);  // q ends in 0xab: no borrow
}

TEST(G1Encoding, GeneratorHasKnownBytes) {
  const Bytes b = encode(G1Affine::generator());
  // The first and last bytes of x and y as in the zcash serialisation.
  EXPECT_EQ(b[0], 0x17);
  EXPECT_EQ(b[1], 0xf1);
  EXPECT_EQ(b[47], 0xbb);
  EXPECT_EQ(b[48], 0x08);
  EXPECT_EQ(b[49], 0xb3);
  EXPECT_EQ(b[95], 0xe1);
  G1Affine p;
  ASSERT_FALSE(decode(b, p));
  EXPECT_EQ(p.x, G1Affine::generator().x);
  EXPECT_EQ(p.y, G1Affine::generator().y);
  EXPECT_FALSE(check_g1(p));
}

TEST(G1Encoding, PointsRoundTrip) {
  std::mt19937_64 rng(31);
  for (int i = 0; i < 16; ++i) {
    const G1Affine p = test::random_g1(rng);
    const Bytes b = encode(p);
    EXPECT_EQ(b[0] & 0xe0, 0);
    G1Affine back;
    ASSERT_FALSE(decode(b, back));
    EXPECT_EQ(back.x, p.x);
    EXPECT_EQ(back.y, p.y);
    EXPECT_EQ(encode(back), b);
  }
}

TEST(G1Encoding, InfinityIsFlagAndZeros) {
  const Bytes b = encode(G1Affine::infinity());
  EXPECT_EQ(b[0], 0x40);
  for (std::size_t i = 1; i < b.size(); ++i) EXPECT_EQ(b[i], 0) << "byte " << i;
  G1Affine p = G1Affine::generator();
  ASSERT_FALSE(decode(b, p));
  EXPECT_TRUE(p.is_infinity());
  EXPECT_FALSE(check_g1(p));
}

TEST(G1Encoding, FlagErrorsAreNamed) {
  const Bytes good = encode(G1Affine::generator());
  G1Affine p;

  Bytes b = good;
  b[0] |= 0x80;
  EXPECT_EQ(decode(b, p), G1Error::compressed_flag);
  b = encode(G1Affine::infinity());
  b[0] |= 0x80;  // compressed infinity is still the compressed form
  EXPECT_EQ(decode(b, p), G1Error::compressed_flag);

  b = good;
  b[0] |= 0x20;
  EXPECT_EQ(decode(b, p), G1Error::sign_flag);

  b = encode(G1Affine::infinity());
  b[0] |= 0x20;  // infinity with the sign bit
  EXPECT_EQ(decode(b, p), G1Error::bad_infinity);
  b = encode(G1Affine::infinity());
  b[0] |= 0x01;  // a stray bit in byte 0
  EXPECT_EQ(decode(b, p), G1Error::bad_infinity);
  b = encode(G1Affine::infinity());
  b[95] = 1;  // a stray bit in y
  EXPECT_EQ(decode(b, p), G1Error::bad_infinity);
  b = good;
  b[0] |= 0x40;  // the flag on a finite point's bytes
  EXPECT_EQ(decode(b, p), G1Error::bad_infinity);
}

TEST(G1Encoding, CoordinatesMustBeBelowQ) {
  const Bytes good = encode(G1Affine::generator());
  G1Affine p;
  for (int delta : {1, 2}) {
    Bytes b = good;
    write_q_plus(b.data(), delta);  // x = q, q + 1
    EXPECT_EQ(decode(b, p), G1Error::x_not_below_q) << delta;
    b = good;
    write_q_plus(b.data() + 48, delta);
    EXPECT_EQ(decode(b, p), G1Error::y_not_below_q) << delta;
  }
  Bytes b = good;
  write_q_plus(b.data(), 0);  // x = q - 1: in range (and then off the curve)
  ASSERT_FALSE(decode(b, p));
  EXPECT_EQ(check_g1(p), G1Error::not_on_curve);
  // The largest x the flags allow, 2^381 - 1 > q.
  b = good;
  b[0] = 0x1f;
  for (int i = 1; i < 48; ++i) b[i] = 0xff;
  EXPECT_EQ(decode(b, p), G1Error::x_not_below_q);
}

TEST(G1Encoding, CheckRefusesOffCurveAndOutsideG1) {
  G1Affine p;
  Bytes b = encode(G1Affine::generator());
  b[95] ^= 1;  // y changed: off the curve
  ASSERT_FALSE(decode(b, p));
  EXPECT_EQ(check_g1(p), G1Error::not_on_curve);

  // (0, 0) without the infinity flag: off the curve, refused by decode_g1
  // itself since a G1Affine of (0, 0) is the point at infinity.
  const Bytes zeros{};
  EXPECT_EQ(decode(zeros, p), G1Error::not_on_curve);

  // x = 4 is the smallest x with x^3 + 4 a square; the point is not in G1.
  const Fq x = Fq::from_u64(4);
  Fq y;
  ASSERT_TRUE((x.sqr() * x + Fq::from_u64(4)).sqrt(y));
  ASSERT_FALSE(decode(encode(G1Affine{x, y}), p));
  EXPECT_EQ(check_g1(p), G1Error::not_in_subgroup);

  EXPECT_NE(make_error_code(G1Error::not_in_subgroup).message().find("subgroup"),
            std::string::npos);
  EXPECT_STREQ(g1_category().name(), "g1 point");
}

TEST(G1Encoding, CompressedGeneratorHasKnownBytes) {
  const Compressed b = compress(G1Affine::generator());
  // x with 0x80; the generator's y is the smaller root, so 0x20 is clear.
  EXPECT_EQ(b[0], 0x97);
  EXPECT_EQ(b[1], 0xf1);
  EXPECT_EQ(b[47], 0xbb);
  EXPECT_EQ(compress(neg(G1Affine::generator()))[0], 0xb7);
  G1Affine p;
  ASSERT_FALSE(decompress(b, p));
  EXPECT_EQ(p.x, G1Affine::generator().x);
  EXPECT_EQ(p.y, G1Affine::generator().y);
}

TEST(G1Encoding, CompressedPointsRoundTripWithTheirSign) {
  std::mt19937_64 rng(32);
  for (int i = 0; i < 16; ++i) {
    const G1Affine p = i % 2 ? test::random_g1(rng) : neg(test::random_g1(rng));
    const Compressed b = compress(p);
    EXPECT_EQ(b[0] & 0xc0, 0x80);
    G1Affine back;
    ASSERT_FALSE(decompress(b, back));
    EXPECT_EQ(back.x, p.x);
    EXPECT_EQ(back.y, p.y);
    // The negation differs in the sign flag alone.
    Compressed flipped = compress(neg(p));
    EXPECT_EQ(flipped[0] ^ b[0], 0x20);
    flipped[0] = b[0];
    EXPECT_EQ(flipped, b);
  }
}

TEST(G1Encoding, CompressedInfinityIsFlagsAndZeros) {
  const Compressed b = compress(G1Affine::infinity());
  EXPECT_EQ(b[0], 0xc0);
  for (std::size_t i = 1; i < b.size(); ++i) EXPECT_EQ(b[i], 0) << "byte " << i;
  G1Affine p = G1Affine::generator();
  ASSERT_FALSE(decompress(b, p));
  EXPECT_TRUE(p.is_infinity());
}

TEST(G1Encoding, CompressedErrorsAreNamedAndLeaveTheOutputAlone) {
  const Compressed good = compress(G1Affine::generator());
  std::mt19937_64 rng(33);
  const G1Affine sentinel = test::random_g1(rng);
  G1Affine p = sentinel;
  auto refused = [&](const Compressed& b, G1Error e) {
    p = sentinel;
    EXPECT_EQ(decompress(b, p), e);
    EXPECT_EQ(p.x, sentinel.x);
    EXPECT_EQ(p.y, sentinel.y);
  };

  Compressed b = good;
  b[0] &= 0x7f;  // the uncompressed form's first half
  refused(b, G1Error::not_compressed);
  b = compress(G1Affine::infinity());
  b[0] = 0x40;  // the uncompressed infinity flag alone
  refused(b, G1Error::not_compressed);

  b = compress(G1Affine::infinity());
  b[0] |= 0x20;  // infinity with the sign flag
  refused(b, G1Error::bad_infinity);
  b = compress(G1Affine::infinity());
  b[47] = 1;
  refused(b, G1Error::bad_infinity);
  b = good;
  b[0] |= 0x40;  // the flag on a finite point's x
  refused(b, G1Error::bad_infinity);

  for (int delta : {1, 2}) {
    b = good;
    write_q_plus(b.data(), delta);  // x = q, q + 1, then the flag
    b[0] |= 0x80;
    refused(b, G1Error::x_not_below_q);
  }
  b.fill(0xff);  // 2^381 - 1 with all three flags: infinity's flag first
  refused(b, G1Error::bad_infinity);
  b.fill(0xff);
  b[0] = 0x9f;
  refused(b, G1Error::x_not_below_q);

  // x = 1: 1 + 4 = 5 is not a square mod q (checked first).
  b.fill(0);
  b[0] = 0x80;
  b[47] = 1;
  Fq y;
  ASSERT_FALSE(Fq::from_u64(5).sqrt(y));
  refused(b, G1Error::x_not_on_curve);
}

TEST(G1Encoding, CompressedPointOutsideG1IsRefusedUnlessSkipped) {
  // x = 4: on the curve, not in G1 (g1_encoding's uncompressed test).
  const Fq x = Fq::from_u64(4);
  Fq y;
  ASSERT_TRUE((x.sqr() * x + Fq::from_u64(4)).sqrt(y));
  const Compressed b = compress(G1Affine{x, y});
  G1Affine p;
  EXPECT_EQ(decompress(b, p), G1Error::not_in_subgroup);
  ASSERT_FALSE(decompress(b, p, SubgroupCheck::skip));
  EXPECT_EQ(p.x, x);
  EXPECT_EQ(p.y, y);
  EXPECT_EQ(check_g1(p), G1Error::not_in_subgroup);
  EXPECT_NE(make_error_code(G1Error::x_not_on_curve).message().find("x^3 + 4"), std::string::npos);
}

}  // namespace
}  // namespace stoker::kernels

namespace stoker::kernels {
namespace {

// Canonical coordinates, converted on the CPU, are decode_g1's point; the
// checks of flags and ranges are the same.
TEST(G1Encoding, TheCanonicalFormIsTheSamePointOnceConverted) {
  std::mt19937_64 rng(71);
  for (int i = 0; i < 8; ++i) {
    const G1Affine p = i == 0 ? G1Affine::infinity() : test::random_g1(rng);
    std::array<unsigned char, kG1EncodedBytes> b{};
    encode_g1(p, b.data());
    G1Affine full, canonical;
    ASSERT_FALSE(decode_g1(b.data(), full));
    ASSERT_FALSE(decode_g1_canonical(b.data(), canonical));
    cpu::fq_to_montgomery(&canonical.x, 2, 1);
    EXPECT_TRUE(canonical.x == full.x && canonical.y == full.y) << i;
  }
  std::array<unsigned char, kG1EncodedBytes> zero{}, big{};
  G1Affine out;
  EXPECT_EQ(decode_g1_canonical(zero.data(), out), make_error_code(G1Error::not_on_curve));
  for (std::size_t k = 0; k < 48; ++k) big[k] = k == 0 ? 0x1f : 0xff;
  EXPECT_EQ(decode_g1_canonical(big.data(), out), make_error_code(G1Error::x_not_below_q));
}

}  // namespace
}  // namespace stoker::kernels
