// GPU NTT family equals the CPU reference bit for bit.
#include <gtest/gtest.h>

#include <vector>

#include "common/error.hpp"
#include "device_vec.hpp"
#include "fr_test_util.hpp"
#include "kernels/ntt.hpp"
#include "test/gpu_guard.hpp"

namespace stoker::kernels {
namespace {

using test::DeviceVec;
using test::random_vector;

const NttKind kKinds[] = {NttKind::forward, NttKind::inverse, NttKind::coset_forward,
                          NttKind::coset_inverse};

void check(unsigned log_n, std::size_t batch, bool in_place) {
  const std::size_t n = std::size_t{1} << log_n;
  const auto x = random_vector(n * batch, 1000 * log_n + batch);
  for (NttKind kind : kKinds) {
    std::vector<Fr> want(n * batch);
    cpu::transform(kind, want.data(), x.data(), log_n, batch);
    DeviceVec in(x), out(n * batch);
    Fr* dst = in_place ? in.get() : out.get();
    ASSERT_FALSE(gpu::transform(kind, dst, in.get(), log_n, batch, nullptr));
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const auto got = in_place ? in.download() : out.download();
    ASSERT_TRUE(got == want) << "log_n " << log_n << " batch " << batch << " kind "
                             << static_cast<int>(kind)
                             << (in_place ? " in place" : " out of place");
    if (!in_place) {
      ASSERT_TRUE(in.download() == x) << "input modified, log_n " << log_n;
    }
  }
}

TEST(NttGpu, EqualsCpuSmallSizesAllKinds) {
  STOKER_REQUIRE_GPU();
  for (unsigned log_n = 1; log_n <= 11; ++log_n) {
    check(log_n, 1, true);
    check(log_n, 1, false);
  }
}

TEST(NttGpu, EqualsCpuMultiPassSizes) {
  STOKER_REQUIRE_GPU();
  for (unsigned log_n : {12u, 13u, 15u, 17u, 19u, 20u, 21u, 22u}) {
    check(log_n, 1, true);
    check(log_n, 1, log_n % 2 == 0);
  }
}

TEST(NttGpu, EqualsCpuBatched) {
  STOKER_REQUIRE_GPU();
  check(5, 7, true);
  check(10, 3, false);
  check(14, 3, true);
  check(18, 2, false);
}

TEST(NttGpu, RepeatedCallsAgree) {
  STOKER_REQUIRE_GPU();
  const unsigned log_n = 16;
  const auto x = random_vector(std::size_t{1} << log_n, 77);
  DeviceVec a(x), b(x);
  ASSERT_FALSE(gpu::prepare(log_n));
  ASSERT_FALSE(gpu::ntt(a.get(), a.get(), log_n, 1, nullptr));
  ASSERT_FALSE(gpu::ntt(b.get(), b.get(), log_n, 1, nullptr));
  ASSERT_FALSE(gpu::intt(b.get(), b.get(), log_n, 1, nullptr));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_TRUE(b.download() == x);
  EXPECT_FALSE(a.download() == x);
}

TEST(NttGpu, RejectsBadSizes) {
  STOKER_REQUIRE_GPU();
  DeviceVec a(4);
  EXPECT_EQ(gpu::ntt(a.get(), a.get(), 0, 1, nullptr),
            stoker::make_error_code(stoker::Errc::invalid_argument));
  EXPECT_EQ(gpu::ntt(a.get(), a.get(), kMaxLogN + 1, 1, nullptr),
            stoker::make_error_code(stoker::Errc::invalid_argument));
  EXPECT_EQ(gpu::ntt(nullptr, a.get(), 2, 1, nullptr),
            stoker::make_error_code(stoker::Errc::invalid_argument));
  EXPECT_FALSE(gpu::ntt(a.get(), a.get(), 2, 0, nullptr));  // empty batch: nothing to do
}

}  // namespace
}  // namespace stoker::kernels
