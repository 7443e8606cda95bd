// Micro-kernels behind `stoker bench msm`'s bound: the rate of mixed
// additions (XYZZ + affine) and of XYZZ additions on this GPU, in G1 or G2,
// with the same g1.cuh / g2.cuh arithmetic the MSM runs, many independent threads, operands
// from a small table that stays in L1 (so loads cost what the MSM's bucket
// loop pays at best, without its cache misses).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <system_error>

#include "kernels/msm.hpp"

namespace stoker::tools {

// Bytes of the operand table of `group`'s points.
std::size_t add_rate_table_bytes(kernels::MsmGroup group = kernels::MsmGroup::g1);
// Fills the table (device memory, 256-byte aligned) with random points.
std::error_code fill_add_rate_table(void* d_table, cudaStream_t stream,
                                    kernels::MsmGroup group = kernels::MsmGroup::g1);
// Each of `threads` threads does `iterations` additions (mixed or XYZZ)
// into its accumulator; `d_sink` (8 KiB) keeps the results live. The
// table must have been filled for the same group.
std::error_code enqueue_add_rate(bool xyzz, const void* d_table, void* d_sink, std::size_t threads,
                                 unsigned iterations, cudaStream_t stream,
                                 kernels::MsmGroup group = kernels::MsmGroup::g1);

}  // namespace stoker::tools
