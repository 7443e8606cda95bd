#include <cuda_runtime.h>

#include "examples/scale_floats.hpp"

namespace stoker::examples {
namespace {
__global__ void scale(const float* in, float* out, std::size_t n, float factor) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    out[i] = in[i] * factor;
}
}  // namespace

std::error_code scale_floats_gpu(const stoker::engine::KernelContext& ctx, float factor) {
  const std::size_t n = ctx.output_bytes[0] / sizeof(float);
  // Geometry from the device, as invert_bytes.cu explains.
  int min_grid = 0, block = 0;
  if (auto e = cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, scale); e != cudaSuccess)
    return make_cuda_error(e);
  const std::size_t wanted = (n + block - 1) / block;
  const int grid =
      static_cast<int>(wanted < std::size_t(min_grid) ? (wanted ? wanted : 1) : min_grid);
  scale<<<grid, block, 0, static_cast<cudaStream_t>(ctx.stream.native())>>>(
      reinterpret_cast<const float*>(ctx.inputs[0]), reinterpret_cast<float*>(ctx.outputs[0]), n,
      factor);
  return make_cuda_error(cudaGetLastError());
}

std::error_code scale_floats_cpu(const stoker::engine::KernelContext& ctx, float factor) {
  const std::size_t n = ctx.output_bytes[0] / sizeof(float);
  const auto* in = reinterpret_cast<const float*>(ctx.inputs[0]);
  auto* out = reinterpret_cast<float*>(ctx.outputs[0]);
  for (std::size_t i = 0; i < n; ++i) out[i] = in[i] * factor;
  return {};
}

}  // namespace stoker::examples
