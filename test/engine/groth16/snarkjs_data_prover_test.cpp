// The CPU prover over the keys and witnesses snarkjs 0.7.6 and circom 2
// made (data/): its proofs verify against the verification keys snarkjs
// exported, go through proof.json and back, and carry the public signals
// snarkjs's own proofs carry.
#include <gtest/gtest.h>

#include "engine/groth16/cpu_prover.hpp"
#include "engine/groth16/snarkjs_json.hpp"
#include "engine/groth16/verifier.hpp"
#include "engine/groth16/wtns_file.hpp"
#include "engine/groth16/zkey_file.hpp"
#include "groth16_files_test_util.hpp"

namespace stoker::engine::groth16 {
namespace {

using kernels::Fr;
using test::data_file;

class SnarkjsData : public ::testing::TestWithParam<const char*> {
 protected:
  std::string file(const std::string& suffix) const { return data_file(GetParam() + suffix); }
};

TEST_P(SnarkjsData, ProofsVerifyAgainstSnarkjssVerificationKey) {
  auto key = read_zkey(file(".zkey"));
  ASSERT_TRUE(key) << key.error().what();
  auto w = read_wtns(file(".wtns"));
  ASSERT_TRUE(w) << w.error().what();
  auto vk = read_verification_key_json(file("_verification_key.json"));
  ASSERT_TRUE(vk) << vk.error().what();
  auto pub = read_public_json(file("_public.json"));
  ASSERT_TRUE(pub) << pub.error().what();
  auto m = ConstraintMatrices::from(*key);
  ASSERT_TRUE(m) << m.error().what();

  auto proof = prove_cpu(*key, *m, *w, *ProofRandomness::from_os(), {.threads = 2});
  ASSERT_TRUE(proof) << proof.error().what();
  EXPECT_FALSE(verify(*vk, *proof, *pub));
  // Through snarkjs's JSON and back, as `stoker prove` writes it.
  auto again = parse_proof_json(proof_json(*proof), "proof.json");
  ASSERT_TRUE(again) << again.error().what();
  EXPECT_FALSE(verify(*vk, *again, *pub));
  // Deterministic with the test randomness, also with r = s = 0.
  const auto zero = ProofRandomness::fixed_for_tests(Fr::zero(), Fr::zero());
  auto z1 = prove_cpu(*key, *m, *w, zero, {.threads = 1});
  auto z2 = prove_cpu(*key, *m, *w, zero, {.threads = 2});
  ASSERT_TRUE(z1 && z2);
  EXPECT_EQ(proof_json(*z1), proof_json(*z2));
  EXPECT_FALSE(verify(*vk, *z1, *pub));
}

TEST_P(SnarkjsData, ATamperedWitnessFailsTheProversCheck) {
  auto key = read_zkey(file(".zkey"));
  auto w = read_wtns(file(".wtns"));
  ASSERT_TRUE(key && w);
  auto m = ConstraintMatrices::from(*key);
  ASSERT_TRUE(m);
  auto bad = *w;
  bad.back() += Fr::one();
  auto proof = prove_cpu(*key, *m, bad, *ProofRandomness::from_os(), {.threads = 2});
  ASSERT_FALSE(proof);
  EXPECT_NE(proof.error().what().find("does not satisfy"), std::string::npos)
      << proof.error().what();
}

INSTANTIATE_TEST_SUITE_P(Circuits, SnarkjsData,
                         ::testing::Values("multiplier", "bits", "nopublic"));

}  // namespace
}  // namespace stoker::engine::groth16
