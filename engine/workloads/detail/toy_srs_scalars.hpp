// The toy SRS's scalars on a GPU (toy_srs_gpu.cu), for make_toy_srs.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <system_error>

#include "kernels/field.cuh"

namespace stoker::engine::workloads::detail {

// d_out[i] = base * tau^i for i < count, on the current device, enqueued on
// `stream`: each thread raises tau to its own index (at most 22 squarings
// for a 2^22 chunk), so no thread waits on another.
std::error_code toy_srs_scalars_gpu(kernels::Fr* d_out, const kernels::Fr& base,
                                    const kernels::Fr& tau, std::size_t count, cudaStream_t stream);

}  // namespace stoker::engine::workloads::detail
