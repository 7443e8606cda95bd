// cpu::sum_points: msm.hpp's plain sums of points, by the batched affine
// tree that the CPU MSM also sums its scalars of one with.
#include "kernels/detail/batch_affine_sum.hpp"
#include "kernels/msm.hpp"

namespace stoker::kernels::cpu {

G1Xyzz sum_points(const G1Affine* points, std::size_t n, unsigned threads) {
  return detail::sum_points<G1Affine>(n, threads, [points](std::size_t i) { return points[i]; });
}
G2Xyzz sum_points(const G2Affine* points, std::size_t n, unsigned threads) {
  return detail::sum_points<G2Affine>(n, threads, [points](std::size_t i) { return points[i]; });
}

}  // namespace stoker::kernels::cpu
