#include <cuda_runtime.h>

#include <cstdint>

#include "examples/invert_bytes.hpp"

namespace stoker::examples {
namespace {
__global__ void invert(const std::uint8_t* in, std::uint8_t* out, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    out[i] = static_cast<std::uint8_t>(~in[i]);
}
}  // namespace

std::error_code invert_bytes_gpu(const stoker::engine::KernelContext& ctx) {
  const std::size_t n = ctx.output_bytes[0];
  // Geometry from the device: the block size the occupancy calculator picks
  // for this kernel and enough blocks to fill every SM; the grid-stride loop
  // covers the rest.
  int min_grid = 0, block = 0;
  if (auto e = cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, invert); e != cudaSuccess)
    return make_cuda_error(e);
  const std::size_t wanted = (n + block - 1) / block;
  const int grid = static_cast<int>(wanted < std::size_t(min_grid) ? (wanted ? wanted : 1) : min_grid);
  invert<<<grid, block, 0, static_cast<cudaStream_t>(ctx.stream.native())>>>(
      reinterpret_cast<const std::uint8_t*>(ctx.inputs[0]),
      reinterpret_cast<std::uint8_t*>(ctx.outputs[0]), n);
  return make_cuda_error(cudaGetLastError());
}

std::error_code invert_bytes_cpu(const stoker::engine::KernelContext& ctx) {
  const std::size_t n = ctx.output_bytes[0];
  for (std::size_t i = 0; i < n; ++i) ctx.outputs[0][i] = ~ctx.inputs[0][i];
  return {};
}

}  // namespace stoker::examples
