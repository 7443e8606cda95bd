// The progress line a command redraws in place ("\r  [#####     ] 3/8"),
// sized to the terminal so that it never wraps: a line longer than the
// terminal is wider than the carriage return can rewind, and every redraw
// then lands on a new line.
//
//   const int columns = terminal_columns(STDOUT_FILENO);
//   job.progress = [columns](std::size_t done, std::size_t total) {
//     std::fputs(("\r" + progress_line(done, total, columns)).c_str(), stdout);
//   };
#pragma once

#include <cstddef>
#include <string>

namespace stoker::tools {

// The width of the terminal on `fd` (TIOCGWINSZ), else $COLUMNS, else 80.
int terminal_columns(int fd);

// The line for `done` of `total`, at most columns - 1 characters (the last
// column stays free: some terminals wrap on writing it). The bar shrinks
// first; below 12 columns only "done/total" is left.
std::string progress_line(std::size_t done, std::size_t total, int columns);

}  // namespace stoker::tools
