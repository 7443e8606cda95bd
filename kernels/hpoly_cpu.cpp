// CPU reference of the H polynomial: the definition, step by step, with the
// transforms and the pointwise step split across threads.
#include <vector>

#include "kernels/detail/parallel.hpp"
#include "kernels/hpoly.hpp"
#include "kernels/ntt.hpp"

namespace stoker::kernels {

Fr hpoly_z_inverse(unsigned log_n) {
  return (Fr::generator().pow(std::uint64_t{1} << log_n) - Fr::one()).inverse();
}

namespace cpu {

void hpoly(Fr* h, const Fr* a, const Fr* b, const Fr* c, unsigned log_n, unsigned threads) {
  if (log_n == 0 || log_n > kMaxLogN) return;
  threads = detail::resolve_threads(threads);
  const std::size_t n = std::size_t{1} << log_n;
  std::vector<Fr> A(n), B(n), C(n);
  const std::pair<const Fr*, Fr*> steps[] = {{a, A.data()}, {b, B.data()}, {c, C.data()}};
  for (auto [src, dst] : steps) {
    transform(NttKind::inverse, dst, src, log_n, 1, threads);
    transform(NttKind::coset_forward, dst, dst, log_n, 1, threads);
  }
  const Fr z_inv = hpoly_z_inverse(log_n);
  detail::parallel_for(n, threads, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) h[i] = (A[i] * B[i] - C[i]) * z_inv;
  });
  transform(NttKind::coset_inverse, h, h, log_n, 1, threads);
}

}  // namespace cpu
}  // namespace stoker::kernels
