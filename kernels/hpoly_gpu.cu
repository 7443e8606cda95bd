// GPU H polynomial with the steps fused into the NTT passes:
//   a, b, c: inverse DIF passes (natural -> bit-reversed, 1/n left out);
//   then forward DIT passes (bit-reversed -> natural) whose first pass
//   multiplies by g^j / n (coset shift and the intt's 1/n in one factor);
//   the coset_intt's first DIF pass computes (A'B' - C') / (g^n - 1) as it
//   loads; one bit-reversal pass at the end carries g^-j / n.
// Passes over memory: 7 * P + 1 (P = passes per NTT), against 7 * (P + 1)
// for seven separate natural-order NTTs plus the scaling passes.
#include "common/error.hpp"
#include "kernels/detail/launch_geometry.cuh"
#include "kernels/detail/ntt_gpu.hpp"
#include "kernels/hpoly.hpp"
#include "kernels/ntt.hpp"

namespace stoker::kernels::gpu {
namespace {

__global__ void pointwise_kernel(Fr* h, const Fr* a, const Fr* b, const Fr* c, std::size_t n,
                                 Fr z) {
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < n) h[i] = (a[i] * b[i] - c[i]) * z;
}

}  // namespace

std::error_code prepare_hpoly(unsigned log_n) {
  if (auto ec = prepare(log_n)) return ec;
  cudaFuncAttributes attr{};
  return make_cuda_error(cudaFuncGetAttributes(&attr, pointwise_kernel));
}

std::error_code hpoly(Fr* h, Fr* a, Fr* b, Fr* c, unsigned log_n, cudaStream_t stream) {
  if (log_n == 0 || log_n > kMaxLogN) return make_error_code(Errc::invalid_argument);
  if (!h || !a || !b || !c) return make_error_code(Errc::invalid_argument);
  const detail::NttTables* t = nullptr;
  if (auto ec = detail::tables_for(log_n, &t)) return ec;
  const Fr z = hpoly_z_inverse(log_n);
  const std::size_t n = std::size_t{1} << log_n;

  if (log_n <= t->tile_log) {
    // One tile per vector: every transform is a single pass already.
    for (Fr* x : {a, b, c}) {
      if (auto ec = intt(x, x, log_n, 1, stream)) return ec;
      if (auto ec = coset_ntt(x, x, log_n, 1, stream)) return ec;
    }
    detail::ElementwiseGeometry g;
    if (auto ec = detail::elementwise_geometry<pointwise_kernel>(n, g)) return ec;
    pointwise_kernel<<<g.blocks, g.threads, 0, stream>>>(h, a, b, c, n, z);
    if (auto ec = make_cuda_error(cudaGetLastError())) return ec;
    return coset_intt(h, h, log_n, 1, stream);
  }

  const detail::LoadSpec plain;
  detail::LoadSpec coset;
  coset.mode = detail::Load::scale_bitrev;
  coset.geo = t->coset_fwd_over_n;
  for (Fr* x : {a, b, c}) {
    if (auto ec = detail::dif_passes(*t, /*inverse=*/true, x, x, 1, plain, stream)) return ec;
    if (auto ec = detail::dit_passes(*t, /*inverse=*/false, x, x, 1, coset, stream)) return ec;
  }
  detail::LoadSpec pointwise;
  pointwise.mode = detail::Load::hpoly_pointwise;
  pointwise.b = b;
  pointwise.c = c;
  pointwise.z = z;
  if (auto ec = detail::dif_passes(*t, /*inverse=*/true, h, a, 1, pointwise, stream)) return ec;
  detail::StoreSpec finish;
  finish.mode = detail::Store::bitrev_geo;
  finish.geo = t->coset_inv_over_n;
  return detail::bitrev_pass(*t, h, 1, finish, stream);
}

}  // namespace stoker::kernels::gpu
