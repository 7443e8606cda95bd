// The toy SRS made on a GPU equals the CPU's bit for bit, across chunk
// boundaries (more points than one GPU chunk) and for slices.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "engine/workloads/toy_srs.hpp"
#include "test/gpu_guard.hpp"

namespace stoker::engine::workloads {
namespace {

using kernels::G1Affine;

void expect_gpu_equals_cpu(unsigned log_n, std::size_t first, std::size_t n) {
  std::vector<G1Affine> cpu(n), gpu(n);
  Error e = make_toy_srs(21, log_n, first, cpu, -1);
  ASSERT_FALSE(e) << e.what();
  e = make_toy_srs(21, log_n, first, gpu, 0);
  ASSERT_FALSE(e) << e.what();
  for (std::size_t i = 0; i < n; ++i)
    ASSERT_EQ(std::memcmp(&gpu[i], &cpu[i], sizeof(G1Affine)), 0) << "point " << first + i;
}

TEST(ToySrsGpu, MatchesCpuBitForBit) {
  STOKER_REQUIRE_GPU();
  expect_gpu_equals_cpu(1, 0, 1);
  expect_gpu_equals_cpu(12, 0, toy_srs_points(12));
  expect_gpu_equals_cpu(12, 1000, 777);
}

TEST(ToySrsGpu, ChunksJoinWithoutSeams) {
  STOKER_REQUIRE_GPU();
  // Two GPU chunks of 2^22 and a ragged third, compared with the CPU around
  // the boundaries only (the CPU takes ~20 us a point).
  const unsigned log_n = 24;
  const std::size_t n = (std::size_t{1} << 23) + 5000;
  std::vector<G1Affine> gpu(n);
  const Error e = make_toy_srs(21, log_n, 0, gpu, 0);
  ASSERT_FALSE(e) << e.what();
  for (std::size_t at : {std::size_t{0}, std::size_t{1} << 22, std::size_t{1} << 23}) {
    std::vector<G1Affine> cpu(2000);
    const std::size_t from = at >= 1000 ? at - 1000 : 0;
    ASSERT_FALSE(make_toy_srs(21, log_n, from, cpu, -1));
    for (std::size_t i = 0; i < cpu.size() && from + i < n; ++i)
      ASSERT_EQ(std::memcmp(&gpu[from + i], &cpu[i], sizeof(G1Affine)), 0) << from + i;
  }
}

TEST(ToySrsGpu, RefusesAMissingGpu) {
  STOKER_REQUIRE_GPU();
  std::vector<G1Affine> out(3);
  const Error e = make_toy_srs(1, 2, 0, out, 1000);
  EXPECT_TRUE(e);
  EXPECT_NE(e.what().find("1000"), std::string::npos) << e.what();
}

}  // namespace
}  // namespace stoker::engine::workloads
