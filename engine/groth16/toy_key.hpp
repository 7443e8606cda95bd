// A Groth16 proving key for an R1cs, made from secrets the caller knows, in
// either format: for tests (a proof can then be checked against the
// secrets) and for benchmarks at sizes no ceremony here can give. TESTING
// ONLY, NEVER FOR PRODUCTION: whoever knows the secrets can forge proofs.
//
// The key is what a real setup of the same circuit would give:
// - snarkjs: the A and B matrices with one extra A row per public wire
//   (row num_constraints + s, wire s, coefficient 1), Lagrange bases of the
//   5-based domain, gamma = 1 (gamma_2 the generator, as snarkjs's setup
//   leaves it), H on the odd coset of the doubled domain.
// - bellman: the same extra rows (bellman's "input constraints"), the
//   7-based domain, H = tau^i Z(tau) / delta for i < n - 1, A over the
//   public wires and the private wires that appear in A, B over the wires
//   that appear in B (the density bits synthesize_bellman gives).
// Points are computed by fixed-base multiplication on `threads` threads.
#pragma once

#include <cstdint>
#include <vector>

#include "common/error.hpp"
#include "engine/groth16/bellman_witness.hpp"
#include "engine/groth16/proving_key.hpp"
#include "engine/groth16/toy_circuit.hpp"

namespace stoker::engine::groth16 {

struct ToySecrets {
  kernels::Fr tau, alpha, beta, gamma, delta;
  // Non-zero secrets from a seed, tau off every domain of up to 2^32 points.
  static ToySecrets from_seed(std::uint64_t seed);
};

// The smallest log_n whose domain holds the constraints and one row per
// public wire and the constant wire.
unsigned toy_key_log_n(const R1cs& r1cs);

// log_n == 0: toy_key_log_n. snarkjs keys ignore secrets.gamma (1).
Result<ProvingKey> make_toy_key(const R1cs& r1cs, const ToySecrets& secrets, KeyFormat format,
                                unsigned log_n = 0, unsigned threads = 0);

// What bellperson's synthesis would hand a prover for this R1cs and
// witness over a domain of 2^log_n points (the input constraints included).
BellmanWitness synthesize_bellman(const R1cs& r1cs, const std::vector<kernels::Fr>& witness,
                                  unsigned log_n);

}  // namespace stoker::engine::groth16
