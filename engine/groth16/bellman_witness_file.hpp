// A bellman witness in a file (bellman_witness.hpp says what it holds), so
// that `stoker prove --params` proves what a bellperson synthesis gave,
// outside Rust. stoker's own format, in the container snarkjs's files use
// (detail/bin_file.hpp): magic "bwit", version 1, little-endian:
//
//   section 1 (48 bytes): u32 n8 = 32, r (32 bytes, canonical),
//                         u32 log_n, u32 num_inputs, u32 num_aux
//   sections 2, 3, 4:     a, b, c: 2^log_n values each
//   section 5:            inputs: num_inputs values (inputs[0] = 1)
//   section 6:            aux: num_aux values
//   section 7:            the density bits, least significant bit first:
//                         A over aux (ceil(num_aux / 8) bytes), then B over
//                         inputs (ceil(num_inputs / 8)), then B over aux
//
// Values are 32 bytes, little-endian, canonical (below r), as in a .wtns.
// Reading refuses what does not fit, naming the file, section and byte.
// No exception escapes; thread safe.
#pragma once

#include <string>

#include "common/error.hpp"
#include "engine/groth16/bellman_witness.hpp"
#include "engine/groth16/file_window.hpp"

namespace stoker::engine::groth16 {

Result<BellmanWitness> read_bellman_witness(const std::string& path, unsigned threads = 0);
// The same from a window of a file or shared-memory object.
Result<BellmanWitness> read_bellman_witness(const FileWindow& window, unsigned threads = 0);

// Errors: a, b, c of different sizes or not a power of two, densities whose
// lengths are not the assignments', the file cannot be written (nothing is
// left behind).
Error write_bellman_witness(const std::string& path, const BellmanWitness& witness);

}  // namespace stoker::engine::groth16
