// The toy SRS: its secret's promises, its points against their definition
// (double-and-add of the generator by the scalar), slices that equal the
// whole, the MSM identity the ntt_msm_h workload relies on, and refusals.
#include "engine/workloads/toy_srs.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "kernels/msm.hpp"

namespace stoker::engine::workloads {
namespace {

using kernels::Fr;
using kernels::G1Affine;
using kernels::G1Xyzz;

G1Affine naive_mul(const Fr& s) {
  std::uint64_t k[4];
  s.to_canonical(k);
  return kernels::to_affine(kernels::scalar_mul(G1Affine::generator(), k));
}

bool same(const G1Affine& a, const G1Affine& b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

Fr random_fr(std::mt19937_64& rng) {
  for (;;) {
    std::uint64_t v[4] = {rng(), rng(), rng(), rng() & 0x7fffffffffffffffull};
    if (Fr::is_canonical(v)) return Fr::from_canonical(v);
  }
}

std::vector<G1Affine> toy(unsigned log_n, std::uint64_t seed, std::size_t first, std::size_t n,
                          unsigned threads = 0) {
  std::vector<G1Affine> out(n);
  const Error e = make_toy_srs(seed, log_n, first, out, -1, threads);
  EXPECT_FALSE(e) << e.what();
  return out;
}

TEST(ToySrs, SecretIsOffEveryDomainAndFollowsTheSeed) {
  for (std::uint64_t seed : {0ull, 1ull, 2ull, 0xffffffffffffffffull}) {
    const ToySrsSecret s = toy_srs_secret(seed);
    EXPECT_FALSE(s.tau.is_zero());
    EXPECT_FALSE(s.delta.is_zero());
    for (unsigned k = 0; k <= 32; ++k)
      EXPECT_NE(s.tau.pow(std::uint64_t{1} << k), Fr::one()) << "seed " << seed << " k " << k;
    const ToySrsSecret again = toy_srs_secret(seed);
    EXPECT_EQ(s.tau, again.tau);
    EXPECT_EQ(s.delta, again.delta);
  }
  EXPECT_NE(toy_srs_secret(1).tau, toy_srs_secret(2).tau);
  EXPECT_NE(toy_srs_secret(1).tau, toy_srs_secret(1).delta);
}

TEST(ToySrs, ScalarIsPowerOfTauTimesZOverDelta) {
  const ToySrsSecret s = toy_srs_secret(7);
  const unsigned log_n = 5;
  Fr z = Fr::one();
  for (int i = 0; i < 32; ++i) z *= s.tau;
  z -= Fr::one();
  Fr tau_i = Fr::one();
  for (std::size_t i = 0; i < toy_srs_points(log_n); ++i, tau_i *= s.tau)
    EXPECT_EQ(toy_srs_scalar(s, log_n, i) * s.delta, tau_i * z) << i;
}

TEST(ToySrs, PointIsGeneratorTimesItsScalar) {
  const unsigned log_n = 6;
  const auto pts = toy(log_n, 5, 0, toy_srs_points(log_n));
  ASSERT_EQ(pts.size(), 63u);
  const ToySrsSecret s = toy_srs_secret(5);
  for (std::size_t i : {0, 1, 2, 31, 62})
    EXPECT_TRUE(same(pts[i], naive_mul(toy_srs_scalar(s, log_n, i)))) << i;
}

TEST(ToySrsCpu, SliceEqualsThePartOfTheWhole) {
  const unsigned log_n = 10;
  const auto whole = toy(log_n, 9, 0, toy_srs_points(log_n), 1);
  const auto slice = toy(log_n, 9, 300, 500, 3);
  for (std::size_t i = 0; i < slice.size(); ++i) ASSERT_TRUE(same(slice[i], whole[300 + i])) << i;
  const auto tail = toy(log_n, 9, toy_srs_points(log_n) - 1, 1);
  EXPECT_TRUE(same(tail[0], whole.back()));
}

TEST(ToySrs, MsmOfCoefficientsIsTheirPolynomialAtTau) {
  // sum_i h_i H_i = [h(tau) Z(tau) / delta] G for h of degree <= n - 2.
  const unsigned log_n = 9;
  const std::size_t m = toy_srs_points(log_n);
  const auto pts = toy(log_n, 13, 0, m);
  std::mt19937_64 rng(17);
  std::vector<Fr> h(m);
  for (auto& c : h) c = random_fr(rng);
  const ToySrsSecret s = toy_srs_secret(13);
  Fr h_tau = Fr::zero();
  for (std::size_t i = m; i-- > 0;) h_tau = h_tau * s.tau + h[i];
  const Fr z = s.tau.pow(std::uint64_t{1} << log_n) - Fr::one();
  const G1Xyzz sum = kernels::cpu::msm(pts.data(), h.data(), m);
  EXPECT_TRUE(same(kernels::to_affine(sum), naive_mul(h_tau * z * s.delta.inverse())));
}

TEST(ToySrs, RefusesSizesAndRangesOutsideTheSrs) {
  std::vector<G1Affine> out(4);
  Error e = make_toy_srs(1, 0, 0, out);
  EXPECT_EQ(e.code, make_error_code(Errc::invalid_argument));
  EXPECT_NE(e.what().find("log_n 0"), std::string::npos) << e.what();
  e = make_toy_srs(1, 29, 0, out);
  EXPECT_NE(e.what().find("log_n 29"), std::string::npos) << e.what();
  e = make_toy_srs(1, 2, 0, out);  // 3 points
  EXPECT_EQ(e.code, make_error_code(Errc::invalid_argument));
  EXPECT_NE(e.what().find("has 3"), std::string::npos) << e.what();
  e = make_toy_srs(1, 3, 5, out);  // 7 points: 5..9 is past the end
  EXPECT_TRUE(e);
  EXPECT_FALSE(make_toy_srs(1, 3, 3, out));
  EXPECT_FALSE(make_toy_srs(1, 3, 7, std::span<G1Affine>{}));
}

}  // namespace
}  // namespace stoker::engine::workloads
