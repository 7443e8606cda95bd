// bytes_str(n): "<n> bytes", the way an error message names a size. Every
// layer's messages print sizes in plain bytes, never rounded to MiB, so a
// user can compare the figure with the limit it broke digit for digit
// ("needs 83890176 bytes of pinned host memory; the host budget is 67108864
// bytes").
//
// bytes_with_units(n): the same exact count with its size at a glance
// beside it ("25769803776 bytes (24.0 GiB)"), for messages about sizes a
// user chose on the command line, where 11-digit counts are hard to read.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>

namespace stoker::common {

inline std::string bytes_str(std::size_t n) {
  return std::to_string(n) + " bytes";
}

inline std::string bytes_with_units(std::size_t n) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (n < 1024) return bytes_str(n);
  double v = static_cast<double>(n) / 1024;
  std::size_t u = 0;
  // 1023.95 and above would print as 1024.0 of the smaller unit.
  while (v >= 1023.95 && u + 1 < std::size(kUnits)) {
    v /= 1024;
    ++u;
  }
  char text[32];
  std::snprintf(text, sizeof text, " (%.1f %s)", v, kUnits[u]);
  return bytes_str(n) + text;
}

}  // namespace stoker::common
