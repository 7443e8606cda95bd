// Device Fr arithmetic (32-bit limbs) against the host's (64-bit limbs).
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "device_vec.hpp"
#include "fr_test_util.hpp"
#include "kernels/field.cuh"
#include "test/gpu_guard.hpp"

namespace stoker::kernels {
namespace {

__global__ void ops_kernel(const Fr* a, const Fr* b, Fr* out, std::size_t n) {
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[5 * i + 0] = a[i] + b[i];
  out[5 * i + 1] = a[i] - b[i];
  out[5 * i + 2] = a[i] * b[i];
  out[5 * i + 3] = a[i].square();
  out[5 * i + 4] = a[i].pow(std::uint64_t{0x1234567}) + b[i].inverse();
}

TEST(FrGpu, DeviceArithmeticEqualsHostBitForBit) {
  STOKER_REQUIRE_GPU();
  std::mt19937_64 rng(11);
  std::vector<Fr> a, b;
  const Fr edges[] = {Fr::zero(), Fr::one(), -Fr::one(), Fr::from_u64(2), -Fr::from_u64(2)};
  for (const Fr& x : edges)
    for (const Fr& y : edges) {
      a.push_back(x);
      b.push_back(y);
    }
  while (a.size() < 4096) {
    a.push_back(test::random_fr(rng));
    b.push_back(test::random_fr(rng));
  }
  const std::size_t n = a.size();
  test::DeviceVec da(a), db(b), dout(5 * n);
  ops_kernel<<<static_cast<unsigned>((n + 127) / 128), 128>>>(da.get(), db.get(), dout.get(), n);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto out = dout.download();
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_EQ(out[5 * i + 0], a[i] + b[i]) << i;
    ASSERT_EQ(out[5 * i + 1], a[i] - b[i]) << i;
    ASSERT_EQ(out[5 * i + 2], a[i] * b[i]) << i;
    ASSERT_EQ(out[5 * i + 3], a[i].square()) << i;
    ASSERT_EQ(out[5 * i + 4], a[i].pow(std::uint64_t{0x1234567}) + b[i].inverse()) << i;
  }
}

}  // namespace
}  // namespace stoker::kernels
