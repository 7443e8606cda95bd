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
// Points are computed by fixed-base multiplication (kernels/fixed_base.hpp)
// on the GPUs the caller names, or on the CPU; the scalars on the CPU's
// threads either way. The key's bits are the same wherever it is made.
//
// Host memory at the peak (toy_key_host_bytes): the key's points, written
// straight into its vectors, beside the scalars (three per wire and one per
// domain point) or, for snarkjs, the key's matrix entries, whichever is
// more, and pinned bounce buffers of 1 GiB per GPU. At 2^26 points with the
// circuit `stoker keys generate` makes (1.25 wires per point) that is 46.7
// GB of points and 10.2 GB of scalars, and the circuit holds 16.1 GB more:
// 73.0 GB in all on the CPU (toy_setup_host_bytes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
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

struct ToyKeyOptions {
  unsigned log_n = 0;    // 0: toy_key_log_n
  unsigned threads = 0;  // CPU threads; 0: hardware threads
  // The CUDA devices that make the points, each a share of every query
  // (with 512 MiB of device memory; engine/groth16/fixed_base_on_gpu.hpp);
  // empty: the CPU.
  std::vector<int> cuda_ordinals;
};

// snarkjs keys ignore secrets.gamma (1). Errors: a domain too small for the
// circuit, host memory short (named with the need and the limit before
// anything is allocated), a GPU that does not exist or fails (named).
Result<ProvingKey> make_toy_key(const R1cs& r1cs, const ToySecrets& secrets, KeyFormat format,
                                const ToyKeyOptions& options);
// On the CPU. log_n == 0: toy_key_log_n.
Result<ProvingKey> make_toy_key(const R1cs& r1cs, const ToySecrets& secrets, KeyFormat format,
                                unsigned log_n = 0, unsigned threads = 0);

// The host bytes make_toy_key takes at its peak for this circuit (beside
// the circuit), on `gpus` GPUs (0: the CPU).
std::size_t toy_key_host_bytes(const R1cs& r1cs, KeyFormat format, unsigned log_n,
                               std::size_t gpus);

// The host bytes held at the peak by a caller that makes a toy circuit of
// `shape` (the default mix, as `stoker keys generate` and the groth16
// workload make it: up to 1.25 wires and 3.1 terms per constraint), then its
// key over 2^log_n points on `gpus` GPUs, and for bellman's format the
// prover's synthesis (synthesize_bellman) while the key is held: what such
// a caller checks (common::check_host_memory) before it starts.
std::size_t toy_setup_host_bytes(const ToyCircuitShape& shape, KeyFormat format, unsigned log_n,
                                 std::size_t gpus);

// What bellperson's synthesis would hand a prover for this R1cs and
// witness over a domain of 2^log_n points (the input constraints included),
// on `threads` threads (0: hardware threads).
BellmanWitness synthesize_bellman(const R1cs& r1cs, std::span<const kernels::Fr> witness,
                                  unsigned log_n, unsigned threads = 0);

}  // namespace stoker::engine::groth16
