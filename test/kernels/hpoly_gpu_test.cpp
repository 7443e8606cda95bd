// GPU H polynomial equals the CPU reference bit for bit.
#include <gtest/gtest.h>

#include <vector>

#include "common/error.hpp"
#include "device_vec.hpp"
#include "fr_test_util.hpp"
#include "kernels/hpoly.hpp"
#include "test/gpu_guard.hpp"

namespace stoker::kernels {
namespace {

using test::DeviceVec;
using test::random_vector;

void check(unsigned log_n, bool h_aliases_c) {
  const std::size_t n = std::size_t{1} << log_n;
  const auto a = random_vector(n, 3 * log_n), b = random_vector(n, 3 * log_n + 1);
  auto c = random_vector(n, 3 * log_n + 2);
  for (std::size_t i = 0; i < n; i += 2) c[i] = a[i] * b[i];  // half divisible, half not
  std::vector<Fr> want(n);
  cpu::hpoly(want.data(), a.data(), b.data(), c.data(), log_n);
  DeviceVec da(a), db(b), dc(c), dh(n);
  Fr* h = h_aliases_c ? dc.get() : dh.get();
  ASSERT_FALSE(gpu::hpoly(h, da.get(), db.get(), dc.get(), log_n, nullptr));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto got = h_aliases_c ? dc.download() : dh.download();
  ASSERT_TRUE(got == want) << "log_n " << log_n;
}

TEST(HpolyGpu, EqualsCpu) {
  STOKER_REQUIRE_GPU();
  for (unsigned log_n : {1u, 4u, 11u, 12u, 15u, 18u, 20u}) check(log_n, log_n % 2 == 1);
}

TEST(HpolyGpu, RejectsBadSizes) {
  STOKER_REQUIRE_GPU();
  DeviceVec a(2);
  EXPECT_EQ(gpu::hpoly(a.get(), a.get(), a.get(), a.get(), 0, nullptr),
            stoker::make_error_code(stoker::Errc::invalid_argument));
  EXPECT_EQ(gpu::hpoly(a.get(), nullptr, a.get(), a.get(), 1, nullptr),
            stoker::make_error_code(stoker::Errc::invalid_argument));
}

}  // namespace
}  // namespace stoker::kernels
