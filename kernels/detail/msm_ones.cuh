// The kernels of a sparse MSM's ones (msm.hpp, sparse_msm): the points
// whose scalar is 1 summed by mixed additions, each thread a slice of them
// (read through their indices), or by batched affine additions
// (ones_batch_affine.cuh), each thread a strided share; then the threads'
// sums by XYZZ additions in groups, level by level, until one is left; and
// the last step, which adds that sum to the tail's. Templates over the
// group.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/detail/msm_group.hpp"
#include "kernels/detail/msm_point_io.cuh"
#include "kernels/detail/ones_batch_affine.cuh"

namespace stoker::kernels::gpu::detail {

// Partial sums summed by one thread at each level after the first. The
// levels after the first have few threads, each waiting out its additions'
// latency (~25 us per G1 XYZZ addition in a lone thread): groups of 8 make
// the chain 7 levels of 8 additions from the H200's 270K first-level
// threads, against 4 levels of 32 with groups of 32.
inline constexpr unsigned kOnesGroup = 8;

template <typename Affine>
__global__ void sum_indexed_kernel(XyzzOf<Affine>* partials, const Affine* __restrict__ points,
                                   const std::uint32_t* __restrict__ index, std::size_t count,
                                   std::size_t slice) {
  const std::size_t t = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const std::size_t begin = t * slice;
  if (begin >= count) return;
  const std::size_t end = begin + slice < count ? begin + slice : count;
  auto acc = XyzzOf<Affine>::infinity();
  for (std::size_t i = begin; i < end; ++i) add_mixed(acc, load_affine(points + __ldg(index + i)));
  store_xyzz(partials + t, acc);
}

// Device memory for sum_ones_batch_affine: the key's points through the
// read-only path, the accumulators and prefixes (written by the same
// kernel) without it, all in 16-byte words.
struct OnesDeviceMemory {
  template <typename Affine>
  static __device__ __forceinline__ Affine point(const Affine* p) {
    return load_affine(p);
  }
  template <typename Affine>
  static __device__ __forceinline__ auto point_x(const Affine* p) {
    return load_affine_x(p);
  }
  template <typename Affine>
  static __device__ __forceinline__ Affine load(const Affine* p) {
    return load_affine_rw(p);
  }
  template <typename Affine>
  static __device__ __forceinline__ auto load_x(const Affine* p) {
    return load_affine_x_rw(p);
  }
  static __device__ __forceinline__ Fq load(const Fq* p) { return load_field_rw(p); }
  static __device__ __forceinline__ Fq2 load(const Fq2* p) { return load_field_rw(p); }
  template <typename Affine>
  static __device__ __forceinline__ void store(Affine* p, const Affine& a) {
    store_affine(p, a);
  }
  static __device__ __forceinline__ void store(Fq* p, const Fq& v) { store_field(p, v); }
  static __device__ __forceinline__ void store(Fq2* p, const Fq2& v) { store_field(p, v); }
};

template <typename Affine>
__global__ void sum_ones_batch_affine_kernel(XyzzOf<Affine>* partials,
                                             const Affine* __restrict__ points,
                                             const std::uint32_t* __restrict__ index,
                                             std::size_t count, std::size_t threads,
                                             unsigned batch, Affine* acc,
                                             FieldOf<Affine>* prefix) {
  const std::size_t t = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (t >= threads) return;
  store_xyzz(partials + t, sum_ones_batch_affine<OnesDeviceMemory>(points, index, count, threads,
                                                                   t, batch, acc, prefix));
}

template <typename Xyzz>
__global__ void sum_partials_kernel(Xyzz* out, const Xyzz* in, std::size_t count) {
  const std::size_t t = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const std::size_t begin = t * kOnesGroup;
  if (begin >= count) return;
  const std::size_t end = begin + kOnesGroup < count ? begin + kOnesGroup : count;
  Xyzz acc = load_xyzz(in + begin);
  for (std::size_t i = begin + 1; i < end; ++i) add(acc, load_xyzz(in + i));
  store_xyzz(out + t, acc);
}

// *result = (has_rest ? *result : infinity) + (ones_sum ? *ones_sum : infinity).
template <typename Xyzz>
__global__ void add_ones_kernel(Xyzz* result, const Xyzz* ones_sum, bool has_rest) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  Xyzz r = has_rest ? load_xyzz(result) : Xyzz::infinity();
  if (ones_sum) add(r, load_xyzz(ones_sum));
  store_xyzz(result, r);
}

}  // namespace stoker::kernels::gpu::detail
