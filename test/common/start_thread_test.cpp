#include "common/start_thread.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "common/host_memory_limit.hpp"

namespace stoker::common {
namespace {

TEST(StartThread, RunsTheFunction) {
  std::atomic<bool> ran{false};
  std::thread t;
  EXPECT_FALSE(start_thread(t, "thread test-run (a test)", [&] { ran = true; }));
  ASSERT_TRUE(t.joinable());
  t.join();
  EXPECT_TRUE(ran);
}

// Under an address-space limit just above what the process maps, no new
// thread gets its stack: the refusal is an Error that names the thread,
// and nothing was started. glibc keeps the stacks of ended threads (up to
// 40 MiB) for new ones, so threads that are still running hold them first.
TEST(StartThread, ARefusedThreadIsAnErrorNamingIt) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "an address-space limit does not work under a sanitizer";
#endif
  std::atomic<bool> release{false};
  std::vector<std::thread> holders;
  for (int i = 0; i < 8; ++i)
    holders.emplace_back([&] {
      while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    });
  const std::size_t mapped = mapped_bytes();
  ASSERT_GT(mapped, 0u);
  rlimit saved{};
  getrlimit(RLIMIT_AS, &saved);
  rlimit tight = saved;
  tight.rlim_cur = mapped + (1 << 20);  // room for the message, not for an 8 MiB stack
  ASSERT_EQ(setrlimit(RLIMIT_AS, &tight), 0);
  std::atomic<bool> ran{false};
  std::thread t;
  const Error e = start_thread(t, "thread stoker-test-0 (a test's helper)", [&] { ran = true; });
  setrlimit(RLIMIT_AS, &saved);
  release = true;
  for (auto& h : holders) h.join();
  EXPECT_TRUE(e);
  EXPECT_EQ(e.what(),
            "could not start thread stoker-test-0 (a test's helper): " + e.code.message());
  EXPECT_EQ(e.code, std::errc::resource_unavailable_try_again) << e.what();
  EXPECT_FALSE(t.joinable());
  EXPECT_FALSE(ran);
}

}  // namespace
}  // namespace stoker::common
