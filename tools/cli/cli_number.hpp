// Numbers on a stoker command line: engine/strict_number.hpp's parsers (the
// same ones Config reads STOKER_* variables with), plus helpers that print
// the problem as "stoker <command>: <problem>". New commands declare their
// options with CommandLine (tools/cli/command_line.hpp), which reads numbers
// through the same parsers.
#pragma once

#include <cstdio>
#include <limits>
#include <optional>
#include <string_view>

#include "engine/strict_number.hpp"

namespace stoker::tools {

using engine::integer_problem;
using engine::parse_integer;
using engine::parse_real;
using engine::real_problem;
template <typename T>
concept CliInteger = engine::StrictInteger<T>;

// parse_integer, printing "stoker <command>: <integer_problem>" to stderr
// when the value is bad.
template <CliInteger T>
std::optional<T> integer_option(const char* command, std::string_view option, std::string_view text,
                                T lo = std::numeric_limits<T>::min(),
                                T hi = std::numeric_limits<T>::max()) {
  auto v = parse_integer(text, lo, hi);
  if (!v)
    std::fprintf(stderr, "stoker %s: %s\n", command, integer_problem(option, text, lo, hi).c_str());
  return v;
}

inline std::optional<double> real_option(const char* command, std::string_view option,
                                         std::string_view text, double lo, double hi) {
  auto v = parse_real(text, lo, hi);
  if (!v)
    std::fprintf(stderr, "stoker %s: %s\n", command, real_problem(option, text, lo, hi).c_str());
  return v;
}

}  // namespace stoker::tools
