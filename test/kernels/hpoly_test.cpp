// The CPU H polynomial against the divisibility identity it exists for.
#include "kernels/hpoly.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "fr_test_util.hpp"
#include "kernels/ntt.hpp"

namespace stoker::kernels {
namespace {

using test::random_fr;
using test::random_vector;

Fr horner(const std::vector<Fr>& coeffs, const Fr& x) {
  Fr acc = Fr::zero();
  for (std::size_t j = coeffs.size(); j-- > 0;) acc = acc * x + coeffs[j];
  return acc;
}

TEST(HpolyCpu, QuotientSatisfiesDivisibilityIdentity) {
  std::mt19937_64 rng(5);
  for (unsigned log_n : {1u, 3u, 10u, 16u}) {
    const std::size_t n = std::size_t{1} << log_n;
    const auto a = random_vector(n, 10 + log_n), b = random_vector(n, 20 + log_n);
    std::vector<Fr> c(n), h(n);
    for (std::size_t i = 0; i < n; ++i) c[i] = a[i] * b[i];
    cpu::hpoly(h.data(), a.data(), b.data(), c.data(), log_n);

    std::vector<Fr> A(n), B(n), C(n);
    cpu::intt(A.data(), a.data(), log_n);
    cpu::intt(B.data(), b.data(), log_n);
    cpu::intt(C.data(), c.data(), log_n);
    const Fr x = random_fr(rng);
    const Fr lhs = horner(h, x) * (x.pow(std::uint64_t{n}) - Fr::one());
    EXPECT_EQ(lhs, horner(A, x) * horner(B, x) - horner(C, x)) << "log_n " << log_n;
    // deg(AB - C) <= 2n - 2, so deg h <= n - 2.
    EXPECT_EQ(h[n - 1], Fr::zero()) << "log_n " << log_n;
  }
}

TEST(HpolyCpu, NonDivisibleInputGivesNonZeroTopCoefficient) {
  // With c != a*b the identity is not expected; h still is what the
  // definition says, and for random input its top coefficient is not zero.
  const unsigned log_n = 8;
  const std::size_t n = 256;
  const auto a = random_vector(n, 1), b = random_vector(n, 2), c = random_vector(n, 3);
  std::vector<Fr> h(n);
  cpu::hpoly(h.data(), a.data(), b.data(), c.data(), log_n);
  EXPECT_NE(h[n - 1], Fr::zero());
}

TEST(HpolyCpu, ZInverseIsInverseOfVanishingOnCoset) {
  for (unsigned log_n : {1u, 10u, 24u}) {
    const Fr z = Fr::generator().pow(std::uint64_t{1} << log_n) - Fr::one();
    EXPECT_EQ(hpoly_z_inverse(log_n) * z, Fr::one());
  }
}

}  // namespace
}  // namespace stoker::kernels
