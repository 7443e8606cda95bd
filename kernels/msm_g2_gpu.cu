// G2's entry points of the GPU Pippenger (detail/msm_gpu_steps.cuh holds
// the steps, kernels/msm_gpu.cu the plan, the sort and G1's): a translation
// unit of its own, so that G2's kernels, with their Fq2 arithmetic, compile
// beside G1's instead of after them. G2's random points for tests and
// benchmarks too.
#include "kernels/detail/msm_gpu_steps.cuh"
#include "kernels/detail/msm_random_points.cuh"

namespace stoker::kernels::gpu {

using namespace detail::pippenger;

std::error_code msm_add_points(const MsmPlan& p, unsigned part, const G2Affine* d_points,
                               void* d_scratch, std::size_t scratch_bytes, cudaStream_t stream) {
  return add_points(p, part, d_points, d_scratch, scratch_bytes, stream);
}
std::error_code msm_finish(const MsmPlan& p, G2Xyzz* d_result, void* d_scratch,
                           std::size_t scratch_bytes, cudaStream_t stream) {
  return finish(p, MsmGroup::g2, d_result, d_scratch, scratch_bytes, stream);
}
std::error_code detail::pippenger::msm_finish_window_sums_g2(const MsmPlan& p, void* d_sums,
                                                             void* d_scratch,
                                                             std::size_t scratch_bytes,
                                                             cudaStream_t stream) {
  return finish_window_sums<G2Xyzz>(p, MsmGroup::g2, d_sums, nullptr, d_scratch, scratch_bytes,
                                    stream);
}
std::error_code msm(const MsmPlan& p, G2Xyzz* d_result, const G2Affine* d_points,
                    const Fr* d_scalars, void* d_scratch, std::size_t scratch_bytes,
                    cudaStream_t stream) {
  return run_msm(p, d_result, d_points, d_scalars, d_scratch, scratch_bytes, stream);
}
std::error_code msm(G2Xyzz* d_result, const G2Affine* d_points, const Fr* d_scalars, std::size_t n,
                    void* d_scratch, std::size_t scratch_bytes, cudaStream_t stream) {
  return run_msm(d_result, d_points, d_scalars, n, d_scratch, scratch_bytes, stream);
}

std::error_code sparse_msm(const SparseMsmPlan& p, G2Xyzz* d_result, const G2Affine* d_points,
                           const std::uint32_t* d_ones, const std::uint32_t* d_rest,
                           const Fr* d_rest_scalars, void* d_scratch, std::size_t scratch_bytes,
                           cudaStream_t stream) {
  return run_sparse_msm(p, d_result, nullptr, d_points, d_ones, d_rest, d_rest_scalars, d_scratch,
                        scratch_bytes, stream);
}

std::error_code sparse_msm_window_sums(const SparseMsmPlan& p, void* d_sums,
                                       const G2Affine* d_points, const std::uint32_t* d_ones,
                                       const std::uint32_t* d_rest, const Fr* d_rest_scalars,
                                       void* d_scratch, std::size_t scratch_bytes,
                                       cudaStream_t stream) {
  return run_sparse_msm<G2Affine>(p, nullptr, d_sums, d_points, d_ones, d_rest, d_rest_scalars,
                                  d_scratch, scratch_bytes, stream);
}

std::error_code msm_window_sums(const MsmPlan& p, void* d_sums, const G2Affine* d_points,
                                const Fr* d_scalars, void* d_scratch, std::size_t scratch_bytes,
                                cudaStream_t stream) {
  return run_msm_window_sums(p, d_sums, d_points, d_scalars, d_scratch, scratch_bytes, stream);
}

std::error_code random_points(G2Affine* d_out, std::size_t n, std::uint64_t seed, void* d_scratch,
                              std::size_t scratch_bytes, cudaStream_t stream) {
  return detail::random_inputs::make_points(d_out, n, seed, d_scratch, scratch_bytes, stream);
}

}  // namespace stoker::kernels::gpu
