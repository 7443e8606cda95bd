// The device Montgomery product's instruction sequence, run on the host with
// an emulated carry flag and compared with the host product (64-bit limbs,
// a different algorithm) on edge values and random pairs. A carry the
// algorithm assumes cannot happen is checked, not assumed.
#include "kernels/detail/mont32.cuh"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include "emulated_carry.hpp"
#include "fr_test_util.hpp"
#include "kernels/field.cuh"

namespace stoker::kernels {
namespace {

Fr emulated_mul(const Fr& a, const Fr& b, int* lost) {
  std::uint32_t x[8], y[8], z[8];
  for (int i = 0; i < 4; ++i) {
    x[2 * i] = static_cast<std::uint32_t>(a.l[i]);
    x[2 * i + 1] = static_cast<std::uint32_t>(a.l[i] >> 32);
    y[2 * i] = static_cast<std::uint32_t>(b.l[i]);
    y[2 * i + 1] = static_cast<std::uint32_t>(b.l[i] >> 32);
  }
  test::EmulatedCarry cc;
  fr_detail::mont_mul_8x32(cc, z, x, y);
  *lost += cc.lost_carries;
  Fr out;
  for (int i = 0; i < 4; ++i)
    out.l[i] = std::uint64_t{z[2 * i]} | (std::uint64_t{z[2 * i + 1]} << 32);
  return out;
}

// Montgomery-form words (not field values) at the edges of the range.
Fr raw(std::uint64_t l0, std::uint64_t l1, std::uint64_t l2, std::uint64_t l3) {
  return Fr{{l0, l1, l2, l3}};
}

TEST(Mont32, EdgeValuesEqualHostProduct) {
  const Fr r_minus_1 = raw(fr_detail::kP0 - 1, fr_detail::kP1, fr_detail::kP2, fr_detail::kP3);
  const Fr edges[] = {Fr::zero(),
                      Fr::one(),
                      raw(1, 0, 0, 0),
                      r_minus_1,
                      raw(fr_detail::kP0 - 2, fr_detail::kP1, fr_detail::kP2, fr_detail::kP3),
                      raw(~0ull, ~0ull, ~0ull, 0),
                      raw(0, 0, 0, 1),
                      raw(0xffffffffull, 0, 0xffffffff00000000ull, 0x7000000000000000ull),
                      -Fr::one()};
  int lost = 0;
  for (const Fr& a : edges)
    for (const Fr& b : edges) {
      ASSERT_EQ(emulated_mul(a, b, &lost), a * b)
          << test::fr_to_hex(a) << " * " << test::fr_to_hex(b);
    }
  EXPECT_EQ(lost, 0) << "a carry the algorithm proves impossible happened";
}

TEST(Mont32, RandomPairsEqualHostProduct) {
  std::mt19937_64 rng(20261130);
  int lost = 0;
  for (int i = 0; i < 200000; ++i) {
    const Fr a = test::random_fr(rng), b = test::random_fr(rng);
    ASSERT_EQ(emulated_mul(a, b, &lost), a * b) << "pair " << i;
  }
  EXPECT_EQ(lost, 0);
}

TEST(Mont32, SquaresAndChainsEqualHostProduct) {
  std::mt19937_64 rng(7);
  int lost = 0;
  Fr x = test::random_fr(rng), y = x;
  for (int i = 0; i < 20000; ++i) {
    x = emulated_mul(x, x, &lost);
    y = y * y;
    ASSERT_EQ(x, y) << "step " << i;
  }
  EXPECT_EQ(lost, 0);
}

}  // namespace
}  // namespace stoker::kernels
