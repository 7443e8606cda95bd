// G2's GPU fixed-base multiplication (kernels/fixed_base.hpp; the kernels
// are in detail/fixed_base_gpu.cuh): a translation unit of its own, so that
// G2's kernels, with their Fq2 arithmetic, compile beside G1's.
#include "kernels/detail/fixed_base_gpu.cuh"
#include "kernels/fixed_base.hpp"

namespace stoker::kernels::gpu {

std::error_code fixed_base_mul(G2Affine* d_out, const Fr* d_scalars, std::size_t n, void* d_scratch,
                               std::size_t scratch_bytes, cudaStream_t stream) {
  return detail::fixed_base::mul(d_out, d_scalars, n, d_scratch, scratch_bytes, stream);
}

}  // namespace stoker::kernels::gpu
