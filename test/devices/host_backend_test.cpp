// Behaviour of the host backend that the engine's CI tests lean on: sticky
// faults that fail instead of hanging, and slowed devices.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "devices/device_set.hpp"

namespace stoker::devices {
namespace {

DeviceSet host_set(int n, std::vector<double> slowdown = {}) {
  DiscoverOptions o;
  o.backend = BackendChoice::host;
  o.host.device_count = n;
  o.host.slowdown = std::move(slowdown);
  auto set = discover(o);
  EXPECT_TRUE(set);
  return std::move(*set);
}

TEST(HostBackend, FailingTaskFaultsDeviceAndWaitersReturnInsteadOfHanging) {
  auto set = host_set(2);
  auto s1 = std::move(*set[0].create_stream());
  auto s2 = std::move(*set[0].create_stream());
  auto e = std::move(*set[0].create_event());
  ASSERT_FALSE(s1.enqueue_host([] { return make_error_code(Errc::kernel_failed); }));
  (void)s1.record(e);  // refused once the fault has landed, queued before
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(e.synchronize(), make_error_code(Errc::kernel_failed));
  EXPECT_EQ(s2.synchronize(), make_error_code(Errc::kernel_failed));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  EXPECT_EQ(set[0].health(), make_error_code(Errc::kernel_failed));
  EXPECT_TRUE(s2.copy(&e, &e, 1)) << "a faulted device takes no more work";
  EXPECT_FALSE(e.query());
  EXPECT_FALSE(set[1].health()) << "the fault stays on its own device";
}

TEST(HostBackend, SlowdownFactorStretchesTasks) {
  auto set = host_set(2, {1.0, 4.0});
  auto measure = [&](Device& d) {
    auto s = std::move(*d.create_stream());
    const auto t0 = std::chrono::steady_clock::now();
    s.enqueue_host([] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      return std::error_code{};
    });
    s.synchronize();
    return std::chrono::steady_clock::now() - t0;
  };
  const auto fast = measure(set[0]);
  const auto slow = measure(set[1]);
  EXPECT_GE(slow, std::chrono::milliseconds(75));
  EXPECT_GT(slow, 2 * fast);
  EXPECT_EQ(set[1].info().slowdown, 4.0);
}

// A slowed device's stream that waits for another stream's event resumes
// when the event completes: the wait is idle time, not work to stretch.
// (Stretching it made a compute stream on a 4x device that waited 30 ms for
// its copies sit 120 ms before its first kernel.)
TEST(HostBackend, SlowdownDoesNotStretchWaitsForOtherStreams) {
  auto set = host_set(1, {4.0});
  auto copies = std::move(*set[0].create_stream());
  auto compute = std::move(*set[0].create_stream());
  auto copied = std::move(*set[0].create_event());
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_FALSE(copies.enqueue_host([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));  // 100 ms slowed
    return std::error_code{};
  }));
  ASSERT_FALSE(copies.record(copied));
  ASSERT_FALSE(compute.wait(copied));
  ASSERT_FALSE(compute.synchronize());
  const auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(waited, std::chrono::milliseconds(95)) << "the copy itself is slowed";
  EXPECT_LT(waited, std::chrono::milliseconds(250)) << "the wait was slowed down as well";
}

TEST(HostBackend, DeviceMemoryIsCountedAgainstCapacity) {
  DiscoverOptions o;
  o.backend = BackendChoice::host;
  o.host.memory_bytes = 1 << 20;
  auto set = std::move(*discover(o));
  auto a = set[0].allocate(600 << 10);
  ASSERT_TRUE(a);
  auto b = set[0].allocate(600 << 10);
  ASSERT_FALSE(b);
  EXPECT_EQ(b.error().code, make_error_code(Errc::out_of_device_memory));
  a->reset();
  EXPECT_EQ(set[0].memory_info()->free, std::size_t{1} << 20) << "freed memory comes back";
  EXPECT_TRUE(set[0].allocate(600 << 10));
}

}  // namespace
}  // namespace stoker::devices
