// G1's GPU fixed-base multiplication (kernels/fixed_base.hpp; the kernels
// are in detail/fixed_base_gpu.cuh), and the scratch sizes of both groups.
#include "kernels/detail/fixed_base_gpu.cuh"
#include "kernels/fixed_base.hpp"

namespace stoker::kernels::gpu {

std::size_t fixed_base_scratch_bytes(MsmGroup group, std::size_t) {
  return group == MsmGroup::g2 ? kernels::detail::kFixedBaseTableBytes<G2Affine>
                               : kernels::detail::kFixedBaseTableBytes<G1Affine>;
}

std::size_t fixed_base_scratch_bytes(std::size_t n) {
  return fixed_base_scratch_bytes(MsmGroup::g1, n);
}

std::error_code fixed_base_mul(G1Affine* d_out, const Fr* d_scalars, std::size_t n, void* d_scratch,
                               std::size_t scratch_bytes, cudaStream_t stream) {
  return detail::fixed_base::mul(d_out, d_scalars, n, d_scratch, scratch_bytes, stream);
}

}  // namespace stoker::kernels::gpu
