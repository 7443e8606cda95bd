// MemoryBudget: what engine code and producers rely on when they wait for
// memory: FIFO grants, cancellation, deadlines, clear errors, no lost
// wake-ups, and every Asio completion style.
#include "alloc/memory_budget.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <chrono>
#include <future>
#include <optional>
#include <thread>
#include <vector>

namespace stoker::alloc {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

TEST(MemoryBudget, TryAcquireChargesAndReservationReleasesOnDestruction) {
  MemoryBudget b(1000, "host");
  {
    auto r = b.try_acquire(600);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->size(), 600u);
    EXPECT_EQ(b.in_use(), 600u);
    EXPECT_EQ(b.available(), 400u);
    auto more = b.try_acquire(500);
    ASSERT_FALSE(more);
    EXPECT_EQ(more.error().code, make_error_code(Errc::out_of_host_memory));
    EXPECT_NE(more.error().message.find("500"), std::string::npos) << more.error().message;
    EXPECT_EQ(b.in_use(), 600u) << "a failed request holds nothing";
  }
  EXPECT_EQ(b.in_use(), 0u);
  EXPECT_EQ(b.high_water(), 600u);
}

TEST(MemoryBudget, ReservationReleasesPartSplitsAndMerges) {
  MemoryBudget b(1000, "host");
  auto r = std::move(*b.try_acquire(800));
  r.release(300);
  EXPECT_EQ(r.size(), 500u);
  EXPECT_EQ(b.in_use(), 500u);
  auto part = r.split(200);
  EXPECT_EQ(part.size(), 200u);
  EXPECT_EQ(r.size(), 300u);
  EXPECT_EQ(b.in_use(), 500u) << "splitting moves bytes, it does not release them";
  part = Reservation{};
  EXPECT_EQ(b.in_use(), 300u);
  EXPECT_FALSE(r.try_grow(600));
  EXPECT_EQ(r.size(), 900u);
  EXPECT_TRUE(r.try_grow(200)) << "beyond the limit";
  EXPECT_EQ(r.size(), 900u);
  auto other = std::move(*b.try_acquire(100));
  r.merge(std::move(other));
  EXPECT_EQ(r.size(), 1000u);
  EXPECT_EQ(other.size(), 0u);
  Reservation moved = std::move(r);
  EXPECT_EQ(moved.size(), 1000u);
  moved.release();
  EXPECT_EQ(b.in_use(), 0u);
}

TEST(MemoryBudget, RequestLargerThanTheLimitFailsAtOnceNamingBothNumbers) {
  MemoryBudget b(4096, "gpu0", Errc::out_of_device_memory);
  auto r = b.try_acquire(5000);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, make_error_code(Errc::out_of_device_memory));
  EXPECT_NE(r.error().message.find("5000"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("4096"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("gpu0"), std::string::npos) << r.error().message;

  // A plain callback has no associated executor: it runs on Asio's system executor.
  std::promise<std::error_code> got;
  b.async_acquire(5000, [&](std::error_code ec, Reservation res) {
    EXPECT_EQ(res.size(), 0u);
    got.set_value(ec);
  });
  auto fut = got.get_future();
  ASSERT_EQ(fut.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(fut.get(), make_error_code(Errc::out_of_device_memory));
  EXPECT_NE(b.last_error().find("5000"), std::string::npos);
  EXPECT_NE(b.last_error().find("4096"), std::string::npos);
  EXPECT_EQ(b.waiting(), 0u);
}

TEST(MemoryBudget, AsyncAcquireNeverCompletesInline) {
  MemoryBudget b(100, "host");
  asio::io_context io;
  bool done = false;
  b.async_acquire(10, asio::bind_executor(io, [&](std::error_code ec, Reservation r) {
                    EXPECT_FALSE(ec);
                    EXPECT_EQ(r.size(), 10u);
                    done = true;
                  }));
  EXPECT_FALSE(done) << "the bytes were free, but the handler must be posted";
  EXPECT_EQ(b.in_use(), 10u) << "granted at once";
  io.run();
  EXPECT_TRUE(done);
  EXPECT_EQ(b.in_use(), 0u);
}

TEST(MemoryBudget, WaiterWakesOnReleaseAndRunsOnItsExecutor) {
  MemoryBudget b(100, "host");
  auto held = std::move(*b.try_acquire(80));
  asio::io_context io;
  std::thread::id ran_on;
  std::size_t got = 0;
  b.async_acquire(50, asio::bind_executor(io, [&](std::error_code ec, Reservation r) {
                    EXPECT_FALSE(ec);
                    ran_on = std::this_thread::get_id();
                    got = r.size();
                  }));
  EXPECT_EQ(b.waiting(), 1u);
  std::thread releaser([&] { held.release(); });
  releaser.join();
  EXPECT_EQ(got, 0u) << "never inline on the releasing thread";
  io.run();  // returns only once the handler ran: the work is tracked
  EXPECT_EQ(got, 50u);
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  EXPECT_EQ(b.in_use(), 0u);
}

TEST(MemoryBudget, GrantsInFifoOrderSoALargeWaiterIsNotStarved) {
  MemoryBudget b(100, "host");
  auto held = std::move(*b.try_acquire(60));
  asio::io_context io;
  std::vector<std::string> order;
  std::vector<Reservation> keep;
  auto record = [&](std::string name) {
    return asio::bind_executor(io, [&, name](std::error_code ec, Reservation r) {
      EXPECT_FALSE(ec) << name;
      order.push_back(name);
      keep.push_back(std::move(r));
    });
  };
  b.async_acquire(95, record("large"));
  // 40 bytes are free, yet small requests queue behind the large one.
  b.async_acquire(10, record("small1"));
  EXPECT_FALSE(b.try_acquire(10)) << "try_acquire must not jump the queue";
  b.async_acquire(10, record("small2"));
  // Pending waiters keep io's work count up, so poll rather than run.
  io.poll();
  EXPECT_TRUE(order.empty());
  held.release();
  io.poll();
  ASSERT_EQ(order, std::vector<std::string>{"large"});
  keep.clear();  // releases the 95 bytes
  io.run();
  EXPECT_EQ(order, (std::vector<std::string>{"large", "small1", "small2"}));
  keep.clear();
  EXPECT_EQ(b.in_use(), 0u);
}

TEST(MemoryBudget, CancellationCompletesWithOperationAbortedAndUnblocksTheQueue) {
  MemoryBudget b(100, "host");
  auto held = std::move(*b.try_acquire(50));
  asio::io_context io;
  asio::cancellation_signal signal;
  std::optional<std::error_code> big, small;
  b.async_acquire(
      100, asio::bind_cancellation_slot(
               signal.slot(), asio::bind_executor(io, [&](std::error_code ec, Reservation r) {
                 big = ec;
                 EXPECT_EQ(r.size(), 0u);
               })));
  b.async_acquire(20,
                  asio::bind_executor(io, [&](std::error_code ec, Reservation) { small = ec; }));
  io.poll();
  EXPECT_FALSE(big);
  EXPECT_EQ(b.waiting(), 2u);
  asio::post(io, [&] { signal.emit(asio::cancellation_type::terminal); });
  io.run();
  ASSERT_TRUE(big);
  EXPECT_EQ(*big, std::errc::operation_canceled);
  EXPECT_EQ(*big, std::error_code(asio::error::make_error_code(asio::error::operation_aborted)));
  ASSERT_TRUE(small) << "cancelling the head of the queue lets the next request through";
  EXPECT_FALSE(*small);
  EXPECT_EQ(b.waiting(), 0u);
  held.release();
  EXPECT_EQ(b.in_use(), 0u) << "nothing leaked by the cancelled request";
}

TEST(MemoryBudget, CancellingAfterTheGrantIsHarmless) {
  MemoryBudget b(100, "host");
  asio::io_context io;
  asio::cancellation_signal signal;
  std::optional<std::error_code> got;
  b.async_acquire(10, asio::bind_cancellation_slot(
                          signal.slot(), asio::bind_executor(io, [&](std::error_code ec,
                                                                     Reservation) { got = ec; })));
  signal.emit(asio::cancellation_type::terminal);  // granted already; completion is posted
  io.run();
  ASSERT_TRUE(got);
  EXPECT_FALSE(*got);
  EXPECT_EQ(b.in_use(), 0u);
}

TEST(MemoryBudget, DeadlineCompletesWithTimedOut) {
  MemoryBudget b(100, "host");
  auto held = std::move(*b.try_acquire(100));
  asio::io_context io;
  std::optional<std::error_code> got;
  const auto t0 = std::chrono::steady_clock::now();
  b.async_acquire_until(10, t0 + 50ms,
                        asio::bind_executor(io, [&](std::error_code ec, Reservation r) {
                          got = ec;
                          EXPECT_EQ(r.size(), 0u);
                        }));
  io.run();
  ASSERT_TRUE(got);
  EXPECT_EQ(*got, make_error_code(Errc::timed_out));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 50ms);
  EXPECT_NE(b.last_error().find("deadline"), std::string::npos) << b.last_error();
  EXPECT_EQ(b.waiting(), 0u);

  auto blocking = b.acquire_until(10, std::chrono::steady_clock::now() + 20ms);
  ASSERT_FALSE(blocking);
  EXPECT_EQ(blocking.error().code, make_error_code(Errc::timed_out));
  held.release();
  EXPECT_EQ(b.in_use(), 0u);
}

TEST(MemoryBudget, DeadlineThatIsMetDoesNotFire) {
  MemoryBudget b(100, "host");
  auto held = std::move(*b.try_acquire(100));
  asio::io_context io;
  std::optional<std::error_code> got;
  b.async_acquire_until(
      10, std::chrono::steady_clock::now() + 10s,
      asio::bind_executor(io, [&](std::error_code ec, Reservation) { got = ec; }));
  held.release();
  io.run();
  ASSERT_TRUE(got);
  EXPECT_FALSE(*got);
}

TEST(MemoryBudget, WorksWithUseFuture) {
  MemoryBudget b(100, "host");
  auto held = std::move(*b.try_acquire(70));
  auto fut = b.async_acquire(60, asio::use_future);
  EXPECT_EQ(fut.wait_for(20ms), std::future_status::timeout);
  held.release();
  EXPECT_EQ(fut.get().size(), 60u);
}

// A failure through use_future is an exception that carries the code.
TEST(MemoryBudget, UseFutureThrowsTheFailureCode) {
  MemoryBudget b(100, "host");
  auto fut = b.async_acquire(200, asio::use_future);
  try {
    fut.get();
    ADD_FAILURE() << "a request over the limit completed";
  } catch (const boost::system::system_error& e) {
    EXPECT_EQ(std::error_code(e.code()), make_error_code(Errc::out_of_host_memory));
  }
}

TEST(MemoryBudget, WorksWithCoroutines) {
  MemoryBudget b(100, "host");
  asio::io_context io;
  auto held = std::move(*b.try_acquire(100));
  std::size_t got = 0;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        auto r = co_await b.async_acquire(40, asio::use_awaitable);
        got = r.size();
      },
      asio::detached);
  asio::post(io, [&] { held.release(); });
  io.run();
  EXPECT_EQ(got, 40u);
  EXPECT_EQ(b.in_use(), 0u);
}

TEST(MemoryBudget, DestroyingTheBudgetFailsQueuedWaitersWithShuttingDown) {
  asio::io_context io;
  std::optional<std::error_code> got;
  Reservation held;
  {
    MemoryBudget b(100, "host");
    held = std::move(*b.try_acquire(100));
    b.async_acquire(10, asio::bind_executor(io, [&](std::error_code ec, Reservation r) {
                      got = ec;
                      EXPECT_EQ(r.size(), 0u);
                    }));
    EXPECT_EQ(b.waiting(), 1u);
  }
  io.run();
  ASSERT_TRUE(got);
  EXPECT_EQ(*got, make_error_code(Errc::shutting_down));
  held.release();  // safe: a Reservation keeps the budget's state alive
  EXPECT_EQ(held.size(), 0u);
}

// The race of a field implementation: the waiter checked for room, a
// release landed, then the waiter went to sleep and was never woken.
TEST(MemoryBudget, NoLostWakeUpsUnderConcurrentReleaseAndEnqueue) {
  constexpr int kThreads = 8;
  constexpr int kRounds = 3000;
  MemoryBudget b(kThreads * 10, "host");
  asio::thread_pool pool(2);
  std::atomic<int> completed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRounds; ++i) {
        // Hold for a moment, then wait asynchronously for more while
        // others release: every request must eventually be granted.
        if ((i + t) % 2 == 0) {
          auto r = b.acquire_until(7 + (i % 4), std::chrono::steady_clock::now() + 20s);
          ASSERT_TRUE(r) << "a lost wake-up: " << r.error().what();
        } else {
          std::promise<void> done;
          b.async_acquire(13, asio::bind_executor(pool, [&](std::error_code ec, Reservation r) {
                            EXPECT_FALSE(ec);
                            EXPECT_EQ(r.size(), 13u);
                            done.set_value();
                          }));
          ASSERT_EQ(done.get_future().wait_for(20s), std::future_status::ready)
              << "a lost wake-up: the waiter was never granted";
        }
        completed.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  pool.join();
  EXPECT_EQ(completed.load(), kThreads * kRounds);
  EXPECT_EQ(b.in_use(), 0u);
  EXPECT_EQ(b.waiting(), 0u);
  EXPECT_LE(b.high_water(), b.limit());
}

}  // namespace
}  // namespace stoker::alloc
