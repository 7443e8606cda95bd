// Base-field elements from canonical form into Montgomery form, in place.
//
// A bellman key stores its points' coordinates big-endian in canonical form;
// kernels hold them in Montgomery form. Converting on the CPU as the file
// is read costs a Montgomery product a coordinate, most of the CPU's share
// of reading a key (a 2^26 key: about 630M products), where a GPU converts
// the same elements in milliseconds once they have landed. Points lie in memory as their coordinates' elements one after
// the other (G1: x, y; G2: x.c0, x.c1, y.c0, y.c1), so one pass over
// elements converts G1 and G2 points alike; the point at infinity, (0, 0),
// stays (0, 0).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <system_error>

#include "kernels/fq.cuh"

namespace stoker::kernels {

namespace gpu {
// d_values[0, n) from canonical into Montgomery form, on `stream`. Each
// element must be below q.
std::error_code fq_to_montgomery(Fq* d_values, std::size_t n, cudaStream_t stream);
}  // namespace gpu

namespace cpu {
// values[0, n) the same, on `threads` threads (0: the hardware's).
void fq_to_montgomery(Fq* values, std::size_t n, unsigned threads = 0);
}  // namespace cpu

}  // namespace stoker::kernels
