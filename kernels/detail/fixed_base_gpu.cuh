// The GPU fixed-base multiplication of kernels/fixed_base.hpp over either
// group: two elementwise kernels on the caller's stream, one thread per
// table entry building the table in the scratch, then one thread per point
// summing its entries and converting to affine. Included by one
// translation unit per group (g1_fixed_base_gpu.cu, g2_fixed_base_gpu.cu)
// so that G2's kernels, whose Fq2 products are calls on the device, compile
// beside G1's.
#pragma once

#include <cstdint>

#include "common/error.hpp"
#include "kernels/detail/fixed_base.cuh"
#include "kernels/detail/launch_geometry.cuh"
#include "kernels/detail/msm_point_io.cuh"

namespace stoker::kernels::gpu::detail::fixed_base {

__device__ __forceinline__ void store_affine(G1Affine* p, const G1Affine& a) {
  ulonglong2* q = reinterpret_cast<ulonglong2*>(p);
  store_fq(q, a.x);
  store_fq(q + 3, a.y);
}

__device__ __forceinline__ void store_affine(G2Affine* p, const G2Affine& a) {
  ulonglong2* q = reinterpret_cast<ulonglong2*>(p);
  store_fq2(q, a.x);
  store_fq2(q + 6, a.y);
}

template <typename Affine>
__global__ void table_kernel(Affine* table) {
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= kernels::detail::kFixedBaseTableEntries) return;
  store_affine(table + i, to_affine(kernels::detail::fixed_base_entry<Affine>(i)));
}

template <typename Affine>
__global__ void mul_kernel(Affine* out, const Fr* scalars, const Affine* table, std::size_t n) {
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= n) return;
  store_affine(out + i, to_affine(kernels::detail::fixed_base_sum(table, scalars[i])));
}

template <typename Affine>
std::error_code mul(Affine* d_out, const Fr* d_scalars, std::size_t n, void* d_scratch,
                    std::size_t scratch_bytes, cudaStream_t stream) {
  if (n == 0) return {};
  const auto misaligned = [](const void* p, std::uintptr_t a) {
    return reinterpret_cast<std::uintptr_t>(p) % a != 0;
  };
  if (!d_out || !d_scalars || !d_scratch || misaligned(d_out, 16) ||
      misaligned(d_scalars, alignof(Fr)) || misaligned(d_scratch, 16))
    return make_error_code(Errc::invalid_argument);
  if (scratch_bytes < kernels::detail::kFixedBaseTableBytes<Affine>)
    return make_error_code(Errc::invalid_argument);
  auto* table = static_cast<Affine*>(d_scratch);

  ElementwiseGeometry g;
  if (auto ec =
          elementwise_geometry<table_kernel<Affine>>(kernels::detail::kFixedBaseTableEntries, g))
    return ec;
  table_kernel<Affine><<<g.blocks, g.threads, 0, stream>>>(table);
  if (auto ec = make_cuda_error(cudaGetLastError())) return ec;
  if (auto ec = elementwise_geometry<mul_kernel<Affine>>(n, g)) return ec;
  mul_kernel<Affine><<<g.blocks, g.threads, 0, stream>>>(d_out, d_scalars, table, n);
  return make_cuda_error(cudaGetLastError());
}

}  // namespace stoker::kernels::gpu::detail::fixed_base
