// One Groth16 proof through the engine, for `stoker prove`: the key made
// resident on the engine's devices (engine/workloads/groth16_workload.hpp),
// then a job of one partition: h and the five MSMs on the device, the proof
// assembled and checked on the CPU. On a GPU this is the prover the engine
// runs for every job; on the host backend the same path with the CPU's
// kernels, so that tests without a GPU exercise it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "engine/engine.hpp"
#include "engine/groth16/bellman_witness.hpp"
#include "engine/groth16/checked_keys.hpp"
#include "engine/groth16/key_file.hpp"
#include "engine/groth16/proof.hpp"
#include "engine/groth16/proving_key.hpp"
#include "engine/workloads/groth16_key_check_once.hpp"
#include "kernels/field.cuh"

namespace boost::asio {
class io_context;
}

namespace stoker::tools {

struct EngineProofInputs {
  // The key in memory, or its file (its points read from it straight onto
  // the device).
  std::shared_ptr<const engine::groth16::ProvingKey> key;
  engine::groth16::KeyFile* file = nullptr;
  // One of the two, as the key's format wants.
  std::shared_ptr<const engine::groth16::WitnessValues> witness;  // snarkjs keys
  std::shared_ptr<const engine::groth16::BellmanWitness> bellman;  // bellman keys
  bool verify = true;
  // The key's points checked on curve and group as they reach the device
  // (read it with PointCheck::trusted then).
  bool check_points = true;
  // A key file's points are checked once per file: a digest this record
  // holds loads them trusted (engine/workloads/groth16_key_check_once.hpp);
  // none: every load checks. `recheck_key`: check even so.
  const engine::groth16::CheckedKeys* checked_keys = nullptr;
  bool recheck_key = false;
  unsigned cpu_threads = 0;  // the host backend's kernels; 0: hardware
  // What errors name: the key's file for its load (a bad point), the
  // witness's for what the witness causes (a broken constraint).
  std::string key_name = "the proving key", witness_name = "the witness";
};

struct EngineProof {
  engine::groth16::Proof proof;
  double upload_s = 0;  // the key onto the devices (its digest included)
  engine::workloads::KeyPoints points = engine::workloads::KeyPoints::checked;
  double digest_s = 0;
  std::string record_note;  // the record could not be read or written
  double prove_s = 0;   // the job: witness in, h, the MSMs, assembly, check
};

// `engine` runs on `io`, which nothing else runs: this returns once the
// job has ended. A witness that does not satisfy the circuit fails with
// the check's reason.
Result<EngineProof> prove_on_engine(engine::Engine& engine, boost::asio::io_context& io,
                                    const EngineProofInputs& in);

}  // namespace stoker::tools
