// GPU fixed-base multiplication; see g1_fixed_base.hpp. Two elementwise
// kernels on the caller's stream: one thread per table entry builds the
// table in the scratch, then one thread per point sums its entries and
// converts to affine.
#include <cstdint>

#include "common/error.hpp"
#include "kernels/detail/fixed_base.cuh"
#include "kernels/detail/launch_geometry.cuh"
#include "kernels/detail/msm_point_io.cuh"
#include "kernels/g1_fixed_base.hpp"

namespace stoker::kernels::gpu {
namespace {

__device__ __forceinline__ void store_affine(G1Affine* p, const G1Affine& a) {
  ulonglong2* q = reinterpret_cast<ulonglong2*>(p);
  detail::store_fq(q, a.x);
  detail::store_fq(q + 3, a.y);
}

__global__ void fixed_base_table_kernel(G1Affine* table) {
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= kernels::detail::kFixedBaseTableEntries) return;
  store_affine(table + i, to_affine(kernels::detail::fixed_base_entry(i)));
}

__global__ void fixed_base_mul_kernel(G1Affine* out, const Fr* scalars, const G1Affine* table,
                                      std::size_t n) {
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= n) return;
  store_affine(out + i, to_affine(kernels::detail::fixed_base_sum(table, scalars[i])));
}

}  // namespace

std::size_t fixed_base_scratch_bytes(std::size_t) {
  return kernels::detail::kFixedBaseTableBytes;
}

std::error_code fixed_base_mul(G1Affine* d_out, const Fr* d_scalars, std::size_t n, void* d_scratch,
                               std::size_t scratch_bytes, cudaStream_t stream) {
  if (n == 0) return {};
  const auto misaligned = [](const void* p, std::uintptr_t a) {
    return reinterpret_cast<std::uintptr_t>(p) % a != 0;
  };
  if (!d_out || !d_scalars || !d_scratch || misaligned(d_out, 16) ||
      misaligned(d_scalars, alignof(Fr)) || misaligned(d_scratch, 16))
    return make_error_code(Errc::invalid_argument);
  if (scratch_bytes < fixed_base_scratch_bytes(n)) return make_error_code(Errc::invalid_argument);
  auto* table = static_cast<G1Affine*>(d_scratch);

  detail::ElementwiseGeometry g;
  if (auto ec = detail::elementwise_geometry<fixed_base_table_kernel>(
          kernels::detail::kFixedBaseTableEntries, g))
    return ec;
  fixed_base_table_kernel<<<g.blocks, g.threads, 0, stream>>>(table);
  if (auto ec = make_cuda_error(cudaGetLastError())) return ec;
  if (auto ec = detail::elementwise_geometry<fixed_base_mul_kernel>(n, g)) return ec;
  fixed_base_mul_kernel<<<g.blocks, g.threads, 0, stream>>>(d_out, d_scalars, table, n);
  return make_cuda_error(cudaGetLastError());
}

}  // namespace stoker::kernels::gpu
