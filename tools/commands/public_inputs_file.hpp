// Public inputs of a bellman proof in a file, as `stoker prove --params
// --inputs` writes them and `stoker verify --inputs` reads them: the inputs
// after the constant 1, 32 bytes each, little-endian, canonical (below r),
// the scalar format of `stoker ntt` and `stoker msm`, any count (none too).
// Internal to tools/commands/.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "kernels/field.cuh"

namespace stoker::tools {

// Errors name the file: a size that is not a whole number of values, a
// value not below r (by index).
Result<std::vector<kernels::Fr>> read_public_inputs(const std::string& path);

// The file's bytes for `values`.
std::string encode_public_inputs(std::span<const kernels::Fr> values);

}  // namespace stoker::tools
