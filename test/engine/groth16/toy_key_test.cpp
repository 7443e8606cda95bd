// Toy keys made on the CPU keep their bits: a fingerprint of every point and
// coefficient of small keys of both formats, taken from the code before the
// key's points could be made on a GPU, so that a change to how the scalars
// or the points are computed (order, threads, chunks) shows as a changed key.
// The scalars and the bellman synthesis are the same on any number of
// threads past the ranges the loops are cut into, and the memory figures
// callers check cover the key.
#include "engine/groth16/toy_key.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <ostream>
#include <vector>

#include "engine/groth16/detail/toy_key_scalars.hpp"
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
  // The CPU chosen through the options (no GPU named) is the same path.
  ToyKeyOptions cpu;
  cpu.log_n = g.log_n;
  cpu.threads = 2;
  auto key = make_toy_key(circuit.r1cs, ToySecrets::from_seed(8), g.format, cpu);
  ASSERT_TRUE(key) << key.error().what();
  EXPECT_EQ(test::key_fingerprint(*key), g.fingerprint) << "through ToyKeyOptions";
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

bool same(std::span<const kernels::Fr> x, std::span<const kernels::Fr> y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(x[0])) == 0;
}

// 2^16 points on 3 threads: ranges of about 21845, past the 2^14 elements
// that share an inversion, so each range inverts a block and a ragged one.
TEST(ToyKeyScalars, SameOnAnyNumberOfThreads) {
  const auto circuit = make_toy_circuit({.constraints = 60000, .num_public = 4}, 3);
  const auto sec = ToySecrets::from_seed(4);
  for (KeyFormat f : {KeyFormat::snarkjs, KeyFormat::bellman}) {
    const detail::ToyKeyQueries q(circuit.r1cs, f);
    const auto one = detail::toy_key_scalars(circuit.r1cs, sec, f, 16, q, 1);
    const auto three = detail::toy_key_scalars(circuit.r1cs, sec, f, 16, q, 3);
    EXPECT_TRUE(same(one.ic_l, three.ic_l));
    EXPECT_TRUE(same(one.a, three.a));
    EXPECT_TRUE(same(one.b, three.b));
    EXPECT_TRUE(same(one.h, three.h));
    EXPECT_EQ(one.a.size(), q.a);
    EXPECT_EQ(one.b.size(), q.b);
    EXPECT_EQ(one.h.size(), f == KeyFormat::snarkjs ? 65536u : 65535u);
  }
}

TEST(ToyKeySynthesis, SameOnAnyNumberOfThreads) {
  const auto circuit = make_toy_circuit({.constraints = 15000, .num_public = 2}, 6);
  const auto one = synthesize_bellman(circuit.r1cs, circuit.witness, 14, 1);
  const auto three = synthesize_bellman(circuit.r1cs, circuit.witness, 14, 3);
  EXPECT_TRUE(same(one.a, three.a));
  EXPECT_TRUE(same(one.b, three.b));
  EXPECT_TRUE(same(one.c, three.c));
  for (std::size_t i = 0; i < circuit.r1cs.num_constraints; ++i)
    ASSERT_EQ(one.a[i] * one.b[i], one.c[i]) << "row " << i;
}

// What a caller of keys generate's shape checks covers the circuit as
// made and the key's own peak, on the CPU and with GPUs' pinned buffers.
TEST(ToyKeyHostBytes, SetupCoversTheCircuitAndTheKey) {
  for (unsigned log_n : {8u, 12u}) {
    const std::size_t n = std::size_t{1} << log_n;
    const ToyCircuitShape shape{.constraints = n - 3, .num_public = 2};
    const auto circuit = make_toy_circuit(shape, 5);
    const auto& cs = circuit.r1cs;
    const std::size_t held =
        cs.a.capacity() * sizeof(R1csTerm) + cs.b.capacity() * sizeof(R1csTerm) +
        cs.c.capacity() * sizeof(R1csTerm) + circuit.witness.capacity() * sizeof(kernels::Fr);
    for (KeyFormat f : {KeyFormat::snarkjs, KeyFormat::bellman}) {
      const std::size_t key = toy_key_host_bytes(cs, f, log_n, 0);
      EXPECT_GE(toy_setup_host_bytes(shape, f, log_n, 0), held + key) << log_n;
      // Within a factor of 1.5: an estimate, not a guess.
      EXPECT_LE(toy_setup_host_bytes(shape, f, log_n, 0), (held + key) * 3 / 2) << log_n;
      EXPECT_GT(toy_key_host_bytes(cs, f, log_n, 2), key) << "pinned buffers";
    }
  }
}

}  // namespace
}  // namespace stoker::engine::groth16
