// The size of a file a stoker command reads (--in, --points, --scalars,
// --a ...). Commands check an input's size before reading a byte of it, so
// an input must be a regular file, once links are followed: a FIFO,
// /dev/stdin, a process substitution or /dev/zero is refused up front,
// saying what it is ("/tmp/p: is a FIFO, not a regular file"), instead of
// failing on its size somewhere later.
#pragma once

#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "common/error.hpp"
#include "tools/cli/output_file.hpp"

namespace stoker::tools {

inline Result<std::uint64_t> input_size(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return Error{Errc::io_error, path + ": cannot read (" + std::strerror(errno) + ")"};
  if (!S_ISREG(st.st_mode))
    return Error{Errc::invalid_argument,
                 path + ": is " + file_kind(st.st_mode) + ", not a regular file"};
  return static_cast<std::uint64_t>(st.st_size);
}

}  // namespace stoker::tools
