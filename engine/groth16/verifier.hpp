// Groth16 verification on the CPU: e(A, B) = e(alpha_1, beta_2)
// e(IC_0 + sum x_i IC_i, gamma_2) e(C, delta_2), checked as one product of
// four pairings with one final exponentiation (kernels/pairing.hpp).
//
// The points must already be known to be on their curves and in their
// subgroups (every decoder of proofs and keys checks that); this checks the
// public inputs' count and the equation, and says which failed.
// Thread safe: no state.
#pragma once

#include <span>

#include "common/error.hpp"
#include "engine/groth16/proof.hpp"
#include "engine/groth16/proving_key.hpp"

namespace stoker::engine::groth16 {

// No error when the proof is valid for these public inputs (Montgomery
// form, w_1 .. w_num_public); Errc::invalid_argument naming both counts
// when theirs does not match the key's; Errc::verification_failed when the
// pairing equation does not hold.
Error verify(const VerifyingKey& vk, const Proof& proof, std::span<const kernels::Fr> inputs);

}  // namespace stoker::engine::groth16
