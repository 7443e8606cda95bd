// The GPU's odd-coset H scalars equal the CPU's bit for bit, in stoker's
// order, h aliasing an input or not.
#include <gtest/gtest.h>

#include <vector>

#include "common/error.hpp"
#include "device_vec.hpp"
#include "fr_test_util.hpp"
#include "kernels/hpoly_odd_coset.hpp"
#include "test/gpu_guard.hpp"

namespace stoker::kernels {
namespace {

using test::DeviceVec;
using test::random_vector;

TEST(HpolyOddCosetGpu, EqualsCpu) {
  STOKER_REQUIRE_GPU();
  for (unsigned log_n : {1u, 5u, 11u, 12u, 16u, 20u}) {
    const std::size_t n = std::size_t{1} << log_n;
    const auto a = random_vector(n, 5 * log_n), b = random_vector(n, 5 * log_n + 1);
    auto c = random_vector(n, 5 * log_n + 2);
    for (std::size_t i = 0; i < n; i += 2) c[i] = a[i] * b[i];
    std::vector<Fr> want(n);
    cpu::hpoly_odd_coset_in_ntt_order(want.data(), a.data(), b.data(), c.data(), log_n);
    DeviceVec da(a), db(b), dc(c), dh(n);
    const bool alias = log_n % 2 == 1;
    Fr* h = alias ? da.get() : dh.get();
    ASSERT_FALSE(gpu::hpoly_odd_coset(h, da.get(), db.get(), dc.get(), log_n, nullptr));
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const auto got = alias ? da.download() : dh.download();
    ASSERT_TRUE(got == want) << "log_n " << log_n;
  }
}

TEST(HpolyOddCosetGpu, RejectsBadSizes) {
  STOKER_REQUIRE_GPU();
  DeviceVec a(2);
  EXPECT_EQ(gpu::hpoly_odd_coset(a.get(), a.get(), a.get(), a.get(), 0, nullptr),
            stoker::make_error_code(stoker::Errc::invalid_argument));
  EXPECT_EQ(gpu::hpoly_odd_coset(a.get(), nullptr, a.get(), a.get(), 1, nullptr),
            stoker::make_error_code(stoker::Errc::invalid_argument));
}

}  // namespace
}  // namespace stoker::kernels
