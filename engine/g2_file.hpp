// G2 point files: the format `stoker msm --group g2` reads its points from.
// A file is points one after another, 192 bytes each, in the uncompressed
// zcash/IETF encoding (kernels/g2_encoding.hpp: x.c1, x.c0, y.c1, y.c0);
// nothing else.
//
// Reading decodes with kernels::decode_g2, which checks the form (flags,
// coordinates below q) and that the point is on E' (it has no way to leave
// that out; a handful of Fq2 products a point), but not that it lies in
// G2: that costs far more and runs where the caller likes
// (kernels::cpu::check_points), or not at all for a trusted file. Reading
// runs on every thread and never holds the file twice in memory
// (engine/detail/point_file_reader.hpp).
//
// Errors name the file and, for a bad point, its index (counted from the
// start of the file) and the reason; no exception escapes. Thread safe:
// nothing is shared between calls.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "common/error.hpp"
#include "kernels/g2.cuh"

namespace stoker::engine {

// The number of points in `path`. Errors: the file cannot be read, or its
// size is not a multiple of 192 (the message gives the size).
Result<std::size_t> g2_file_points(const std::string& path);

// Reads and decodes points [0, out.size()) of `path` into `out` (Montgomery
// form, as the kernels take them); threads == 0: hardware threads. Errors:
// the file cannot be opened or read, holds fewer points than asked, or
// point i has bad flags, a coordinate >= q or is off E' ("FILE: point i:
// reason", the smallest such i).
Error read_g2_file(const std::string& path, std::span<kernels::G2Affine> out, unsigned threads = 0);
// The same for points [first, first + out.size()).
Error read_g2_file(const std::string& path, std::size_t first, std::span<kernels::G2Affine> out,
                   unsigned threads = 0);

}  // namespace stoker::engine
