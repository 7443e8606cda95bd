// engine/groth16/bellman_witness_file.hpp: a witness round trips, and
// every malformed file is refused naming what is wrong.
#include "engine/groth16/bellman_witness_file.hpp"

#include <gtest/gtest.h>

#include "engine/groth16/toy_circuit.hpp"
#include "engine/groth16/toy_key.hpp"
#include "groth16_files_test_util.hpp"

namespace stoker::engine::groth16 {
namespace {

using test::Bytes;
using test::read_bytes;
using test::ScratchDir;

BellmanWitness toy_witness() {
  const auto circuit = make_toy_circuit({.constraints = 40, .num_public = 3}, 5);
  return synthesize_bellman(circuit.r1cs, circuit.witness, toy_key_log_n(circuit.r1cs));
}

std::string refusal(const std::string& path) {
  auto w = read_bellman_witness(path);
  EXPECT_FALSE(w) << path << " was read";
  return w ? std::string{} : w.error().what();
}

TEST(BellmanWitnessFile, RoundTrips) {
  ScratchDir dir;
  const auto w = toy_witness();
  ASSERT_FALSE(write_bellman_witness(dir.path("w.bwit"), w));
  auto back = read_bellman_witness(dir.path("w.bwit"));
  ASSERT_TRUE(back) << back.error().what();
  EXPECT_EQ(back->a, w.a);
  EXPECT_EQ(back->b, w.b);
  EXPECT_EQ(back->c, w.c);
  EXPECT_EQ(back->inputs, w.inputs);
  EXPECT_EQ(back->aux, w.aux);
  EXPECT_EQ(back->a_aux_density, w.a_aux_density);
  EXPECT_EQ(back->b_input_density, w.b_input_density);
  EXPECT_EQ(back->b_aux_density, w.b_aux_density);
}

TEST(BellmanWitnessFile, RefusesTruncationAValueAboveRAndBadCounts) {
  ScratchDir dir;
  const auto w = toy_witness();
  ASSERT_FALSE(write_bellman_witness(dir.path("w.bwit"), w));
  const Bytes good = read_bytes(dir.path("w.bwit"));

  Bytes cut(good.begin(), good.end() - 5);
  EXPECT_NE(refusal(dir.file("cut.bwit", cut)).find("section 7 (density bits)"), std::string::npos);

  // Section 2 (a) starts after the 12-byte file header, the 12-byte header of
  // section 1, its 48 bytes and section 2's own 12-byte header.
  Bytes big = good;
  const std::size_t a0 = 12 + 12 + 48 + 12;
  for (int i = 0; i < 32; ++i) big[a0 + 32 + i] = 0xff;  // a[1] = 2^256 - 1
  const auto msg = refusal(dir.file("big.bwit", big));
  EXPECT_NE(msg.find("section 2 (a): value 1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not below r"), std::string::npos) << msg;

  Bytes wrong_r = good;
  wrong_r[12 + 12 + 4] ^= 1;
  EXPECT_NE(refusal(dir.file("r.bwit", wrong_r)).find("not BLS12-381"), std::string::npos);

  auto odd = w;
  odd.b_aux_density.pop_back();
  const auto e = write_bellman_witness(dir.path("odd.bwit"), odd);
  EXPECT_EQ(e.code, make_error_code(Errc::invalid_argument));
  EXPECT_FALSE(std::filesystem::exists(dir.path("odd.bwit")));
}

}  // namespace
}  // namespace stoker::engine::groth16
