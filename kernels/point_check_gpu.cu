// GPU point check: one thread per point, on the curve and in G1 or G2
// (g1.cuh's and g2.cuh's on_curve and in_subgroup, the same arithmetic as
// the host check), the smallest failing index kept with an atomic minimum,
// over the whole array or range by range.
#include "common/error.hpp"
#include "kernels/detail/launch_geometry.cuh"
#include "kernels/detail/msm_point_io.cuh"
#include "kernels/msm.hpp"

namespace stoker::kernels::gpu {
namespace {

__global__ void first_bad_init_kernel(unsigned long long* first_bad, unsigned long long n) {
  *first_bad = n;
}

template <typename Affine>
__global__ void check_points_kernel(unsigned long long* first_bad, const Affine* points,
                                    std::size_t begin, std::size_t count) {
  const std::size_t k = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (k >= count) return;
  const std::size_t i = begin + k;
  // A point past the smallest bad index found so far cannot change the answer.
  if (i >= *reinterpret_cast<volatile unsigned long long*>(first_bad)) return;
  const Affine p = detail::load_affine(points + i);
  if (!on_curve(p) || !in_subgroup(p)) atomicMin(first_bad, static_cast<unsigned long long>(i));
}

template <typename Affine>
std::error_code check_range(std::uint64_t* d_first_bad, const Affine* d_points, std::size_t begin,
                            std::size_t end, cudaStream_t stream) {
  if (!d_first_bad || begin > end || (end > begin && !d_points) ||
      reinterpret_cast<std::uintptr_t>(d_points) % 16)
    return make_error_code(Errc::invalid_argument);
  if (end == begin) return {};
  detail::ElementwiseGeometry g;
  if (auto ec = detail::elementwise_geometry<check_points_kernel<Affine>>(end - begin, g))
    return ec;
  check_points_kernel<Affine><<<g.blocks, g.threads, 0, stream>>>(
      reinterpret_cast<unsigned long long*>(d_first_bad), d_points, begin, end - begin);
  return make_cuda_error(cudaGetLastError());
}

}  // namespace

std::error_code check_points_begin(std::uint64_t* d_first_bad, std::size_t n, cudaStream_t stream) {
  static_assert(sizeof(unsigned long long) == sizeof(std::uint64_t));
  if (!d_first_bad) return make_error_code(Errc::invalid_argument);
  first_bad_init_kernel<<<1, 1, 0, stream>>>(reinterpret_cast<unsigned long long*>(d_first_bad), n);
  return make_cuda_error(cudaGetLastError());
}

std::error_code check_points_range(std::uint64_t* d_first_bad, const G1Affine* d_points,
                                   std::size_t begin, std::size_t end, cudaStream_t stream) {
  return check_range(d_first_bad, d_points, begin, end, stream);
}

std::error_code check_points_range(std::uint64_t* d_first_bad, const G2Affine* d_points,
                                   std::size_t begin, std::size_t end, cudaStream_t stream) {
  return check_range(d_first_bad, d_points, begin, end, stream);
}

std::error_code check_points(std::uint64_t* d_first_bad, const G1Affine* d_points, std::size_t n,
                             cudaStream_t stream) {
  if (!d_first_bad || (n && !d_points) || reinterpret_cast<std::uintptr_t>(d_points) % 16)
    return make_error_code(Errc::invalid_argument);
  if (auto ec = check_points_begin(d_first_bad, n, stream)) return ec;
  return check_points_range(d_first_bad, d_points, 0, n, stream);
}

}  // namespace stoker::kernels::gpu
