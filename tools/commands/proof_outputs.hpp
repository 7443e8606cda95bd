// The outputs of a proof, as `stoker prove` and `stoker prove --server`
// write them, all or none (tools/cli/output_batch.hpp): a failure to write
// one leaves every output as it was.
// - a snarkjs key's: --proof (proof.json) and --public (public.json);
// - a bellman key's: --proof-bytes (the 192 bytes, A, B, C compressed),
//   and where given --proof-json (snarkjs's proof.json) and --inputs
//   (public_inputs_file.hpp).
// Internal to tools/commands/.
#pragma once

#include <span>

#include "common/error.hpp"
#include "engine/groth16/proof.hpp"
#include "kernels/field.cuh"
#include "tools/cli/output_file.hpp"

namespace stoker::tools {

// `inputs`: the public signals, the constant 1 left out. Errors name the
// file.
Error write_snarkjs_proof_outputs(const NamedOutputs& outs, const engine::groth16::Proof& proof,
                                  std::span<const kernels::Fr> inputs);

// `inputs`: the public inputs after the constant 1. Errors name the file.
Error write_bellman_proof_outputs(const NamedOutputs& outs, const engine::groth16::Proof& proof,
                                  std::span<const kernels::Fr> inputs);

}  // namespace stoker::tools
