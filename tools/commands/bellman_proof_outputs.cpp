// write_bellman_proof_outputs; see bellman_proof_outputs.hpp.
#include "tools/commands/bellman_proof_outputs.hpp"

#include <string>

#include "engine/groth16/snarkjs_json.hpp"
#include "tools/commands/public_inputs_file.hpp"

namespace stoker::tools {

namespace g16 = engine::groth16;

Error write_bellman_proof_outputs(const NamedOutputs& outs, const g16::Proof& proof,
                                  std::span<const kernels::Fr> inputs) {
  std::string bytes(g16::kProofBytes, '\0');
  g16::encode_proof_bytes(proof, std::span<unsigned char, g16::kProofBytes>(
                                     reinterpret_cast<unsigned char*>(bytes.data()),
                                     g16::kProofBytes));
  if (Error e = output(outs, "--proof-bytes")->write(bytes)) return e;
  if (const auto* f = output(outs, "--proof-json"))
    if (Error e = f->write(g16::proof_json(proof))) return e;
  if (const auto* f = output(outs, "--inputs"))
    if (Error e = write_public_inputs(*f, inputs)) return e;
  return {};
}

}  // namespace stoker::tools
