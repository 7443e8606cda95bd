// CPU point check: on the curve and in the group (g1.cuh's and g2.cuh's
// on_curve and in_subgroup) over contiguous ranges, one per thread; each
// range stops at its first bad point and the smallest index wins. G1's is
// the same arithmetic as the GPU check (point_check_gpu.cu).
#include <algorithm>
#include <vector>

#include "kernels/detail/parallel.hpp"
#include "kernels/g1.cuh"
#include "kernels/g2.cuh"
#include "kernels/msm.hpp"

namespace stoker::kernels::cpu {
namespace {

template <typename Affine>
std::size_t first_bad(const Affine* points, std::size_t n, unsigned threads) {
  const unsigned t = detail::resolve_threads(threads);
  std::vector<std::size_t> first(t, n);
  detail::parallel_for(
      n, t,
      [&](std::size_t thread, std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i)
          if (!on_curve(points[i]) || !in_subgroup(points[i])) {
            first[thread] = i;
            return;
          }
      },
      /*grain=*/256);
  return *std::min_element(first.begin(), first.end());
}

}  // namespace

std::size_t check_points(const G1Affine* points, std::size_t n, unsigned threads) {
  return first_bad(points, n, threads);
}
std::size_t check_points(const G2Affine* points, std::size_t n, unsigned threads) {
  return first_bad(points, n, threads);
}

}  // namespace stoker::kernels::cpu
