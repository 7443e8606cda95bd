// The groth16 workload: whole Groth16 proofs over a proving key resident on
// every device, one proof per partition (Filecoin's PoRep is 10 partitions
// of one key), pipelined as ntt_msm_h is.
//
// load_groth16_key puts the key's queries on the devices once, as one Srs
// (engine/srs.hpp: pinned blocks under the host budget, NCCL broadcast,
// device budgets, eviction): H, L, A and B_G1 back to back, a snarkjs key's
// H in stoker's NTT order (kernels/hpoly_odd_coset.hpp) so that no proof
// permutes anything, then B_G2, each of its 192-byte points in two of the
// Srs's 96-byte slots, then a snarkjs key's A and B matrices by rows
// (kernels/constraint_rows.hpp) in slots of their own: one resident block
// per key, one broadcast, one budget charge. The verifying key stays on the
// host.
//
// Per partition:
// - the producer (CPU workers) writes the witness's scalars of the L, A and
//   B queries, split by value, straight into pinned memory, and either a
//   snarkjs witness (32 bytes a wire) or a bellman witness's a, b and c
//   (evaluations as given, 96 bytes a row);
// - the device work evaluates a snarkjs key's rows at the witness into a,
//   b, c, computes h (the odd coset for snarkjs, the coefficient form for
//   bellman) and the five MSMs H, L, A, B_G1 and B_G2 (GPU kernels, or the
//   CPU's on the host backend), marking the steps "h" (the rows' evaluation
//   included), "msm_h", "msm_l", "msm_a", "msm_b_g1" and "msm_b_g2";
// - after the sums land, a worker assembles the proof with r and s
//   (engine/groth16/proof_assembly.hpp) and, unless
//   told not to, checks it with the pairing: a witness that does not satisfy
//   the circuit fails the job saying so.
// With the same r and s the proofs equal the CPU prover's bit for bit.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "devices/device_set.hpp"
#include "engine/engine.hpp"
#include "engine/groth16/bellman_witness.hpp"
#include "engine/groth16/constraint_matrices.hpp"
#include "engine/groth16/key_file.hpp"
#include "engine/groth16/proof.hpp"
#include "engine/groth16/proof_randomness.hpp"
#include "engine/groth16/proving_key.hpp"
#include "engine/job.hpp"
#include "engine/workloads/build_limits.hpp"
#include "kernels/g2.cuh"

namespace stoker::engine::workloads {

// A proving key loaded on an engine: the resident queries, with where each
// starts among the resident 96-byte slots (B_G2's points take two slots
// each, from b2_at to rows_at; a snarkjs key's rows from rows_at to the
// end, laid out as `rows` says), and on the host what a proof needs
// besides: `key` holds the verifying key, beta_1, delta_1 and the sizes but
// no query points or coefficients (those of a 2^26 key are 24-30 GB, and a
// zkey's coefficients 9 GB more, which a host that keeps several keys
// resident cannot hold twice).
struct Groth16Key {
  std::shared_ptr<const groth16::ProvingKey> key;
  Srs points;
  std::size_t h_at = 0, l_at = 0, a_at = 0, b1_at = 0, b2_at = 0, rows_at = 0;
  groth16::ConstraintMatrices::Image rows;  // snarkjs keys
  std::size_t g1_points() const { return b2_at; }
  std::size_t g2_points() const { return (rows_at - b2_at) / 2; }
  groth16::QueryCounts counts() const {
    return {l_at - h_at, a_at - l_at, b1_at - a_at, b2_at - b1_at, g2_points()};
  }
};

// Loads `key` on every device of `engine`. With `check_points`, every point
// is checked on its curve and in its group there, on the GPUs as the chunks
// land (each device a share) or on the CPU on the host backend, and a bad
// one fails the load naming its query and index ("B_G2 point 17 is not on
// the curve or not in G2"); read the key with PointCheck::trusted then,
// which leaves the CPU only the coordinates' range check. Without, the
// points are trusted (checked by the reader, or made by this process).
// Once loaded the engine holds no reference to `key`: its points go when
// the caller drops its own.
// `chunk_points`: SrsLoadOptions' (0: its default), smaller only to test
// the edges between pinned blocks.
Result<Groth16Key> load_groth16_key(Engine& engine, std::shared_ptr<const groth16::ProvingKey> key,
                                    std::string label = "groth16 key", bool check_points = false,
                                    std::size_t chunk_points = 0);

// The same from a key's file (groth16/key_file.hpp: open_zkey, open_params)
// with the points read straight from the file into the pinned blocks: the
// host holds the pinned blocks, a zkey's coefficients until its matrices
// are built, and a zkey's H (96 bytes a point, read whole for its
// permutation into NTT order), never the whole key. A point whose encoding
// or coordinates are bad fails the load naming the file, the query, the
// point and its byte.
Result<Groth16Key> load_groth16_key(Engine& engine, groth16::KeyFile& file,
                                    std::string label = "groth16 key", bool check_points = false,
                                    std::size_t chunk_points = 0);

struct Groth16Options {
  Groth16Key key;
  // One proof per partition: witnesses for a snarkjs key, bellman witnesses
  // for a bellman key.
  std::vector<std::shared_ptr<const groth16::WitnessValues>> witnesses;
  std::vector<std::shared_ptr<const groth16::BellmanWitness>> bellman_witnesses;
  // One per partition; empty: fresh from the OS's CSPRNG for each proof.
  // The run's copy of each pair is zeroed once its proof is assembled.
  std::vector<groth16::ProofRandomness> randomness;
  bool verify = true;  // the pairing check of each proof
  // The engine's devices, to plan the MSMs for them, and their budget
  // (0: 85 % of each device's memory, the engine's default).
  const devices::DeviceSet* devices = nullptr;
  std::size_t device_budget_bytes = 0;
  unsigned cpu_threads = 0;  // the CPU kernels' threads on the host backend; 0: hardware
  int priority = 0;
  std::string name = "groth16";
  BuildLimits limits;
};

// Options for proofs over `key` on `engine`: its devices, the smallest of
// their budgets and its host budget; witnesses and the rest left to the
// caller.
Groth16Options groth16_options_on(const Engine& engine, Groth16Key key);

// The job's outputs; keep it alive until the job's handler ran.
struct Groth16Run {
  Groth16Options options;
  std::size_t partitions = 0;
  // Per partition, each MSM's window sums as the device leaves them
  // (kernels/msm.hpp), finished on the host when the proof is assembled:
  // H, L, A and B_G1 of g1_sums_bytes each, then B_G2 of g2_sums_bytes.
  std::size_t g1_sums_bytes = 0, g2_sums_bytes = 0;
  std::vector<std::byte> sums;
  std::size_t sums_stride() const { return 4 * g1_sums_bytes + g2_sums_bytes; }
  std::vector<groth16::Proof> proofs;  // one per partition, once its check ran
  std::vector<char> proved;            // per partition: its proof is in `proofs`
  std::vector<std::string> failures;   // per partition: why its check failed
  // What each partition's last step reads (the witness, gathered scalars).
  std::vector<std::shared_ptr<const void>> inputs_of;
};

Result<Job> make_groth16_job(const Groth16Options& options, std::shared_ptr<Groth16Run>& run);

}  // namespace stoker::engine::workloads
