// The CPU prover over toy keys of both formats, whose secrets the tests
// know: proofs verify, carry the points the secrets predict, repeat byte for
// byte with the test randomness and differ with the OS's, and a witness
// that breaks a constraint gives an error instead of a proof.
#include <gtest/gtest.h>

#include "engine/groth16/cpu_prover.hpp"
#include "engine/groth16/toy_circuit.hpp"
#include "engine/groth16/toy_key.hpp"
#include "engine/groth16/verifier.hpp"
#include "kernels/fixed_base.hpp"

namespace stoker::engine::groth16 {
namespace {

using kernels::Fr;

bool same(const Proof& x, const Proof& y) {
  return kernels::equal(kernels::to_xyzz(x.a), kernels::to_xyzz(y.a)) &&
         kernels::equal(kernels::to_xyzz(x.b), kernels::to_xyzz(y.b)) &&
         kernels::equal(kernels::to_xyzz(x.c), kernels::to_xyzz(y.c));
}

std::vector<Fr> public_of(const ToyCircuit& t) {
  return {t.witness.begin() + 1,
          t.witness.begin() + 1 + static_cast<std::ptrdiff_t>(t.r1cs.num_public)};
}

class CpuProver : public ::testing::TestWithParam<KeyFormat> {
 protected:
  void SetUp() override {
    circuit_ = make_toy_circuit({.constraints = 200, .num_public = 3}, 7);
    ASSERT_TRUE(is_satisfied(circuit_.r1cs, circuit_.witness));
    secrets_ = ToySecrets::from_seed(8);
    auto key = make_toy_key(circuit_.r1cs, secrets_, GetParam(), 0, 2);
    ASSERT_TRUE(key) << key.error().what();
    key_ = std::move(*key);
  }
  Result<Proof> prove(std::span<const Fr> w, const ProofRandomness& rnd,
                      CpuProverOptions o = {.threads = 2}) {
    if (key_.format == KeyFormat::bellman) {
      const auto synthesis = synthesize_bellman(circuit_.r1cs, w, key_.log_n);
      return prove_cpu(key_, synthesis.view(), rnd, o);
    }
    auto m = ConstraintMatrices::from(key_);
    if (!m) return m.error();
    return prove_cpu(key_, *m, w, rnd, o);
  }
  ToyCircuit circuit_;
  ToySecrets secrets_;
  ProvingKey key_;
};

TEST_P(CpuProver, ProofsVerifyAgainstTheKeysVerifyingKey) {
  auto rnd = ProofRandomness::from_os();
  ASSERT_TRUE(rnd) << rnd.error().what();
  auto proof = prove(circuit_.witness, *rnd);
  ASSERT_TRUE(proof) << proof.error().what();
  EXPECT_FALSE(verify(key_.vk, *proof, public_of(circuit_))) << "a valid proof";
}

TEST_P(CpuProver, AProofFailsForOtherPublicInputsOrATamperedPoint) {
  auto proof = prove(circuit_.witness, *ProofRandomness::from_os());
  ASSERT_TRUE(proof) << proof.error().what();
  auto inputs = public_of(circuit_);
  inputs[1] += Fr::one();
  EXPECT_EQ(verify(key_.vk, *proof, inputs).code, make_error_code(Errc::verification_failed));
  inputs.pop_back();
  EXPECT_EQ(verify(key_.vk, *proof, inputs).code, make_error_code(Errc::invalid_argument));
  Proof tampered = *proof;
  tampered.c = kernels::to_affine(kernels::dbl(kernels::to_xyzz(proof->c)));
  EXPECT_EQ(verify(key_.vk, tampered, public_of(circuit_)).code,
            make_error_code(Errc::verification_failed));
}

// With r = s = 0 the proof is the secrets' prediction: A = alpha + sum w u,
// B1 likewise with v; the pairing check covers C.
TEST_P(CpuProver, ProofCarriesThePointsTheSecretsPredict) {
  const Fr r = Fr::from_u64(5), s = Fr::from_u64(9);
  auto proof = prove(circuit_.witness, ProofRandomness::fixed_for_tests(r, s));
  ASSERT_TRUE(proof) << proof.error().what();
  // A - alpha - r delta = sum w_i u_i(tau) G, where u_i(tau) G are the key's A points.
  kernels::G1Xyzz want = kernels::to_xyzz(key_.vk.alpha_1);
  std::uint64_t rl[4];
  r.to_canonical(rl);
  kernels::add(want, kernels::scalar_mul(key_.delta_1, rl));
  std::vector<Fr> scalars;
  if (key_.format == KeyFormat::snarkjs) {
    scalars.assign(circuit_.witness.begin(), circuit_.witness.end());
  } else {
    const auto syn = synthesize_bellman(circuit_.r1cs, circuit_.witness, key_.log_n);
    scalars.assign(syn.inputs.begin(), syn.inputs.end());
    for (std::size_t i = 0; i < syn.aux.size(); ++i)
      if (syn.a_aux_density[i]) scalars.push_back(syn.aux[i]);
  }
  ASSERT_EQ(scalars.size(), key_.a.size());
  for (std::size_t i = 0; i < scalars.size(); ++i) {
    std::uint64_t k[4];
    scalars[i].to_canonical(k);
    kernels::add(want, kernels::scalar_mul(key_.a[i], k));
  }
  EXPECT_TRUE(kernels::equal(want, kernels::to_xyzz(proof->a)));
}

TEST_P(CpuProver, TheTestRandomnessRepeatsAProofAndTheOsRandomnessDoesNot) {
  const auto fixed = ProofRandomness::fixed_for_tests(Fr::from_u64(3), Fr::from_u64(4));
  auto p1 = prove(circuit_.witness, fixed), p2 = prove(circuit_.witness, fixed);
  ASSERT_TRUE(p1 && p2);
  EXPECT_TRUE(same(*p1, *p2));
  auto q1 = prove(circuit_.witness, *ProofRandomness::from_os());
  auto q2 = prove(circuit_.witness, *ProofRandomness::from_os());
  ASSERT_TRUE(q1 && q2);
  EXPECT_FALSE(same(*q1, *q2));
  EXPECT_FALSE(same(*q1, *p1));
}

TEST_P(CpuProver, AWitnessThatBreaksAConstraintGivesAnErrorNotAProof) {
  auto w = circuit_.witness;
  w.back() += Fr::one();  // the last gate's output no longer equals its product
  ASSERT_FALSE(is_satisfied(circuit_.r1cs, w));
  auto proof = prove(w, *ProofRandomness::from_os());
  ASSERT_FALSE(proof);
  EXPECT_EQ(proof.error().code, make_error_code(Errc::verification_failed));
  EXPECT_NE(proof.error().what().find("does not satisfy"), std::string::npos)
      << proof.error().what();
  // Without the check the prover returns what it computed, which fails later.
  auto unchecked = prove(w, *ProofRandomness::from_os(), {.threads = 2, .verify = false});
  ASSERT_TRUE(unchecked);
  EXPECT_TRUE(verify(key_.vk, *unchecked, public_of(circuit_)));
}

TEST_P(CpuProver, WitnessOfTheWrongSizeIsRefusedNamingBothCounts) {
  const auto rnd = *ProofRandomness::from_os();
  Result<Proof> proof = Error{};
  if (key_.format == KeyFormat::bellman) {
    auto syn = synthesize_bellman(circuit_.r1cs, circuit_.witness, key_.log_n);
    syn.aux.pop_back();
    proof = prove_cpu(key_, syn.view(), rnd);
  } else {
    auto w = circuit_.witness;
    w.pop_back();
    proof = prove(w, rnd);
  }
  ASSERT_FALSE(proof);
  EXPECT_EQ(proof.error().code, make_error_code(Errc::invalid_argument));
  const auto vars =
      std::to_string(circuit_.r1cs.num_vars - (key_.format == KeyFormat::bellman ? 4 : 0));
  EXPECT_NE(
      proof.error().what().find(std::to_string(std::stoul(vars) - 1) + ", the key wants " + vars),
      std::string::npos)
      << proof.error().what();
}

INSTANTIATE_TEST_SUITE_P(BothFormats, CpuProver,
                         ::testing::Values(KeyFormat::snarkjs, KeyFormat::bellman),
                         [](const auto& info) {
                           return info.param == KeyFormat::snarkjs ? "snarkjs" : "bellman";
                         });

}  // namespace
}  // namespace stoker::engine::groth16
