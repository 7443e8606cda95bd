// The odd-coset H scalars on the GPU in stoker's order (hpoly_odd_coset.hpp):
// the transforms of ntt.hpp, a scaling kernel and a pointwise one. Each
// thread of the scaling takes a run of consecutive entries, so that the
// power s^j is taken once per run and then stepped by one product per
// entry.
#include "common/error.hpp"
#include "kernels/detail/launch_geometry.cuh"
#include "kernels/hpoly_odd_coset.hpp"
#include "kernels/ntt.hpp"

namespace stoker::kernels::gpu {
namespace {

constexpr std::size_t kRun = 32;  // entries per thread of the scaling

__global__ void scale_by_powers_kernel(Fr* x, std::size_t n, Fr s) {
  const std::size_t run = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const std::size_t first = run * kRun;
  if (first >= n) return;
  Fr f = s.pow(static_cast<std::uint64_t>(first));
  const std::size_t last = first + kRun < n ? first + kRun : n;
  for (std::size_t j = first; j < last; ++j) {
    x[j] *= f;
    f *= s;
  }
}

__global__ void ab_minus_c_kernel(Fr* h, const Fr* a, const Fr* b, const Fr* c, std::size_t n) {
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < n) h[i] = a[i] * b[i] - c[i];
}

}  // namespace

std::error_code prepare_hpoly_odd_coset(unsigned log_n) {
  if (auto ec = prepare(log_n)) return ec;
  cudaFuncAttributes attr{};
  if (auto ec = make_cuda_error(cudaFuncGetAttributes(&attr, scale_by_powers_kernel))) return ec;
  return make_cuda_error(cudaFuncGetAttributes(&attr, ab_minus_c_kernel));
}

std::error_code hpoly_odd_coset(Fr* h, Fr* a, Fr* b, Fr* c, unsigned log_n, cudaStream_t stream) {
  if (log_n == 0 || log_n > kMaxLogN) return make_error_code(Errc::invalid_argument);
  if (!h || !a || !b || !c) return make_error_code(Errc::invalid_argument);
  const std::size_t n = std::size_t{1} << log_n;
  const Fr s = snarkjs_root_of_unity(log_n + 1);
  detail::ElementwiseGeometry runs, elements;
  if (auto ec = detail::elementwise_geometry<scale_by_powers_kernel>((n + kRun - 1) / kRun, runs))
    return ec;
  if (auto ec = detail::elementwise_geometry<ab_minus_c_kernel>(n, elements)) return ec;
  for (Fr* x : {a, b, c}) {
    if (auto ec = intt(x, x, log_n, 1, stream)) return ec;
    scale_by_powers_kernel<<<runs.blocks, runs.threads, 0, stream>>>(x, n, s);
    if (auto ec = make_cuda_error(cudaGetLastError())) return ec;
    if (auto ec = ntt(x, x, log_n, 1, stream)) return ec;
  }
  ab_minus_c_kernel<<<elements.blocks, elements.threads, 0, stream>>>(h, a, b, c, n);
  return make_cuda_error(cudaGetLastError());
}

}  // namespace stoker::kernels::gpu
