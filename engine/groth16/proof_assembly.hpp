// The last step of a Groth16 proof, wherever its sums were taken (the CPU
// prover, the engine's workload on a GPU): from the witness's sums over the
// key's queries and the blinding scalars r and s,
//   A = alpha_1 + sum_A + r delta_1
//   B = beta_2 + sum_B2 + s delta_2,   B1 = beta_1 + sum_B1 + s delta_1
//   C = sum_L + sum_H + s A + r B1 - r s delta_1
// and the pairing check of the result before anyone sees it.
// Thread safe: no state.
#pragma once

#include <span>

#include "common/error.hpp"
#include "engine/groth16/proof.hpp"
#include "engine/groth16/proof_randomness.hpp"
#include "engine/groth16/proving_key.hpp"
#include "kernels/g1.cuh"
#include "kernels/g2.cuh"

namespace stoker::engine::groth16 {

struct QuerySums {
  kernels::G1Xyzz a, b1;
  kernels::G1Xyzz c;  // the L and H sums together
  kernels::G2Xyzz b2;
};

Proof assemble_proof(const ProvingKey& key, const QuerySums& sums, const ProofRandomness& rnd);

// The proof when it verifies for `inputs` (w_1 .. w_num_public); otherwise
// Errc::verification_failed saying that the witness does not satisfy the
// key's circuit (the key being trusted, that is the only way it fails).
Result<Proof> checked_proof(const ProvingKey& key, const Proof& proof,
                            std::span<const kernels::Fr> inputs);

}  // namespace stoker::engine::groth16
