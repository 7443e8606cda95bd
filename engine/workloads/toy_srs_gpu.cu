// The toy SRS's scalars on a GPU; see detail/toy_srs_scalars.hpp.
#include "common/error.hpp"
#include "engine/workloads/detail/toy_srs_scalars.hpp"
#include "kernels/detail/launch_geometry.cuh"

namespace stoker::engine::workloads::detail {
namespace {

// Fr's limbs with 8-byte alignment: kernel parameters of a 32-byte aligned
// type are not something to rely on.
struct Limbs {
  std::uint64_t l[4];
};

__device__ __forceinline__ kernels::Fr to_fr(const Limbs& v) {
  return kernels::Fr{{v.l[0], v.l[1], v.l[2], v.l[3]}};
}

__global__ void toy_srs_scalars_kernel(kernels::Fr* out, Limbs base, Limbs tau, std::size_t count) {
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= count) return;
  out[i] = to_fr(base) * to_fr(tau).pow(static_cast<std::uint64_t>(i));
}

}  // namespace

std::error_code toy_srs_scalars_gpu(kernels::Fr* d_out, const kernels::Fr& base,
                                    const kernels::Fr& tau, std::size_t count,
                                    cudaStream_t stream) {
  if (count == 0) return {};
  if (!d_out) return make_error_code(Errc::invalid_argument);
  kernels::gpu::detail::ElementwiseGeometry g;
  if (auto ec = kernels::gpu::detail::elementwise_geometry<toy_srs_scalars_kernel>(count, g))
    return ec;
  const Limbs b{{base.l[0], base.l[1], base.l[2], base.l[3]}};
  const Limbs t{{tau.l[0], tau.l[1], tau.l[2], tau.l[3]}};
  toy_srs_scalars_kernel<<<g.blocks, g.threads, 0, stream>>>(d_out, b, t, count);
  return make_cuda_error(cudaGetLastError());
}

}  // namespace stoker::engine::workloads::detail
