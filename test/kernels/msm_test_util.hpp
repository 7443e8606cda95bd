// Helpers shared by the MSM suites, which run once per group (typed tests
// over G1Affine and G2Affine): the groups' names in test names, points
// built on the CPU, and the naive sum the MSM must equal.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "g1_test_util.hpp"
#include "kernels/detail/msm_group.hpp"
#include "kernels/field.cuh"
#include "kernels/g1.cuh"
#include "kernels/g2.cuh"

namespace stoker::kernels::test {

using MsmGroups = ::testing::Types<G1Affine, G2Affine>;

// MsmGpu/G1.Name and MsmGpu/G2.Name rather than /0 and /1.
struct MsmGroupName {
  template <typename Affine>
  static std::string GetName(int) {
    return std::is_same_v<Affine, G1Affine> ? "G1" : "G2";
  }
};

// [k] G for a random 64-bit k: a point of the group with a known logarithm.
template <typename Affine>
Affine random_point(std::mt19937_64& rng) {
  const std::uint64_t k[4] = {rng() | 1, 0, 0, 0};
  return to_affine(scalar_mul(Affine::generator(), k));
}

// n points of the group, distinct in practice: P_i = R_(i mod 16) +
// S_(i / 16), one addition each. G1's are random_g1_vector's, so the G1
// suites keep the inputs they always had.
template <typename Affine>
std::vector<Affine> random_point_vector(std::size_t n, std::uint64_t seed) {
  if constexpr (std::is_same_v<Affine, G1Affine>) {
    return random_g1_vector(n, seed);
  } else {
    std::mt19937_64 rng(seed);
    std::vector<Affine> rows(16), cols((n + 15) / 16), out(n);
    for (auto& p : rows) p = random_point<Affine>(rng);
    for (auto& p : cols) p = random_point<Affine>(rng);
    for (std::size_t i = 0; i < n; ++i) {
      auto sum = to_xyzz(rows[i % 16]);
      add_mixed(sum, cols[i / 16]);
      out[i] = to_affine(sum);
    }
    return out;
  }
}

// sum_i [s_i] P_i by double-and-add per point: slow, and independent of the
// bucket method.
template <typename Affine>
detail::XyzzOf<Affine> naive_msm(const std::vector<Affine>& points,
                                 const std::vector<Fr>& scalars) {
  auto acc = detail::XyzzOf<Affine>::infinity();
  for (std::size_t i = 0; i < points.size(); ++i) {
    std::uint64_t k[4];
    scalars[i].to_canonical(k);
    add(acc, scalar_mul(points[i], k));
  }
  return acc;
}

}  // namespace stoker::kernels::test
