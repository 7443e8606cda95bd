// Micro-kernels behind `stoker bench msm`'s bound: the rate of mixed
// additions (XYZZ + affine) and of XYZZ additions on this GPU, with the
// same g1.cuh arithmetic the MSM runs, many independent threads, operands
// from a small table that stays in L1 (so loads cost what the MSM's bucket
// loop pays at best, without its cache misses).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <system_error>

namespace stoker::tools {

// Bytes of the operand table.
std::size_t add_rate_table_bytes();
// Fills the table (device memory, 256-byte aligned) with random points.
std::error_code fill_add_rate_table(void* d_table, cudaStream_t stream);
// Each of `threads` threads does `iterations` additions (mixed or XYZZ)
// into its accumulator; `d_sink` (8 KiB) keeps the results live.
std::error_code enqueue_add_rate(bool xyzz, const void* d_table, void* d_sink, std::size_t threads,
                                 unsigned iterations, cudaStream_t stream);

}  // namespace stoker::tools
