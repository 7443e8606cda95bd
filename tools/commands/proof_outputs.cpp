// A proof's outputs; see proof_outputs.hpp.
#include "tools/commands/proof_outputs.hpp"

#include <string>

#include "engine/groth16/snarkjs_json.hpp"
#include "tools/cli/output_batch.hpp"
#include "tools/commands/public_inputs_file.hpp"

namespace stoker::tools {

namespace g16 = engine::groth16;

Error write_snarkjs_proof_outputs(const NamedOutputs& outs, const g16::Proof& proof,
                                  std::span<const kernels::Fr> inputs) {
  OutputBatch batch;
  if (Error e = batch.add(*output(outs, "--proof"), g16::proof_json(proof))) return e;
  if (Error e = batch.add(*output(outs, "--public"), g16::public_json(inputs))) return e;
  return batch.commit();
}

Error write_bellman_proof_outputs(const NamedOutputs& outs, const g16::Proof& proof,
                                  std::span<const kernels::Fr> inputs) {
  std::string bytes(g16::kProofBytes, '\0');
  g16::encode_proof_bytes(proof,
                          std::span<unsigned char, g16::kProofBytes>(
                              reinterpret_cast<unsigned char*>(bytes.data()), g16::kProofBytes));
  OutputBatch batch;
  if (Error e = batch.add(*output(outs, "--proof-bytes"), bytes)) return e;
  if (const auto* f = output(outs, "--proof-json"))
    if (Error e = batch.add(*f, g16::proof_json(proof))) return e;
  if (const auto* f = output(outs, "--inputs"))
    if (Error e = batch.add(*f, encode_public_inputs(inputs))) return e;
  return batch.commit();
}

}  // namespace stoker::tools
