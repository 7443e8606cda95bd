// A minimal fork-join loop for the CPU reference kernels: splits [0, n) into
// one contiguous range per thread and joins before returning.
#pragma once

#include <algorithm>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

#include "common/start_thread.hpp"

namespace stoker::kernels::detail {

// The first exception any of a loop's threads threw, rethrown on the
// calling thread once every thread has joined: a helper's std::bad_alloc
// reaches the kernel's caller as it would from one thread, instead of
// ending the process from a thread nobody catches on.
class FirstException {
 public:
  template <typename G>
  void run(G&& g) noexcept {
    try {
      g();
    } catch (...) {
      std::lock_guard lock(m_);
      if (!first_) first_ = std::current_exception();
    }
  }
  void rethrow() const {
    if (first_) std::rethrow_exception(first_);
  }

 private:
  std::mutex m_;
  std::exception_ptr first_;
};

inline unsigned resolve_threads(unsigned threads) {
  if (threads) return threads;
  const unsigned hc = std::thread::hardware_concurrency();
  return hc ? hc : 1;
}

// f(begin, end), or f(thread, begin, end), for disjoint ranges covering
// [0, n), one per thread, the calling thread taking the first (thread 0).
// Ranges below `grain` elements are not worth a thread. A thread the system
// refuses (a thread or address-space limit) costs time, not the result: its
// range runs on the calling thread. What f throws on any thread is thrown
// here, after every range has ended.
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
  FirstException thrown;
  const auto range = [&](std::size_t i) {
    thrown.run([&] {
      const std::size_t b = std::min(n, i * chunk);
      call(i, b, std::min(n, b + chunk));
    });
  };
  // The ranges of threads the system refuses run here after the first.
  std::size_t started = 1;
  for (; started < t; ++started) {
    std::thread th;
    if (common::start_thread(th, "a kernel thread", [&range, started] { range(started); })) break;
    pool.push_back(std::move(th));
  }
  range(0);
  for (std::size_t i = started; i < t; ++i) range(i);
  for (auto& th : pool) th.join();
  thrown.rethrow();
}

}  // namespace stoker::kernels::detail
