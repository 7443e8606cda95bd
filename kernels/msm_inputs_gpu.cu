// Pseudo-random MSM inputs made on the GPU, for tests and benchmarks: 2^26
// points by scalar multiplication would take seconds, so
//   P_i = R_(i mod 1024) + S_(i / 1024),
// with R_j = [a_j] G and S_l = [b_l] G for 64-bit a_j, b_l drawn from the
// seed: one mixed addition per point, and the conversion to affine shares
// one inversion among each thread's run of points (Montgomery's trick:
// 3 products per value instead of an inversion each). The points are in G1
// by construction, distinct in practice, and their discrete logarithms are
// no secret: fine for timing and for GPU == CPU checks, not for anything
// that needs unknown logarithms.
#include "common/error.hpp"
#include "common/splitmix64.hpp"
#include "kernels/detail/launch_geometry.cuh"
#include "kernels/detail/msm_point_io.cuh"
#include "kernels/msm.hpp"

namespace stoker::kernels::gpu {
namespace {

constexpr unsigned kRowLog = 10;  // 1024 points R_j
constexpr unsigned kRun = 16;     // points per thread sharing one inversion

__device__ G1Xyzz times_generator(std::uint64_t k) {
  const G1Affine g = G1Affine::generator();
  G1Xyzz acc = G1Xyzz::infinity();
  for (int b = 63; b >= 0; --b) {
    acc = dbl(acc);
    if ((k >> b) & 1) add_mixed(acc, g);
  }
  return acc;
}

// Affine forms of xs[0..count) with one inversion: x = X / ZZ, y = Y / ZZZ.
__device__ void batch_to_affine(const G1Xyzz* xs, unsigned count, G1Affine* out) {
  Fq prefix[2 * kRun];
  Fq acc = Fq::one();
  for (unsigned i = 0; i < count; ++i) {
    const bool inf = xs[i].is_infinity();
    prefix[2 * i] = acc;
    acc = acc * (inf ? Fq::one() : xs[i].zz);
    prefix[2 * i + 1] = acc;
    acc = acc * (inf ? Fq::one() : xs[i].zzz);
  }
  Fq inv = acc.inverse();
  for (unsigned i = count; i-- > 0;) {
    const bool inf = xs[i].is_infinity();
    const Fq inv_zzz = inv * prefix[2 * i + 1];
    inv = inv * (inf ? Fq::one() : xs[i].zzz);
    const Fq inv_zz = inv * prefix[2 * i];
    inv = inv * (inf ? Fq::one() : xs[i].zz);
    out[i] = inf ? G1Affine{Fq::zero(), Fq::zero()} : G1Affine{xs[i].x * inv_zz, xs[i].y * inv_zzz};
  }
}

__global__ void table_kernel(G1Affine* table, std::size_t count, std::uint64_t seed) {
  const std::size_t t = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const std::size_t first = t * kRun;
  if (first >= count) return;
  const unsigned run = static_cast<unsigned>(count - first < kRun ? count - first : kRun);
  G1Xyzz xs[kRun];
  for (unsigned i = 0; i < run; ++i)
    xs[i] = times_generator(common::splitmix64(seed ^ common::splitmix64(first + i)) | 1);
  batch_to_affine(xs, run, table + first);
}

__global__ void points_kernel(G1Affine* out, std::size_t n, const G1Affine* rows,
                              const G1Affine* cols) {
  const std::size_t t = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const std::size_t first = t * kRun;
  if (first >= n) return;
  const unsigned run = static_cast<unsigned>(n - first < kRun ? n - first : kRun);
  G1Xyzz xs[kRun];
  for (unsigned i = 0; i < run; ++i) {
    const std::size_t k = first + i;
    xs[i] = G1Xyzz::infinity();
    add_mixed(xs[i], detail::load_affine(rows + (k & ((1u << kRowLog) - 1))));
    add_mixed(xs[i], detail::load_affine(cols + (k >> kRowLog)));
  }
  batch_to_affine(xs, run, out + first);
}

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

template <auto Kernel>
std::error_code launch_threads(std::size_t threads, cudaStream_t stream, auto... args) {
  detail::ElementwiseGeometry g;
  if (auto ec = detail::elementwise_geometry<Kernel>(threads, g)) return ec;
  Kernel<<<g.blocks, g.threads, 0, stream>>>(args...);
  return make_cuda_error(cudaGetLastError());
}

}  // namespace

std::size_t random_points_scratch_bytes(std::size_t n) {
  const std::size_t cols = (n + (1u << kRowLog) - 1) >> kRowLog;
  return ((std::size_t{1} << kRowLog) + cols) * sizeof(G1Affine);
}

std::error_code random_points(G1Affine* d_out, std::size_t n, std::uint64_t seed, void* d_scratch,
                              std::size_t scratch_bytes, cudaStream_t stream) {
  if (n == 0) return {};
  if (!d_out || !d_scratch || scratch_bytes < random_points_scratch_bytes(n) ||
      reinterpret_cast<std::uintptr_t>(d_out) % 16 ||
      reinterpret_cast<std::uintptr_t>(d_scratch) % 16)
    return make_error_code(Errc::invalid_argument);
  const std::size_t rows = std::size_t{1} << kRowLog;
  const std::size_t table = random_points_scratch_bytes(n) / sizeof(G1Affine);
  auto* t = static_cast<G1Affine*>(d_scratch);
  if (auto ec = launch_threads<table_kernel>((table + kRun - 1) / kRun, stream, t, table, seed))
    return ec;
  return launch_threads<points_kernel>((n + kRun - 1) / kRun, stream, d_out, n,
                                       static_cast<const G1Affine*>(t),
                                       static_cast<const G1Affine*>(t + rows));
}

std::error_code random_scalars(Fr* d_out, std::size_t n, std::uint64_t seed, bool sparse,
                               cudaStream_t stream) {
  if (n == 0) return {};
  if (!d_out) return make_error_code(Errc::invalid_argument);
  return launch_threads<scalars_kernel>(n, stream, d_out, n, seed, sparse);
}

}  // namespace stoker::kernels::gpu
