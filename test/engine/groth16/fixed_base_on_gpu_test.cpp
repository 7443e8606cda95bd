// Fixed-base multiplications through one GPU in chunks equal the CPU's bit
// for bit: host scalars across chunk boundaries in G1 and G2 (compared
// around the boundaries, as the CPU takes ~20 us a G1 point), many ragged
// tasks in one call, and tasks the pipeline refuses, named.
#include "engine/groth16/fixed_base_on_gpu.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "kernels/fixed_base.hpp"
#include "test/gpu_guard.hpp"
#include "test/kernels/fr_test_util.hpp"

namespace stoker::engine::groth16 {
namespace {

using kernels::Fr;
using kernels::G1Affine;
using kernels::G2Affine;

template <typename Affine>
void expect_cpu_bits(const std::vector<Fr>& scalars, const std::vector<Affine>& got,
                     std::size_t from, std::size_t count) {
  count = std::min(count, scalars.size() - from);
  std::vector<Affine> want(count);
  kernels::cpu::fixed_base_mul(want.data(), scalars.data() + from, count);
  for (std::size_t i = 0; i < count; ++i)
    ASSERT_EQ(std::memcmp(&got[from + i], &want[i], sizeof(Affine)), 0) << "point " << from + i;
}

// One task of `n` points from host scalars; checked around every multiple
// of `chunk` and at the end.
template <typename Affine>
void expect_chunks_join(std::size_t n, std::size_t chunk) {
  auto scalars = kernels::test::random_vector(n, 5);
  scalars[chunk] = Fr::zero();
  scalars[chunk + 1] = Fr::one();
  scalars[chunk + 2] = -Fr::one();
  std::vector<Affine> out(n);
  const FixedBaseTask<Affine> task{out, scalars, {}};
  const Error e = fixed_base_on_gpu<Affine>(0, {&task, 1}, "test");
  ASSERT_FALSE(e) << e.what();
  for (std::size_t at = 0; at < n; at += chunk)
    expect_cpu_bits(scalars, out, at >= 500 ? at - 500 : 0, 1000);
  expect_cpu_bits(scalars, out, n - 100, 100);
}

TEST(FixedBaseOnGpu, HostScalarsAcrossG1ChunksMatchTheCpu) {
  STOKER_REQUIRE_GPU();
  expect_chunks_join<G1Affine>((std::size_t{1} << 23) + 3000, std::size_t{1} << 22);
}

TEST(FixedBaseOnGpu, HostScalarsAcrossG2ChunksMatchTheCpu) {
  STOKER_REQUIRE_GPU();
  expect_chunks_join<G2Affine>((std::size_t{1} << 21) + 3000, std::size_t{1} << 21);
}

TEST(FixedBaseOnGpu, ManyRaggedTasksInOneCall) {
  STOKER_REQUIRE_GPU();
  const std::size_t sizes[] = {1, 0, 4097, 3, 70001, 255};
  std::vector<std::vector<Fr>> scalars;
  std::vector<std::vector<G2Affine>> out;
  std::vector<FixedBaseTask<G2Affine>> tasks;
  for (std::size_t i = 0; i < std::size(sizes); ++i) {
    scalars.push_back(kernels::test::random_vector(sizes[i], 40 + i));
    out.emplace_back(sizes[i]);
  }
  for (std::size_t i = 0; i < std::size(sizes); ++i) tasks.push_back({out[i], scalars[i], {}});
  const Error e = fixed_base_on_gpu<G2Affine>(0, tasks, "test");
  ASSERT_FALSE(e) << e.what();
  for (std::size_t i = 0; i < std::size(sizes); ++i)
    expect_cpu_bits(scalars[i], out[i], 0, sizes[i]);
}

// Refused before any GPU is opened: runs without one.
TEST(FixedBaseOnGpu, RefusesATaskWithoutScalarsOrWithTooFew) {
  std::vector<G1Affine> out(4);
  std::vector<Fr> three(3, Fr::one());
  FixedBaseTask<G1Affine> task{out, {}, {}};
  Error e = fixed_base_on_gpu<G1Affine>(0, {&task, 1}, "test");
  EXPECT_EQ(e.code, make_error_code(Errc::invalid_argument));
  EXPECT_NE(e.what().find("neither scalars nor a fill"), std::string::npos) << e.what();
  task.scalars = three;
  e = fixed_base_on_gpu<G1Affine>(0, {&task, 1}, "test");
  EXPECT_NE(e.what().find("3 scalars for 4 points"), std::string::npos) << e.what();
  EXPECT_FALSE(fixed_base_on_gpu<G1Affine>(0, {}, "test"));  // nothing to do
}

}  // namespace
}  // namespace stoker::engine::groth16
