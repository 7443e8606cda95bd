// snarkjs's Groth16 proving keys (.zkey, version 1, as snarkjs 0.7 writes
// them for circom circuits compiled for BLS12-381): read into the one
// internal form (proving_key.hpp), and written back for toy keys that
// snarkjs itself proves with. docs/GROTH16_FILES.md section 2 has
// the layout.
//
// Reading refuses, with a message naming the file, the section (id and
// name) and the byte offset: a truncated or corrupt container (bin_file),
// another protocol (PLONK, FFLONK) or version, another curve (a bn128 key
// says so), section sizes that disagree with the header's counts, a domain
// size that is not a power of two, a coefficient outside the matrices,
// rows, wires or field, a coordinate not below q and, unless the caller
// trusts the file, a point off its curve or outside its subgroup. Points
// are stored in exactly the kernels' memory layout (little-endian
// Montgomery words), so each section goes straight from the file into its
// vector. Section 10 (the MPC transcript) is not read: a prover does not
// need it.
//
// No exception escapes; thread safe (nothing shared between calls).
#pragma once

#include <memory>
#include <string>

#include "common/error.hpp"
#include "engine/groth16/key_file.hpp"
#include "engine/groth16/point_check.hpp"
#include "engine/groth16/proving_key.hpp"

namespace stoker::engine::groth16 {

// threads == 0: the hardware's, for the point checks and decoding.
Result<ProvingKey> read_zkey(const std::string& path, PointCheck check = PointCheck::full,
                             unsigned threads = 0);

// The file opened for a load onto devices (key_file.hpp): everything
// read_zkey checks but the queries' points, which stay in the file (IC and
// the header's points read, their coordinates checked; curve and subgroup
// are the load's).
Result<std::unique_ptr<KeyFile>> open_zkey(const std::string& path, unsigned threads = 0);

// Writes a key of format snarkjs as a zkey: sections 1 to 10 in order,
// section 10 a minimal MPC section (a zero circuit hash, no
// contributions), which `snarkjs groth16 prove` and `zkey export
// verificationkey` accept (`zkey verify` does not: no ceremony is
// recorded). Errors: a key whose parts disagree with its counts, or whose
// format is bellman; the file cannot be written (nothing is left behind).
Error write_zkey(const std::string& path, const ProvingKey& key);

}  // namespace stoker::engine::groth16
