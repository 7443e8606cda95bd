// GPU MSM equals the CPU reference bit for bit (after to_affine), on random
// sizes and on the edge cases, for G1 and for G2; the GPU point check (G1)
// finds the first bad point.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "common/error.hpp"
#include "fr_test_util.hpp"
#include "kernels/detail/msm_group.hpp"
#include "kernels/detail/msm_window.hpp"
#include "kernels/msm.hpp"
#include "g1_test_util.hpp"
#include "g2_test_util.hpp"
#include "msm_cpu_test_util.hpp"
#include "test/gpu_guard.hpp"

namespace stoker::kernels {
namespace {

template <typename T>
class Device {
 public:
  explicit Device(std::size_t n) : n_(n) {
    EXPECT_EQ(cudaMalloc(&p_, n ? n * sizeof(T) : 1), cudaSuccess);
  }
  explicit Device(const std::vector<T>& h) : Device(h.size()) {
    EXPECT_EQ(cudaMemcpy(p_, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~Device() { cudaFree(p_); }
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  T* get() const { return static_cast<T*>(p_); }
  std::vector<T> download() const {
    std::vector<T> h(n_);
    EXPECT_EQ(cudaMemcpy(h.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    return h;
  }

 private:
  void* p_ = nullptr;
  std::size_t n_;
};

// Points made on the GPU (kernels/msm_inputs_gpu.cu), of either group.
template <typename Affine>
std::vector<Affine> random_points(std::size_t n, std::uint64_t seed) {
  constexpr MsmGroup group = detail::MsmGroupTraits<Affine>::kGroup;
  Device<Affine> d(n);
  Device<unsigned char> scratch(gpu::random_points_scratch_bytes(group, n));
  EXPECT_FALSE(gpu::random_points(d.get(), n, seed, scratch.get(),
                                  gpu::random_points_scratch_bytes(group, n), nullptr));
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return d.download();
}

template <typename Affine>
bool same(const Affine& a, const Affine& b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// One call of msm with the plan, or the same in steps (sort, each part's
// points, finish) as a caller that overlaps the points' copy would.
enum class Calls { one, steps };

// The GPU's result (with the plan given, or the default one) in affine form.
// affine_batch: the buckets by batched affine additions, that many lanes a
// thread (0: the default) and threads_per_sm threads an SM.
template <typename Affine>
Affine gpu_msm(const std::vector<Affine>& points, const std::vector<Fr>& scalars,
               unsigned window_bits = 0, unsigned parts = 1, Calls calls = Calls::one,
               std::optional<unsigned> affine_batch = std::nullopt, unsigned threads_per_sm = 0) {
  using Xyzz = detail::XyzzOf<Affine>;
  const std::size_t n = points.size();
  int device = 0;
  EXPECT_EQ(cudaGetDevice(&device), cudaSuccess);
  gpu::MsmPlan plan;
  EXPECT_FALSE(
      gpu::plan_msm(detail::MsmGroupTraits<Affine>::kGroup, n, device, plan, window_bits, parts));
  if (affine_batch) {
    EXPECT_FALSE(gpu::plan_batch_affine_buckets(plan, device, *affine_batch, threads_per_sm));
    EXPECT_TRUE(n == 0 || plan.accumulate_batch > 0);
  }
  Device<Affine> p(points);
  Device<Fr> s(scalars);
  Device<Xyzz> result(1);
  Device<unsigned char> scratch(plan.scratch_bytes);
  void* sc = scratch.get();
  const std::size_t bytes = plan.scratch_bytes;
  if (calls == Calls::one) {
    const std::error_code ec = gpu::msm(plan, result.get(), p.get(), s.get(), sc, bytes, nullptr);
    EXPECT_FALSE(ec) << ec.message();
  } else {
    EXPECT_FALSE(gpu::msm_sort_scalars(plan, s.get(), sc, bytes, nullptr));
    for (unsigned part = 0; part < plan.parts && n; ++part)
      EXPECT_FALSE(gpu::msm_add_points(plan, part, p.get(), sc, bytes, nullptr));
    EXPECT_FALSE(gpu::msm_finish(plan, result.get(), sc, bytes, nullptr));
  }
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return to_affine(result.download()[0]);
}

// The window sums the GPU leaves (msm_window_sums, or sparse_msm_window_sums
// with the scalars split on the host), finished on the host.
template <typename Affine>
Affine finished(const Device<unsigned char>& sums, std::size_t bytes) {
  std::vector<unsigned char> h(bytes);
  EXPECT_EQ(cudaMemcpy(h.data(), sums.get(), bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  detail::XyzzOf<Affine> out;
  const std::error_code ec = cpu::finish_window_sums(h.data(), bytes, out);
  EXPECT_FALSE(ec) << ec.message();
  return to_affine(out);
}

template <typename Affine>
Affine gpu_msm_window_sums(const std::vector<Affine>& points, const std::vector<Fr>& scalars) {
  int device = 0;
  EXPECT_EQ(cudaGetDevice(&device), cudaSuccess);
  gpu::MsmPlan plan;
  EXPECT_FALSE(gpu::plan_msm(detail::MsmGroupTraits<Affine>::kGroup, points.size(), device, plan));
  Device<Affine> p(points);
  Device<Fr> s(scalars);
  const std::size_t bytes = gpu::window_sums_bytes(plan);
  Device<unsigned char> sums(bytes);
  Device<unsigned char> scratch(plan.scratch_bytes);
  const std::error_code ec = gpu::msm_window_sums(plan, sums.get(), p.get(), s.get(), scratch.get(),
                                                  plan.scratch_bytes, nullptr);
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return finished<Affine>(sums, bytes);
}

template <typename Affine>
Affine cpu_msm(const std::vector<Affine>& points, const std::vector<Fr>& scalars) {
  return to_affine(cpu::msm(points.data(), scalars.data(), points.size()));
}

// The sparse path: the scalars split on the host, then gpu::sparse_msm (or
// gpu::sparse_msm_window_sums, finished on the host).
enum class SparseOut { device_sum, window_sums };
template <typename Affine>
Affine gpu_sparse_msm(const std::vector<Affine>& points, const std::vector<Fr>& scalars,
                      SparseOut out = SparseOut::device_sum,
                      const gpu::SparseMsmShape& shape = {}) {
  using Xyzz = detail::XyzzOf<Affine>;
  const auto split = cpu::split_scalars(scalars.data(), scalars.size());
  int device = 0;
  EXPECT_EQ(cudaGetDevice(&device), cudaSuccess);
  gpu::SparseMsmPlan plan;
  EXPECT_FALSE(gpu::plan_sparse_msm(detail::MsmGroupTraits<Affine>::kGroup, split.ones.size(),
                                    split.rest.size(), device, plan, shape));
  if (shape.ones_sum != gpu::OnesSum::automatic && !split.ones.empty()) {
    EXPECT_EQ(plan.ones_sum, shape.ones_sum);
  }
  EXPECT_EQ(plan.ones_start, shape.ones_start);
  Device<Affine> p(points);
  Device<std::uint32_t> ones(split.ones), rest(split.rest);
  Device<Fr> rest_scalars(split.rest_scalars);
  Device<Xyzz> result(1);
  Device<unsigned char> scratch(plan.scratch_bytes);
  if (out == SparseOut::window_sums) {
    const std::size_t bytes = gpu::window_sums_bytes(plan);
    Device<unsigned char> sums(bytes);
    const std::error_code ec =
        gpu::sparse_msm_window_sums(plan, sums.get(), p.get(), ones.get(), rest.get(),
                                    rest_scalars.get(), scratch.get(), plan.scratch_bytes, nullptr);
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    return finished<Affine>(sums, bytes);
  }
  const std::error_code ec =
      gpu::sparse_msm(plan, result.get(), p.get(), ones.get(), rest.get(), rest_scalars.get(),
                      scratch.get(), plan.scratch_bytes, nullptr);
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return to_affine(result.download()[0]);
}

// Every test below runs for G1 and for G2: MsmGpu/G1.Name, MsmGpu/G2.Name.
template <typename Affine>
class MsmGpu : public ::testing::Test {};
TYPED_TEST_SUITE(MsmGpu, test::Groups, test::GroupNames);

TYPED_TEST(MsmGpu, RandomPointsAreInTheGroup) {
  STOKER_REQUIRE_GPU();
  const auto p = random_points<TypeParam>(3000, 4);
  for (std::size_t i = 0; i < p.size(); i += 97) {
    ASSERT_FALSE(p[i].is_infinity()) << i;
    ASSERT_TRUE(on_curve(p[i]) && in_subgroup(p[i])) << i;
  }
  ASSERT_FALSE(same(p[0], p[1]));
}

TYPED_TEST(MsmGpu, EqualsCpuAtRandomSizes) {
  STOKER_REQUIRE_GPU();
  const std::size_t max_n = std::size_t{1} << 16;
  const auto points = random_points<TypeParam>(max_n, 5);
  std::mt19937_64 rng(6);
  for (std::size_t n :
       {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{31}, std::size_t{256},
        std::size_t{1000}, std::size_t{4096}, std::size_t{12345}, std::size_t{1} << 15, max_n}) {
    const std::vector<TypeParam> p(points.begin(), points.begin() + n);
    std::vector<Fr> s(n);
    for (auto& x : s) x = test::random_fr(rng);
    ASSERT_TRUE(same(gpu_msm(p, s), cpu_msm(p, s))) << "n " << n;
  }
}

TYPED_TEST(MsmGpu, EqualsCpuForEveryWindowSizeFamily) {
  STOKER_REQUIRE_GPU();
  const std::size_t n = 3000;
  const auto p = random_points<TypeParam>(n, 7);
  std::mt19937_64 rng(8);
  std::vector<Fr> s(n);
  for (auto& x : s) x = test::random_fr(rng);
  const TypeParam want = cpu_msm(p, s);
  for (unsigned c : {2u, 3u, 5u, 8u, 11u, 15u, 17u, 20u, 23u})
    ASSERT_TRUE(same(gpu_msm(p, s, c), want)) << "c " << c;
}

TYPED_TEST(MsmGpu, PartsInStepsEqualCpu) {
  STOKER_REQUIRE_GPU();
  const std::size_t n = 10001;
  const auto p = random_points<TypeParam>(n, 19);
  std::mt19937_64 rng(20);
  std::vector<Fr> s(n);
  for (auto& x : s) x = test::random_fr(rng);
  const TypeParam want = cpu_msm(p, s);
  for (unsigned parts : {1u, 2u, 3u, 4u}) {
    ASSERT_TRUE(same(gpu_msm(p, s, 0, parts), want)) << "parts " << parts;
    ASSERT_TRUE(same(gpu_msm(p, s, 9, parts), want)) << "parts " << parts << " c 9";
    ASSERT_TRUE(same(gpu_msm(p, s, 0, parts, Calls::steps), want)) << "steps, parts " << parts;
  }
}

TYPED_TEST(MsmGpu, EdgeScalarsAndPoints) {
  STOKER_REQUIRE_GPU();
  const std::size_t n = 500;
  auto p = random_points<TypeParam>(n, 9);
  std::mt19937_64 rng(10);
  std::vector<Fr> s(n);
  for (auto& x : s) x = test::random_fr(rng);
  s[0] = Fr::zero();
  s[1] = Fr::one();
  s[2] = -Fr::one();  // r - 1
  s[3] = Fr::one();
  p[4] = p[3];  // a point repeated, with the same scalar: a doubling in a bucket
  s[4] = Fr::one();
  p[6] = neg(p[5]);  // P and -P with one scalar cancel
  s[6] = s[5];
  p[7] = TypeParam{};  // the point at infinity, with a non-zero scalar
  p[9] = p[2];         // (r - 1) P + P = 0
  s[9] = Fr::one();
  for (std::size_t i = 100; i < 200; ++i) p[i] = p[50];  // one point, many scalars
  ASSERT_TRUE(same(gpu_msm(p, s), cpu_msm(p, s)));
  ASSERT_TRUE(same(gpu_msm(p, s, 4), cpu_msm(p, s)));
}

// The buckets by batched affine additions (the first level's lanes), bit
// for bit the CPU's: random sizes, small windows whose buckets' runs cross
// many lanes and threads, lanes of one entry, and the edges above.
TYPED_TEST(MsmGpu, BatchAffineBucketsEqualCpu) {
  STOKER_REQUIRE_GPU();
  const std::size_t max_n = std::size_t{1} << 16;
  const auto points = random_points<TypeParam>(max_n, 61);
  std::mt19937_64 rng(62);
  for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{31}, std::size_t{1000},
                        std::size_t{12345}, max_n}) {
    const std::vector<TypeParam> p(points.begin(), points.begin() + n);
    std::vector<Fr> s(n);
    for (auto& x : s) x = test::random_fr(rng);
    const TypeParam want = cpu_msm(p, s);
    ASSERT_TRUE(same(gpu_msm(p, s, 0, 1, Calls::one, 0u), want)) << "n " << n;
    // Two threads an SM: lanes of hundreds of entries (thousands at 2^16,
    // too slow for the sanitizers).
    if (n < max_n) {
      ASSERT_TRUE(same(gpu_msm(p, s, 5, 1, Calls::steps, 3u, 2), want)) << "n " << n << ", c 5";
    }
    ASSERT_TRUE(same(gpu_msm(p, s, 11, 1, Calls::one, 128u, 1), want)) << "n " << n << ", c 11";
  }
  const std::size_t n = 500;
  auto p = std::vector<TypeParam>(points.begin(), points.begin() + n);
  std::vector<Fr> s(n);
  for (auto& x : s) x = test::random_fr(rng);
  s[0] = Fr::zero();
  s[1] = Fr::one();
  s[2] = -Fr::one();
  p[4] = p[3];  // a doubling in a bucket
  s[3] = s[4] = Fr::one();
  p[6] = neg(p[5]);  // P - P in a bucket
  s[6] = s[5];
  p[7] = TypeParam::infinity();
  p[9] = p[2];
  s[9] = Fr::one();
  for (std::size_t i = 100; i < 200; ++i) p[i] = p[50];
  for (unsigned c : {0u, 4u})
    for (unsigned batch : {0u, 1u, 7u})
      ASSERT_TRUE(same(gpu_msm(p, s, c, 1, Calls::one, batch, 1), cpu_msm(p, s)))
          << "c " << c << ", batch " << batch;
  for (const auto& all : {std::vector<Fr>(n, Fr::one()), std::vector<Fr>(n, Fr::zero())})
    ASSERT_TRUE(same(gpu_msm(p, all, 0, 1, Calls::one, 2u, 1), cpu_msm(p, all)));
}

TYPED_TEST(MsmGpu, PointAndItsNegationGiveInfinity) {
  STOKER_REQUIRE_GPU();
  auto p = random_points<TypeParam>(2, 11);
  p[1] = neg(p[0]);
  std::mt19937_64 rng(12);
  const Fr k = test::random_fr(rng);
  EXPECT_TRUE(gpu_msm(p, {k, k}).is_infinity());
  EXPECT_TRUE(gpu_msm(p, {Fr::one(), Fr::one()}).is_infinity());
}

TYPED_TEST(MsmGpu, AllZeroScalarsGiveInfinity) {
  STOKER_REQUIRE_GPU();
  const auto p = random_points<TypeParam>(4096, 13);
  EXPECT_TRUE(gpu_msm(p, std::vector<Fr>(p.size(), Fr::zero())).is_infinity());
}

TYPED_TEST(MsmGpu, InfinityPointsGiveInfinity) {
  STOKER_REQUIRE_GPU();
  const std::vector<TypeParam> p(300, TypeParam::infinity());
  std::mt19937_64 rng(21);
  std::vector<Fr> s(p.size());
  for (auto& x : s) x = test::random_fr(rng);
  EXPECT_TRUE(gpu_msm(p, s).is_infinity());
}

TYPED_TEST(MsmGpu, EmptyInputGivesInfinity) {
  STOKER_REQUIRE_GPU();
  Device<detail::XyzzOf<TypeParam>> result(1);
  ASSERT_FALSE(gpu::msm(result.get(), static_cast<const TypeParam*>(nullptr), nullptr, 0, nullptr,
                        0, nullptr));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_TRUE(result.download()[0].is_infinity());
}

TYPED_TEST(MsmGpu, SparseWitnessScalars) {
  STOKER_REQUIRE_GPU();
  const std::size_t n = std::size_t{1} << 16;
  const auto p = random_points<TypeParam>(n, 14);
  std::mt19937_64 rng(15);
  std::vector<Fr> s(n);
  for (auto& x : s) {
    const unsigned pick = rng() % 100;
    x = pick < 40 ? Fr::zero() : pick < 90 ? Fr::one() : test::random_fr(rng);
  }
  ASSERT_TRUE(same(gpu_msm(p, s), cpu_msm(p, s)));
  // All ones: one bucket holds every point, summed across threads.
  ASSERT_TRUE(
      same(gpu_msm(p, std::vector<Fr>(n, Fr::one())), cpu_msm(p, std::vector<Fr>(n, Fr::one()))));
}

// The split path against the CPU, bit for bit, with the ones summed either
// way and started with the rest or after its buckets: a witness's mix at random sizes up to 2^16, and the edges (all
// zeros, all ones, no ones, no zeros, a repeated point and P, -P among the
// ones, infinity among them, a single point).
TYPED_TEST(MsmGpu, SparseSplitEqualsCpu) {
  STOKER_REQUIRE_GPU();
  const std::size_t max_n = std::size_t{1} << 16;
  const auto points = random_points<TypeParam>(max_n, 31);
  for (const gpu::SparseMsmShape sum :
       {gpu::SparseMsmShape{0, gpu::OnesSum::mixed_additions},
        gpu::SparseMsmShape{0, gpu::OnesSum::batch_affine},
        gpu::SparseMsmShape{0, gpu::OnesSum::batch_affine, 0, 0,
                            gpu::OnesStart::after_the_buckets},
        gpu::SparseMsmShape{0, gpu::OnesSum::batch_affine, 0, 0,
                            gpu::OnesStart::after_the_buckets, gpu::BucketSum::batch_affine},
        gpu::SparseMsmShape{0, gpu::OnesSum::batch_affine, 0, 0,
                            gpu::OnesStart::after_the_buckets, gpu::BucketSum::batch_affine, 0, 0,
                            3},
        gpu::SparseMsmShape{0, gpu::OnesSum::mixed_additions, 0, 0,
                            gpu::OnesStart::with_the_rest, gpu::BucketSum::mixed_additions, 0, 0,
                            1}}) {
    SCOPED_TRACE(std::string(sum.ones_sum == gpu::OnesSum::batch_affine ? "batch_affine"
                                                                         : "mixed_additions") +
                 (sum.ones_start == gpu::OnesStart::after_the_buckets ? ", after the buckets"
                                                                      : "") +
                 (sum.rest_buckets == gpu::BucketSum::batch_affine ? ", affine buckets" : "") +
                 (sum.rest_reduce_first_log
                      ? ", reduction folds 2^" + std::to_string(sum.rest_reduce_first_log)
                      : ""));
    for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{31}, std::size_t{1000},
                          std::size_t{12345}, max_n}) {
      const std::vector<TypeParam> p(points.begin(), points.begin() + n);
      const auto s = test::mixed_scalars(n, 40, 50, 32 + n);
      ASSERT_TRUE(same(gpu_sparse_msm(p, s, SparseOut::device_sum, sum), cpu_msm(p, s)))
          << "n " << n;
    }
    const std::size_t n = 5000;
    auto p = std::vector<TypeParam>(points.begin(), points.begin() + n);
    for (const auto& s : {std::vector<Fr>(n, Fr::zero()), std::vector<Fr>(n, Fr::one()),
                          test::mixed_scalars(n, 50, 0, 33), test::mixed_scalars(n, 0, 60, 34)})
      ASSERT_TRUE(same(gpu_sparse_msm(p, s, SparseOut::device_sum, sum), cpu_msm(p, s)));
    auto s = test::mixed_scalars(n, 30, 60, 35);
    p[10] = p[11];       // a point twice among the ones: a doubling
    p[12] = neg(p[13]);  // P and -P among the ones cancel
    p[14] = TypeParam::infinity();
    for (std::size_t i = 10; i < 15; ++i) s[i] = Fr::one();
    s[20] = -Fr::one();
    ASSERT_TRUE(same(gpu_sparse_msm(p, s, SparseOut::device_sum, sum), cpu_msm(p, s)));
    // Few distinct points among many ones: accumulators meet their own
    // point, its opposite and infinity round after round.
    for (std::size_t i = 0; i < n; ++i) {
      p[i] = i % 5 == 4 ? TypeParam::infinity() : i % 5 < 2 ? points[i % 3] : neg(points[i % 3]);
      s[i] = Fr::one();
    }
    ASSERT_TRUE(same(gpu_sparse_msm(p, s, SparseOut::device_sum, sum), cpu_msm(p, s)));
    ASSERT_TRUE(same(gpu_sparse_msm(p, s, SparseOut::window_sums, sum), cpu_msm(p, s)));
  }
}

// The window sums finished on the host give the same point as the CPU, for
// the dense path and the split one, at sizes from 0 to 2^16 and the edges.
TYPED_TEST(MsmGpu, WindowSumsFinishedOnTheHostEqualCpu) {
  STOKER_REQUIRE_GPU();
  const std::size_t max_n = std::size_t{1} << 16;
  const auto points = random_points<TypeParam>(max_n, 41);
  std::mt19937_64 rng(42);
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{999},
                        std::size_t{20000}, max_n}) {
    const std::vector<TypeParam> p(points.begin(), points.begin() + n);
    std::vector<Fr> dense(n);
    for (auto& x : dense) x = test::random_fr(rng);
    ASSERT_TRUE(same(gpu_msm_window_sums(p, dense), cpu_msm(p, dense))) << "n " << n;
    const auto s = test::mixed_scalars(n, 40, 50, 43 + n);
    ASSERT_TRUE(same(gpu_sparse_msm(p, s, SparseOut::window_sums), cpu_msm(p, s))) << "n " << n;
  }
  const std::size_t n = 3000;
  const std::vector<TypeParam> p(points.begin(), points.begin() + n);
  for (const auto& s : {std::vector<Fr>(n, Fr::zero()), std::vector<Fr>(n, Fr::one()),
                        test::mixed_scalars(n, 50, 0, 44), std::vector<Fr>(n, -Fr::one())})
    ASSERT_TRUE(same(gpu_sparse_msm(p, s, SparseOut::window_sums), cpu_msm(p, s)));
}

TYPED_TEST(MsmGpu, SparseRefusesAPlanOfTheOtherGroupAndTooLittleScratch) {
  STOKER_REQUIRE_GPU();
  using Other = std::conditional_t<std::is_same_v<TypeParam, G1Affine>, G2Affine, G1Affine>;
  constexpr MsmGroup other = detail::MsmGroupTraits<Other>::kGroup;
  gpu::SparseMsmPlan plan;
  ASSERT_FALSE(gpu::plan_sparse_msm(other, 10, 10, 0, plan));
  Device<detail::XyzzOf<TypeParam>> result(1);
  Device<TypeParam> p(20);
  Device<std::uint32_t> idx(20);
  Device<Fr> sc(20);
  Device<unsigned char> scratch(plan.scratch_bytes);
  EXPECT_TRUE(gpu::sparse_msm(plan, result.get(), p.get(), idx.get(), idx.get(), sc.get(),
                              scratch.get(), plan.scratch_bytes, nullptr));
  gpu::SparseMsmPlan mine;
  ASSERT_FALSE(gpu::plan_sparse_msm(detail::MsmGroupTraits<TypeParam>::kGroup, 10, 10, 0, mine));
  EXPECT_TRUE(gpu::sparse_msm(mine, result.get(), p.get(), idx.get(), idx.get(), sc.get(),
                              scratch.get(), mine.scratch_bytes - 1, nullptr));
}

// automatic: batch affine additions in G2 where every thread gets several
// batches, mixed additions in G1 and for few ones; a forced choice is kept,
// an unknown one refused.
TYPED_TEST(MsmGpu, SparsePlanChoosesHowTheOnesAreSummed) {
  STOKER_REQUIRE_GPU();
  constexpr MsmGroup group = detail::MsmGroupTraits<TypeParam>::kGroup;
  gpu::SparseMsmPlan plan;
  ASSERT_FALSE(gpu::plan_sparse_msm(group, std::size_t{1} << 25, 1000, 0, plan));
  EXPECT_EQ(plan.ones_sum, group == MsmGroup::g2 ? gpu::OnesSum::batch_affine
                                                 : gpu::OnesSum::mixed_additions);
  ASSERT_FALSE(gpu::plan_sparse_msm(group, 5000, 1000, 0, plan));
  EXPECT_EQ(plan.ones_sum, gpu::OnesSum::mixed_additions);
  ASSERT_FALSE(gpu::plan_sparse_msm(group, 5000, 1000, 0, plan, {0, gpu::OnesSum::batch_affine}));
  EXPECT_EQ(plan.ones_sum, gpu::OnesSum::batch_affine);
  EXPECT_GE(plan.ones_threads * plan.ones_batch, std::size_t{1});
  EXPECT_GE(plan.scratch_bytes,
            plan.ones_prefixes_at + plan.ones_threads * plan.ones_batch * sizeof(TypeParam) / 2);
  EXPECT_TRUE(gpu::plan_sparse_msm(group, 5000, 1000, 0, plan, {0, static_cast<gpu::OnesSum>(7)}));
}

// The affine buckets' plan: lanes that cover every entry, the scratch they
// take, one part only, and the sparse plan's switches checked.
TYPED_TEST(MsmGpu, BatchAffineBucketsPlan) {
  STOKER_REQUIRE_GPU();
  constexpr MsmGroup group = detail::MsmGroupTraits<TypeParam>::kGroup;
  gpu::MsmPlan mixed, affine;
  ASSERT_FALSE(gpu::plan_msm(group, 1'000'000, 0, mixed));
  affine = mixed;
  ASSERT_FALSE(gpu::plan_batch_affine_buckets(affine, 0));
  EXPECT_EQ(affine.accumulate_batch, gpu::kAccumulateBatch);
  EXPECT_EQ(affine.window_bits, mixed.window_bits);
  int sms = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  const std::size_t lanes =
      std::size_t(sms) * gpu::kAccumulateBatchThreadsPerSm * affine.accumulate_batch;
  EXPECT_GE(std::size_t{affine.slice} * lanes, affine.entries);
  EXPECT_LT(std::size_t{affine.slice - 1} * lanes, affine.entries);
  EXPECT_GT(affine.scratch_bytes,
            mixed.scratch_bytes + affine.entries / affine.slice * sizeof(TypeParam));
  gpu::MsmPlan two_parts;
  ASSERT_FALSE(gpu::plan_msm(group, 1'000'000, 0, two_parts, 0, 2));
  EXPECT_TRUE(gpu::plan_batch_affine_buckets(two_parts, 0));
  EXPECT_EQ(two_parts.accumulate_batch, 0u);
  EXPECT_TRUE(gpu::plan_batch_affine_buckets(affine, 0, 5000));
  // A plan edited to two parts after the fact is refused by the call.
  affine.parts = 2;
  affine.part_begin[1] = affine.n / 2;
  affine.part_begin[2] = affine.n;
  Device<Fr> scalars(std::vector<Fr>(affine.n, Fr::one()));
  Device<unsigned char> scratch(affine.scratch_bytes);
  EXPECT_TRUE(gpu::msm_sort_scalars(affine, scalars.get(), scratch.get(), affine.scratch_bytes,
                                    nullptr));
  affine.parts = 1;
  affine.part_begin[1] = affine.n;
  EXPECT_FALSE(gpu::msm_sort_scalars(affine, scalars.get(), scratch.get(), affine.scratch_bytes,
                                     nullptr));
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  gpu::SparseMsmPlan sparse;
  gpu::SparseMsmShape shape;
  shape.rest_buckets = gpu::BucketSum::batch_affine;
  ASSERT_FALSE(gpu::plan_sparse_msm(group, 5000, 100000, 0, sparse, shape));
  EXPECT_EQ(sparse.rest.accumulate_batch, gpu::kAccumulateBatch);
  shape.rest_buckets = static_cast<gpu::BucketSum>(9);
  EXPECT_TRUE(gpu::plan_sparse_msm(group, 5000, 100000, 0, sparse, shape));
  shape.rest_buckets = gpu::BucketSum::automatic;
  shape.ones_start = static_cast<gpu::OnesStart>(9);
  EXPECT_TRUE(gpu::plan_sparse_msm(group, 5000, 100000, 0, sparse, shape));
}

// A smaller first fold of the reduction: more buckets' sums left for the
// next level (its scratch), the rest of the plan as it was; out-of-range
// folds refused, leaving the plan. Its sums: SparseSplitEqualsCpu.
TYPED_TEST(MsmGpu, ReduceFoldPlan) {
  STOKER_REQUIRE_GPU();
  constexpr MsmGroup group = detail::MsmGroupTraits<TypeParam>::kGroup;
  gpu::MsmPlan plan;
  ASSERT_FALSE(gpu::plan_msm(group, 1'000'000, 0, plan));
  EXPECT_EQ(plan.reduce_first_log, 6u);
  gpu::MsmPlan folded = plan;
  ASSERT_FALSE(gpu::plan_reduce_fold(folded, 0, 3));
  EXPECT_EQ(folded.reduce_first_log, 3u);
  EXPECT_EQ(folded.window_bits, plan.window_bits);
  EXPECT_EQ(folded.slice, plan.slice);
  // Level one's outputs: 8x as many, Y and S, both buffers of a level.
  EXPECT_GE(folded.scratch_bytes, plan.scratch_bytes + std::size_t{plan.windows} *
                                                           (plan.buckets / 8 - plan.buckets / 64) *
                                                           2 * sizeof(detail::XyzzOf<TypeParam>));
  for (unsigned bad : {0u, 7u}) {
    gpu::MsmPlan p = folded;
    EXPECT_TRUE(gpu::plan_reduce_fold(p, 0, bad)) << bad;
    EXPECT_EQ(p.reduce_first_log, 3u);
    EXPECT_EQ(p.scratch_bytes, folded.scratch_bytes);
  }
  gpu::SparseMsmPlan sparse;
  gpu::SparseMsmShape shape;
  shape.rest_reduce_first_log = 2;
  ASSERT_FALSE(gpu::plan_sparse_msm(group, 5000, 100000, 0, sparse, shape));
  EXPECT_EQ(sparse.rest.reduce_first_log, 2u);
  shape.rest_reduce_first_log = 7;
  EXPECT_TRUE(gpu::plan_sparse_msm(group, 5000, 100000, 0, sparse, shape));
}

// The sparse plan's automatic choices for a 2^26 witness's rest (10 % of
// the points): in G2 batched affine buckets where lanes are long enough and
// the device's reduction fold; G1 as plan_msm makes it. A small rest keeps
// mixed additions.
TYPED_TEST(MsmGpu, SparsePlanChoosesTheRestsForm) {
  STOKER_REQUIRE_GPU();
  constexpr MsmGroup group = detail::MsmGroupTraits<TypeParam>::kGroup;
  int sms = 0, threads = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&threads, cudaDevAttrMaxThreadsPerMultiProcessor, 0),
            cudaSuccess);
  gpu::SparseMsmPlan big, small;
  ASSERT_FALSE(gpu::plan_sparse_msm(group, std::size_t{1} << 25, 6'710'886, 0, big));
  ASSERT_FALSE(gpu::plan_sparse_msm(group, 5000, 100000, 0, small));
  EXPECT_EQ(small.rest.accumulate_batch, 0u);
  gpu::MsmPlan dense;
  ASSERT_FALSE(gpu::plan_msm(group, 6'710'886, 0, dense));
  EXPECT_EQ(big.rest.window_bits, dense.window_bits);
  if constexpr (group == MsmGroup::g2) {
    if (big.rest.accumulate_batch) {
      // The batch whose rounding leaves a thread least work (149 on an
      // H100 or H200, 132 SMs).
      EXPECT_EQ(big.rest.accumulate_batch,
                gpu::detail::accumulate_batch(big.rest.entries,
                                              std::uint64_t(sms) * gpu::kAccumulateBatchThreadsPerSm,
                                              gpu::kAccumulateBatchLeastSlice,
                                              gpu::detail::kG2AffineSteps));
      EXPECT_GE(big.rest.accumulate_batch, gpu::detail::kAccumulateBatchLeast);
      EXPECT_LE(big.rest.accumulate_batch, gpu::detail::kAccumulateBatchMost);
      EXPECT_GE(big.rest.slice, gpu::kAccumulateBatchLeastSlice);
    } else {
      gpu::MsmPlan affine = dense;
      EXPECT_TRUE(gpu::plan_batch_affine_buckets(affine, 0) ||
                  affine.slice < gpu::kAccumulateBatchLeastSlice);
    }
    EXPECT_EQ(big.rest.reduce_first_log,
              gpu::detail::reduce_first_log(
                  std::uint64_t{big.rest.windows} * big.rest.buckets,
                  std::uint64_t(sms) * static_cast<std::uint64_t>(threads)));
    EXPECT_GE(big.scratch_bytes, dense.scratch_bytes);
  } else {
    EXPECT_EQ(big.rest.accumulate_batch, 0u);
    EXPECT_EQ(big.rest.reduce_first_log, gpu::detail::kReduceFirstGroupLog);
    EXPECT_EQ(big.rest.slice, dense.slice);
  }
}

TYPED_TEST(MsmGpu, RepeatedCallsGiveTheSameBits) {
  STOKER_REQUIRE_GPU();
  using Xyzz = detail::XyzzOf<TypeParam>;
  constexpr MsmGroup group = detail::MsmGroupTraits<TypeParam>::kGroup;
  const std::size_t n = 20000;
  const auto points = random_points<TypeParam>(n, 16);
  std::mt19937_64 rng(17);
  std::vector<Fr> scalars(n);
  for (auto& x : scalars) x = test::random_fr(rng);
  Device<TypeParam> p(points);
  Device<Fr> s(scalars);
  Device<Xyzz> result(2);
  int device = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  const std::size_t bytes = gpu::msm_scratch_bytes(group, n, device);
  ASSERT_GT(bytes, 0u);
  Device<unsigned char> scratch(bytes);
  for (int i = 0; i < 2; ++i)
    ASSERT_FALSE(gpu::msm(result.get() + i, p.get(), s.get(), n, scratch.get(), bytes, nullptr));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto r = result.download();
  EXPECT_EQ(std::memcmp(&r[0], &r[1], sizeof(Xyzz)), 0);
}

TYPED_TEST(MsmGpu, RejectsTooLittleScratchAndMisalignedInputs) {
  STOKER_REQUIRE_GPU();
  using Xyzz = detail::XyzzOf<TypeParam>;
  constexpr MsmGroup group = detail::MsmGroupTraits<TypeParam>::kGroup;
  const std::size_t n = 1000;
  int device = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  const std::size_t bytes = gpu::msm_scratch_bytes(group, n, device);
  Device<unsigned char> scratch(bytes);
  Device<TypeParam> p(n);
  Device<Fr> s(n);
  Device<Xyzz> result(1);
  EXPECT_EQ(gpu::msm(result.get(), p.get(), s.get(), n, scratch.get(), bytes - 1, nullptr),
            make_error_code(Errc::invalid_argument));
  EXPECT_EQ(gpu::msm(result.get(), p.get(), s.get(), n, scratch.get() + 8, bytes - 8, nullptr),
            make_error_code(Errc::invalid_argument));
  EXPECT_EQ(gpu::msm(result.get(),
                     reinterpret_cast<const TypeParam*>(reinterpret_cast<const char*>(p.get()) + 8),
                     s.get(), n, scratch.get(), bytes, nullptr),
            make_error_code(Errc::invalid_argument));
  EXPECT_EQ(gpu::msm_scratch_bytes(group, std::size_t{1} << 40, device), 0u);
}

// A plan lays out the scratch for its group's point sizes: the other
// group's calls refuse it (before anything is enqueued) rather than read
// past it.
TEST(MsmGpu, PlanOfTheOtherGroupIsRefused) {
  STOKER_REQUIRE_GPU();
  const std::size_t n = 1000;
  int device = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  gpu::MsmPlan g1_plan, g2_plan;
  ASSERT_FALSE(gpu::plan_msm(n, device, g1_plan));
  ASSERT_FALSE(gpu::plan_msm(MsmGroup::g2, n, device, g2_plan));
  EXPECT_EQ(g1_plan.group, MsmGroup::g1);
  EXPECT_EQ(g2_plan.group, MsmGroup::g2);
  const std::size_t bytes = std::max(g1_plan.scratch_bytes, g2_plan.scratch_bytes);
  Device<unsigned char> scratch(bytes);
  Device<G1Affine> p1(n);
  Device<G2Affine> p2(n);
  Device<Fr> s(n);
  Device<G1Xyzz> r1(1);
  Device<G2Xyzz> r2(1);
  const auto refused = make_error_code(Errc::invalid_argument);
  EXPECT_EQ(gpu::msm(g1_plan, r2.get(), p2.get(), s.get(), scratch.get(), bytes, nullptr), refused);
  EXPECT_EQ(gpu::msm(g2_plan, r1.get(), p1.get(), s.get(), scratch.get(), bytes, nullptr), refused);
  EXPECT_EQ(gpu::msm_add_points(g1_plan, 0, p2.get(), scratch.get(), bytes, nullptr), refused);
  EXPECT_EQ(gpu::msm_finish(g2_plan, r1.get(), scratch.get(), bytes, nullptr), refused);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

using test::g1_point_outside_the_group;

std::uint64_t gpu_first_bad(const std::vector<G1Affine>& points) {
  Device<G1Affine> p(points);
  Device<std::uint64_t> first(1);
  EXPECT_FALSE(gpu::check_points(first.get(), p.get(), points.size(), nullptr));
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return first.download()[0];
}

TEST(MsmGpu, CheckPointsFindsTheFirstBadIndex) {
  STOKER_REQUIRE_GPU();
  const std::size_t n = 2000;
  auto p = random_points<G1Affine>(n, 18);
  p[3] = G1Affine{};  // infinity is a good point
  EXPECT_EQ(gpu_first_bad(p), n);
  auto off = p;
  off[1500].y = off[1500].y + Fq::one();
  EXPECT_EQ(gpu_first_bad(off), 1500u);
  off[700] = g1_point_outside_the_group();
  EXPECT_EQ(gpu_first_bad(off), 700u);
  off[0].x = off[0].x + Fq::one();
  EXPECT_EQ(gpu_first_bad(off), 0u);
  EXPECT_EQ(gpu_first_bad({}), 0u);
}

// Checked in ranges, out of order and on two streams, the answer is the
// whole array's: the smallest bad index, counted from the array's start.
TEST(MsmGpu, CheckPointsInRangesFindsTheSmallestBadIndex) {
  STOKER_REQUIRE_GPU();
  const std::size_t n = 3000;
  auto points = random_points<G1Affine>(n, 19);
  points[2500] = g1_point_outside_the_group();
  points[1200].y = points[1200].y + Fq::one();
  Device<G1Affine> p(points);
  Device<std::uint64_t> first(1);
  cudaStream_t s1 = nullptr, s2 = nullptr;
  ASSERT_EQ(cudaStreamCreate(&s1), cudaSuccess);
  ASSERT_EQ(cudaStreamCreate(&s2), cudaSuccess);
  ASSERT_FALSE(gpu::check_points_begin(first.get(), n, s1));
  ASSERT_EQ(cudaStreamSynchronize(s1), cudaSuccess);
  EXPECT_FALSE(gpu::check_points_range(first.get(), p.get(), 2000, n, s1));
  EXPECT_FALSE(gpu::check_points_range(first.get(), p.get(), 1000, 2000, s2));
  EXPECT_FALSE(gpu::check_points_range(first.get(), p.get(), 0, 1000, s1));
  EXPECT_FALSE(gpu::check_points_range(first.get(), p.get(), 1000, 1000, s2));  // empty
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(first.download()[0], 1200u);
  EXPECT_EQ(gpu::check_points_range(first.get(), p.get(), 5, 4, s1),
            make_error_code(Errc::invalid_argument));
  cudaStreamDestroy(s1);
  cudaStreamDestroy(s2);
}

}  // namespace
}  // namespace stoker::kernels

namespace stoker::kernels {
namespace {

// Whether the GPU's check passes each point on its own, one launch a point.
template <typename Affine>
std::vector<bool> gpu_passes(const std::vector<Affine>& points) {
  std::vector<bool> pass;
  Device<std::uint64_t> first(1);
  for (const Affine& q : points) {
    Device<Affine> p(std::vector<Affine>{q});
    EXPECT_FALSE(gpu::check_points_begin(first.get(), 1, nullptr));
    EXPECT_FALSE(gpu::check_points_range(first.get(), p.get(), 0, 1, nullptr));
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    pass.push_back(first.download()[0] == 1);
  }
  return pass;
}

template <typename Affine>
void expect_gpu_agrees_with_host(const std::vector<Affine>& points, std::size_t want_refused) {
  const auto pass = gpu_passes(points);
  std::size_t refused = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const bool host = on_curve(points[i]) && in_subgroup(points[i]);
    EXPECT_EQ(pass[i], host) << "point " << i;
    refused += !host;
  }
  EXPECT_EQ(refused, want_refused);
}

// The membership tests' chains on the GPU against the host's on points
// outside the groups whose chains meet their special cases: torsion points
// ([r] P, order dividing the cofactor), points of order 3 in G1, a point of
// the group plus one of them, beside points of the groups.
TEST(MsmGpu, CheckPointsAgreesWithTheHostOutsideTheGroups) {
  STOKER_REQUIRE_GPU();
  std::vector<G1Affine> g1 = random_points<G1Affine>(4, 31);
  std::size_t g1_bad = 0, of_order_3 = 0;
  for (std::uint64_t x = 1; x < 40; ++x) {
    const Fq fx = Fq::from_u64(x);
    Fq y;
    if (!(fx.sqr() * fx + Fq::from_u64(4)).sqrt(y)) continue;
    const G1Affine p{fx, y};
    const G1Affine t = to_affine(scalar_mul(p, test::kGroupOrder));
    const G1Affine t3 = to_affine(scalar_mul(t, test::kG1CofactorOver3));
    G1Xyzz mixed = to_xyzz(g1[0]);
    add_mixed(mixed, t);
    of_order_3 += !t3.is_infinity();
    for (const G1Affine& q : {p, t, t3, to_affine(mixed)}) {
      if (q.is_infinity()) continue;
      g1.push_back(q);
      ++g1_bad;
    }
  }
  ASSERT_GT(of_order_3, 0u);
  expect_gpu_agrees_with_host(g1, g1_bad);

  std::vector<G2Affine> g2 = random_points<G2Affine>(4, 32);
  std::mt19937_64 rng(33);
  std::size_t g2_bad = 0;
  for (int i = 0; i < 40 && g2_bad < 9; ++i) {
    // A point of E' from a random x, the cofactor not cleared.
    Fq2 x{Fq::from_u64(rng() | 1), Fq::from_u64(rng())}, y;
    if (!(x.sqr() * x + g2_detail::curve_b()).sqrt(y)) continue;
    const G2Affine p{x, y};
    const G2Affine t = to_affine(scalar_mul(p, test::kGroupOrder));
    G2Xyzz mixed = to_xyzz(g2[0]);
    add_mixed(mixed, t);
    for (const G2Affine& q : {p, t, to_affine(mixed)}) {
      g2.push_back(q);
      ++g2_bad;
    }
  }
  ASSERT_GT(g2_bad, 0u);
  expect_gpu_agrees_with_host(g2, g2_bad);
}

}  // namespace
}  // namespace stoker::kernels

namespace stoker::kernels {
namespace {

// The batched check over `points` in ranges of at most `range` points (0:
// one range), the last range first: the smallest bad index it reports, and
// whether the batch itself (the curve equations and the buckets' sums, read
// from the scratch's flag) failed any range.
struct Batched {
  std::uint64_t first_bad = 0;
  bool batch_failed = false;
};
template <typename Affine>
Batched batched_check(const std::vector<Affine>& points, std::size_t range = 0) {
  constexpr MsmGroup group = detail::MsmGroupTraits<Affine>::kGroup;
  const std::size_t n = points.size();
  if (range == 0) range = n;
  int device = 0;
  EXPECT_EQ(cudaGetDevice(&device), cudaSuccess);
  gpu::BatchCheckPlan plan;
  EXPECT_FALSE(gpu::plan_batch_check(group, range, device, plan));
  Device<Affine> p(points);
  Device<unsigned char> scratch(plan.scratch_bytes);
  Device<std::uint64_t> first(1);
  gpu::PointCheckKey key;
  EXPECT_FALSE(gpu::random_point_check_key(key));
  EXPECT_FALSE(gpu::check_points_begin(first.get(), n, nullptr));
  Batched out;
  for (std::size_t end = n; end > 0;) {
    const std::size_t begin = end - std::min(end, range);
    EXPECT_FALSE(gpu::check_points_batched(plan, first.get(), p.get(), begin, end, key,
                                           scratch.get(), plan.scratch_bytes, nullptr));
    unsigned flag = 0;
    EXPECT_EQ(cudaMemcpy(&flag, scratch.get() + plan.flag_at, sizeof flag, cudaMemcpyDeviceToHost),
              cudaSuccess);
    out.batch_failed |= flag != 0;
    end = begin;
  }
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  out.first_bad = first.download()[0];
  return out;
}

using test::g1_point_of_order_3;
using test::plus;

TEST(MsmGpu, BatchedCheckPassesPointsOfTheGroupsAndInfinity) {
  STOKER_REQUIRE_GPU();
  auto g1 = random_points<G1Affine>(20000, 41);
  g1[7] = G1Affine{};
  g1[19999] = G1Affine{};
  const Batched a = batched_check(g1);
  EXPECT_EQ(a.first_bad, g1.size());
  EXPECT_FALSE(a.batch_failed);
  const Batched b = batched_check(g1, 6000);
  EXPECT_EQ(b.first_bad, g1.size());
  EXPECT_FALSE(b.batch_failed);
  auto g2 = random_points<G2Affine>(6000, 42);
  g2[100] = G2Affine{};
  const Batched c = batched_check(g2);
  EXPECT_EQ(c.first_bad, g2.size());
  EXPECT_FALSE(c.batch_failed);
}

// One bad point among good ones is always caught by the buckets (its bucket
// has nothing to cancel it), and the answer is the plain check's: the
// smallest bad index, off the curve or outside G1.
TEST(MsmGpu, BatchedCheckFindsTheFirstBadPointAsThePlainCheckDoes) {
  STOKER_REQUIRE_GPU();
  const G1Affine t3 = g1_point_of_order_3();
  auto points = random_points<G1Affine>(20000, 43);
  points[17000] = g1_point_outside_the_group();
  points[12000].y = points[12000].y + Fq::one();
  points[9000] = plus(points[9000], t3);
  ASSERT_TRUE(on_curve(points[9000]));
  ASSERT_FALSE(in_subgroup(points[9000]));
  for (std::size_t want : {9000u, 12000u, 17000u}) {
    const Batched whole = batched_check(points);
    EXPECT_EQ(whole.first_bad, want);
    EXPECT_TRUE(whole.batch_failed);
    EXPECT_EQ(whole.first_bad, gpu_first_bad(points));
    const Batched ranges = batched_check(points, 5000);
    EXPECT_EQ(ranges.first_bad, want);
    points[want] = points[want + 1];
  }
  const Batched good = batched_check(points);
  EXPECT_EQ(good.first_bad, points.size());
  EXPECT_FALSE(good.batch_failed);
}

// Every point moved off G1 by the same point of order 3: in each bucket
// they cancel where its count is a multiple of 3, and one bucket of all
// the windows' thousands that does not is enough.
TEST(MsmGpu, BatchedCheckCatchesEveryPointShiftedByOneTorsionPoint) {
  STOKER_REQUIRE_GPU();
  const G1Affine t3 = g1_point_of_order_3();
  auto points = random_points<G1Affine>(12000, 44);
  for (auto& q : points) q = plus(q, t3);
  for (int i = 0; i < 4; ++i) {
    const Batched b = batched_check(points);
    EXPECT_EQ(b.first_bad, 0u);
    EXPECT_TRUE(b.batch_failed);
  }
}

TEST(MsmGpu, BatchedCheckFindsPointsOfE2OutsideG2) {
  STOKER_REQUIRE_GPU();
  auto points = random_points<G2Affine>(6000, 45);
  std::mt19937_64 rng(46);
  std::vector<G2Affine> outside;
  while (outside.size() < 2)
    if (const G2Affine p = test::random_e2_point(rng); !in_subgroup(p)) outside.push_back(p);
  points[4000] = outside[0];
  const G2Affine t = to_affine(scalar_mul(outside[1], test::kGroupOrder));
  ASSERT_FALSE(t.is_infinity());
  points[2500] = plus(points[2500], t);
  const Batched b = batched_check(points);
  EXPECT_EQ(b.first_bad, 2500u);
  EXPECT_TRUE(b.batch_failed);
  points[2500] = points[2501];
  EXPECT_EQ(batched_check(points, 1500).first_bad, 4000u);
}

TEST(MsmGpu, BatchedCheckRefusesRangesItsPlanDoesNotHold) {
  STOKER_REQUIRE_GPU();
  int device = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  gpu::BatchCheckPlan plan;
  ASSERT_FALSE(gpu::plan_batch_check(MsmGroup::g1, 5000, device, plan));
  EXPECT_GE(plan.bucket_bits * plan.windows, 64u);
  const auto points = random_points<G1Affine>(6000, 47);
  Device<G1Affine> p(points);
  Device<unsigned char> scratch(plan.scratch_bytes);
  Device<std::uint64_t> first(1);
  gpu::PointCheckKey key;
  ASSERT_FALSE(gpu::random_point_check_key(key));
  const auto refused = make_error_code(Errc::invalid_argument);
  auto call = [&](std::size_t begin, std::size_t end, std::size_t bytes) {
    return gpu::check_points_batched(plan, first.get(), p.get(), begin, end, key, scratch.get(),
                                     bytes, nullptr);
  };
  EXPECT_EQ(call(0, 6000, plan.scratch_bytes), refused);       // more than the plan's
  EXPECT_EQ(call(10, 5, plan.scratch_bytes), refused);         // backwards
  EXPECT_EQ(call(0, 5000, plan.scratch_bytes - 1), refused);  // too little scratch
  Device<G2Affine> p2(std::vector<G2Affine>(4));
  EXPECT_EQ(gpu::check_points_batched(plan, first.get(), p2.get(), 0, 4, key, scratch.get(),
                                      plan.scratch_bytes, nullptr),
            refused);  // a G1 plan
  ASSERT_FALSE(gpu::check_points_begin(first.get(), 6000, nullptr));
  EXPECT_FALSE(call(1000, 6000, plan.scratch_bytes));
  EXPECT_FALSE(call(0, 1000, plan.scratch_bytes));
  EXPECT_FALSE(call(3, 3, plan.scratch_bytes));  // empty
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(first.download()[0], 6000u);
}

}  // namespace
}  // namespace stoker::kernels
