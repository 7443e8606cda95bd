// MemInfo: the host memory figures of /proc/meminfo that stoker reads:
// the total, shown by `stoker info`, and what is available, which bounds a
// large pinned mapping (faulting in more than MemAvailable would wake the
// OOM killer instead of failing cleanly). Plain Linux, no CUDA.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace stoker::devices {

struct MemInfo {
  std::optional<std::uint64_t> total_bytes;      // MemTotal
  std::optional<std::uint64_t> available_bytes;  // MemAvailable
};

// Parses the text of /proc/meminfo ("MemTotal:  16318504 kB" lines); a
// figure that is missing or malformed stays nullopt.
MemInfo parse_meminfo(std::string_view text);

// Reads and parses /proc/meminfo; both figures nullopt when it cannot be read.
MemInfo read_meminfo();

}  // namespace stoker::devices
