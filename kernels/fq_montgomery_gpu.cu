// Canonical to Montgomery form on a GPU: one thread per element.
#include "common/error.hpp"
#include "kernels/detail/launch_geometry.cuh"
#include "kernels/fq_montgomery.hpp"

namespace stoker::kernels::gpu {
namespace {

__global__ void fq_to_montgomery_kernel(Fq* values, std::size_t n) {
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= n) return;
  values[i] = Fq::from_canonical(values[i].l);
}

}  // namespace

std::error_code fq_to_montgomery(Fq* d_values, std::size_t n, cudaStream_t stream) {
  if (n && !d_values) return make_error_code(Errc::invalid_argument);
  if (n == 0) return {};
  detail::ElementwiseGeometry g;
  if (auto ec = detail::elementwise_geometry<fq_to_montgomery_kernel>(n, g)) return ec;
  fq_to_montgomery_kernel<<<g.blocks, g.threads, 0, stream>>>(d_values, n);
  return make_cuda_error(cudaGetLastError());
}

}  // namespace stoker::kernels::gpu
