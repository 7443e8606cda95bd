// Toy keys made on the CPU keep their bits: a fingerprint of every point and
// coefficient of small keys of both formats, taken from the code before the
// key's points could be made on a GPU, so that a change to how the scalars
// or the points are computed (order, threads, chunks) shows as a changed key.
#include "engine/groth16/toy_key.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>

#include "engine/groth16/toy_circuit.hpp"
#include "toy_key_test_util.hpp"

namespace stoker::engine::groth16 {
namespace {

struct Golden {
  KeyFormat format;
  std::size_t constraints, num_public;
  unsigned log_n;
  std::uint64_t fingerprint;
};

void PrintTo(const Golden& g, std::ostream* os) {
  *os << (g.format == KeyFormat::snarkjs ? "snarkjs" : "bellman") << ", " << g.constraints
      << " constraints";
}

class ToyKeyBits : public ::testing::TestWithParam<Golden> {};

TEST_P(ToyKeyBits, CpuKeyEqualsTheKnownBits) {
  const Golden g = GetParam();
  const auto circuit =
      make_toy_circuit({.constraints = g.constraints, .num_public = g.num_public}, 7);
  for (unsigned threads : {1u, 3u}) {
    auto key = make_toy_key(circuit.r1cs, ToySecrets::from_seed(8), g.format, g.log_n, threads);
    ASSERT_TRUE(key) << key.error().what();
    EXPECT_EQ(test::key_fingerprint(*key), g.fingerprint)
        << "threads " << threads << ", 2^" << key->log_n << " points";
  }
}

INSTANTIATE_TEST_SUITE_P(
    BothFormats, ToyKeyBits,
    ::testing::Values(Golden{KeyFormat::snarkjs, 200, 3, 0, 7228012569928769876ull},
                      Golden{KeyFormat::bellman, 200, 3, 0, 2717066038898980541ull},
                      Golden{KeyFormat::snarkjs, 1000, 2, 11, 7232006011493697782ull},
                      Golden{KeyFormat::bellman, 1000, 2, 11, 12840644542128160852ull},
                      Golden{KeyFormat::snarkjs, 6000, 5, 13, 1200871294563202221ull},
                      Golden{KeyFormat::bellman, 6000, 5, 13, 4833009830387663454ull}),
    [](const auto& info) {
      return std::string(info.param.format == KeyFormat::snarkjs ? "snarkjs" : "bellman") + "_" +
             std::to_string(info.param.constraints);
    });

}  // namespace
}  // namespace stoker::engine::groth16
