// Toy keys made on GPUs equal the CPU's byte for byte, in both formats: on
// one GPU, and shared out over two (each GPU a part of every query).
#include <gtest/gtest.h>

#include "engine/groth16/toy_circuit.hpp"
#include "engine/groth16/toy_key.hpp"
#include "test/gpu_guard.hpp"
#include "toy_key_test_util.hpp"

namespace stoker::engine::groth16 {
namespace {

class ToyKeyGpu : public ::testing::TestWithParam<KeyFormat> {
 protected:
  void expect_gpus_equal_cpu(std::vector<int> ordinals, std::size_t constraints, unsigned log_n) {
    const auto circuit = make_toy_circuit({.constraints = constraints, .num_public = 3}, 11);
    const auto sec = ToySecrets::from_seed(12);
    auto cpu = make_toy_key(circuit.r1cs, sec, GetParam(), log_n, 0);
    ASSERT_TRUE(cpu) << cpu.error().what();
    ToyKeyOptions o;
    o.log_n = log_n;
    o.cuda_ordinals = ordinals;
    auto gpu = make_toy_key(circuit.r1cs, sec, GetParam(), o);
    ASSERT_TRUE(gpu) << gpu.error().what();
    EXPECT_EQ(test::first_difference(*gpu, *cpu), "") << ordinals.size() << " GPU(s)";
    EXPECT_EQ(test::key_fingerprint(*gpu), test::key_fingerprint(*cpu));
  }
};

TEST_P(ToyKeyGpu, EqualsTheCpusKeyByteForByte) {
  STOKER_REQUIRE_GPU();
  expect_gpus_equal_cpu({0}, 200, 0);
  expect_gpus_equal_cpu({0}, 3000, 12);
}

TEST_P(ToyKeyGpu, TwoGpusShareTheQueriesAndGiveTheSameKey) {
  STOKER_REQUIRE_GPUS(2);
  expect_gpus_equal_cpu({0, 1}, 3000, 12);
  expect_gpus_equal_cpu({1, 0}, 5, 3);  // queries of a few points: some shares empty
}

TEST_P(ToyKeyGpu, AMissingGpuIsNamed) {
  STOKER_REQUIRE_GPU();
  const auto circuit = make_toy_circuit({.constraints = 20, .num_public = 1}, 1);
  ToyKeyOptions o;
  o.cuda_ordinals = {1000};
  auto key = make_toy_key(circuit.r1cs, ToySecrets::from_seed(1), GetParam(), o);
  ASSERT_FALSE(key);
  EXPECT_NE(key.error().what().find("GPU 1000"), std::string::npos) << key.error().what();
}

INSTANTIATE_TEST_SUITE_P(BothFormats, ToyKeyGpu,
                         ::testing::Values(KeyFormat::snarkjs, KeyFormat::bellman),
                         [](const auto& info) {
                           return info.param == KeyFormat::snarkjs ? "snarkjs" : "bellman";
                         });

}  // namespace
}  // namespace stoker::engine::groth16
