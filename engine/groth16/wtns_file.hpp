// Witness files (.wtns, version 2) as circom's witness calculator and
// `snarkjs wtns calculate` write them: section 1 {u32 n8 = 32, r, u32
// nWitness}, section 2 the nWitness values, each 32 little-endian bytes,
// canonical (docs/GROTH16_FILES.md section 3). Wire 0 is the
// constant 1, then the public outputs and inputs, then the private wires.
//
// Reading refuses, naming the file, the section and the byte or the
// value's index: a corrupt container, a version other than 2, n8 other
// than 32, a field other than BLS12-381's r (a bn128 witness says so),
// sizes that disagree with nWitness, a value not below r. The values come
// back in Montgomery form, as the kernels take them; the file is read
// straight into the vector and converted in place.
//
// No exception escapes; thread safe.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "engine/groth16/file_window.hpp"
#include "engine/groth16/witness_values.hpp"
#include "kernels/field.cuh"

namespace stoker::engine::groth16 {

// threads == 0: the hardware's, for the range checks and conversion.
Result<WitnessValues> read_wtns(const std::string& path, unsigned threads = 0);
// The same from a window of a file or shared-memory object.
Result<WitnessValues> read_wtns(const FileWindow& window, unsigned threads = 0);

// Writes `witness` (Montgomery form) as circom's witness calculator does.
Error write_wtns(const std::string& path, std::span<const kernels::Fr> witness);

}  // namespace stoker::engine::groth16
