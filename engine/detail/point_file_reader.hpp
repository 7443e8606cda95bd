// What every point file reader shares (engine/g2_file.hpp): a file is
// points of one fixed-size encoding one after another, nothing else. The
// reader splits the points asked for into one contiguous range per thread;
// each thread preads its range 4096 points at a time into a buffer of its
// own and hands every point's bytes to the caller's decoder, which writes
// it straight into the caller's memory, so reading and decoding run on
// every thread at once and the file is never held twice in memory.
//
// Errors name the file and, for a bad point, its index (counted from the
// start of the file) and the decoder's reason; the smallest bad index wins
// whatever the thread count. No exception escapes. Thread safe: nothing is
// shared between calls; within a call the decoder runs on several threads
// at once, each call for a different index.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <system_error>

#include "common/error.hpp"

namespace stoker::engine::detail {

struct PointFileFormat {
  std::size_t point_bytes;  // one point's encoding
  const char* points;       // what the file holds, for messages: "192-byte G2 points"
};

// The number of points in `path`. Errors: the file cannot be read, or its
// size is not a multiple of the point size (the message gives the size).
Result<std::size_t> point_file_points(const std::string& path, const PointFileFormat& format);

// decode(bytes, i) decodes the point of file index first + i from its
// encoding into the caller's element i, and returns why it cannot.
using DecodePoint = std::function<std::error_code(const unsigned char* bytes, std::size_t i)>;

// Reads points [first, first + count) of `path` and decodes each with
// `decode`; threads == 0: hardware threads. Errors: the file cannot be
// opened or read, holds fewer points than asked, or a point does not
// decode ("FILE: point i: reason", the smallest such i).
Error read_point_file(const std::string& path, const PointFileFormat& format, std::size_t first,
                      std::size_t count, const DecodePoint& decode, unsigned threads = 0);

}  // namespace stoker::engine::detail
