// Internals of MemoryBudget: the shared state, the waiter queue and the
// deadline thread. Nothing here is for callers; use alloc/memory_budget.hpp.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/error.hpp"

namespace stoker::alloc {

class Reservation;

namespace detail {

class BudgetCore;

// One queued request. The core calls complete() exactly once, with no lock
// held, after the waiter has left the queue (granted, failed, cancelled,
// timed out or shut down); whoever unlinks it under the lock completes it.
class BudgetWaiter {
 public:
  virtual ~BudgetWaiter() = default;
  virtual void complete(Error error, Reservation reservation) noexcept = 0;

 private:
  friend class BudgetCore;
  std::size_t bytes_ = 0;
  std::chrono::steady_clock::time_point deadline_ = std::chrono::steady_clock::time_point::max();
  bool queued_ = false;
  std::list<std::shared_ptr<BudgetWaiter>>::iterator pos_;
};

class BudgetCore : public std::enable_shared_from_this<BudgetCore> {
 public:
  using time_point = std::chrono::steady_clock::time_point;

  BudgetCore(std::size_t limit, std::string name, Errc exhausted);
  ~BudgetCore();
  BudgetCore(const BudgetCore&) = delete;
  BudgetCore& operator=(const BudgetCore&) = delete;

  std::size_t limit() const noexcept { return limit_; }
  std::size_t in_use() const noexcept { return in_use_.load(std::memory_order_relaxed); }
  std::size_t high_water() const noexcept { return high_water_.load(std::memory_order_relaxed); }
  std::size_t waiting() const noexcept { return waiting_.load(std::memory_order_relaxed); }
  const std::string& name() const noexcept { return name_; }
  Errc exhausted_code() const noexcept { return exhausted_; }
  std::string last_error() const;

  Result<Reservation> try_acquire(std::size_t bytes);
  // Grants at once when nobody is queued and the bytes are free, fails at
  // once when the request can never be met, queues otherwise. Completion
  // may run on the calling thread before submit returns.
  void submit(std::shared_ptr<BudgetWaiter> waiter, std::size_t bytes, time_point deadline);
  // Fails `waiter` with `why` if it is still queued; a no-op otherwise.
  void cancel(BudgetWaiter& waiter, std::error_code why);
  void release(std::size_t bytes) noexcept;
  // Fails every queued waiter with shutting_down and stops the deadline thread.
  void shutdown();

 private:
  using Ready = std::vector<std::shared_ptr<BudgetWaiter>>;
  void take_locked(std::size_t bytes) noexcept;
  void grant_locked(Ready& granted);
  void unlink_locked(BudgetWaiter& w);
  void finish(Ready& granted, std::vector<std::pair<std::shared_ptr<BudgetWaiter>, Error>>& failed);
  Error over_limit(std::size_t bytes) const;
  Error timed_out(std::size_t bytes) const;
  void note_error_locked(const Error& e);
  void deadline_loop();

  const std::size_t limit_;
  const std::string name_;
  const Errc exhausted_;

  mutable std::mutex m_;
  std::list<std::shared_ptr<BudgetWaiter>> queue_;  // FIFO; guarded by m_
  std::string last_error_;                          // guarded by m_
  bool stopping_ = false;                           // guarded by m_
  std::size_t deadlines_ = 0;                       // queued waiters with a deadline; guarded by m_
  std::condition_variable deadline_cv_;
  std::thread deadline_thread_;  // started on the first deadline

  // Written under m_, read anywhere.
  std::atomic<std::size_t> in_use_{0};
  std::atomic<std::size_t> high_water_{0};
  std::atomic<std::size_t> waiting_{0};
};

}  // namespace detail
}  // namespace stoker::alloc
