// FrSumOfProducts (kernels/detail/fr_sum_of_products.hpp) gives the sum that
// Fr's own products and additions give: on edge values, random vectors and
// runs long enough that the total passes 2^512 into the carry word; its ADX
// path leaves the same words as the portable one.
#include "kernels/detail/fr_sum_of_products.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "test/kernels/fr_test_util.hpp"

namespace stoker::kernels::detail {
namespace {

Fr r_minus_1() {
  return Fr{{fr_detail::kP0 - 1, fr_detail::kP1, fr_detail::kP2, fr_detail::kP3}};
}

TEST(FrSumOfProducts, EmptySumIsZero) {
  EXPECT_EQ(FrSumOfProducts{}.value(), Fr::zero());
}

TEST(FrSumOfProducts, OneProductEqualsFrProductOnEdgeValues) {
  const auto edges = test::fr_edge_values();
  for (const Fr& a : edges)
    for (const Fr& b : edges) {
      FrSumOfProducts s;
      s.add_product(a, b);
      ASSERT_EQ(s.value(), a * b) << test::fr_to_hex(a) << " * " << test::fr_to_hex(b);
    }
  for (const Fr& x : edges) {
    FrSumOfProducts s;
    s.add(x);
    ASSERT_EQ(s.value(), x) << test::fr_to_hex(x);
  }
}

TEST(FrSumOfProducts, SumOverEdgeValuesEqualsFrSum) {
  const auto edges = test::fr_edge_values();
  FrSumOfProducts s;
  Fr expected = Fr::zero();
  for (const Fr& a : edges)
    for (const Fr& b : edges) {
      s.add_product(a, b);
      s.add(b);
      expected += a * b + b;
    }
  EXPECT_EQ(s.value(), expected);
}

TEST(FrSumOfProducts, InnerProductOfRandomVectorsEqualsFrSum) {
  for (std::size_t n : {1u, 2u, 7u, 1000u, 65537u}) {
    const auto a = test::random_vector(n, 20261210 + n), b = test::random_vector(n, 20261211 + n),
               x = test::random_vector(n, 20261212 + n);
    FrSumOfProducts s;
    Fr expected = Fr::zero();
    for (std::size_t i = 0; i < n; ++i) {
      s.add_product(a[i], b[i]);
      s.add(x[i]);
      expected += a[i] * b[i] + x[i];
    }
    EXPECT_EQ(s.value(), expected) << n << " terms";
  }
}

// (r-1)^2 is above 2^509: six such products pass 2^512, a million put
// about 2^18 into the ninth word; the same for (r-1) 2^256 through add.
TEST(FrSumOfProducts, LongRunsOfLargestTermsCarryIntoTheNinthWordExactly) {
  const Fr big = r_minus_1();
  for (std::size_t n : {5u, 6u, 7u, 1000u, 1000000u}) {
    FrSumOfProducts products, sums;
    Fr expected_products = Fr::zero(), expected_sums = Fr::zero();
    for (std::size_t i = 0; i < n; ++i) {
      products.add_product(big, big);
      sums.add(big);
      expected_products += big * big;
      expected_sums += big;
    }
    EXPECT_EQ(products.value(), expected_products) << n << " products";
    EXPECT_EQ(sums.value(), expected_sums) << n << " additions";
    if (n >= 6) {
      EXPECT_GT(products.words()[8], 0u) << n << " products stay below 2^512";
      EXPECT_GT(sums.words()[8], 0u) << n << " additions stay below 2^512";
    }
  }
}

#if defined(STOKER_FR_MUL_ADX)

TEST(FrSumOfProductsAdx, LeavesThePortableWordsOnEdgeValues) {
  if (!cpu_has_adx()) GTEST_SKIP() << "this CPU lacks BMI2 or ADX";
  const auto edges = test::fr_edge_values();
  FrSumOfProducts adx, portable;
  for (const Fr& a : edges)
    for (const Fr& b : edges) {
      adx.add_product_adx(a, b);
      portable.add_product(a, b);
      adx.add_adx(a);
      portable.add(a);
      for (int k = 0; k < FrSumOfProducts::kWords; ++k)
        ASSERT_EQ(adx.words()[k], portable.words()[k])
            << "word " << k << " after " << test::fr_to_hex(a) << " * " << test::fr_to_hex(b);
    }
  EXPECT_EQ(adx.value(), portable.value());
}

TEST(FrSumOfProductsAdx, EqualsFrSumOnRandomVectorsAndLongRuns) {
  if (!cpu_has_adx()) GTEST_SKIP() << "this CPU lacks BMI2 or ADX";
  const std::size_t n = 200000;
  const auto a = test::random_vector(n, 20261213), b = test::random_vector(n, 20261214);
  FrSumOfProducts s;
  Fr expected = Fr::zero();
  for (std::size_t i = 0; i < n; ++i) {
    s.add_product_adx(a[i], b[i]);
    s.add_adx(b[i]);
    expected += a[i] * b[i] + b[i];
  }
  EXPECT_EQ(s.value(), expected);
  EXPECT_GT(s.words()[8], 0u);

  const Fr big = r_minus_1();
  FrSumOfProducts run;
  Fr expected_run = Fr::zero();
  for (int i = 0; i < 1000000; ++i) {
    run.add_product_adx(big, big);
    run.add_adx(big);
    expected_run += big * big + big;
  }
  EXPECT_EQ(run.value(), expected_run);
}

#endif

}  // namespace
}  // namespace stoker::kernels::detail
