// PinnedPool: reuse instead of pinning anew, one owner per block under many
// threads, statistics that add up, budget backpressure, nothing leaked.
#include "alloc/pinned_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_future.hpp>
#include <cstring>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include "test/alloc/backend.hpp"

namespace stoker::alloc {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using test::kBackend;

constexpr std::size_t MiB = std::size_t{1} << 20;

TEST(PinnedPool, ReusesReleasedBlocks) {
  STOKER_ALLOC_REQUIRE_BACKEND();
  MemoryBudget budget(256 * MiB, "host");
  PinnedPool pool(kBackend, budget);
  void* first = nullptr;
  {
    auto b = pool.try_allocate(MiB);
    ASSERT_TRUE(b) << b.error().what();
    first = b->data();
    EXPECT_EQ(b->size(), MiB);
    EXPECT_EQ(b->capacity(), MiB);
    EXPECT_EQ(budget.in_use(), MiB) << "a block costs its capacity while handed out";
  }
  EXPECT_EQ(budget.in_use(), 0u);
  for (int i = 0; i < 100; ++i) {
    auto b = pool.try_allocate(MiB);
    ASSERT_TRUE(b);
    EXPECT_EQ(b->data(), first) << "the most recently released block comes back";
  }
  const auto s = pool.stats();
  EXPECT_EQ(s.allocations, 101u);
  EXPECT_EQ(s.reuses, 100u);
  EXPECT_EQ(s.pinned_allocations, 1u) << "one slab, pinned once";
  EXPECT_EQ(s.blocks_in_use, 0u);
  EXPECT_EQ(s.bytes_in_use, 0u);
  EXPECT_EQ(s.high_water, MiB);
}

TEST(PinnedPool, RoundsRequestsUpToASizeClassWithBoundedWaste) {
  STOKER_ALLOC_REQUIRE_BACKEND();
  MemoryBudget budget(256 * MiB, "host");
  PinnedPool pool(kBackend, budget);
  for (std::size_t bytes : {std::size_t{1}, std::size_t{4097}, MiB + 1, 3 * MiB + 12345}) {
    auto b = pool.try_allocate(bytes);
    ASSERT_TRUE(b);
    EXPECT_EQ(b->size(), bytes);
    EXPECT_GE(b->capacity(), bytes);
    EXPECT_LE(b->capacity(), std::max<std::size_t>(4096, bytes + bytes / 4 + 1));
    EXPECT_EQ(b->capacity(), PinnedPool::block_capacity(bytes));
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b->data()) % 1024, 0u);
    std::memset(b->data(), 0xab, b->capacity());  // the whole capacity is usable
  }
}

TEST(PinnedPool, ManyThreadsNeverGetTheSameBlockAndStatsAddUp) {
  STOKER_ALLOC_REQUIRE_BACKEND();
  constexpr int kThreads = 8;
  constexpr int kRounds = 1500;
  MemoryBudget budget(512 * MiB, "host");
  PinnedPoolOptions o;
  o.slab_bytes = 4 * MiB;
  PinnedPool pool(kBackend, budget, o);
  std::atomic<int> corrupted{0}, failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(t);
      std::vector<std::pair<PinnedBlock, std::uint32_t>> held;
      for (int i = 0; i < kRounds; ++i) {
        const std::size_t bytes = 4096 + rng() % (256 * 1024);
        auto b = pool.allocate(bytes);
        if (!b) {
          failures.fetch_add(1);
          continue;
        }
        // Stamp the block with who owns it; any other owner would overwrite it.
        const auto stamp = static_cast<std::uint32_t>(t * kRounds + i);
        auto* words = b->as<std::uint32_t>();
        const auto n = b->capacity() / sizeof(std::uint32_t);
        for (std::size_t k = 0; k < n; k += 64) words[k] = stamp;
        held.emplace_back(std::move(*b), stamp);
        if (held.size() > 3 || rng() % 2) {
          const auto idx = rng() % held.size();
          auto& [victim, expected] = held[idx];
          const auto* w = victim.as<std::uint32_t>();
          for (std::size_t k = 0; k < victim.capacity() / sizeof(std::uint32_t); k += 64)
            if (w[k] != expected) corrupted.fetch_add(1);
          held.erase(held.begin() + static_cast<std::ptrdiff_t>(idx));
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(corrupted.load(), 0) << "a block was handed to two owners at once";
  EXPECT_EQ(failures.load(), 0);
  const auto s = pool.stats();
  EXPECT_EQ(s.allocations, std::size_t{kThreads} * kRounds);
  EXPECT_EQ(s.allocations, s.reuses + s.pinned_allocations)
      << "every allocation is a reuse or pinned one new slab";
  EXPECT_GT(s.reuses, s.allocations / 2);
  EXPECT_EQ(s.blocks_in_use, 0u);
  EXPECT_EQ(s.bytes_in_use, 0u);
  EXPECT_EQ(s.bytes_requested, 0u);
  EXPECT_EQ(s.failed_requests, 0u);
  EXPECT_LE(s.bytes_pinned, pool.max_pinned_bytes());
  EXPECT_EQ(budget.in_use(), 0u);
  EXPECT_EQ(pool.trim(), s.bytes_pinned);
  EXPECT_EQ(pool.stats().bytes_pinned, 0u);
  EXPECT_EQ(pool.stats().slabs, 0u);
}

TEST(PinnedPool, TryAllocateFailsWhenTheBudgetIsExhaustedAndLeaksNothing) {
  STOKER_ALLOC_REQUIRE_BACKEND();
  MemoryBudget budget(4 * MiB, "host");
  PinnedPool pool(kBackend, budget);
  auto a = pool.try_allocate(3 * MiB);
  ASSERT_TRUE(a);
  auto b = pool.try_allocate(2 * MiB);
  ASSERT_FALSE(b);
  EXPECT_EQ(b.error().code, make_error_code(Errc::out_of_host_memory));
  EXPECT_NE(b.error().message.find(std::to_string(2 * MiB)), std::string::npos)
      << b.error().message;
  auto huge = pool.try_allocate(5 * MiB);
  ASSERT_FALSE(huge);
  EXPECT_NE(huge.error().message.find(std::to_string(5 * MiB)), std::string::npos);
  EXPECT_NE(huge.error().message.find(std::to_string(4 * MiB)), std::string::npos);
  auto zero = pool.try_allocate(0);
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.error().code, make_error_code(Errc::invalid_argument));
  EXPECT_EQ(pool.stats().failed_requests, 3u);
  EXPECT_EQ(budget.in_use(), 3 * MiB);
  a->reset();
  EXPECT_EQ(budget.in_use(), 0u);
  EXPECT_EQ(pool.stats().bytes_in_use, 0u);
}

TEST(PinnedPool, AsyncAllocateWaitsForBudgetBackpressure) {
  STOKER_ALLOC_REQUIRE_BACKEND();
  MemoryBudget budget(2 * MiB, "host");
  PinnedPool pool(kBackend, budget);
  auto a = std::move(*pool.try_allocate(MiB));
  auto b = std::move(*pool.try_allocate(MiB));
  void* freed = a.data();
  asio::io_context io;
  PinnedBlock got;
  std::optional<std::error_code> result;
  pool.async_allocate(MiB, asio::bind_executor(io, [&](std::error_code ec, PinnedBlock blk) {
                        result = ec;
                        got = std::move(blk);
                      }));
  io.poll();
  EXPECT_FALSE(result) << "the budget is full: the request must wait";
  a.reset();
  io.run();
  ASSERT_TRUE(result);
  EXPECT_FALSE(*result);
  EXPECT_EQ(got.data(), freed) << "the released block is reused";
  EXPECT_EQ(got.size(), MiB);
  got.reset();
  b.reset();
  EXPECT_EQ(budget.in_use(), 0u);
}

TEST(PinnedPool, AsyncAllocateCanBeCancelledAndLeaksNothing) {
  STOKER_ALLOC_REQUIRE_BACKEND();
  MemoryBudget budget(MiB, "host");
  PinnedPool pool(kBackend, budget);
  auto a = std::move(*pool.try_allocate(MiB));
  asio::io_context io;
  asio::cancellation_signal signal;
  std::optional<std::error_code> result;
  pool.async_allocate(
      MiB, asio::bind_cancellation_slot(
               signal.slot(), asio::bind_executor(io, [&](std::error_code ec, PinnedBlock blk) {
                 result = ec;
                 EXPECT_FALSE(blk);
               })));
  asio::post(io, [&] { signal.emit(asio::cancellation_type::terminal); });
  io.run();
  ASSERT_TRUE(result);
  EXPECT_EQ(*result, std::errc::operation_canceled);
  a.reset();
  EXPECT_EQ(budget.in_use(), 0u);
  EXPECT_EQ(pool.stats().blocks_in_use, 0u);
  EXPECT_EQ(pool.stats().failed_requests, 1u);
}

TEST(PinnedPool, AsyncAllocateWithUseFutureAndADeadline) {
  STOKER_ALLOC_REQUIRE_BACKEND();
  MemoryBudget budget(MiB, "host");
  PinnedPool pool(kBackend, budget);
  auto a = std::move(*pool.try_allocate(MiB));
  auto late =
      pool.async_allocate_until(MiB, std::chrono::steady_clock::now() + 30ms, asio::use_future);
  try {
    late.get();
    ADD_FAILURE() << "an allocation past its deadline completed";
  } catch (const boost::system::system_error& e) {
    EXPECT_EQ(std::error_code(e.code()), make_error_code(Errc::timed_out));
  }
  auto fut = pool.async_allocate(MiB, asio::use_future);
  a.reset();
  EXPECT_TRUE(fut.get());
}

TEST(PinnedPool, BlockingAllocateWaitsForAnotherThreadsRelease) {
  STOKER_ALLOC_REQUIRE_BACKEND();
  MemoryBudget budget(MiB, "host");
  PinnedPool pool(kBackend, budget);
  auto a = std::move(*pool.try_allocate(MiB));
  std::thread releaser([&] {
    std::this_thread::sleep_for(20ms);
    a.reset();
  });
  auto b = pool.allocate(MiB);
  releaser.join();
  ASSERT_TRUE(b);
  auto timed = pool.allocate_until(MiB, std::chrono::steady_clock::now() + 10ms);
  ASSERT_FALSE(timed);
  EXPECT_EQ(timed.error().code, make_error_code(Errc::timed_out));
}

// A caller that waits for the budget on its own thread (where its
// cancellation lives) takes the block apart: a free one at once, without
// pinning; a new one (pinned) wherever it chooses.
TEST(PinnedPool, ReservedBytesBuyABlockFreeOnlyWhenAskedSoAndPinnedOtherwise) {
  STOKER_ALLOC_REQUIRE_BACKEND();
  MemoryBudget budget(64 * MiB, "host");
  PinnedPool pool(kBackend, budget);
  const std::size_t bytes = 3 * MiB;
  auto r = budget.try_acquire(PinnedPool::block_capacity(bytes));
  ASSERT_TRUE(r);
  EXPECT_FALSE(pool.allocate_reserved_if_free(bytes, *r)) << "an empty pool has no free block";
  EXPECT_EQ(r->size(), PinnedPool::block_capacity(bytes)) << "the reservation stays the caller's";
  EXPECT_EQ(pool.stats().pinned_allocations, 0u) << "pinned although asked not to";
  void* first = nullptr;
  {
    auto b = pool.allocate_reserved(bytes, std::move(*r));
    ASSERT_TRUE(b) << b.error().what();
    first = b->data();
    EXPECT_EQ(b->size(), bytes);
    EXPECT_EQ(budget.in_use(), PinnedPool::block_capacity(bytes))
        << "paid once, by the reservation";
  }
  EXPECT_EQ(budget.in_use(), 0u);
  auto again = budget.try_acquire(PinnedPool::block_capacity(bytes));
  ASSERT_TRUE(again);
  auto b = pool.allocate_reserved_if_free(bytes, *again);
  ASSERT_TRUE(b) << "the block given back is free";
  EXPECT_EQ(b->data(), first);
  EXPECT_TRUE(again->empty()) << "the reservation went into the block";
  EXPECT_EQ(pool.stats().pinned_allocations, 1u);
  EXPECT_EQ(pool.stats().reuses, 1u);
  b.reset();
  EXPECT_EQ(budget.in_use(), 0u);
}

TEST(PinnedPool, AReservationOfTheWrongSizeOrBudgetIsRefusedAndGivenBack) {
  STOKER_ALLOC_REQUIRE_BACKEND();
  MemoryBudget budget(64 * MiB, "host"), other(64 * MiB, "other");
  PinnedPool pool(kBackend, budget);
  {
    auto warm = pool.try_allocate(MiB);  // a free block, so if_free has one to give
    ASSERT_TRUE(warm);
  }
  const auto refused = [&](Reservation r, const char* what, const std::string& says) {
    SCOPED_TRACE(what);
    EXPECT_FALSE(pool.allocate_reserved_if_free(MiB, r));
    auto b = pool.allocate_reserved(MiB, std::move(r));
    ASSERT_FALSE(b);
    EXPECT_EQ(b.error().code, make_error_code(Errc::invalid_argument));
    EXPECT_NE(b.error().what().find(says), std::string::npos) << b.error().what();
  };
  refused(std::move(*budget.try_acquire(MiB / 2)), "too small",
          "a block of 1048576 bytes needs a reservation of 1048576 bytes of budget 'host', not "
          "524288 bytes");
  refused(std::move(*other.try_acquire(MiB)), "another budget", "bytes of another budget");
  refused(Reservation{}, "empty", "not 0 bytes");
  auto zero = pool.allocate_reserved(0, std::move(*budget.try_acquire(MiB)));
  ASSERT_FALSE(zero);
  EXPECT_NE(zero.error().what().find("cannot allocate a block of 0 bytes"), std::string::npos)
      << zero.error().what();
  EXPECT_EQ(budget.in_use(), 0u) << "refused reservations are given back";
  EXPECT_EQ(other.in_use(), 0u);
  EXPECT_EQ(pool.stats().blocks_in_use, 0u);
}

TEST(PinnedPool, ReserveKeepsPinningOffTheHotPath) {
  STOKER_ALLOC_REQUIRE_BACKEND();
  MemoryBudget budget(64 * MiB, "host");
  PinnedPool pool(kBackend, budget);
  ASSERT_FALSE(pool.reserve(2 * MiB, 4));
  const auto pinned = pool.stats().pinned_allocations;
  EXPECT_GE(pool.stats().bytes_pinned, 8 * MiB);
  EXPECT_EQ(budget.in_use(), 0u) << "idle pinned memory is not charged";
  std::vector<PinnedBlock> blocks;
  for (int i = 0; i < 4; ++i) blocks.push_back(std::move(*pool.try_allocate(2 * MiB)));
  EXPECT_EQ(pool.stats().pinned_allocations, pinned);
  EXPECT_EQ(pool.stats().reuses, 4u);
}

// Asking for more than the pinned limit holds ends with an error, the blocks
// that fit stay reserved, and nothing is pinned beyond the limit. (It once
// trimmed its own reserved blocks to make room and looped forever.)
TEST(PinnedPool, ReserveBeyondTheLimitStopsAtTheLimit) {
  STOKER_ALLOC_REQUIRE_BACKEND();
  MemoryBudget budget(60 * MiB, "host");
  PinnedPool pool(kBackend, budget, PinnedPoolOptions{.max_blocks_per_slab = 1});
  const auto cap = PinnedPool::block_capacity(10 * MiB);
  EXPECT_EQ(pool.reserve(10 * MiB, 8), make_error_code(Errc::out_of_host_memory));
  const auto s = pool.stats();
  EXPECT_LE(s.bytes_pinned, 60 * MiB);
  EXPECT_EQ(s.bytes_pinned, 60 * MiB / cap * cap) << "the blocks that fit stay";
  EXPECT_EQ(s.trimmed_slabs, 0u);
  EXPECT_FALSE(pool.reserve(10 * MiB, 60 * MiB / cap)) << "a reserve that fits succeeds";
}

// A reserve for a new shape of job gives back the idle slabs an earlier
// shape left, rather than stopping at the limit with them still pinned.
TEST(PinnedPool, ReserveGivesBackIdleSlabsOfOtherSizes) {
  STOKER_ALLOC_REQUIRE_BACKEND();
  MemoryBudget budget(60 * MiB, "host");
  PinnedPool pool(kBackend, budget, PinnedPoolOptions{.max_blocks_per_slab = 1});
  const auto small = PinnedPool::block_capacity(5 * MiB);
  const auto large = PinnedPool::block_capacity(20 * MiB);
  ASSERT_NE(small, large);
  ASSERT_FALSE(pool.reserve(5 * MiB, 60 * MiB / small)) << "the old shape fills the limit";
  ASSERT_FALSE(pool.reserve(20 * MiB, 60 * MiB / large)) << "the new shape takes its place";
  const auto s = pool.stats();
  EXPECT_LE(s.bytes_pinned, 60 * MiB);
  EXPECT_GT(s.trimmed_slabs, 0u);
  std::vector<PinnedBlock> blocks;
  for (std::size_t i = 0; i < 60 * MiB / large; ++i) {
    auto b = pool.try_allocate(20 * MiB);
    ASSERT_TRUE(b) << i;
    blocks.push_back(std::move(*b));
  }
  EXPECT_EQ(pool.stats().pinned_allocations, s.pinned_allocations) << "reserved, not pinned now";
}

TEST(PinnedPool, TrimGivesIdleSlabsBack) {
  STOKER_ALLOC_REQUIRE_BACKEND();
  MemoryBudget budget(256 * MiB, "host");
  PinnedPool pool(kBackend, budget);
  auto big = pool.try_allocate(64 * MiB);  // the large-block path: a slab of its own
  auto small = pool.try_allocate(MiB);
  ASSERT_TRUE(big && small);
  EXPECT_EQ(pool.stats().slabs, 2u);
  EXPECT_EQ(pool.trim(), 0u) << "slabs in use stay";
  big->reset();
  EXPECT_EQ(pool.trim(), 64 * MiB);
  const auto s = pool.stats();
  EXPECT_EQ(s.slabs, 1u);
  EXPECT_EQ(s.trimmed_slabs, 1u);
  EXPECT_EQ(s.bytes_pinned, 32 * MiB) << "the 1 MiB block's shared slab stays";
}

TEST(PinnedPool, StaysWithinThePinnedLimitByTrimmingIdleSlabs) {
  STOKER_ALLOC_REQUIRE_BACKEND();
  MemoryBudget budget(8 * MiB, "host");
  PinnedPool pool(kBackend, budget);
  EXPECT_EQ(pool.max_pinned_bytes(), 8 * MiB);
  { auto a = pool.try_allocate(6 * MiB); }
  auto b = pool.try_allocate(7 * MiB);
  ASSERT_TRUE(b) << b.error().what();
  const auto s = pool.stats();
  EXPECT_LE(s.bytes_pinned, 8 * MiB);
  EXPECT_EQ(s.trimmed_slabs, 1u);
}

// Long-lived blocks of one small class keep shared slabs partly used: each
// pins a whole slab for one block. With 8 of 64 MiB in use the budget grants
// other requests, and the pool must then pin for them too (counting the
// partly used slabs' free blocks against the limit would fail them all with
// out_of_host_memory).
TEST(PinnedPool, LongLivedSmallBlocksDoNotKeepOtherRequestsFromPinnedMemory) {
  STOKER_ALLOC_REQUIRE_BACKEND();
  MemoryBudget budget(64 * MiB, "host");
  PinnedPool pool(kBackend, budget, PinnedPoolOptions{.slab_bytes = 8 * MiB});
  std::vector<PinnedBlock> kept, rest;
  for (int i = 0; i < 64; ++i) {
    auto b = pool.try_allocate(MiB);
    ASSERT_TRUE(b) << b.error().what();
    (i % 8 == 0 ? kept : rest).push_back(std::move(*b));
  }
  rest.clear();
  ASSERT_EQ(budget.in_use(), 8 * MiB);
  EXPECT_LE(pool.stats().bytes_shared, pool.max_shared_bytes());

  auto large = pool.try_allocate(16 * MiB);  // the large-block path
  ASSERT_TRUE(large) << large.error().what();
  auto other = pool.allocate(2 * MiB);  // another small class
  ASSERT_TRUE(other) << other.error().what();
  asio::io_context io;
  std::optional<std::error_code> result;
  PinnedBlock got;
  pool.async_allocate(24 * MiB, asio::bind_executor(io, [&](std::error_code ec, PinnedBlock blk) {
                        result = ec;
                        got = std::move(blk);
                      }));
  io.run();
  ASSERT_TRUE(result) << "async_allocate must complete";
  EXPECT_FALSE(*result) << result->message();
  EXPECT_EQ(got.size(), 24 * MiB);

  EXPECT_EQ(budget.in_use(), (8 + 16 + 2 + 24) * MiB) << "each block costs its capacity";
  EXPECT_EQ(pool.stats().failed_requests, 0u);
  EXPECT_LE(pool.stats().bytes_pinned, pool.max_pinned_bytes() + pool.max_shared_bytes());
  kept.clear();
  large->reset();
  other->reset();
  got.reset();
  EXPECT_EQ(budget.in_use(), 0u);
  pool.trim();
  EXPECT_EQ(pool.stats().bytes_pinned, 0u);
}

// Blocks of many classes with short and long lives, the budget mostly full:
// whenever the budget has room for a request, the pool hands out its block.
TEST(PinnedPool, EveryRequestTheBudgetAdmitsGetsPinnedMemory) {
  STOKER_ALLOC_REQUIRE_BACKEND();
  MemoryBudget budget(64 * MiB, "host");
  PinnedPool pool(kBackend, budget, PinnedPoolOptions{.slab_bytes = 4 * MiB});
  std::mt19937 rng(7);
  struct Held {
    PinnedBlock block;
    int until;
  };
  std::vector<Held> held;
  std::size_t granted = 0;
  for (int step = 0; step < 20000; ++step) {
    std::erase_if(held, [&](const Held& h) { return h.until <= step; });
    const std::size_t bytes =
        rng() % 8 == 0 ? 4 * MiB + rng() % (12 * MiB) : 4096 + rng() % (512 * 1024);
    if (budget.available() < PinnedPool::block_capacity(bytes)) continue;
    auto b = pool.try_allocate(bytes);
    ASSERT_TRUE(b) << "step " << step << ": " << b.error().what() << " (" << budget.in_use()
                   << " of " << budget.limit() << " bytes of the budget in use)";
    ++granted;
    const int life =
        rng() % 10 == 0 ? 2000 + static_cast<int>(rng() % 4000) : 1 + static_cast<int>(rng() % 40);
    held.push_back({std::move(*b), step + life});
    const auto s = pool.stats();
    ASSERT_EQ(budget.in_use(), s.bytes_in_use);
    ASSERT_LE(s.bytes_shared, pool.max_shared_bytes());
    ASSERT_LE(s.bytes_pinned, pool.max_pinned_bytes() + pool.max_shared_bytes()) << "step " << step;
  }
  EXPECT_GT(granted, 5000u);
  EXPECT_EQ(pool.stats().failed_requests, 0u);
  held.clear();
  EXPECT_EQ(budget.in_use(), 0u);
  pool.trim();
  EXPECT_EQ(pool.stats().bytes_pinned, 0u);
}

// Many threads, mixed classes: a request fails only when the budget refuses
// it, never for want of pinned memory.
TEST(PinnedPool, UnderManyThreadsOnlyTheBudgetRefusesRequests) {
  STOKER_ALLOC_REQUIRE_BACKEND();
  constexpr int kThreads = 6;
  MemoryBudget budget(48 * MiB, "host");
  PinnedPool pool(kBackend, budget, PinnedPoolOptions{.slab_bytes = 2 * MiB});
  std::atomic<int> pool_failures{0}, granted{0};
  std::vector<std::string> messages(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(100 + t);
      std::vector<PinnedBlock> held;
      for (int i = 0; i < 3000; ++i) {
        const std::size_t bytes =
            rng() % 10 == 0 ? 2 * MiB + rng() % (6 * MiB) : 4096 + rng() % (256 * 1024);
        auto b = pool.try_allocate(bytes);
        if (b) {
          granted.fetch_add(1);
          held.push_back(std::move(*b));
        } else if (b.error().message.rfind("memory budget", 0) != 0) {
          pool_failures.fetch_add(1);
          messages[t] = b.error().what();
        }
        // Most blocks go back soon; every 16th lives on in this thread.
        while (held.size() > 1 + rng() % 12) {
          const auto idx = rng() % held.size();
          if (idx % 16 != 0 || held.size() > 40)
            held.erase(held.begin() + static_cast<std::ptrdiff_t>(idx));
          else
            break;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(pool_failures.load(), 0) << [&] {
    std::string all;
    for (auto& m : messages) all += m.empty() ? "" : m + "\n";
    return all;
  }();
  EXPECT_GT(granted.load(), kThreads * 1000);
  EXPECT_EQ(budget.in_use(), 0u);
  EXPECT_EQ(pool.stats().blocks_in_use, 0u);
  EXPECT_LE(pool.stats().bytes_pinned, pool.max_pinned_bytes() + pool.max_shared_bytes());
  pool.trim();
  EXPECT_EQ(pool.stats().bytes_pinned, 0u);
}

// The budget filled to its last byte next to a partly used shared slab:
// every grant is pinned, and what is pinned past the limit is only the
// shared slab's free blocks (bounded by max_shared_bytes).
TEST(PinnedPool, OnlyFreeBlocksOfPartlyUsedSharedSlabsArePinnedPastTheLimit) {
  STOKER_ALLOC_REQUIRE_BACKEND();
  MemoryBudget budget(64 * MiB, "host");
  PinnedPool pool(kBackend, budget);
  auto small = pool.try_allocate(MiB);  // a shared slab of eight blocks, seven free
  ASSERT_TRUE(small);
  ASSERT_EQ(pool.stats().bytes_shared, 8 * MiB);
  std::vector<PinnedBlock> blocks;
  for (std::size_t bytes : {56 * MiB, 4 * MiB, 2 * MiB, MiB}) {
    auto b = pool.try_allocate(bytes);
    ASSERT_TRUE(b) << bytes << " bytes: " << b.error().what();
    blocks.push_back(std::move(*b));
  }
  EXPECT_EQ(budget.in_use(), budget.limit());
  const auto s = pool.stats();
  EXPECT_EQ(s.failed_requests, 0u);
  EXPECT_EQ(s.bytes_pinned, budget.limit() + 6 * MiB) << "the six free 1 MiB blocks";
  blocks.clear();
  small->reset();
  EXPECT_EQ(pool.trim(), 70 * MiB);
}

// Shared slabs stop at max_shared_bytes; past it a class gets one block per
// slab, so reserve() still covers the blocks asked for, and they are then
// handed out without pinning.
TEST(PinnedPool, ReservePastTheSharedBytesUsesOneBlockSlabs) {
  STOKER_ALLOC_REQUIRE_BACKEND();
  MemoryBudget budget(64 * MiB, "host");
  PinnedPool pool(kBackend, budget);
  EXPECT_EQ(pool.max_shared_bytes(), 8 * MiB) << "an eighth of the pinned limit";
  ASSERT_FALSE(pool.reserve(MiB, 20));
  auto s = pool.stats();
  EXPECT_EQ(s.bytes_shared, 8 * MiB) << "one shared slab of eight blocks";
  EXPECT_EQ(s.bytes_pinned, 20 * MiB);
  EXPECT_EQ(s.slabs, 1u + 12u);
  EXPECT_EQ(budget.in_use(), 0u);
  const auto pinned = s.pinned_allocations;
  std::vector<PinnedBlock> blocks;
  for (int i = 0; i < 20; ++i) {
    auto b = pool.try_allocate(MiB);
    ASSERT_TRUE(b) << b.error().what();
    blocks.push_back(std::move(*b));
  }
  EXPECT_EQ(pool.stats().pinned_allocations, pinned);
  EXPECT_EQ(pool.stats().reuses, 20u);
}

// A class whose shared slab cannot fit any more makes room by trimming idle
// shared slabs of other classes rather than pinning past the shared bytes.
TEST(PinnedPool, IdleSharedSlabsMakeRoomForAnotherClass) {
  STOKER_ALLOC_REQUIRE_BACKEND();
  MemoryBudget budget(64 * MiB, "host");
  PinnedPool pool(kBackend, budget);
  { auto a = pool.try_allocate(MiB); }  // an idle shared slab of 8 MiB: all the shared bytes
  auto b = pool.try_allocate(2 * MiB);
  ASSERT_TRUE(b) << b.error().what();
  const auto s = pool.stats();
  EXPECT_EQ(s.trimmed_slabs, 1u);
  EXPECT_EQ(s.bytes_shared, 8 * MiB) << "four blocks of 2 MiB now";
  EXPECT_EQ(s.bytes_pinned, 8 * MiB);
}

}  // namespace
}  // namespace stoker::alloc
