// A minimal fork-join loop for the CPU reference kernels: splits [0, n) into
// one contiguous range per thread and joins before returning.
#pragma once

#include <algorithm>
#include <cstddef>
#include <thread>
#include <type_traits>
#include <vector>

namespace stoker::kernels::detail {

inline unsigned resolve_threads(unsigned threads) {
  if (threads) return threads;
  const unsigned hc = std::thread::hardware_concurrency();
  return hc ? hc : 1;
}

// f(begin, end), or f(thread, begin, end), for disjoint ranges covering
// [0, n), one per thread, the calling thread taking the first (thread 0).
// Ranges below `grain` elements are not worth a thread.
template <typename F>
void parallel_for(std::size_t n, unsigned threads, F&& f, std::size_t grain = 4096) {
  const auto call = [&f](std::size_t thread, std::size_t b, std::size_t e) {
    if constexpr (std::is_invocable_v<F&, std::size_t, std::size_t, std::size_t>)
      f(thread, b, e);
    else
      f(b, e);
  };
  const std::size_t t =
      std::min<std::size_t>(resolve_threads(threads), std::max<std::size_t>(1, n / grain));
  if (t <= 1) {
    call(0, 0, n);
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(t - 1);
  const std::size_t chunk = (n + t - 1) / t;
  for (std::size_t i = 1; i < t; ++i) {
    const std::size_t b = std::min(n, i * chunk), e = std::min(n, b + chunk);
    pool.emplace_back([&call, i, b, e] { call(i, b, e); });
  }
  call(0, 0, std::min(n, chunk));
  for (auto& th : pool) th.join();
}

}  // namespace stoker::kernels::detail
