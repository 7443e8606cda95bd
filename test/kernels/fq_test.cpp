// Fq: known values (computed independently with Python integers), field
// identities on random elements, and the device instruction sequences
// (Montgomery product, addition, subtraction) run on the host with an
// emulated carry flag against the host arithmetic.
#include "kernels/fq.cuh"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <random>
#include <vector>

#include "emulated_carry.hpp"
#include "g1_test_util.hpp"
#include "kernels/detail/mont_even_odd.cuh"

namespace stoker::kernels {
namespace {

using test::fq_from_hex;
using test::fq_to_hex;
using test::random_fq;

const char* kA =
    "0x15e482d0e538a5bbacb8c3b3d0bdf8b7114dcd646cabe792bba460cd09b34f2e3a2359b3561109e6900cbda6084"
    "74a10";
const char* kB =
    "0x17f1d3a73197d7942695638c4fa9ac0fc3688c4f9774b905a14e3a3f171bac586c55e83ff97a1aeffb3af00adb22"
    "c6bb";
const char* kQMinus1 =
    "0x1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffff"
    "aaaa";

TEST(Fq, ArithmeticMatchesKnownValues) {
  const Fq a = fq_from_hex(kA), b = fq_from_hex(kB);
  EXPECT_EQ(fq_to_hex(a), kA);
  EXPECT_EQ(fq_to_hex(b), kB);
  EXPECT_EQ(
      fq_to_hex(a * b),
      "0x0a7f5f5ff6afe50f56b71efdd5c6968e775429c61f1e1bddb86accc181b897f5836012fa1f73e68c57fa5e"
      "0cedd638a2");
  EXPECT_EQ(
      fq_to_hex(a + b),
      "0x13d5448ddd5096b588327f89dd1bf7ef703f0e2f109b8dd8f5c1c86b2a1e056287cd41f49e3724d6d148ad"
      "b0e36a6620");
  EXPECT_EQ(
      fq_to_hex(a - b),
      "0x17f3c113ed20b4c1d13f07ddc45ff97eb25c8c99c8bc414c8186f92ee94898f9ec7971720deaeef64ed0cd"
      "9b2d242e00");
  EXPECT_EQ(
      fq_to_hex(b - a),
      "0x020d50d64c5f31d879dc9fd87eebb358b21abeeb2ac8d172e5a9d9720d685d2a32328e8ca36911096b2e32"
      "64d2db7cab");
  EXPECT_EQ(
      fq_to_hex(a.inverse()),
      "0x0877f9789c8aa4dc44e78965682824c31e9d7c4617a8a00d4f6a43e28e3ace75d3f8197c6e53f81ee08c90"
      "9780d935bf");
}

TEST(Fq, CanonicalFormRoundTripsAndIsUnique) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 1000; ++i) {
    std::uint64_t v[6] = {rng(), rng(), rng(), rng(), rng(), rng() & 0x0fffffffffffffffull};
    ASSERT_TRUE(Fq::is_canonical(v));
    std::uint64_t w[6];
    Fq::from_canonical(v).to_canonical(w);
    for (int j = 0; j < 6; ++j) ASSERT_EQ(v[j], w[j]);
  }
  const std::uint64_t q[6] = {fq_detail::kQ0, fq_detail::kQ1, fq_detail::kQ2,
                              fq_detail::kQ3, fq_detail::kQ4, fq_detail::kQ5};
  EXPECT_FALSE(Fq::is_canonical(q));
  const std::uint64_t q_minus_1[6] = {fq_detail::kQ0 - 1, fq_detail::kQ1, fq_detail::kQ2,
                                      fq_detail::kQ3,     fq_detail::kQ4, fq_detail::kQ5};
  EXPECT_TRUE(Fq::is_canonical(q_minus_1));
  EXPECT_EQ(Fq::from_canonical(q_minus_1) + Fq::one(), Fq::zero());
  EXPECT_EQ(fq_to_hex(-Fq::one()), kQMinus1);
  EXPECT_EQ(Fq::zero().neg(), Fq::zero());
  EXPECT_EQ(Fq::from_u64(0), Fq::zero());
  EXPECT_EQ(Fq::from_u64(1), Fq::one());
  // Zero is all-zero words, so zeroed memory holds zeros.
  const Fq zeroed{};
  EXPECT_TRUE(zeroed.is_zero());
}

TEST(Fq, FieldIdentitiesHoldOnRandomElements) {
  std::mt19937_64 rng(12);
  for (int i = 0; i < 2000; ++i) {
    const Fq a = random_fq(rng), b = random_fq(rng), c = random_fq(rng);
    ASSERT_EQ(a * b, b * a);
    ASSERT_EQ((a + b) * c, a * c + b * c);
    ASSERT_EQ((a * b) * c, a * (b * c));
    ASSERT_EQ(a + b - b, a);
    ASSERT_EQ(a - b + b, a);
    ASSERT_EQ(a + a.neg(), Fq::zero());
    ASSERT_EQ(a.dbl(), a + a);
    ASSERT_EQ(a.sqr(), a * a);
    ASSERT_EQ(a * Fq::one(), a);
  }
  EXPECT_EQ(Fq::from_u64(6) * Fq::from_u64(7), Fq::from_u64(42));
  EXPECT_EQ(Fq::from_u64(5) - Fq::from_u64(7), -Fq::from_u64(2));
}

TEST(Fq, InverseIsExactAndZeroMapsToZero) {
  std::mt19937_64 rng(13);
  for (int i = 0; i < 32; ++i) {
    const Fq a = random_fq(rng);
    if (a.is_zero()) continue;
    EXPECT_EQ(a * a.inverse(), Fq::one());
  }
  EXPECT_EQ(Fq::zero().inverse(), Fq::zero());
  EXPECT_EQ(Fq::one().inverse(), Fq::one());
  EXPECT_EQ((-Fq::one()).inverse(), -Fq::one());
}

// The sliding window gives pow's result for any exponent: zero, one, a
// single bit at each end, runs of zeros longer and shorter than its
// window, every bit set, random words; and for zero and one as bases.
TEST(Fq, SlidingWindowPowerEqualsBitByBit) {
  std::mt19937_64 rng(17);
  std::vector<std::array<std::uint64_t, 6>> exponents = {
      {0, 0, 0, 0, 0, 0},
      {1, 0, 0, 0, 0, 0},
      {0, 0, 0, 0, 0, std::uint64_t{1} << 63},
      {0x8000000000000001ull, 0, 0, 0, 0, 0},
      {0x1111111111111111ull, 0x8421084210842108ull, 0x1000000000000001ull, 0, 0xfull, 0x13},
      {~0ull, ~0ull, ~0ull, ~0ull, ~0ull, ~0ull},
      {0xdull, 0, 0, 0, 0, 0}};
  for (int i = 0; i < 20; ++i) {
    std::array<std::uint64_t, 6> e;
    for (auto& w : e) w = rng() & rng();  // sparser bits: more windows cut short
    exponents.push_back(e);
  }
  for (const Fq& x : {random_fq(rng), random_fq(rng), Fq::zero(), Fq::one(), -Fq::one()})
    for (const auto& e : exponents)
      for (int words : {1, 3, 6})
        ASSERT_EQ(x.pow_sliding(e.data(), words), x.pow(e.data(), words))
            << fq_to_hex(x) << " words " << words << " low word " << e[0];
}

TEST(Fq, SqrtFindsRootsOfSquaresAndRefusesNonSquares) {
  std::mt19937_64 rng(14);
  int refused = 0;
  for (int i = 0; i < 32; ++i) {
    const Fq a = random_fq(rng);
    Fq s;
    ASSERT_TRUE(a.sqr().sqrt(s));
    EXPECT_TRUE(s == a || s == -a);
    if (!a.sqrt(s)) ++refused;
  }
  EXPECT_GT(refused, 0);  // about half of random elements are not squares
  Fq s;
  EXPECT_FALSE((-Fq::one()).sqrt(s));  // q = 3 mod 4: -1 is not a square
}

// ---- the device instruction sequences on the host --------------------------

void words(const Fq& a, std::uint32_t w[12]) {
  a.to_words(w);
}

const std::uint32_t* mod_words() {
  static std::uint32_t m[12];
  Fq{{fq_detail::kQ0, fq_detail::kQ1, fq_detail::kQ2, fq_detail::kQ3, fq_detail::kQ4,
      fq_detail::kQ5}}
      .to_words(m);
  return m;
}

Fq emulated_mul(const Fq& a, const Fq& b, int* lost) {
  std::uint32_t x[12], y[12], z[12];
  words(a, x);
  words(b, y);
  test::EmulatedCarry cc;
  detail::mont_mul_even_odd<12>(cc, z, x, y, mod_words(), fq_detail::kInv32);
  *lost += cc.lost_carries;
  return Fq::from_words(z);
}
Fq emulated_add(const Fq& a, const Fq& b) {
  std::uint32_t x[12], y[12], z[12];
  words(a, x);
  words(b, y);
  test::EmulatedCarry cc;
  detail::add_mod_words<12>(cc, z, x, y, mod_words());
  return Fq::from_words(z);
}
Fq emulated_sub(const Fq& a, const Fq& b) {
  std::uint32_t x[12], y[12], z[12];
  words(a, x);
  words(b, y);
  test::EmulatedCarry cc;
  detail::sub_mod_words<12>(cc, z, x, y, mod_words());
  return Fq::from_words(z);
}

// Montgomery-form words (not field values) at the edges of the range.
std::vector<Fq> edge_values() {
  using namespace fq_detail;
  return {Fq::zero(),
          Fq::one(),
          Fq{{1, 0, 0, 0, 0, 0}},
          Fq{{kQ0 - 1, kQ1, kQ2, kQ3, kQ4, kQ5}},
          Fq{{kQ0 - 2, kQ1, kQ2, kQ3, kQ4, kQ5}},
          Fq{{~0ull, ~0ull, ~0ull, ~0ull, ~0ull, 0}},
          Fq{{0, 0, 0, 0, 0, 1}},
          Fq{{0xffffffffull, 0, 0xffffffff00000000ull, 0, ~0ull, kQ5 - 1}},
          -Fq::one(),
          Fq::from_u64(2).inverse()};
}

TEST(FqDevice, EdgeValuesEqualHostArithmetic) {
  int lost = 0;
  for (const Fq& a : edge_values())
    for (const Fq& b : edge_values()) {
      ASSERT_EQ(emulated_mul(a, b, &lost), a * b) << fq_to_hex(a) << " * " << fq_to_hex(b);
      ASSERT_EQ(emulated_add(a, b), a + b) << fq_to_hex(a) << " + " << fq_to_hex(b);
      ASSERT_EQ(emulated_sub(a, b), a - b) << fq_to_hex(a) << " - " << fq_to_hex(b);
    }
  EXPECT_EQ(lost, 0) << "a carry the algorithm proves impossible happened";
}

TEST(FqDevice, RandomPairsEqualHostArithmetic) {
  std::mt19937_64 rng(15);
  int lost = 0;
  for (int i = 0; i < 50000; ++i) {
    const Fq a = random_fq(rng), b = random_fq(rng);
    ASSERT_EQ(emulated_mul(a, b, &lost), a * b) << "pair " << i;
    ASSERT_EQ(emulated_add(a, b), a + b) << "pair " << i;
    ASSERT_EQ(emulated_sub(a, b), a - b) << "pair " << i;
  }
  EXPECT_EQ(lost, 0);
}

TEST(FqDevice, SquareChainsEqualHostProduct) {
  std::mt19937_64 rng(16);
  int lost = 0;
  Fq x = random_fq(rng), y = x;
  for (int i = 0; i < 5000; ++i) {
    x = emulated_mul(x, x, &lost);
    y = y.sqr();
    ASSERT_EQ(x, y) << "step " << i;
  }
  EXPECT_EQ(lost, 0);
}

// ---- the CPU's ADX product ----------------------------------------------------

// Fq's host product goes through fq_mul_adx on CPUs with BMI2 and ADX; it
// must give the portable product's words for every pair of reduced
// operands: the edges, random pairs, squares, and a result written over an
// operand.
TEST(FqAdx, EqualsThePortableProduct) {
#if defined(STOKER_FQ_MUL_ADX)
  if (!detail::cpu_has_adx()) GTEST_SKIP() << "this CPU has no ADX";
  auto adx = [](const Fq& a, const Fq& b) {
    Fq r;
    detail::fq_mul_adx(r.l, a.l, b.l);
    return r;
  };
  for (const Fq& a : edge_values())
    for (const Fq& b : edge_values())
      ASSERT_EQ(adx(a, b), Fq::mul_portable_host(a, b)) << fq_to_hex(a) << " * " << fq_to_hex(b);
  std::mt19937_64 rng(17);
  for (int i = 0; i < 200000; ++i) {
    const Fq a = random_fq(rng), b = random_fq(rng);
    ASSERT_EQ(adx(a, b), Fq::mul_portable_host(a, b)) << "pair " << i;
    ASSERT_EQ(adx(a, a), Fq::mul_portable_host(a, a)) << "square " << i;
  }
  Fq x = random_fq(rng), y = x;
  for (int i = 0; i < 1000; ++i) {
    detail::fq_mul_adx(x.l, x.l, x.l);
    y = Fq::mul_portable_host(y, y);
    ASSERT_EQ(x, y) << "in place, step " << i;
  }
  EXPECT_TRUE(detail::kFqMulAdx) << "the host product does not use it";
#else
  GTEST_SKIP() << "no ADX product in this build (not x86-64, or not optimized)";
#endif
}

}  // namespace
}  // namespace stoker::kernels
