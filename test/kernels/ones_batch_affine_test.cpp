// The steps of the GPU's batched affine sum of a sparse MSM's ones
// (detail/ones_batch_affine.cuh), run on the host over plain memory, for G1
// and G2: the threads' sums together equal plain mixed additions of the
// indexed points, at counts around the batch and round boundaries, with
// repeated indices (P + P), opposite points (P - P) and the point at
// infinity among the inputs. The GPU suite compares the kernel with the CPU.
#include "kernels/detail/ones_batch_affine.cuh"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "kernels/g1.cuh"
#include "kernels/g2.cuh"
#include "msm_cpu_test_util.hpp"

namespace stoker::kernels::gpu::detail {
namespace {

using test::same_point;

struct HostMemory {
  template <typename T>
  static T point(const T* p) {
    return *p;
  }
  template <typename Affine>
  static auto point_x(const Affine* p) {
    return p->x;
  }
  template <typename T>
  static T load(const T* p) {
    return *p;
  }
  template <typename Affine>
  static auto load_x(const Affine* p) {
    return p->x;
  }
  template <typename T>
  static void store(T* p, const T& v) {
    *p = v;
  }
};

// Every thread's share summed as the kernel's threads would, then added.
template <typename Affine>
test::XyzzOf<Affine> batch_affine_sum(const std::vector<Affine>& points,
                                      const std::vector<std::uint32_t>& index, std::size_t threads,
                                      unsigned batch) {
  std::vector<Affine> acc(threads * batch);
  std::vector<FieldOf<Affine>> prefix(threads * batch);
  auto total = test::XyzzOf<Affine>::infinity();
  for (std::size_t t = 0; t < threads; ++t)
    add(total, sum_ones_batch_affine<HostMemory>(points.data(), index.data(), index.size(),
                                                 threads, t, batch, acc.data(), prefix.data()));
  return total;
}

template <typename Affine>
test::XyzzOf<Affine> mixed_sum(const std::vector<Affine>& points,
                               const std::vector<std::uint32_t>& index) {
  auto acc = test::XyzzOf<Affine>::infinity();
  for (std::uint32_t i : index) add_mixed(acc, points[i]);
  return acc;
}

template <typename Affine>
class OnesBatchAffine : public ::testing::Test {};
TYPED_TEST_SUITE(OnesBatchAffine, test::Groups, test::GroupNames);

TYPED_TEST(OnesBatchAffine, MatchesMixedAdditionsAroundRounds) {
  using Affine = TypeParam;
  const auto points = test::known_log_points<Affine>(600, 400).points;
  std::mt19937_64 rng(401);
  for (std::size_t threads : {1u, 3u, 7u})
    for (unsigned batch : {1u, 2u, 5u, 16u})
      for (std::size_t count : {std::size_t{0}, std::size_t{1}, threads * batch - 1,
                                threads * batch, threads * batch + 1, 2 * threads * batch + 3,
                                std::size_t{599}}) {
        std::vector<std::uint32_t> index(count);
        for (auto& i : index) i = static_cast<std::uint32_t>(rng() % points.size());
        EXPECT_TRUE(
            same_point(batch_affine_sum(points, index, threads, batch), mixed_sum(points, index)))
            << "threads " << threads << ", batch " << batch << ", count " << count;
      }
}

TYPED_TEST(OnesBatchAffine, HandlesInfinityRepeatsAndOpposites) {
  using Affine = TypeParam;
  auto points = test::known_log_points<Affine>(64, 410).points;
  const std::size_t base = points.size();
  for (std::size_t i = 0; i < base; ++i) points.push_back(neg(points[i]));
  points.push_back(Affine::infinity());
  const auto infinity = static_cast<std::uint32_t>(points.size() - 1);
  std::mt19937_64 rng(411);
  // Few distinct points, so that accumulators meet their own point (P + P),
  // its opposite (P - P, then infinity + Q) and infinity over and over.
  for (std::size_t threads : {1u, 4u})
    for (unsigned batch : {1u, 3u, 8u}) {
      std::vector<std::uint32_t> index(900);
      for (auto& i : index) {
        const auto pick = rng() % 10;
        i = pick == 0 ? infinity : static_cast<std::uint32_t>(rng() % 6 + (pick < 5 ? 0 : base));
      }
      EXPECT_TRUE(
          same_point(batch_affine_sum(points, index, threads, batch), mixed_sum(points, index)))
          << "threads " << threads << ", batch " << batch;
    }
}

TYPED_TEST(OnesBatchAffine, CancelsToInfinity) {
  using Affine = TypeParam;
  auto points = test::known_log_points<Affine>(50, 420).points;
  for (std::size_t i = 0; i < 50; ++i) points.push_back(neg(points[i]));
  std::vector<std::uint32_t> index;
  // Each point and its opposite a round apart in the same accumulator.
  for (std::uint32_t i = 0; i < 100; ++i) index.push_back(i);
  EXPECT_TRUE(batch_affine_sum(points, index, 2, 25).is_infinity());
  const std::vector<Affine> at_infinity(1, Affine::infinity());
  EXPECT_TRUE(batch_affine_sum(at_infinity, std::vector<std::uint32_t>(300, 0), 3, 4).is_infinity());
}

TYPED_TEST(OnesBatchAffine, OnePointRepeatedIsItsMultiple) {
  using Affine = TypeParam;
  const auto points = test::known_log_points<Affine>(1, 430).points;
  for (std::size_t count : {2u, 17u, 300u}) {
    const std::vector<std::uint32_t> index(count, 0);
    EXPECT_TRUE(same_point(batch_affine_sum(points, index, 2, 4),
                           test::mul(points[0], Fr::from_u64(count))))
        << count;
  }
}

}  // namespace
}  // namespace stoker::kernels::gpu::detail
