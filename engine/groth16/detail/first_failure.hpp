// The smallest index in [0, n) that fails a test, found on several threads:
// the shape of every bulk check of the Groth16 readers (points, matrix
// coefficients, witness values), which report one definite element.
#pragma once

#include <atomic>
#include <cstddef>

#include "kernels/detail/parallel.hpp"

namespace stoker::engine::groth16::detail {

// The smallest i in [0, n) with !good(i, scratch), or n; `good` runs on
// `threads` threads (0: the hardware's), ranges of at least `grain` each,
// every thread with a scratch of its own from make_scratch() (a buffer for
// pieces of a file). A thread stops at its first failure, and at the start
// of any element past a failure already found; every element before the
// one returned has run.
template <typename MakeScratch, typename Good>
std::size_t first_failure_with_scratch(std::size_t n, unsigned threads, std::size_t grain,
                                       MakeScratch make_scratch, Good good) {
  std::atomic<std::size_t> first{n};
  kernels::detail::parallel_for(
      n, threads,
      [&](std::size_t b, std::size_t e) {
        auto scratch = make_scratch();
        for (std::size_t i = b; i < e; ++i) {
          if (first.load(std::memory_order_relaxed) < i) return;
          if (!good(i, scratch)) {
            std::size_t seen = first.load(std::memory_order_relaxed);
            while (i < seen && !first.compare_exchange_weak(seen, i, std::memory_order_relaxed)) {
            }
            return;
          }
        }
      },
      grain);
  return first.load();
}

// The same without a scratch.
template <typename Good>
std::size_t first_failure(std::size_t n, unsigned threads, std::size_t grain, Good good) {
  return first_failure_with_scratch(
      n, threads, grain, [] { return 0; }, [&good](std::size_t i, int) { return good(i); });
}

}  // namespace stoker::engine::groth16::detail
