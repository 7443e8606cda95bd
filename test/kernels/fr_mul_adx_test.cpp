// The ADX Montgomery product (kernels/detail/fr_mul_adx.hpp) gives Fr's
// words: on edge values, random pairs and chains of squarings. Skips where
// the build has no ADX product or the CPU lacks BMI2 and ADX.
#include "kernels/detail/fr_mul_adx.hpp"

#include <gtest/gtest.h>

#include <random>

#include "test/kernels/fr_test_util.hpp"

namespace stoker::kernels::detail {
namespace {

#if defined(STOKER_FR_MUL_ADX)

TEST(FrMulAdx, EqualsFrProductOnEdgeValues) {
  if (!cpu_has_adx()) GTEST_SKIP() << "this CPU lacks BMI2 or ADX";
  const auto edges = test::fr_edge_values();
  for (const Fr& a : edges)
    for (const Fr& b : edges)
      ASSERT_EQ(fr_mul_adx(a, b), a * b) << test::fr_to_hex(a) << " * " << test::fr_to_hex(b);
}

TEST(FrMulAdx, EqualsFrProductOnRandomPairs) {
  if (!cpu_has_adx()) GTEST_SKIP() << "this CPU lacks BMI2 or ADX";
  std::mt19937_64 rng(20261201);
  for (int i = 0; i < 200000; ++i) {
    const Fr a = test::random_fr(rng), b = test::random_fr(rng);
    ASSERT_EQ(fr_mul_adx(a, b), a * b) << "pair " << i;
  }
  // Chains: each product is the next operand.
  Fr x = test::random_fr(rng), y = x;
  for (int i = 0; i < 20000; ++i) {
    x = fr_mul_adx(x, x);
    y = y * y;
    ASSERT_EQ(x, y) << "step " << i;
  }
}

// The producer reduces its draws (below 2r) with it: values below r stay,
// values in [r, 2r) lose r, as Fr::reduce_once_host does.
TEST(FrReduceOnceAsm, EqualsTheHostReduction) {
  std::mt19937_64 rng(20261203);
  for (int i = 0; i < 100000; ++i) {
    Fr v{{rng(), rng(), rng(), rng() >> 1}};  // < 2^255 < 2r
    Fr asm_v = v;
    fr_reduce_once_asm(asm_v);
    ASSERT_EQ(asm_v, Fr::reduce_once_host(v)) << "draw " << i;
  }
  for (const Fr& e : test::fr_edge_values()) {
    Fr asm_e = e;
    fr_reduce_once_asm(asm_e);
    ASSERT_EQ(asm_e, e) << test::fr_to_hex(e);
  }
}

#else

TEST(FrMulAdx, IsNotInThisBuild) {
  GTEST_SKIP() << "no ADX product in this build (x86-64 GCC/Clang optimizing builds only)";
}

#endif

}  // namespace
}  // namespace stoker::kernels::detail
