// bytes_str(n): "<n> bytes", the way an error message names a size. Every
// layer's messages print sizes in plain bytes, never rounded to MiB, so a
// user can compare the figure with the limit it broke digit for digit
// ("needs 83890176 bytes of pinned host memory; the host budget is 67108864
// bytes").
#pragma once

#include <cstddef>
#include <string>

namespace stoker::common {

inline std::string bytes_str(std::size_t n) {
  return std::to_string(n) + " bytes";
}

}  // namespace stoker::common
