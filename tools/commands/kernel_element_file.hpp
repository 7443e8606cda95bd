// Files of field elements, as `stoker ntt` and `stoker hpoly` read and
// write them: raw arrays of 32-byte little-endian canonical Fr elements,
// 2^K of them. The size is checked first, from the file's size alone, so a
// command can check the memory its elements need before it allocates them;
// reading, in pieces of a few MiB, checks that every element is below r
// before any GPU work; writing goes through OutputFile, whole or not at
// all, from the file's bytes in memory (kWriteBytesPerElement).
// Internal to tools/commands/.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kernels/field.cuh"
#include "tools/cli/output_file.hpp"

namespace stoker::tools::kernel_cli {

// The elements a file holds. `log_n` (if given) fixes their number;
// otherwise the size must be 32 * 2^K for some K and K is returned. nullopt
// with `error` naming the file and what is wrong with its size.
std::optional<std::size_t> element_count(const std::string& path, std::optional<unsigned>& log_n,
                                         std::string& error);

// Host memory write_elements takes per element, beside the elements.
inline constexpr std::size_t kWriteBytesPerElement = 32;

// Reads out.size() canonical elements (element_count of them). false with
// `error` naming the file and the first element that is not below r.
bool read_elements(const std::string& path, std::span<kernels::Fr> out, std::string& error);

// Writes the elements through OutputFile: whole or not at all, through a
// symlink, never over a FIFO or a device. Takes the file's bytes in host
// memory beside the elements.
bool write_elements(const OutputFile& out, const std::vector<kernels::Fr>& v, std::string& error);

}  // namespace stoker::tools::kernel_cli
