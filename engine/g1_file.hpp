// G1 point files: the format `stoker msm` reads its points from, `stoker srs
// generate` writes, and the engine loads an SRS from (docs/DESIGN.md,
// "Formats"). A file is points one after another, 96 bytes each, in the
// uncompressed zcash/IETF encoding (kernels/g1_encoding.hpp); nothing else.
//
// Reading decodes (flags, coordinates below q) but does not check that a
// point is on the curve and in G1: that costs far more than decoding and
// runs where the caller likes (kernels::cpu::check_points on the host,
// kernels::gpu::check_points once the points are on a GPU), or not at all
// for a trusted file. Reading splits the points asked for into one
// contiguous range per thread; each thread preads its range 4096 points
// (384 KiB) at a time into a buffer of its own and decodes them straight
// into the caller's span, so reading and decoding run on every thread at
// once and the file is never held twice in memory.
//
// Errors name the file and, for a bad point, its index (counted from the
// start of the file) and the reason; no exception escapes. Thread safe:
// nothing is shared between calls.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "common/error.hpp"
#include "kernels/g1.cuh"

namespace stoker::engine {

// The number of points in `path`. Errors: the file cannot be read, or its
// size is not a multiple of 96 (the message gives the size).
Result<std::size_t> g1_file_points(const std::string& path);

// Reads and decodes points [0, out.size()) of `path` into `out` (Montgomery
// form, as the kernels take them); threads == 0: hardware threads. Errors:
// the file cannot be opened or read, holds fewer points than asked, or
// point i has bad flags or a coordinate >= q ("FILE: point i: reason", the
// smallest such i).
Error read_g1_file(const std::string& path, std::span<kernels::G1Affine> out, unsigned threads = 0);
// The same for points [first, first + out.size()).
Error read_g1_file(const std::string& path, std::size_t first, std::span<kernels::G1Affine> out,
                   unsigned threads = 0);

}  // namespace stoker::engine
