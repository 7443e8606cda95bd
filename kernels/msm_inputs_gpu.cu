// Pseudo-random MSM inputs made on the GPU, for tests and benchmarks:
// scalars here, and G1's points (detail/msm_random_points.cuh says how
// they are made; G2's are in msm_g2_gpu.cu).
#include "kernels/detail/msm_random_points.cuh"

namespace stoker::kernels::gpu {

using namespace detail::random_inputs;

namespace {

// Uniform enough below 2^254 < r; `sparse`: 40 % zeros, 50 % ones and 10 %
// full-size values, the mix of a witness's A, B and L scalars.
__global__ void scalars_kernel(Fr* out, std::size_t n, std::uint64_t seed, bool sparse) {
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= n) return;
  std::uint64_t x = common::splitmix64(seed ^ common::splitmix64(i));
  if (sparse) {
    const unsigned pick = static_cast<unsigned>(x % 100);
    if (pick < 40) {
      out[i] = Fr::zero();
      return;
    }
    if (pick < 90) {
      out[i] = Fr::one();
      return;
    }
  }
  std::uint64_t v[4];
  for (int j = 0; j < 4; ++j) v[j] = x = common::splitmix64(x);
  v[3] &= (std::uint64_t{1} << 62) - 1;
  out[i] = Fr::from_canonical(v);
}

}  // namespace

std::size_t random_points_scratch_bytes(MsmGroup group, std::size_t n) {
  const std::size_t cols = (n + (1u << kRowLog) - 1) >> kRowLog;
  return ((std::size_t{1} << kRowLog) + cols) * detail::affine_bytes(group);
}

std::error_code random_points(G1Affine* d_out, std::size_t n, std::uint64_t seed, void* d_scratch,
                              std::size_t scratch_bytes, cudaStream_t stream) {
  return make_points(d_out, n, seed, d_scratch, scratch_bytes, stream);
}

std::error_code random_scalars(Fr* d_out, std::size_t n, std::uint64_t seed, bool sparse,
                               cudaStream_t stream) {
  if (n == 0) return {};
  if (!d_out) return make_error_code(Errc::invalid_argument);
  return launch_threads<scalars_kernel>(n, stream, d_out, n, seed, sparse);
}

}  // namespace stoker::kernels::gpu
