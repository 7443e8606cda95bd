// Launch geometry for elementwise kernels (one thread per element, no
// shared memory), taken from the device: the block size the CUDA occupancy
// calculator finds best for the kernel's registers on the current device,
// and as many blocks as the elements need. Tiled kernels (the NTT passes,
// the bit reversal) size their blocks from their tiles instead.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <system_error>

#include "common/error.hpp"

namespace stoker::kernels::gpu::detail {

struct ElementwiseGeometry {
  unsigned blocks = 0;
  unsigned threads = 0;
};

// The occupancy query costs a few microseconds; it is made once per kernel
// and per process (the engine's GPUs are all of one kind). The kernel is a
// template argument so that the cache belongs to that kernel: kernels of one
// signature share a type but not a register count.
template <auto Kernel>
std::error_code elementwise_geometry(std::size_t count, ElementwiseGeometry& g) {
  struct Cached {
    cudaError_t error = cudaSuccess;
    int threads = 0;
  };
  static const Cached cached = [] {
    Cached c;
    int min_grid = 0;
    c.error = cudaOccupancyMaxPotentialBlockSize(&min_grid, &c.threads, Kernel);
    return c;
  }();
  if (cached.error != cudaSuccess) return make_cuda_error(cached.error);
  const std::size_t threads = static_cast<std::size_t>(cached.threads);
  const std::size_t blocks = (count + threads - 1) / threads;
  if (blocks > 0x7fffffffu) return make_error_code(Errc::invalid_argument);
  g.threads = static_cast<unsigned>(threads);
  g.blocks = static_cast<unsigned>(blocks == 0 ? 1 : blocks);
  return {};
}

}  // namespace stoker::kernels::gpu::detail
