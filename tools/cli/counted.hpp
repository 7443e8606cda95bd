// A count with its noun, singular or plural as the count asks: "1 point",
// "0 points", "2 CUDA devices". Nouns here all take an s.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace stoker::tools {

inline std::string counted(std::uint64_t n, std::string_view noun) {
  return std::to_string(n) + " " + std::string(noun) + (n == 1 ? "" : "s");
}

}  // namespace stoker::tools
