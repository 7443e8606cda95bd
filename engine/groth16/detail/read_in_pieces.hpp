// A file's records read in pieces on several threads, each piece read and
// decoded by one thread: the shape of the Groth16 readers' bulk sections
// (a .params file's points, a zkey's coefficients through a buffer; a
// zkey's points and witness values straight into place). One thread's reads and
// a start of the decoding threads for every few thousand records held them
// to one core.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

#include "common/error.hpp"
#include "engine/groth16/detail/first_failure.hpp"

namespace stoker::engine::groth16::detail {

// Where a read in pieces stopped: a read's error, or the first record that
// did not decode (bad < count, its bytes in `record`); neither when every
// record decoded.
struct PiecesStop {
  Error error;
  std::size_t bad = 0;
  std::vector<unsigned char> record;
};

// Records [0, count) of `record_bytes` each, `per_piece` at a time on
// `threads` threads (0: the hardware's): read(first, bytes) fills a piece's
// buffer from record `first` on, decode(i, record) takes record i (false:
// bad). Pieces past a failed one are skipped and those before it all run,
// so the failure reported is the file's first. A buffer that cannot be had
// throws std::bad_alloc.
template <typename Read, typename Decode>
PiecesStop read_in_pieces(std::size_t count, std::size_t record_bytes, std::size_t per_piece,
                          unsigned threads, Read read, Decode decode) {
  const std::size_t pieces = (count + per_piece - 1) / per_piece;
  const std::size_t buf_bytes = std::min(count, per_piece) * record_bytes;
  std::vector<Error> read_failed(pieces);
  std::vector<std::size_t> bad(pieces, count);
  std::vector<std::vector<unsigned char>> bad_record(pieces);
  const std::size_t failed = first_failure_with_scratch(
      pieces, threads, 1, [&] { return std::vector<unsigned char>(buf_bytes); },
      [&](std::size_t p, std::vector<unsigned char>& buf) {
        const std::size_t first = p * per_piece, n = std::min(per_piece, count - first);
        const std::span<unsigned char> bytes(buf.data(), n * record_bytes);
        if ((read_failed[p] = read(first, bytes))) return false;
        for (std::size_t i = 0; i < n; ++i)
          if (!decode(first + i, bytes.data() + i * record_bytes)) {
            bad[p] = first + i;
            const auto* r = bytes.data() + i * record_bytes;
            bad_record[p].assign(r, r + record_bytes);
            return false;
          }
        return true;
      });
  PiecesStop stop;
  stop.bad = count;
  if (failed == pieces) return stop;
  stop.error = std::move(read_failed[failed]);
  stop.bad = bad[failed];
  stop.record = std::move(bad_record[failed]);
  return stop;
}

// Where a read in place stopped: a read's error, or the first bad record
// (bad < count); neither when every record was good.
struct InPlaceStop {
  Error error;
  std::size_t bad = 0;
};

// Records [0, count) read straight into their place, `per_piece` at a time
// on `threads` threads (0: the hardware's), for records whose file bytes
// are their memory's (a zkey's points, witness values): read(first, n)
// reads records [first, first + n) where they belong, check(first, n)
// gives the first bad one among them or first + n (converting the good
// ones in place if it must). As above, the failure reported is the first.
template <typename Read, typename Check>
InPlaceStop read_in_place(std::size_t count, std::size_t per_piece, unsigned threads, Read read,
                          Check check) {
  const std::size_t pieces = (count + per_piece - 1) / per_piece;
  std::vector<Error> read_failed(pieces);
  std::vector<std::size_t> bad(pieces, count);
  const std::size_t failed = first_failure(pieces, threads, 1, [&](std::size_t p) {
    const std::size_t first = p * per_piece, n = std::min(per_piece, count - first);
    if ((read_failed[p] = read(first, n))) return false;
    bad[p] = check(first, n);
    return bad[p] == first + n;
  });
  InPlaceStop stop;
  stop.bad = count;
  if (failed == pieces) return stop;
  stop.error = std::move(read_failed[failed]);
  if (!stop.error) stop.bad = bad[failed];
  return stop;
}

}  // namespace stoker::engine::groth16::detail
