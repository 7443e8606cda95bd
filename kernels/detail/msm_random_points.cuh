// Pseudo-random MSM points made on the GPU, for tests and benchmarks: 2^26
// points by scalar multiplication would take seconds, so
//   P_i = R_(i mod 1024) + S_(i / 1024),
// with R_j = [a_j] G and S_l = [b_l] G for 64-bit a_j, b_l drawn from the
// seed and G the group's generator: one mixed addition per point, and the
// conversion to affine shares one inversion among each thread's run of
// points (Montgomery's trick: 3 products per value instead of an inversion
// each). The points are in G1 (G2) by construction, distinct in practice,
// and their discrete logarithms are no secret: fine for timing and for
// GPU == CPU checks, not for anything that needs unknown logarithms. The
// same code makes both groups' points (msm_group.hpp).
//
// Templates over the group: kernels/msm_inputs_gpu.cu instantiates them for
// G1, kernels/msm_g2_gpu.cu for G2.
#pragma once

#include "common/error.hpp"
#include "common/splitmix64.hpp"
#include "kernels/detail/launch_geometry.cuh"
#include "kernels/detail/msm_group.hpp"
#include "kernels/detail/msm_point_io.cuh"
#include "kernels/msm.hpp"

namespace stoker::kernels::gpu::detail::random_inputs {

constexpr unsigned kRowLog = 10;  // 1024 points R_j
constexpr unsigned kRun = 16;     // points per thread sharing one inversion

using detail::MsmGroupTraits;
using detail::XyzzOf;

template <typename Affine>
__device__ XyzzOf<Affine> times_generator(std::uint64_t k) {
  const Affine g = Affine::generator();
  XyzzOf<Affine> acc = XyzzOf<Affine>::infinity();
  for (int b = 63; b >= 0; --b) {
    acc = dbl(acc);
    if ((k >> b) & 1) add_mixed(acc, g);
  }
  return acc;
}

// Affine forms of xs[0..count) with one inversion: x = X / ZZ, y = Y / ZZZ.
template <typename Affine>
__device__ void batch_to_affine(const XyzzOf<Affine>* xs, unsigned count, Affine* out) {
  using Field = typename MsmGroupTraits<Affine>::Field;
  Field prefix[2 * kRun];
  Field acc = Field::one();
  for (unsigned i = 0; i < count; ++i) {
    const bool inf = xs[i].is_infinity();
    prefix[2 * i] = acc;
    acc = acc * (inf ? Field::one() : xs[i].zz);
    prefix[2 * i + 1] = acc;
    acc = acc * (inf ? Field::one() : xs[i].zzz);
  }
  Field inv = acc.inverse();
  for (unsigned i = count; i-- > 0;) {
    const bool inf = xs[i].is_infinity();
    const Field inv_zzz = inv * prefix[2 * i + 1];
    inv = inv * (inf ? Field::one() : xs[i].zzz);
    const Field inv_zz = inv * prefix[2 * i];
    inv = inv * (inf ? Field::one() : xs[i].zz);
    out[i] =
        inf ? Affine{Field::zero(), Field::zero()} : Affine{xs[i].x * inv_zz, xs[i].y * inv_zzz};
  }
}

template <typename Affine>
__global__ void table_kernel(Affine* table, std::size_t count, std::uint64_t seed) {
  const std::size_t t = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const std::size_t first = t * kRun;
  if (first >= count) return;
  const unsigned run = static_cast<unsigned>(count - first < kRun ? count - first : kRun);
  XyzzOf<Affine> xs[kRun];
  for (unsigned i = 0; i < run; ++i)
    xs[i] = times_generator<Affine>(common::splitmix64(seed ^ common::splitmix64(first + i)) | 1);
  batch_to_affine(xs, run, table + first);
}

template <typename Affine>
__global__ void points_kernel(Affine* out, std::size_t n, const Affine* rows, const Affine* cols) {
  const std::size_t t = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const std::size_t first = t * kRun;
  if (first >= n) return;
  const unsigned run = static_cast<unsigned>(n - first < kRun ? n - first : kRun);
  XyzzOf<Affine> xs[kRun];
  for (unsigned i = 0; i < run; ++i) {
    const std::size_t k = first + i;
    xs[i] = XyzzOf<Affine>::infinity();
    add_mixed(xs[i], detail::load_affine(rows + (k & ((1u << kRowLog) - 1))));
    add_mixed(xs[i], detail::load_affine(cols + (k >> kRowLog)));
  }
  batch_to_affine(xs, run, out + first);
}

template <auto Kernel>
std::error_code launch_threads(std::size_t threads, cudaStream_t stream, auto... args) {
  detail::ElementwiseGeometry g;
  if (auto ec = detail::elementwise_geometry<Kernel>(threads, g)) return ec;
  Kernel<<<g.blocks, g.threads, 0, stream>>>(args...);
  return make_cuda_error(cudaGetLastError());
}

template <typename Affine>
std::error_code make_points(Affine* d_out, std::size_t n, std::uint64_t seed, void* d_scratch,
                            std::size_t scratch_bytes, cudaStream_t stream) {
  constexpr MsmGroup group = MsmGroupTraits<Affine>::kGroup;
  if (n == 0) return {};
  if (!d_out || !d_scratch || scratch_bytes < random_points_scratch_bytes(group, n) ||
      reinterpret_cast<std::uintptr_t>(d_out) % 16 ||
      reinterpret_cast<std::uintptr_t>(d_scratch) % 16)
    return make_error_code(Errc::invalid_argument);
  const std::size_t rows = std::size_t{1} << kRowLog;
  const std::size_t table = random_points_scratch_bytes(group, n) / sizeof(Affine);
  auto* t = static_cast<Affine*>(d_scratch);
  if (auto ec =
          launch_threads<table_kernel<Affine>>((table + kRun - 1) / kRun, stream, t, table, seed))
    return ec;
  return launch_threads<points_kernel<Affine>>((n + kRun - 1) / kRun, stream, d_out, n,
                                               static_cast<const Affine*>(t),
                                               static_cast<const Affine*>(t + rows));
}

}  // namespace stoker::kernels::gpu::detail::random_inputs
