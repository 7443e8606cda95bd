// Host memory the CPU versions of the kernels allocate for themselves,
// beside the data their callers pass: what a caller adds to its own buffers
// when it checks a size against the host's memory before calling them
// (`stoker ntt --cpu` at 2^31 needs 96 GiB, not 64). Each kernel throws
// std::bad_alloc where it cannot get this much.
#pragma once

#include <cstddef>

#include "kernels/field.cuh"

namespace stoker::kernels::cpu {

// transform() (and ntt, intt, ...): the n/2 twiddles.
inline std::size_t transform_host_bytes(unsigned log_n) {
  return (std::size_t{1} << log_n) / 2 * sizeof(Fr);
}

// hpoly(): the transforms of a, b and c, and transform()'s twiddles.
inline std::size_t hpoly_host_bytes(unsigned log_n) {
  return 3 * (std::size_t{1} << log_n) * sizeof(Fr) + transform_host_bytes(log_n);
}

}  // namespace stoker::kernels::cpu
