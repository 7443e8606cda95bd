// The G2 encodings, 192 bytes uncompressed and 96 compressed: known bytes of
// the generator, round trips, the compressed form's sign rule, and each
// malformed form refused with its own error, the output left alone.
// (bls_vectors_test holds both against @noble/curves.)
#include "kernels/g2_encoding.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <random>
#include <string>

#include "g2_test_util.hpp"
#include "kernels/fq_montgomery.hpp"

namespace stoker::kernels {
namespace {

using Bytes = std::array<unsigned char, kG2EncodedBytes>;
using Compressed = std::array<unsigned char, kG2CompressedBytes>;

Bytes encode(const G2Affine& p) {
  Bytes b;
  encode_g2(p, b.data());
  return b;
}

Compressed compress(const G2Affine& p) {
  Compressed b;
  encode_g2_compressed(p, b.data());
  return b;
}

// q - 1 + delta as 48 big-endian bytes at b, delta in {0, 1, 2}.
void write_q_plus(unsigned char* b, int delta) {
  const std::uint64_t q[6] = {fq_detail::kQ0, fq_detail::kQ1, fq_detail::kQ2,
                              fq_detail::kQ3, fq_detail::kQ4, fq_detail::kQ5};
  for (int i = 0; i < 6; ++i)
    for (int k = 0; k < 8; ++k)
      b[8 * (5 - i) + k] = static_cast<unsigned char>(q[i] >> (8 * (7 - k)));
  b[47] = static_cast<unsigned char>(b[47] - 1 + delta);  // q ends in 0xab: no borrow
}

void expect_same(const G2Affine& a, const G2Affine& b) {
  EXPECT_EQ(a.x, b.x);
  EXPECT_EQ(a.y, b.y);
}

// Checks that decoding fails with `e` and leaves the output as it was.
template <class Buffer, class Decode>
void expect_refused(const Buffer& b, G2Error e, Decode decode) {
  std::mt19937_64 rng(60);
  const G2Affine sentinel = test::random_g2(rng);
  G2Affine p = sentinel;
  EXPECT_EQ(decode(b.data(), p), e) << make_error_code(e).message();
  expect_same(p, sentinel);
}

std::error_code decode_full(const unsigned char* b, G2Affine& p) {
  return decode_g2(b, p);
}
std::error_code decompress_full(const unsigned char* b, G2Affine& p) {
  return decode_g2_compressed(b, p);
}

// An x of E' with no point: x^3 + 4(u + 1) not a square.
Fq2 x_without_point() {
  for (std::uint64_t c0 = 1;; ++c0) {
    const Fq2 x{Fq::from_u64(c0), Fq::zero()};
    Fq2 y;
    if (!(x.sqr() * x + g2_detail::curve_b()).sqrt(y)) return x;
  }
}

TEST(G2Encoding, GeneratorHasKnownBytes) {
  const Bytes b = encode(G2Affine::generator());
  // The first bytes of x.c1, x.c0, y.c1, y.c0 and the last of y.c0.
  EXPECT_EQ(b[0], 0x13);
  EXPECT_EQ(b[1], 0xe0);
  EXPECT_EQ(b[48], 0x02);
  EXPECT_EQ(b[49], 0x4a);
  EXPECT_EQ(b[96], 0x06);
  EXPECT_EQ(b[144], 0x0c);
  EXPECT_EQ(b[191], 0x01);
  const Compressed c = compress(G2Affine::generator());
  EXPECT_EQ(c[0], 0x93);  // 0x80 | 0x13: y.c1 is the smaller root
  EXPECT_EQ(c[95], 0xb8);
  G2Affine p;
  ASSERT_FALSE(decode_g2(b.data(), p));
  expect_same(p, G2Affine::generator());
  p = G2Affine::infinity();
  ASSERT_FALSE(decode_g2_compressed(c.data(), p));
  expect_same(p, G2Affine::generator());
  EXPECT_FALSE(check_g2(p));
}

TEST(G2Encoding, PointsRoundTripInBothForms) {
  std::mt19937_64 rng(61);
  for (int i = 0; i < 12; ++i) {
    const G2Affine p = i % 2 ? test::random_g2(rng) : neg(test::random_g2(rng));
    const Bytes b = encode(p);
    EXPECT_EQ(b[0] & 0xe0, 0);
    G2Affine back;
    ASSERT_FALSE(decode_g2(b.data(), back));
    expect_same(back, p);
    EXPECT_EQ(encode(back), b);

    const Compressed c = compress(p);
    EXPECT_EQ(c[0] & 0xc0, 0x80);
    for (std::size_t k = 1; k < c.size(); ++k) ASSERT_EQ(c[k], b[k]) << "x is the same bytes";
    back = G2Affine::infinity();
    ASSERT_FALSE(decode_g2_compressed(c.data(), back));
    expect_same(back, p);
    // The negation differs in the sign flag alone.
    Compressed flipped = compress(neg(p));
    EXPECT_EQ(flipped[0] ^ c[0], 0x20);
  }
}

TEST(G2Encoding, SignComparesC1ThenC0) {
  // The encoder does not check the point, so y can be chosen freely.
  const Fq small = Fq::from_u64(1), large = Fq::from_u64(1).neg();
  const Fq2 x = G2Affine::generator().x;
  EXPECT_EQ(compress(G2Affine{x, Fq2{large, small}})[0] & 0x20, 0);
  EXPECT_EQ(compress(G2Affine{x, Fq2{small, large}})[0] & 0x20, 0x20);
  EXPECT_EQ(compress(G2Affine{x, Fq2{large, Fq::zero()}})[0] & 0x20, 0x20);
  EXPECT_EQ(compress(G2Affine{x, Fq2{small, Fq::zero()}})[0] & 0x20, 0);
  // (q - 1) / 2 is the smaller of itself and its negation (q + 1) / 2.
  const Fq half = Fq::from_u64(2).inverse().neg();  // -1/2 = (q - 1) / 2
  EXPECT_EQ(half + half, Fq::one().neg());
  EXPECT_EQ(compress(G2Affine{x, Fq2{Fq::zero(), half}})[0] & 0x20, 0);
  EXPECT_EQ(compress(G2Affine{x, Fq2{Fq::zero(), half + Fq::one()}})[0] & 0x20, 0x20);
}

TEST(G2Encoding, InfinityIsFlagsAndZeros) {
  const Bytes b = encode(G2Affine::infinity());
  EXPECT_EQ(b[0], 0x40);
  for (std::size_t i = 1; i < b.size(); ++i) EXPECT_EQ(b[i], 0) << "byte " << i;
  const Compressed c = compress(G2Affine::infinity());
  EXPECT_EQ(c[0], 0xc0);
  for (std::size_t i = 1; i < c.size(); ++i) EXPECT_EQ(c[i], 0) << "byte " << i;
  G2Affine p = G2Affine::generator();
  ASSERT_FALSE(decode_g2(b.data(), p));
  EXPECT_TRUE(p.is_infinity());
  p = G2Affine::generator();
  ASSERT_FALSE(decode_g2_compressed(c.data(), p));
  EXPECT_TRUE(p.is_infinity());
  EXPECT_FALSE(check_g2(p));
}

TEST(G2Encoding, FlagErrorsAreNamed) {
  const Bytes good = encode(G2Affine::generator());
  Bytes b = good;
  b[0] |= 0x80;
  expect_refused(b, G2Error::compressed_flag, decode_full);
  b = good;
  b[0] |= 0x20;
  expect_refused(b, G2Error::sign_flag, decode_full);
  b = good;
  b[0] |= 0x40;
  expect_refused(b, G2Error::bad_infinity, decode_full);
  for (std::size_t stray : {std::size_t{0}, std::size_t{95}, std::size_t{191}}) {
    b = encode(G2Affine::infinity());
    b[stray] |= stray == 0 ? 0x20 : 0x01;
    expect_refused(b, G2Error::bad_infinity, decode_full);
  }

  const Compressed cgood = compress(G2Affine::generator());
  Compressed c = cgood;
  c[0] &= 0x7f;
  expect_refused(c, G2Error::not_compressed, decompress_full);
  c = compress(G2Affine::infinity());
  c[0] = 0x40;
  expect_refused(c, G2Error::not_compressed, decompress_full);
  c = compress(G2Affine::infinity());
  c[0] |= 0x20;
  expect_refused(c, G2Error::bad_infinity, decompress_full);
  c = compress(G2Affine::infinity());
  c[95] = 1;
  expect_refused(c, G2Error::bad_infinity, decompress_full);
  c = cgood;
  c[0] |= 0x40;
  expect_refused(c, G2Error::bad_infinity, decompress_full);
}

TEST(G2Encoding, EachCoordinateMustBeBelowQ) {
  const Bytes good = encode(G2Affine::generator());
  const G2Error errors[4] = {G2Error::x_c1_not_below_q, G2Error::x_c0_not_below_q,
                             G2Error::y_c1_not_below_q, G2Error::y_c0_not_below_q};
  for (int part = 0; part < 4; ++part)
    for (int delta : {1, 2}) {
      Bytes b = good;
      write_q_plus(b.data() + 48 * part, delta);
      expect_refused(b, errors[part], decode_full);
    }
  // A flag bit on y.c1's first byte is no flag: it makes y.c1 >= q.
  Bytes b = good;
  b[96] |= 0x80;
  expect_refused(b, G2Error::y_c1_not_below_q, decode_full);
  // q - 1 is in range (and then off the curve).
  b = good;
  write_q_plus(b.data() + 48, 0);
  expect_refused(b, G2Error::not_on_curve, decode_full);

  const Compressed cgood = compress(G2Affine::generator());
  for (int part = 0; part < 2; ++part) {
    Compressed c = cgood;
    write_q_plus(c.data() + 48 * part, 1);
    c[0] |= 0x80;
    expect_refused(c, errors[part], decompress_full);
  }
}

TEST(G2Encoding, PointsOffTheCurveAreRefused) {
  Bytes b = encode(G2Affine::generator());
  b[191] ^= 1;
  expect_refused(b, G2Error::not_on_curve, decode_full);
  // (0, 0) without the infinity flag is a point off E', not infinity.
  const Bytes zeros{};
  expect_refused(zeros, G2Error::not_on_curve, decode_full);

  const Fq2 x = x_without_point();
  Compressed c = compress(G2Affine{x, Fq2::one()});
  expect_refused(c, G2Error::x_not_on_curve, decompress_full);
}

TEST(G2Encoding, PointsOutsideG2AreRefusedUnlessSkipped) {
  std::mt19937_64 rng(62);
  const G2Affine p = test::random_e2_point(rng);
  const Bytes b = encode(p);
  expect_refused(b, G2Error::not_in_subgroup, decode_full);
  G2Affine back;
  ASSERT_FALSE(decode_g2(b.data(), back, SubgroupCheck::skip));
  expect_same(back, p);
  EXPECT_EQ(check_g2(back), G2Error::not_in_subgroup);

  const Compressed c = compress(p);
  expect_refused(c, G2Error::not_in_subgroup, decompress_full);
  back = G2Affine::infinity();
  ASSERT_FALSE(decode_g2_compressed(c.data(), back, SubgroupCheck::skip));
  expect_same(back, p);

  // skip never skips the curve check.
  Bytes off = encode(G2Affine::generator());
  off[191] ^= 1;
  EXPECT_EQ(decode_g2(off.data(), back, SubgroupCheck::skip), G2Error::not_on_curve);
}

TEST(G2Encoding, MessagesNameTheProblem) {
  EXPECT_STREQ(g2_category().name(), "g2 point");
  EXPECT_NE(make_error_code(G2Error::y_c0_not_below_q).message().find("y.c0"), std::string::npos);
  EXPECT_NE(make_error_code(G2Error::not_in_subgroup).message().find("G2"), std::string::npos);
  EXPECT_NE(make_error_code(G2Error::x_not_on_curve).message().find("not a square"),
            std::string::npos);
  const std::error_code ec = G2Error::sign_flag;
  EXPECT_EQ(&ec.category(), &g2_category());
}

}  // namespace
}  // namespace stoker::kernels

namespace stoker::kernels {
namespace {

// The forms a key's load reads: canonical coordinates that the CPU (or a
// GPU, kernels/fq_montgomery.hpp) converts give decode_g2's point; the
// curve is left to the load's checks, the flags and ranges are not.
TEST(G2Encoding, CanonicalAndCoordinatesFormsGiveTheSamePointOnceConverted) {
  std::mt19937_64 rng(67);
  for (int i = 0; i < 8; ++i) {
    const G2Affine p = i == 0 ? G2Affine::infinity() : test::random_g2(rng);
    Bytes b{};
    encode_g2(p, b.data());
    G2Affine full, coords, canonical;
    ASSERT_FALSE(decode_g2(b.data(), full));
    ASSERT_FALSE(decode_g2_coordinates(b.data(), coords));
    ASSERT_FALSE(decode_g2_canonical(b.data(), canonical));
    Fq* e = &canonical.x.c0;
    static_assert(sizeof(G2Affine) == 4 * sizeof(Fq));
    cpu::fq_to_montgomery(e, 4, 1);
    for (const G2Affine* q : {&coords, &canonical}) {
      EXPECT_TRUE(q->x == full.x && q->y == full.y) << i;
    }
  }
  // Off the curve: the coordinates forms take it, decode_g2 does not.
  G2Affine p = test::random_g2(rng);
  p.y.c0 = p.y.c0 + Fq::one();
  Bytes b{};
  encode_g2(p, b.data());
  G2Affine out;
  EXPECT_EQ(decode_g2(b.data(), out), make_error_code(G2Error::not_on_curve));
  EXPECT_FALSE(decode_g2_coordinates(b.data(), out));
  EXPECT_FALSE(decode_g2_canonical(b.data(), out));
  // (0, 0) without the infinity flag, and a coordinate not below q: refused.
  Bytes zero{};
  EXPECT_EQ(decode_g2_canonical(zero.data(), out), make_error_code(G2Error::not_on_curve));
  Bytes big{};
  for (std::size_t k = 96; k < 144; ++k) big[k] = 0xff;
  EXPECT_EQ(decode_g2_canonical(big.data(), out), make_error_code(G2Error::y_c1_not_below_q));
}

}  // namespace
}  // namespace stoker::kernels
