// Canonical to Montgomery form on the CPU's threads.
#include "kernels/detail/parallel.hpp"
#include "kernels/fq_montgomery.hpp"

namespace stoker::kernels::cpu {

void fq_to_montgomery(Fq* values, std::size_t n, unsigned threads) {
  kernels::detail::parallel_for(n, threads, [values](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) values[i] = Fq::from_canonical(values[i].l);
  });
}

}  // namespace stoker::kernels::cpu
