// `stoker prove`: a Groth16 proof over BLS12-381 from a snarkjs proving key
// (.zkey) and witness (.wtns), written as snarkjs writes proof.json and
// public.json, so that `snarkjs groth16 verify` and `stoker verify` take
// them as they are.
//
// The key's points are checked (on their curves, in their subgroups) unless
// --trust-key; the proof's r and s come from the operating system's CSPRNG;
// every proof is checked with the pairing before it is written unless
// --no-verify, so a witness that does not satisfy the circuit fails with an
// error saying so. On any error no output file is left.
#pragma once

namespace stoker::tools {

// stoker prove --zkey K --wtns W --proof FILE --public FILE [--trust-key] [--no-verify]
int prove_command(int argc, char** argv);

}  // namespace stoker::tools
