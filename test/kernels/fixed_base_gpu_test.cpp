// GPU fixed-base multiplication equals the CPU's bit for bit, in G1 and in
// G2, on sizes that are not powers of two (1 included) and on edge scalars
// (0, 1, r - 1, every window boundary).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "common/error.hpp"
#include "fr_test_util.hpp"
#include "kernels/detail/msm_group.hpp"
#include "kernels/fixed_base.hpp"
#include "test/gpu_guard.hpp"

namespace stoker::kernels {
namespace {

template <typename Affine>
std::vector<Affine> gpu_fixed_base(const std::vector<Fr>& s) {
  const std::size_t n = s.size();
  const std::size_t scratch_bytes =
      gpu::fixed_base_scratch_bytes(detail::MsmGroupTraits<Affine>::kGroup, n);
  Fr* d_s = nullptr;
  Affine* d_out = nullptr;
  void* d_scratch = nullptr;
  EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&d_s), n * sizeof(Fr)), cudaSuccess);
  EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&d_out), n * sizeof(Affine)), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&d_scratch, scratch_bytes), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(d_s, s.data(), n * sizeof(Fr), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_FALSE(gpu::fixed_base_mul(d_out, d_s, n, d_scratch, scratch_bytes, nullptr));
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<Affine> out(n);
  EXPECT_EQ(cudaMemcpy(out.data(), d_out, n * sizeof(Affine), cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(d_s);
  cudaFree(d_out);
  cudaFree(d_scratch);
  return out;
}

template <typename Affine>
void expect_gpu_equals_cpu(const std::vector<Fr>& s) {
  std::vector<Affine> want(s.size());
  cpu::fixed_base_mul(want.data(), s.data(), s.size());
  const auto got = gpu_fixed_base<Affine>(s);
  for (std::size_t i = 0; i < s.size(); ++i)
    ASSERT_EQ(std::memcmp(&got[i], &want[i], sizeof(Affine)), 0)
        << "point " << i << " of " << s.size();
}

// 0, 1, r - 1, 256, 2^k at every window boundary, 0xff in every byte.
std::vector<Fr> edge_scalars() {
  std::vector<Fr> s = {Fr::zero(), Fr::one(), -Fr::one(), Fr::from_u64(256), Fr::zero()};
  for (unsigned k = 8; k < 255; k += 8) {
    std::uint64_t v[4] = {0, 0, 0, 0};
    v[k / 64] = std::uint64_t{1} << (k % 64);
    s.push_back(Fr::from_canonical(v));
  }
  const std::uint64_t ones[4] = {~0ull, ~0ull, ~0ull, 0x3fffffffffffffffull};  // < r
  s.push_back(Fr::from_canonical(ones));
  return s;
}

TEST(FixedBaseGpu, MatchesCpuBitForBit) {
  STOKER_REQUIRE_GPU();
  for (std::size_t n : {1, 2, 3, 255, 1000, 4097, 70001})
    expect_gpu_equals_cpu<G1Affine>(test::random_vector(n, 100 + n));
}

TEST(FixedBaseGpu, EdgeScalarsMatchCpu) {
  STOKER_REQUIRE_GPU();
  expect_gpu_equals_cpu<G1Affine>(edge_scalars());
}

TEST(FixedBaseGpu, RefusesTooLittleScratchOrNullPointers) {
  STOKER_REQUIRE_GPU();
  EXPECT_TRUE(
      gpu::fixed_base_mul(static_cast<G1Affine*>(nullptr), nullptr, 4, nullptr, 0, nullptr));
  EXPECT_FALSE(gpu::fixed_base_mul(static_cast<G1Affine*>(nullptr), nullptr, 0, nullptr, 0,
                                   nullptr));  // nothing to do
}

TEST(FixedBaseGpuG2, MatchesCpuBitForBit) {
  STOKER_REQUIRE_GPU();
  for (std::size_t n : {1, 2, 3, 255, 1000, 4097, 20001})
    expect_gpu_equals_cpu<G2Affine>(test::random_vector(n, 200 + n));
}

TEST(FixedBaseGpuG2, EdgeScalarsMatchCpu) {
  STOKER_REQUIRE_GPU();
  expect_gpu_equals_cpu<G2Affine>(edge_scalars());
}

// G2's table is twice G1's: G1's scratch is too little for G2.
TEST(FixedBaseGpuG2, RefusesG1sScratchOrNullPointers) {
  STOKER_REQUIRE_GPU();
  const std::size_t g1 = gpu::fixed_base_scratch_bytes(MsmGroup::g1, 4);
  const std::size_t g2 = gpu::fixed_base_scratch_bytes(MsmGroup::g2, 4);
  EXPECT_EQ(g2, 2 * g1);
  Fr* d_s = nullptr;
  G2Affine* d_out = nullptr;
  void* d_scratch = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d_s), 4 * sizeof(Fr)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d_out), 4 * sizeof(G2Affine)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d_scratch, g2), cudaSuccess);
  EXPECT_EQ(gpu::fixed_base_mul(d_out, d_s, 4, d_scratch, g1, nullptr),
            make_error_code(Errc::invalid_argument));
  EXPECT_TRUE(gpu::fixed_base_mul(static_cast<G2Affine*>(nullptr), d_s, 4, d_scratch, g2, nullptr));
  EXPECT_FALSE(gpu::fixed_base_mul(static_cast<G2Affine*>(nullptr), nullptr, 0, nullptr, 0,
                                   nullptr));  // nothing to do
  cudaFree(d_s);
  cudaFree(d_out);
  cudaFree(d_scratch);
}

}  // namespace
}  // namespace stoker::kernels
