// The device Montgomery product's instruction sequence, run on the host with
// an emulated carry flag and compared with the host product (64-bit limbs,
// a different algorithm) on edge values and random pairs. A carry the
// algorithm assumes cannot happen is checked, not assumed.
#include "kernels/detail/mont32.cuh"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include "fr_test_util.hpp"
#include "kernels/field.cuh"

namespace stoker::kernels {
namespace {

// PTX semantics of each primitive, with the carry flag made explicit.
struct EmulatedCarry {
  bool flag = false;
  int lost_carries = 0;  // carries dropped by a no-carry-out instruction

  void mul_lo(std::uint32_t& d, std::uint32_t a, std::uint32_t b) {
    d = static_cast<std::uint32_t>(std::uint64_t{a} * b);
  }
  void mul_hi(std::uint32_t& d, std::uint32_t a, std::uint32_t b) {
    d = static_cast<std::uint32_t>((std::uint64_t{a} * b) >> 32);
  }
  void add_with(std::uint32_t& d, std::uint64_t addend, bool carry_in, bool keep) {
    const std::uint64_t s = std::uint64_t{d} + addend + (carry_in ? 1 : 0);
    d = static_cast<std::uint32_t>(s);
    if (keep)
      flag = (s >> 32) != 0;
    else if ((s >> 32) != 0)
      ++lost_carries;
  }
  static std::uint32_t lo(std::uint32_t a, std::uint32_t b) {
    return static_cast<std::uint32_t>(std::uint64_t{a} * b);
  }
  static std::uint32_t hi(std::uint32_t a, std::uint32_t b) {
    return static_cast<std::uint32_t>((std::uint64_t{a} * b) >> 32);
  }
  void mad_lo_cc(std::uint32_t& d, std::uint32_t a, std::uint32_t b) {
    add_with(d, lo(a, b), false, true);
  }
  void madc_lo_cc(std::uint32_t& d, std::uint32_t a, std::uint32_t b) {
    add_with(d, lo(a, b), flag, true);
  }
  void madc_hi_cc(std::uint32_t& d, std::uint32_t a, std::uint32_t b) {
    add_with(d, hi(a, b), flag, true);
  }
  void madc_hi(std::uint32_t& d, std::uint32_t a, std::uint32_t b) {
    add_with(d, hi(a, b), flag, false);
  }
  void add_cc(std::uint32_t& d, std::uint32_t a) { add_with(d, a, false, true); }
  void addc_cc(std::uint32_t& d, std::uint32_t a) { add_with(d, a, flag, true); }
  void addc_flag(std::uint32_t& d) { add_with(d, 0, flag, false); }
  void sub_with(std::uint32_t& d, std::uint32_t a, bool borrow_in, bool keep) {
    const std::uint64_t s = std::uint64_t{d} - a - (borrow_in ? 1 : 0);
    d = static_cast<std::uint32_t>(s);
    if (keep) flag = (s >> 63) != 0;
  }
  void sub_cc(std::uint32_t& d, std::uint32_t a) { sub_with(d, a, false, true); }
  void subc_cc(std::uint32_t& d, std::uint32_t a) { sub_with(d, a, flag, true); }
  void subc_flag(std::uint32_t& d) { sub_with(d, 0, flag, false); }
};

Fr emulated_mul(const Fr& a, const Fr& b, int* lost) {
  std::uint32_t x[8], y[8], z[8];
  for (int i = 0; i < 4; ++i) {
    x[2 * i] = static_cast<std::uint32_t>(a.l[i]);
    x[2 * i + 1] = static_cast<std::uint32_t>(a.l[i] >> 32);
    y[2 * i] = static_cast<std::uint32_t>(b.l[i]);
    y[2 * i + 1] = static_cast<std::uint32_t>(b.l[i] >> 32);
  }
  EmulatedCarry cc;
  fr_detail::mont_mul_8x32(cc, z, x, y);
  *lost += cc.lost_carries;
  Fr out;
  for (int i = 0; i < 4; ++i) out.l[i] = std::uint64_t{z[2 * i]} | (std::uint64_t{z[2 * i + 1]} << 32);
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
