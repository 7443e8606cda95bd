#include "tools/cli/progress_bar.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "engine/strict_number.hpp"

namespace stoker::tools {

int terminal_columns(int fd) {
  winsize w{};
  if (::ioctl(fd, TIOCGWINSZ, &w) == 0 && w.ws_col > 0) return w.ws_col;
  if (const char* c = std::getenv("COLUMNS"))
    if (const auto v = engine::parse_integer(std::string_view(c), 1, 10000)) return *v;
  return 80;
}

std::string progress_line(std::size_t done, std::size_t total, int columns) {
  const std::string count = std::to_string(done) + "/" + std::to_string(total);
  const int room = columns - 1;
  // "  [" bar "] " count
  const int bar = std::min(40, room - 5 - static_cast<int>(count.size()));
  if (bar < 5) return count.substr(0, static_cast<std::size_t>(std::max(room, 0)));
  const int filled = total ? static_cast<int>(static_cast<double>(bar) * done / total) : bar;
  return "  [" + std::string(static_cast<std::size_t>(filled), '#') +
         std::string(static_cast<std::size_t>(bar - filled), ' ') + "] " + count;
}

}  // namespace stoker::tools
