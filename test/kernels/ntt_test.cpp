// The CPU NTT family against the O(n^2) definitions and its own inverses.
#include "kernels/ntt.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "fr_test_util.hpp"

namespace stoker::kernels {
namespace {

using test::random_vector;

// The definitions in kernels/ntt.hpp, evaluated directly.
std::vector<Fr> naive(NttKind kind, const std::vector<Fr>& x, unsigned log_n) {
  const std::size_t n = x.size();
  const bool inverse = kind == NttKind::inverse || kind == NttKind::coset_inverse;
  const bool coset = kind == NttKind::coset_forward || kind == NttKind::coset_inverse;
  Fr w = Fr::root_of_unity(log_n);
  if (inverse) w = w.inverse();
  std::vector<Fr> y(n, Fr::zero());
  Fr wi = Fr::one();  // w^i
  for (std::size_t i = 0; i < n; ++i) {
    Fr p = Fr::one();  // w^(ij)
    for (std::size_t j = 0; j < n; ++j) {
      y[i] += x[j] * p;
      p *= wi;
    }
    wi *= w;
  }
  if (coset && !inverse) {
    // sum_j x_j (g w^i)^j: same as scaling x_j by g^j first; recompute that way.
    std::vector<Fr> xs(x);
    Fr gj = Fr::one();
    for (auto& v : xs) {
      v *= gj;
      gj *= Fr::generator();
    }
    return naive(NttKind::forward, xs, log_n);
  }
  if (inverse) {
    const Fr n_inv = Fr::from_u64(n).inverse();
    Fr s = n_inv, step = coset ? Fr::generator().inverse() : Fr::one();
    for (auto& v : y) {
      v *= s;
      s *= step;
    }
  }
  return y;
}

const NttKind kKinds[] = {NttKind::forward, NttKind::inverse, NttKind::coset_forward,
                          NttKind::coset_inverse};

TEST(NttCpu, MatchesNaiveDefinitionUpTo2To10) {
  for (unsigned log_n = 1; log_n <= 10; ++log_n) {
    const auto x = random_vector(std::size_t{1} << log_n, log_n);
    for (NttKind kind : kKinds) {
      std::vector<Fr> y(x.size());
      cpu::transform(kind, y.data(), x.data(), log_n);
      ASSERT_EQ(y, naive(kind, x, log_n)) << "log_n " << log_n << " kind " << int(kind);
    }
  }
}

TEST(NttCpu, CosetForwardEvaluatesOnTheShiftedDomain) {
  // coset_ntt(x)_i = X(g w^i) for the polynomial X with coefficients x.
  const unsigned log_n = 6;
  const auto x = random_vector(64, 7);
  std::vector<Fr> y(64);
  cpu::coset_ntt(y.data(), x.data(), log_n);
  const Fr w = Fr::root_of_unity(log_n);
  for (std::size_t i : {0u, 1u, 17u, 63u}) {
    const Fr pt = Fr::generator() * w.pow(i);
    Fr acc = Fr::zero();
    for (std::size_t j = 64; j-- > 0;) acc = acc * pt + x[j];
    EXPECT_EQ(y[i], acc) << i;
  }
}

TEST(NttCpu, InversesUndoForwardsUpTo2To20) {
  for (unsigned log_n : {1u, 2u, 7u, 12u, 16u, 20u}) {
    const auto x = random_vector(std::size_t{1} << log_n, 100 + log_n);
    std::vector<Fr> y(x);
    cpu::ntt(y.data(), y.data(), log_n);
    EXPECT_NE(y, x);
    cpu::intt(y.data(), y.data(), log_n);
    EXPECT_EQ(y, x) << "ntt/intt log_n " << log_n;
    cpu::coset_ntt(y.data(), y.data(), log_n);
    cpu::coset_intt(y.data(), y.data(), log_n);
    EXPECT_EQ(y, x) << "coset pair log_n " << log_n;
  }
}

TEST(NttCpu, BatchedAndOutOfPlaceEqualOneAtATime) {
  const unsigned log_n = 9;
  const std::size_t n = 512, batch = 3;
  const auto x = random_vector(n * batch, 9);
  for (NttKind kind : kKinds) {
    std::vector<Fr> batched(n * batch);
    cpu::transform(kind, batched.data(), x.data(), log_n, batch, 2);
    for (std::size_t v = 0; v < batch; ++v) {
      std::vector<Fr> one(x.begin() + v * n, x.begin() + (v + 1) * n);
      cpu::transform(kind, one.data(), one.data(), log_n, 1, 1);
      EXPECT_TRUE(std::equal(one.begin(), one.end(), batched.begin() + v * n)) << v;
    }
  }
  EXPECT_EQ(x, random_vector(n * batch, 9));  // out of place left the input alone
}

}  // namespace
}  // namespace stoker::kernels
