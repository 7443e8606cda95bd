// GPU fixed-base multiplication equals the CPU's bit for bit, on sizes that
// are not powers of two (1 included) and on edge scalars.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "fr_test_util.hpp"
#include "kernels/g1_fixed_base.hpp"
#include "test/gpu_guard.hpp"

namespace stoker::kernels {
namespace {

std::vector<G1Affine> gpu_fixed_base(const std::vector<Fr>& s) {
  const std::size_t n = s.size();
  const std::size_t scratch_bytes = gpu::fixed_base_scratch_bytes(n);
  Fr* d_s = nullptr;
  G1Affine* d_out = nullptr;
  void* d_scratch = nullptr;
  EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&d_s), n * sizeof(Fr)), cudaSuccess);
  EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&d_out), n * sizeof(G1Affine)), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&d_scratch, scratch_bytes), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(d_s, s.data(), n * sizeof(Fr), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_FALSE(gpu::fixed_base_mul(d_out, d_s, n, d_scratch, scratch_bytes, nullptr));
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<G1Affine> out(n);
  EXPECT_EQ(cudaMemcpy(out.data(), d_out, n * sizeof(G1Affine), cudaMemcpyDeviceToHost),
            cudaSuccess);
  cudaFree(d_s);
  cudaFree(d_out);
  cudaFree(d_scratch);
  return out;
}

void expect_gpu_equals_cpu(const std::vector<Fr>& s) {
  std::vector<G1Affine> want(s.size());
  cpu::fixed_base_mul(want.data(), s.data(), s.size());
  const auto got = gpu_fixed_base(s);
  for (std::size_t i = 0; i < s.size(); ++i)
    ASSERT_EQ(std::memcmp(&got[i], &want[i], sizeof(G1Affine)), 0)
        << "point " << i << " of " << s.size();
}

TEST(FixedBaseGpu, MatchesCpuBitForBit) {
  STOKER_REQUIRE_GPU();
  for (std::size_t n : {1, 2, 3, 255, 1000, 4097, 70001})
    expect_gpu_equals_cpu(test::random_vector(n, 100 + n));
}

TEST(FixedBaseGpu, EdgeScalarsMatchCpu) {
  STOKER_REQUIRE_GPU();
  std::vector<Fr> s = {Fr::zero(), Fr::one(), -Fr::one(), Fr::from_u64(256), Fr::zero()};
  expect_gpu_equals_cpu(s);
}

TEST(FixedBaseGpu, RefusesTooLittleScratchOrNullPointers) {
  STOKER_REQUIRE_GPU();
  EXPECT_TRUE(gpu::fixed_base_mul(nullptr, nullptr, 4, nullptr, 0, nullptr));
  EXPECT_FALSE(gpu::fixed_base_mul(nullptr, nullptr, 0, nullptr, 0, nullptr));  // nothing to do
}

}  // namespace
}  // namespace stoker::kernels
