// MemoryBudget: a byte budget that every user of a kind of memory shares
// (host: pinned pool, staging, producers; or one GPU's memory), so a node
// does not run out of RAM under load. A Reservation is the receipt: a
// move-only RAII owner of some bytes of one budget.
//
// Promises:
// - Thread safety: every member may be called from any thread.
// - Ordering: requests are granted strictly in FIFO order. A request that
//   does not fit blocks the ones queued behind it, so a large request is
//   never starved by a stream of small ones; try_acquire fails while anyone
//   is queued, for the same reason.
// - No lost wake-ups: queueing and releasing happen under one mutex, so a
//   release racing with a waiter being queued always sees and wakes it.
// - async_acquire follows DESIGN.md rule 4: the handler runs through its
//   associated executor (always posted, never inline in async_acquire or in
//   a release() on another thread; a plain callback with no associated
//   executor runs on Asio's system executor); outstanding work is tracked;
//   cancellation comes through the associated cancellation slot (any type)
//   and completes with boost::asio::error::operation_aborted (as a
//   std::error_code: it compares equal to std::errc::operation_canceled).
// - The completion signature is void(boost::system::error_code,
//   Reservation), the convention of every stoker async verb: Boost.Asio
//   recognises that code, so use_future and use_awaitable return the
//   Reservation and throw boost::system::system_error on failure (wrap the
//   token in asio::as_tuple to get the code instead). The code wraps our
//   std::error_code losslessly and converts back implicitly, so callbacks
//   may take std::error_code.
// - Failure: a request larger than the limit fails at once; a deadline that
//   passes completes with Errc::timed_out; destroying the budget fails the
//   queued requests with Errc::shutting_down. Failed requests hold nothing.
//   The handler receives only the error_code; the message that names the
//   numbers is returned by try_acquire/acquire in their Error and kept,
//   for async callers, in last_error() (the most recent failure, for logs).
// - Lifetime: a Reservation shares the budget's state, so it may outlive
//   the MemoryBudget object (releasing into a budget that is gone is safe).
#pragma once

#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/system/error_code.hpp>
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <system_error>
#include <utility>

#include "alloc/detail/budget_core.hpp"
#include "common/error.hpp"

namespace stoker::alloc {

class MemoryBudget;

class Reservation {
 public:
  Reservation() noexcept = default;
  Reservation(Reservation&& o) noexcept
      : core_(std::move(o.core_)), bytes_(std::exchange(o.bytes_, 0)) {}
  Reservation& operator=(Reservation&& o) noexcept {
    if (this != &o) {
      release();
      core_ = std::move(o.core_);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  Reservation(const Reservation&) = delete;
  Reservation& operator=(const Reservation&) = delete;
  ~Reservation() { release(); }

  std::size_t size() const noexcept { return bytes_; }
  bool empty() const noexcept { return bytes_ == 0; }
  explicit operator bool() const noexcept { return bytes_ != 0; }

  // Gives all bytes back; waiters that now fit are woken.
  void release() noexcept;
  // Gives `part` bytes back and keeps the rest (part <= size()).
  void release(std::size_t part) noexcept;
  // Moves `part` bytes (<= size()) into a new Reservation of the same budget.
  Reservation split(std::size_t part) noexcept;
  // Takes over `other`, which must come from the same budget (or be empty).
  void merge(Reservation&& other) noexcept;
  // Grows by `more` bytes without waiting; on failure nothing changes.
  std::error_code try_grow(std::size_t more);
  // Whether these bytes are `budget`'s (an empty Reservation is no budget's).
  bool of(const MemoryBudget& budget) const noexcept;

 private:
  friend class detail::BudgetCore;
  Reservation(std::shared_ptr<detail::BudgetCore> core, std::size_t bytes) noexcept
      : core_(std::move(core)), bytes_(bytes) {}
  std::shared_ptr<detail::BudgetCore> core_;
  std::size_t bytes_ = 0;
};

namespace detail {

// Delivers one async_acquire's outcome to its handler on the handler's
// executor, keeping that executor's work count up until then.
template <typename Handler>
class AsyncBudgetWaiter final : public BudgetWaiter {
 public:
  explicit AsyncBudgetWaiter(Handler&& h)
      : work_(boost::asio::prefer(boost::asio::get_associated_executor(h),
                                  boost::asio::execution::outstanding_work.tracked)),
        slot_(boost::asio::get_associated_cancellation_slot(h)),
        handler_(std::move(h)) {}

  void complete(Error error, Reservation r) noexcept override {
    auto ex = work_;
    boost::asio::post(ex, [work = std::move(work_), slot = slot_, h = std::move(handler_),
                           ec = error.code, r = std::move(r)]() mutable {
      // The slot is touched only on the handler's executor, where Asio
      // expects cancellation to be emitted too.
      if (slot.is_connected()) slot.clear();
      std::move(h)(boost::system::error_code(ec), std::move(r));
    });
  }

 private:
  using WorkExecutor = std::decay_t<decltype(boost::asio::prefer(
      std::declval<boost::asio::associated_executor_t<Handler>>(),
      boost::asio::execution::outstanding_work.tracked))>;
  WorkExecutor work_;
  boost::asio::associated_cancellation_slot_t<Handler> slot_;
  Handler handler_;
};

struct BudgetCancel {
  std::shared_ptr<BudgetCore> core;
  std::shared_ptr<BudgetWaiter> waiter;
  void operator()(boost::asio::cancellation_type type) const {
    if (type != boost::asio::cancellation_type::none)
      core->cancel(*waiter, std::error_code(boost::asio::error::make_error_code(
                                boost::asio::error::operation_aborted)));
  }
};

template <typename Handler>
void start_async_acquire(const std::shared_ptr<BudgetCore>& core, Handler&& handler,
                         std::size_t bytes, BudgetCore::time_point deadline) {
  using H = std::decay_t<Handler>;
  auto slot = boost::asio::get_associated_cancellation_slot(handler);
  auto waiter = std::make_shared<AsyncBudgetWaiter<H>>(std::forward<Handler>(handler));
  // Installed before the waiter is queued, so a grant racing with this
  // call cannot clear the slot while it is being filled.
  if (slot.is_connected()) slot.template emplace<BudgetCancel>(BudgetCancel{core, waiter});
  core->submit(std::move(waiter), bytes, deadline);
}

}  // namespace detail

class MemoryBudget {
 public:
  using clock = std::chrono::steady_clock;

  // `exhausted` is the code a request that cannot be met reports:
  // out_of_host_memory for host budgets, out_of_device_memory for a GPU's.
  explicit MemoryBudget(std::size_t limit, std::string name,
                        Errc exhausted = Errc::out_of_host_memory);
  ~MemoryBudget();
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;
  friend class Reservation;

  std::size_t limit() const noexcept { return core_->limit(); }
  std::size_t in_use() const noexcept { return core_->in_use(); }
  std::size_t available() const noexcept {
    const auto used = in_use();
    return used >= limit() ? 0 : limit() - used;
  }
  std::size_t high_water() const noexcept { return core_->high_water(); }
  // Requests queued now.
  std::size_t waiting() const noexcept { return core_->waiting(); }
  const std::string& name() const noexcept { return core_->name(); }
  // The message of the most recent failed request ("" if none).
  std::string last_error() const { return core_->last_error(); }

  // Never waits. Fails with the exhausted code when the bytes are not free
  // now or others are queued, naming the numbers. 0 bytes: an empty
  // Reservation.
  Result<Reservation> try_acquire(std::size_t bytes) { return core_->try_acquire(bytes); }

  // Blocks the calling thread until granted (or the deadline passes). For
  // producer threads; never call it on a thread that must run to release.
  Result<Reservation> acquire(std::size_t bytes);
  Result<Reservation> acquire_until(std::size_t bytes, clock::time_point deadline);

  // Completion signature: void(boost::system::error_code, Reservation).
  template <typename Token>
  auto async_acquire(std::size_t bytes, Token&& token) {
    return async_acquire_until(bytes, clock::time_point::max(), std::forward<Token>(token));
  }
  template <typename Token>
  auto async_acquire_until(std::size_t bytes, clock::time_point deadline, Token&& token) {
    return boost::asio::async_initiate<Token, void(boost::system::error_code, Reservation)>(
        [core = core_](auto handler, std::size_t n, clock::time_point d) {
          detail::start_async_acquire(core, std::move(handler), n, d);
        },
        token, bytes, deadline);
  }

 private:
  std::shared_ptr<detail::BudgetCore> core_;
};

}  // namespace stoker::alloc
