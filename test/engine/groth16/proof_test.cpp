// engine/groth16/proof.hpp: bellman's 192-byte proof form, on a proof
// snarkjs made (data/multiplier_proof.json).
#include "engine/groth16/proof.hpp"

#include <gtest/gtest.h>

#include <array>

#include "engine/groth16/snarkjs_json.hpp"
#include "groth16_files_test_util.hpp"
#include "kernels/g1_encoding.hpp"
#include "kernels/g2_encoding.hpp"

namespace stoker::engine::groth16 {
namespace {

using namespace test;
using ProofBytes = std::array<unsigned char, kProofBytes>;

Proof snarkjs_proof() {
  auto p = read_proof_json(data_file("multiplier_proof.json"));
  EXPECT_TRUE(p.ok()) << p.error().what();
  return p.ok() ? *p : Proof{};
}

ProofBytes encoded(const Proof& p) {
  ProofBytes b;
  encode_proof_bytes(p, b);
  return b;
}

TEST(ProofBytes, AreACompressedThenBThenC) {
  const Proof p = snarkjs_proof();
  const ProofBytes b = encoded(p);
  unsigned char a[48], bb[96], c[48];
  kernels::encode_g1_compressed(p.a, a);
  kernels::encode_g2_compressed(p.b, bb);
  kernels::encode_g1_compressed(p.c, c);
  EXPECT_TRUE(std::equal(a, a + 48, b.begin()));
  EXPECT_TRUE(std::equal(bb, bb + 96, b.begin() + 48));
  EXPECT_TRUE(std::equal(c, c + 48, b.begin() + 144));
  EXPECT_TRUE(b[0] & 0x80 && b[48] & 0x80 && b[144] & 0x80);
}

TEST(ProofBytes, DecodeGivesBackTheProofInfinityIncluded) {
  Proof p = snarkjs_proof();
  auto back = decode_proof_bytes(encoded(p));
  ASSERT_TRUE(back.ok()) << back.error().what();
  EXPECT_EQ(proof_json(*back), proof_json(p));
  p.c = kernels::G1Affine::infinity();
  const ProofBytes b = encoded(p);
  EXPECT_EQ(b[144], 0xc0);
  back = decode_proof_bytes(b);
  ASSERT_TRUE(back.ok()) << back.error().what();
  EXPECT_TRUE(back->c.is_infinity());
}

TEST(ProofBytes, DecodeRefusesNamingThePoint) {
  const ProofBytes good = encoded(snarkjs_proof());
  ProofBytes b = good;
  b[48] &= 0x7f;
  auto r = decode_proof_bytes(b);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(names(r.error().what(), {"proof: B (bytes 48..143)", "compressed flag"}));
  b = good;
  kernels::encode_g1_compressed(g1_outside_subgroup(), b.data() + 144);
  r = decode_proof_bytes(b);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(
      names(r.error().what(), {"proof: C (bytes 144..191)", "not in the order-r subgroup"}));
  EXPECT_TRUE(decode_proof_bytes(b, PointCheck::trusted).ok());
  b = good;
  b[0] = 0xc0;  // infinity flag with x bits left
  r = decode_proof_bytes(b);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(names(r.error().what(), {"proof: A (bytes 0..47)", "infinity"}));
}

}  // namespace
}  // namespace stoker::engine::groth16
