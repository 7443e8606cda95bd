#include "kernels/detail/parallel.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <new>
#include <vector>

#include "common/host_memory_limit.hpp"

namespace stoker::kernels::detail {
namespace {

TEST(ParallelFor, CoversEveryIndexOnce) {
  std::vector<int> hits(100000, 0);
  parallel_for(hits.size(), 4, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) ++hits[i];
  });
  for (std::size_t i = 0; i < hits.size(); ++i) ASSERT_EQ(hits[i], 1) << i;
}

// A helper's exception (std::bad_alloc in a kernel's buffers) reaches the
// caller once every range has ended, as from one thread, instead of ending
// the process from a thread nobody catches on.
TEST(ParallelFor, AnExceptionOnAnyThreadReachesTheCaller) {
  std::atomic<int> ended{0};
  EXPECT_THROW(parallel_for(
                   4, 4,
                   [&](std::size_t thread, std::size_t, std::size_t) {
                     if (thread == 2) throw std::bad_alloc();
                     ++ended;
                   },
                   /*grain=*/1),
               std::bad_alloc);
  EXPECT_EQ(ended, 3);
}

// Where the system refuses the loop's threads (no address space for their
// stacks), the calling thread runs their ranges: slower, never wrong, and
// no exception. glibc keeps ended threads' stacks for new ones, so threads
// that are still running hold them first.
TEST(ParallelFor, RunsTheRangesOfRefusedThreadsOnTheCallingThread) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "an address-space limit does not work under a sanitizer";
#endif
  std::atomic<bool> release{false};
  std::vector<std::thread> holders;
  for (int i = 0; i < 8; ++i)
    holders.emplace_back([&] {
      while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    });
  std::vector<int> hits(100000, 0);
  rlimit saved{};
  getrlimit(RLIMIT_AS, &saved);
  rlimit tight = saved;
  tight.rlim_cur = common::mapped_bytes() + (1 << 20);  // no room for an 8 MiB stack
  ASSERT_EQ(setrlimit(RLIMIT_AS, &tight), 0);
  bool threw = false;
  try {
    parallel_for(
        hits.size(), 8,
        [&](std::size_t b, std::size_t e) {
          for (std::size_t i = b; i < e; ++i) ++hits[i];
        },
        /*grain=*/1);
  } catch (...) {
    threw = true;
  }
  setrlimit(RLIMIT_AS, &saved);
  release = true;
  for (auto& h : holders) h.join();
  EXPECT_FALSE(threw);
  for (std::size_t i = 0; i < hits.size(); ++i) ASSERT_EQ(hits[i], 1) << i;
}

}  // namespace
}  // namespace stoker::kernels::detail
