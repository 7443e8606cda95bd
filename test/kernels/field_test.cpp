#include "kernels/field.cuh"

#include <gtest/gtest.h>

#include <random>

#include "fr_test_util.hpp"

namespace stoker::kernels {
namespace {

using test::fr_from_hex;
using test::fr_to_hex;
using test::random_fr;

const char* kA = "0x1234567890abcdef0fedcba987654321deadbeefcafebabe0123456789abcdef";
const char* kB = "0x6a09e667f3bcc908bb67ae8584caa73b3c6ef372fe94f82ba54ff53a5f1d36f1";

TEST(Fr, ArithmeticMatchesKnownValues) {
  const Fr a = fr_from_hex(kA), b = fr_from_hex(kB);
  EXPECT_EQ(fr_to_hex(a), kA);
  EXPECT_EQ(fr_to_hex(a * b), "0x52105827acda392d21b1f729ed40acab4c275b6219fe09081b74441ace920609");
  EXPECT_EQ(fr_to_hex(a + b), "0x0850958d5acb19af981ba227028e1257c75f0e5fc99556eaa6733aa2e8c904df");
  EXPECT_EQ(fr_to_hex(a - b), "0x1c181763c68c822e87bff52c0c3c73ebf5fc6f7fcc681e915bd3502c2a8e96ff");
  EXPECT_EQ(fr_to_hex(b - a), "0x57d58fef6310fb19ab79e2dbfd6564195dc1348333963d6da42cafd2d5716902");
  EXPECT_EQ(fr_to_hex(a.inverse()),
            "0x5a5a9a761e91a63725392ab9d571f72c7fc6f96b36617d26d27afd04b95466c2");
  EXPECT_EQ(fr_to_hex(a.pow(0xdeadbeefcafeull)),
            "0x3f32155f917a5ac4ae57e67c2aa92359c62e072677e73f9257407e18cad8a781");
  EXPECT_EQ(a.square(), a * a);
}

TEST(Fr, RootOfUnityFor2To32MatchesIssue) {
  const Fr w = Fr::root_of_unity(32);
  EXPECT_EQ(fr_to_hex(w), "0x16a2a19edfe81f20d09b681922c813b4b63683508c2280b93829971f439f0d2b");
  // g^((r-1)/2^32) by the 256-bit exponent directly.
  const std::uint64_t e[4] = {0xfffe5bfeffffffffull, 0x09a1d80553bda402ull, 0x299d7d483339d808ull,
                              0x0000000073eda753ull};
  EXPECT_EQ(Fr::generator().pow(e), w);
  Fr x = w;
  for (int i = 0; i < 31; ++i) x = x.square();
  EXPECT_NE(x, Fr::one());  // w has order exactly 2^32
  EXPECT_EQ(x.square(), Fr::one());
  EXPECT_EQ(Fr::root_of_unity(1), -Fr::one());
  EXPECT_EQ(Fr::root_of_unity(20).pow(std::uint64_t{1} << 20), Fr::one());
}

TEST(Fr, InverseOfRandomElementsIsExact) {
  std::mt19937_64 rng(1);
  for (int i = 0; i < 64; ++i) {
    const Fr x = random_fr(rng);
    if (x.is_zero()) continue;
    EXPECT_EQ(x * x.inverse(), Fr::one());
  }
  EXPECT_EQ(Fr::zero().inverse(), Fr::zero());
  EXPECT_EQ(Fr::one().inverse(), Fr::one());
}

TEST(Fr, PowAgreesWithRepeatedMultiplicationAndFermat) {
  std::mt19937_64 rng(2);
  const Fr x = random_fr(rng);
  Fr acc = Fr::one();
  for (std::uint64_t e = 0; e < 40; ++e) {
    EXPECT_EQ(x.pow(e), acc);
    acc *= x;
  }
  const std::uint64_t r_minus_1[4] = {0xffffffff00000000ull, 0x53bda402fffe5bfeull,
                                      0x3339d80809a1d805ull, 0x73eda753299d7d48ull};
  EXPECT_EQ(x.pow(r_minus_1), Fr::one());
}

TEST(Fr, FieldLawsHoldOnRandomElements) {
  std::mt19937_64 rng(3);
  for (int i = 0; i < 200; ++i) {
    const Fr a = random_fr(rng), b = random_fr(rng), c = random_fr(rng);
    EXPECT_EQ((a + b) * c, a * c + b * c);
    EXPECT_EQ(a - b + b, a);
    EXPECT_EQ(a * b, b * a);
    EXPECT_EQ(a + (-a), Fr::zero());
  }
}

TEST(Fr, BytesRoundTripAndRejectNonCanonical) {
  std::mt19937_64 rng(4);
  unsigned char buf[32];
  for (int i = 0; i < 32; ++i) {
    const Fr x = random_fr(rng);
    x.to_bytes(buf);
    Fr y;
    ASSERT_TRUE(Fr::from_bytes(buf, y));
    EXPECT_EQ(x, y);
  }
  // 5 as bytes is 05 00 .. 00.
  Fr::from_u64(5).to_bytes(buf);
  EXPECT_EQ(buf[0], 5);
  for (int i = 1; i < 32; ++i) EXPECT_EQ(buf[i], 0);
  // r itself and r + 1 are rejected; r - 1 is accepted.
  const unsigned char r_le[32] = {0x01, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xfe, 0x5b, 0xfe,
                                  0xff, 0x02, 0xa4, 0xbd, 0x53, 0x05, 0xd8, 0xa1, 0x09, 0x08, 0xd8,
                                  0x39, 0x33, 0x48, 0x7d, 0x9d, 0x29, 0x53, 0xa7, 0xed, 0x73};
  unsigned char v[32];
  std::copy(r_le, r_le + 32, v);
  Fr out = Fr::one();
  EXPECT_FALSE(Fr::from_bytes(v, out));
  v[0] = 2;
  EXPECT_FALSE(Fr::from_bytes(v, out));
  EXPECT_EQ(out, Fr::one());  // untouched on failure
  v[0] = 0;
  ASSERT_TRUE(Fr::from_bytes(v, out));
  EXPECT_EQ(out, -Fr::one());
}

}  // namespace
}  // namespace stoker::kernels
