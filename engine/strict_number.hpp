// Numbers given on a stoker command line, read strictly: the whole value
// must be a decimal number (no spaces, no suffix, no sign on an unsigned
// option) inside the range the option allows, and that range never reaches
// past what the variable the value lands in can hold, so nothing wraps,
// saturates or is cut on the way. A bad value is reported as
// "<option>: '<value>' is not an integer in <lo>..<hi>" (or "a number", for
// a real-valued option), so the user sees what was given and what would
// have been taken.
#pragma once

#include <charconv>
#include <concepts>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

namespace stoker::tools {

template <typename T>
concept CliInteger = std::integral<T> && !std::same_as<T, bool>;

// `text` as a T in lo..hi, or nullopt.
template <CliInteger T>
std::optional<T> parse_integer(std::string_view text, T lo = std::numeric_limits<T>::min(),
                               T hi = std::numeric_limits<T>::max()) {
  T v{};
  const char* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc{} || p != end || v < lo || v > hi) return std::nullopt;
  return v;
}

// `text` as a double in lo..hi ("inf" where hi is infinity), or nullopt.
inline std::optional<double> parse_real(std::string_view text, double lo, double hi) {
  double v = 0;
  const char* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc{} || p != end || !(v >= lo && v <= hi)) return std::nullopt;
  return v;
}

// What is wrong with `text` as the value of `option`, for a message.
template <CliInteger T>
std::string integer_problem(std::string_view option, std::string_view text, T lo, T hi) {
  return std::string(option) + ": '" + std::string(text) + "' is not an integer in " +
         std::to_string(lo) + ".." + std::to_string(hi);
}

inline std::string real_problem(std::string_view option, std::string_view text, double lo,
                                double hi) {
  char range[64];
  std::snprintf(range, sizeof range, "%g..%g", lo, hi);
  return std::string(option) + ": '" + std::string(text) + "' is not a number in " + range;
}

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
