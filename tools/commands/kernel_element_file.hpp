// Files of field elements, as `stoker ntt` and `stoker hpoly` read and
// write them: raw arrays of 32-byte little-endian canonical Fr elements,
// 2^K of them. Reading checks the size and that every element is below r
// before any GPU work; writing goes through OutputFile, whole or not at all.
// Internal to tools/commands/.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kernels/field.cuh"
#include "tools/cli/output_file.hpp"

namespace stoker::tools::kernel_cli {

// Reads a file of canonical elements. `log_n` (if given) fixes the size;
// otherwise the size must be 32 * 2^K for some K and K is returned. false
// with `error` naming the file and what is wrong with it.
bool read_elements(const std::string& path, std::optional<unsigned>& log_n,
                   std::vector<kernels::Fr>& out, std::string& error);

// Writes the elements through OutputFile: whole or not at all, through a
// symlink, never over a FIFO or a device.
bool write_elements(const OutputFile& out, const std::vector<kernels::Fr>& v, std::string& error);

}  // namespace stoker::tools::kernel_cli
