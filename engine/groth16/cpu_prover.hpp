// The Groth16 prover on the CPU, for both key formats: the reference the
// engine's groth16 workload is compared with bit for bit (same r and s, same
// proof), and the prover of `stoker prove --cpu`.
//
// For a snarkjs key the prover starts from the witness: a, b, c from the
// key's matrices (constraint_matrices.hpp), h on the odd coset
// (kernels/hpoly_odd_coset.hpp). For a bellman key the caller's synthesis
// hands a, b, c, the assignments and the density bits, as bellperson gives
// them to supraseal-c2; h is in the coefficient basis (kernels/hpoly.hpp).
// Then, with w the wires:
//   A  = alpha_1 + sum w_i A_i + r delta_1
//   B  = beta_2  + sum w_i B2_i + s delta_2     (and B1 likewise in G1)
//   C  = sum_{private} w_i L_i + sum h_j H_j + s A + r B1 - r s delta_1
// Every proof is checked with the pairing before it is returned unless the
// caller says not to: a witness that does not satisfy the circuit gives an
// error saying so, never a proof that fails later.
//
// Thread safe: no state; `threads` == 0 uses every hardware thread.
#pragma once

#include <span>

#include "common/error.hpp"
#include "engine/groth16/bellman_witness.hpp"
#include "engine/groth16/constraint_matrices.hpp"
#include "engine/groth16/proof.hpp"
#include "engine/groth16/proof_randomness.hpp"
#include "engine/groth16/proving_key.hpp"

namespace stoker::engine::groth16 {

struct CpuProverOptions {
  unsigned threads = 0;
  bool verify = true;  // the pairing check of each proof before it is returned
};

// What a prover checks of its input before any work, naming what is wrong:
// the witness's count and first value against the key (and the key's
// queries against its header), or a bellman assignment's sizes, densities
// and counts against the key's queries. `counts` are the queries' sizes
// where their points are not in `key` (on the devices); by default the
// key's own.
Error check_witness(const ProvingKey& key, const QueryCounts& counts,
                    std::span<const kernels::Fr> witness);
Error check_assignment(const ProvingKey& key, const QueryCounts& counts,
                       const BellmanAssignment& assignment);
inline Error check_witness(const ProvingKey& key, std::span<const kernels::Fr> witness) {
  return check_witness(key, key.counts(), witness);
}
inline Error check_assignment(const ProvingKey& key, const BellmanAssignment& assignment) {
  return check_assignment(key, key.counts(), assignment);
}

// A proof over a snarkjs key from its witness (num_vars values, Montgomery
// form, w[0] = 1).
Result<Proof> prove_cpu(const ProvingKey& key, const ConstraintMatrices& matrices,
                        std::span<const kernels::Fr> witness, const ProofRandomness& randomness,
                        const CpuProverOptions& options = {});

// A proof over a bellman key from a synthesis' assignment.
Result<Proof> prove_cpu(const ProvingKey& key, const BellmanAssignment& assignment,
                        const ProofRandomness& randomness, const CpuProverOptions& options = {});

}  // namespace stoker::engine::groth16
