#include "devices/meminfo.hpp"

#include <charconv>
#include <fstream>
#include <iterator>
#include <string>

namespace stoker::devices {

MemInfo parse_meminfo(std::string_view text) {
  MemInfo m;
  while (!text.empty()) {
    const auto eol = text.find('\n');
    const auto line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view{} : text.substr(eol + 1);
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const auto key = line.substr(0, colon);
    auto rest = line.substr(colon + 1);
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    std::uint64_t value = 0;
    const auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
    if (ec != std::errc{}) continue;
    std::string_view unit(ptr, static_cast<std::size_t>(rest.data() + rest.size() - ptr));
    while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
    const std::uint64_t bytes = unit == "kB" ? value * 1024 : value;
    if (key == "MemTotal") m.total_bytes = bytes;
    if (key == "MemAvailable") m.available_bytes = bytes;
  }
  return m;
}

MemInfo read_meminfo() {
  std::ifstream in("/proc/meminfo");
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  return parse_meminfo(text);
}

}  // namespace stoker::devices
