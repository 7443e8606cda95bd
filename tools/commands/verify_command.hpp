// `stoker verify`: checks a Groth16 proof over BLS12-381 against a
// verifying key and public inputs in snarkjs's JSON files
// (verification_key.json, proof.json, public.json). Exit status 0 when the
// proof is valid, 1 when it is not or a file is malformed (one line saying
// why), 2 for a usage error.
#pragma once

namespace stoker::tools {

// stoker verify --vk FILE --proof FILE --public FILE [--json]
int verify_command(int argc, char** argv);

}  // namespace stoker::tools
