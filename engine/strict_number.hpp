// Numbers given as text (an engine setting from a STOKER_* variable, an
// option of the stoker binary), read strictly: the whole text must be a
// decimal number (no spaces, no suffix, no sign on an unsigned value, no
// "0x" or octal) inside the range the setting allows, and that range never
// reaches past what the variable the value lands in can hold, so nothing
// wraps, saturates or is cut on the way. A bad value is reported as
// "<source>: '<value>' is not an integer in <lo>..<hi>" (or "a number", for
// a real-valued setting), where <source> is the option or the variable, so
// the user sees what was given, where, and what would have been taken.
//
// Config (engine/config.cpp) and the command-line parser
// (tools/cli/command_line.hpp) both read numbers through these.
#pragma once

#include <charconv>
#include <concepts>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

namespace stoker::engine {

template <typename T>
concept StrictInteger = std::integral<T> && !std::same_as<T, bool>;

// `text` as a T in lo..hi, or nullopt.
template <StrictInteger T>
std::optional<T> parse_integer(std::string_view text, T lo = std::numeric_limits<T>::min(),
                               T hi = std::numeric_limits<T>::max()) {
  T v{};
  const char* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc{} || p != end || v < lo || v > hi) return std::nullopt;
  return v;
}

// `text` as a double in lo..hi ("inf" where hi is infinity), or nullopt.
// NaN is never in range.
inline std::optional<double> parse_real(std::string_view text, double lo, double hi) {
  double v = 0;
  const char* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc{} || p != end || !(v >= lo && v <= hi)) return std::nullopt;
  return v;
}

// What is wrong with `text` as the value of `source`, for a message.
template <StrictInteger T>
std::string integer_problem(std::string_view source, std::string_view text, T lo, T hi) {
  return std::string(source) + ": '" + std::string(text) + "' is not an integer in " +
         std::to_string(lo) + ".." + std::to_string(hi);
}

inline std::string real_problem(std::string_view source, std::string_view text, double lo,
                                double hi) {
  char range[64];
  std::snprintf(range, sizeof range, "%.12g..%.12g", lo, hi);
  return std::string(source) + ": '" + std::string(text) + "' is not a number in " + range;
}

}  // namespace stoker::engine
