// Many fixed-base multiplications on one GPU into host memory: how toy keys
// and the toy SRS make their points (kernels/fixed_base.hpp's
// gpu::fixed_base_mul, in G1 or G2).
//
// The points of every task go through the GPU in chunks of 384 MiB of
// points (2^22 in G1, 2^21 in G2) on one stream: the chunk's scalars onto
// the device (copied from the host through a pinned buffer, or made there
// by the task's kernel), the multiplication, the points back into one of
// two pinned bounce buffers; while the GPU works on a chunk the calling
// thread copies the one before out of the other buffer into the task's
// `out`, and the next one's scalars in. Chunks follow each other across
// tasks, so a call with many small tasks keeps the GPU as busy as one with
// one large task. The results are the CPU's bits (kernels/fixed_base.hpp).
//
// Memory while it runs: on the device a chunk of scalars and of points and
// the table (512 MiB in G1, 448 MiB in G2); on the host two bounce buffers
// of points and, for tasks with host scalars, two of scalars, pinned
// (fixed_base_on_gpu_host_bytes).
//
// Blocking: returns when every point is in `out` or on the first error,
// after the GPU has stopped writing into the buffers. The calling thread's
// current device is left as it was. Calls on different GPUs may run at
// once from different threads. No exception escapes.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <system_error>

#include "common/error.hpp"
#include "kernels/field.cuh"

namespace stoker::engine::groth16 {

// Writes the scalars of a task's points [first, first + count) into d_out
// (device memory of the current device) on `stream`.
using DeviceScalarFill = std::function<std::error_code(kernels::Fr* d_out, std::size_t first,
                                                       std::size_t count, cudaStream_t stream)>;

// out[i] = [s_i] G. The scalars come from `scalars` (host memory, one per
// point) or, where `scalars` is empty, from `fill`.
template <typename Affine>
struct FixedBaseTask {
  std::span<Affine> out;
  std::span<const kernels::Fr> scalars;
  DeviceScalarFill fill;
};

// Every task's points on CUDA device `cuda_ordinal`. Errors start with
// `what` and the GPU ("toy key on GPU 1: ...") and name the step and the
// first point of the chunk: a GPU that does not exist, device or pinned
// memory refused, a CUDA failure with its message, a task with neither
// scalars nor fill, or scalars of another count than its points.
template <typename Affine>
Error fixed_base_on_gpu(int cuda_ordinal, std::span<const FixedBaseTask<Affine>> tasks,
                        const std::string& what);

// Pinned host bytes fixed_base_on_gpu takes for at most `points` points of
// `point_bytes` each, with or without host scalars.
std::size_t fixed_base_on_gpu_host_bytes(std::size_t point_bytes, std::size_t points,
                                         bool host_scalars);

}  // namespace stoker::engine::groth16
