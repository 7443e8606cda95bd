// Helpers shared by the CPU MSM suites of both groups: points whose discrete
// logarithms are known, so that an MSM of any size is checked by one scalar
// multiplication of the generator, affine forms with one inversion, and
// witness-like scalars.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "fr_test_util.hpp"
#include "kernels/field.cuh"
#include "kernels/g1.cuh"
#include "kernels/g2.cuh"

namespace stoker::kernels::test {

template <typename Affine>
using XyzzOf = decltype(to_xyzz(Affine{}));

// For suites typed over the group.
using Groups = ::testing::Types<G1Affine, G2Affine>;
struct GroupNames {
  template <typename T>
  static std::string GetName(int) {
    return std::is_same_v<T, G1Affine> ? "G1" : "G2";
  }
};

// Affine forms with one inversion for all (Montgomery's trick over the
// ZZZs: x = X (ZZ / ZZZ)^2, y = Y / ZZZ).
template <typename Xyzz>
auto to_affine_all(const std::vector<Xyzz>& xs) {
  using Affine = decltype(to_affine(Xyzz{}));
  using Field = decltype(Xyzz::zz);
  std::vector<Field> prefix(xs.size());
  Field acc = Field::one();
  for (std::size_t i = 0; i < xs.size(); ++i) {
    prefix[i] = acc;
    if (!xs[i].is_infinity()) acc = acc * xs[i].zzz;
  }
  Field inv = acc.inverse();
  std::vector<Affine> out(xs.size(), Affine::infinity());
  for (std::size_t i = xs.size(); i-- > 0;) {
    if (xs[i].is_infinity()) continue;
    const Field zzz_inv = inv * prefix[i];
    inv = inv * xs[i].zzz;
    const Field z_inv = xs[i].zz * zzz_inv;
    out[i] = Affine{xs[i].x * z_inv.sqr(), xs[i].y * zzz_inv};
  }
  return out;
}

template <typename Affine>
XyzzOf<Affine> mul(const Affine& p, const Fr& s) {
  std::uint64_t k[4];
  s.to_canonical(k);
  return scalar_mul(p, k);
}

// P_i = (a + i b) G for random a, b: distinct points of the group, one
// addition each, with logs[i] = a + i b.
template <typename Affine>
struct KnownLogPoints {
  std::vector<Affine> points;
  std::vector<Fr> logs;
};

template <typename Affine>
KnownLogPoints<Affine> known_log_points(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const Fr a = random_fr(rng), b = random_fr(rng);
  const Affine step = to_affine(mul(Affine::generator(), b));
  KnownLogPoints<Affine> out;
  std::vector<XyzzOf<Affine>> sums(n);
  XyzzOf<Affine> p = mul(Affine::generator(), a);
  Fr log = a;
  for (std::size_t i = 0; i < n; ++i) {
    sums[i] = p;
    out.logs.push_back(log);
    add_mixed(p, step);
    log += b;
  }
  out.points = to_affine_all(sums);
  return out;
}

// [sum_i s_i logs[i]] G: the MSM of known-log points.
template <typename Affine>
XyzzOf<Affine> msm_by_logs(const KnownLogPoints<Affine>& in, const std::vector<Fr>& scalars) {
  Fr t = Fr::zero();
  for (std::size_t i = 0; i < scalars.size(); ++i) t += scalars[i] * in.logs[i];
  return mul(Affine::generator(), t);
}

// A witness's mix: zero_pct % zeros, one_pct % ones, the rest random.
inline std::vector<Fr> mixed_scalars(std::size_t n, unsigned zero_pct, unsigned one_pct,
                                     std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Fr> v(n);
  for (auto& x : v) {
    const unsigned pick = rng() % 100;
    x = pick < zero_pct ? Fr::zero() : pick < zero_pct + one_pct ? Fr::one() : random_fr(rng);
  }
  return v;
}

// Same point, and the same affine words.
template <typename Xyzz>
::testing::AssertionResult same_point(const Xyzz& got, const Xyzz& want) {
  if (!equal(got, want)) return ::testing::AssertionFailure() << "different points";
  const auto a = to_affine(got), b = to_affine(want);
  if (!(a.x == b.x) || !(a.y == b.y))
    return ::testing::AssertionFailure() << "equal points with different affine words";
  return ::testing::AssertionSuccess();
}

}  // namespace stoker::kernels::test
