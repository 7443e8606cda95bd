// DevicePool: stream-ordered device memory charged to the device's budget,
// on the host backend in CI and on CUDA on the GPU machine.
#include "alloc/device_pool.hpp"

#include <gtest/gtest.h>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <cstring>
#include <optional>
#include <vector>

#include "alloc/pinned_pool.hpp"
#include "test/alloc/backend.hpp"

namespace stoker::alloc {
namespace {

using test::kBackend;
constexpr std::size_t MiB = std::size_t{1} << 20;

TEST(DevicePool, AllocatesInStreamOrderAndChargesTheBudget) {
  STOKER_ALLOC_REQUIRE_BACKEND();
  auto set = test::devices_for_test();
  auto& dev = set[0];
  MemoryBudget budget(64 * MiB, "gpu0", Errc::out_of_device_memory);
  DevicePool pool(dev, budget);
  EXPECT_FALSE(pool.init_error());
  auto stream = std::move(*dev.create_stream());

  MemoryBudget host_budget(64 * MiB, "host");
  PinnedPool pinned(kBackend, host_budget);
  auto in = std::move(*pinned.try_allocate(4 * MiB));
  auto out = std::move(*pinned.try_allocate(4 * MiB));
  for (std::size_t i = 0; i < 4 * MiB; ++i) in.data()[i] = static_cast<std::byte>(i * 31);

  auto block = pool.allocate(4 * MiB, stream);
  ASSERT_TRUE(block) << block.error().what();
  EXPECT_EQ(block->size(), 4 * MiB);
  EXPECT_EQ(budget.in_use(), 4 * MiB);
  ASSERT_FALSE(stream.copy(block->data(), in.data(), 4 * MiB));
  ASSERT_FALSE(stream.copy(out.data(), block->data(), 4 * MiB));
  EXPECT_FALSE(block->release(stream));
  EXPECT_EQ(budget.in_use(), 0u);
  ASSERT_FALSE(stream.synchronize());
  EXPECT_EQ(std::memcmp(in.data(), out.data(), 4 * MiB), 0);
  const auto s = pool.stats();
  EXPECT_EQ(s.allocations, 1u);
  EXPECT_EQ(s.blocks_in_use, 0u);
  EXPECT_EQ(s.high_water, 4 * MiB);
}

TEST(DevicePool, ExhaustedBudgetFailsAtOnceAndLeaksNothing) {
  STOKER_ALLOC_REQUIRE_BACKEND();
  auto set = test::devices_for_test();
  auto& dev = set[0];
  MemoryBudget budget(8 * MiB, "gpu0", Errc::out_of_device_memory);
  DevicePool pool(dev, budget);
  auto stream = std::move(*dev.create_stream());
  auto a = pool.allocate(6 * MiB, stream);
  ASSERT_TRUE(a);
  auto b = pool.allocate(6 * MiB, stream);
  ASSERT_FALSE(b);
  EXPECT_EQ(b.error().code, make_error_code(Errc::out_of_device_memory));
  EXPECT_NE(b.error().message.find(std::to_string(6 * MiB)), std::string::npos);
  auto zero = pool.allocate(0, stream);
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.error().code, make_error_code(Errc::invalid_argument));
  EXPECT_EQ(pool.stats().failed_requests, 2u);
  EXPECT_EQ(budget.in_use(), 6 * MiB);
  a->reset();  // frees on the allocating stream
  EXPECT_EQ(budget.in_use(), 0u);
  EXPECT_EQ(pool.stats().blocks_in_use, 0u);
  ASSERT_FALSE(stream.synchronize());
}

TEST(DevicePool, ReleaseOnAnotherStreamAfterAnEvent) {
  STOKER_ALLOC_REQUIRE_BACKEND();
  auto set = test::devices_for_test();
  auto& dev = set[0];
  MemoryBudget budget(64 * MiB, "gpu0", Errc::out_of_device_memory);
  DevicePool pool(dev, budget);
  auto s1 = std::move(*dev.create_stream());
  auto s2 = std::move(*dev.create_stream());
  auto ev = std::move(*dev.create_event());
  std::vector<DeviceBlock> blocks;
  for (int round = 0; round < 50; ++round) {
    auto blk = pool.allocate(MiB, s1);
    ASSERT_TRUE(blk);
    ASSERT_FALSE(s1.record(ev));
    ASSERT_FALSE(s2.wait(ev));
    EXPECT_FALSE(blk->release(s2));
  }
  ASSERT_FALSE(s2.synchronize());
  EXPECT_EQ(budget.in_use(), 0u);
  EXPECT_EQ(pool.stats().allocations, 50u);
  EXPECT_EQ(pool.stats().high_water, MiB);
}

TEST(DevicePool, AsyncAllocateWaitsForTheDeviceBudgetAndCanBeCancelled) {
  STOKER_ALLOC_REQUIRE_BACKEND();
  namespace asio = boost::asio;
  auto set = test::devices_for_test();
  auto& dev = set[0];
  MemoryBudget budget(8 * MiB, "gpu0", Errc::out_of_device_memory);
  DevicePool pool(dev, budget);
  auto stream = std::move(*dev.create_stream());
  auto held = std::move(*pool.allocate(6 * MiB, stream));
  asio::io_context io;
  std::optional<std::error_code> waited, cancelled;
  DeviceBlock got;
  asio::cancellation_signal signal;
  pool.async_allocate(4 * MiB, stream,
                      asio::bind_executor(io, [&](std::error_code ec, DeviceBlock b) {
                        waited = ec;
                        got = std::move(b);
                      }));
  pool.async_allocate(
      4 * MiB, stream,
      asio::bind_cancellation_slot(signal.slot(),
                                   asio::bind_executor(io, [&](std::error_code ec, DeviceBlock b) {
                                     cancelled = ec;
                                     EXPECT_FALSE(b);
                                   })));
  io.poll();
  EXPECT_FALSE(waited) << "6 of 8 MiB are held: the request waits";
  asio::post(io, [&] { signal.emit(asio::cancellation_type::terminal); });
  io.poll();
  ASSERT_TRUE(cancelled);
  EXPECT_EQ(*cancelled, std::errc::operation_canceled);
  held.reset();
  io.run();
  ASSERT_TRUE(waited);
  EXPECT_FALSE(*waited);
  EXPECT_EQ(got.size(), 4 * MiB);
  EXPECT_EQ(budget.in_use(), 4 * MiB);
  got.reset();
  ASSERT_FALSE(stream.synchronize());
  EXPECT_EQ(budget.in_use(), 0u);
  EXPECT_EQ(pool.stats().blocks_in_use, 0u);
  EXPECT_EQ(pool.stats().failed_requests, 1u);
}

}  // namespace
}  // namespace stoker::alloc
