#include "alloc/memory_budget.hpp"

#include <cassert>
#include <condition_variable>
#include <mutex>

#include "common/bytes_str.hpp"

namespace stoker::alloc {
namespace detail {

using common::bytes_str;

BudgetCore::BudgetCore(std::size_t limit, std::string name, Errc exhausted)
    : limit_(limit), name_(std::move(name)), exhausted_(exhausted) {}

BudgetCore::~BudgetCore() {
  shutdown();
}

std::string BudgetCore::last_error() const {
  std::lock_guard lock(m_);
  return last_error_;
}

Error BudgetCore::over_limit(std::size_t bytes) const {
  return Error{exhausted_, "memory budget '" + name_ + "': a request of " + bytes_str(bytes) +
                               " exceeds the whole budget of " + bytes_str(limit_)};
}

Error BudgetCore::timed_out(std::size_t bytes) const {
  return Error{Errc::timed_out, "memory budget '" + name_ + "': " + bytes_str(bytes) +
                                    " not available before the deadline (" + bytes_str(in_use()) +
                                    " of " + bytes_str(limit_) + " in use)"};
}

void BudgetCore::note_error_locked(const Error& e) {
  last_error_ = e.what();
}

void BudgetCore::take_locked(std::size_t bytes) noexcept {
  const auto now = in_use_.load(std::memory_order_relaxed) + bytes;
  in_use_.store(now, std::memory_order_relaxed);
  if (now > high_water_.load(std::memory_order_relaxed))
    high_water_.store(now, std::memory_order_relaxed);
}

Result<Reservation> BudgetCore::try_acquire(std::size_t bytes) {
  if (bytes == 0) return Reservation(shared_from_this(), 0);
  std::lock_guard lock(m_);
  if (bytes > limit_) {
    auto e = over_limit(bytes);
    note_error_locked(e);
    return e;
  }
  const auto used = in_use_.load(std::memory_order_relaxed);
  if (!queue_.empty() || bytes > limit_ - used) {
    Error e{exhausted_, "memory budget '" + name_ + "': " + bytes_str(bytes) + " requested, " +
                            bytes_str(limit_ - used) + " of " + bytes_str(limit_) + " free" +
                            (queue_.empty() ? std::string{}
                                            : ", " + std::to_string(queue_.size()) +
                                                  " request(s) queued ahead")};
    note_error_locked(e);
    return e;
  }
  take_locked(bytes);
  return Reservation(shared_from_this(), bytes);
}

void BudgetCore::grant_locked(Ready& granted) {
  while (!queue_.empty()) {
    auto& front = queue_.front();
    if (front->bytes_ > limit_ - in_use_.load(std::memory_order_relaxed)) break;
    take_locked(front->bytes_);
    granted.push_back(front);
    unlink_locked(*front);
  }
}

void BudgetCore::unlink_locked(BudgetWaiter& w) {
  assert(w.queued_);
  w.queued_ = false;
  if (w.deadline_ != time_point::max()) --deadlines_;
  queue_.erase(w.pos_);  // may destroy the queue's reference; callers hold their own
  waiting_.store(queue_.size(), std::memory_order_relaxed);
}

void BudgetCore::finish(Ready& granted,
                        std::vector<std::pair<std::shared_ptr<BudgetWaiter>, Error>>& failed) {
  for (auto& [w, e] : failed) w->complete(std::move(e), Reservation{});
  for (auto& w : granted) w->complete(Error{}, Reservation(shared_from_this(), w->bytes_));
}

void BudgetCore::submit(std::shared_ptr<BudgetWaiter> waiter, std::size_t bytes,
                        time_point deadline) {
  Error failure;
  {
    std::unique_lock lock(m_);
    if (stopping_) {
      failure = Error{Errc::shutting_down, "memory budget '" + name_ + "' is shutting down"};
    } else if (bytes > limit_) {
      failure = over_limit(bytes);
    } else if (queue_.empty() && bytes <= limit_ - in_use_.load(std::memory_order_relaxed)) {
      take_locked(bytes);
      lock.unlock();
      waiter->complete(Error{}, Reservation(shared_from_this(), bytes));
      return;
    } else if (deadline <= std::chrono::steady_clock::now()) {
      failure = timed_out(bytes);
    } else {
      waiter->bytes_ = bytes;
      waiter->deadline_ = deadline;
      waiter->queued_ = true;
      waiter->pos_ = queue_.insert(queue_.end(), waiter);
      waiting_.store(queue_.size(), std::memory_order_relaxed);
      if (deadline != time_point::max()) {
        ++deadlines_;
        if (!deadline_thread_.joinable())
          deadline_thread_ = std::thread([this] { deadline_loop(); });
        deadline_cv_.notify_one();
      }
      return;
    }
    note_error_locked(failure);
  }
  waiter->complete(std::move(failure), Reservation{});
}

void BudgetCore::cancel(BudgetWaiter& waiter, std::error_code why) {
  Ready granted;
  std::shared_ptr<BudgetWaiter> self;
  {
    std::lock_guard lock(m_);
    if (!waiter.queued_) return;
    self = *waiter.pos_;
    unlink_locked(waiter);
    // The cancelled request may have been the one blocking the queue.
    grant_locked(granted);
  }
  self->complete(Error{why}, Reservation{});
  for (auto& w : granted) w->complete(Error{}, Reservation(shared_from_this(), w->bytes_));
}

void BudgetCore::release(std::size_t bytes) noexcept {
  if (bytes == 0) return;
  Ready granted;
  {
    std::lock_guard lock(m_);
    const auto used = in_use_.load(std::memory_order_relaxed);
    assert(bytes <= used);
    in_use_.store(used - bytes, std::memory_order_relaxed);
    grant_locked(granted);
  }
  for (auto& w : granted) w->complete(Error{}, Reservation(shared_from_this(), w->bytes_));
}

void BudgetCore::shutdown() {
  std::vector<std::pair<std::shared_ptr<BudgetWaiter>, Error>> failed;
  std::thread thread;
  {
    std::lock_guard lock(m_);
    stopping_ = true;
    while (!queue_.empty()) {
      auto w = queue_.front();
      unlink_locked(*w);
      failed.emplace_back(
          std::move(w),
          Error{Errc::shutting_down, "memory budget '" + name_ + "' destroyed while waiting"});
    }
    thread = std::move(deadline_thread_);
  }
  deadline_cv_.notify_all();
  if (thread.joinable()) thread.join();
  Ready none;
  finish(none, failed);
}

void BudgetCore::deadline_loop() {
  std::unique_lock lock(m_);
  while (!stopping_) {
    const auto now = std::chrono::steady_clock::now();
    auto next = time_point::max();
    std::vector<std::pair<std::shared_ptr<BudgetWaiter>, Error>> expired;
    if (deadlines_ > 0) {
      for (auto it = queue_.begin(); it != queue_.end();) {
        auto w = *it++;
        if (w->deadline_ <= now) {
          auto e = timed_out(w->bytes_);
          note_error_locked(e);
          unlink_locked(*w);
          expired.emplace_back(std::move(w), std::move(e));
        } else if (w->deadline_ < next) {
          next = w->deadline_;
        }
      }
    }
    if (!expired.empty()) {
      Ready granted;
      grant_locked(granted);
      lock.unlock();
      finish(granted, expired);
      lock.lock();
      continue;
    }
    if (next == time_point::max())
      deadline_cv_.wait(lock);
    else
      deadline_cv_.wait_until(lock, next);
  }
}

namespace {

// acquire(): the calling thread sleeps on its own condition variable.
class BlockingWaiter final : public BudgetWaiter {
 public:
  void complete(Error error, Reservation r) noexcept override {
    std::lock_guard lock(m_);
    error_ = std::move(error);
    reservation_ = std::move(r);
    done_ = true;
    cv_.notify_one();
  }
  Result<Reservation> wait() {
    std::unique_lock lock(m_);
    cv_.wait(lock, [&] { return done_; });
    if (error_) return std::move(error_);
    return std::move(reservation_);
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  bool done_ = false;
  Error error_;
  Reservation reservation_;
};

}  // namespace
}  // namespace detail

void Reservation::release() noexcept {
  if (core_ != nullptr && bytes_ != 0) core_->release(bytes_);
  bytes_ = 0;
}

void Reservation::release(std::size_t part) noexcept {
  assert(part <= bytes_ && "Reservation::release: more than is held");
  if (part > bytes_) part = bytes_;
  bytes_ -= part;
  if (core_ != nullptr) core_->release(part);
}

Reservation Reservation::split(std::size_t part) noexcept {
  assert(part <= bytes_ && "Reservation::split: more than is held");
  if (part > bytes_) part = bytes_;
  bytes_ -= part;
  return Reservation(core_, part);
}

void Reservation::merge(Reservation&& other) noexcept {
  if (other.core_ == nullptr || other.bytes_ == 0) {
    other.release();
    return;
  }
  if (core_ == nullptr) core_ = other.core_;
  assert(core_ == other.core_ && "Reservation::merge: reservations of different budgets");
  bytes_ += std::exchange(other.bytes_, 0);
  other.core_.reset();
}

bool Reservation::of(const MemoryBudget& budget) const noexcept {
  return bytes_ != 0 && core_ == budget.core_;
}

std::error_code Reservation::try_grow(std::size_t more) {
  if (more == 0) return {};
  if (core_ == nullptr) return make_error_code(Errc::invalid_argument);
  auto r = core_->try_acquire(more);
  if (!r) return r.error().code;
  merge(std::move(*r));
  return {};
}

MemoryBudget::MemoryBudget(std::size_t limit, std::string name, Errc exhausted)
    : core_(std::make_shared<detail::BudgetCore>(limit, std::move(name), exhausted)) {}

MemoryBudget::~MemoryBudget() {
  core_->shutdown();
}

Result<Reservation> MemoryBudget::acquire(std::size_t bytes) {
  return acquire_until(bytes, clock::time_point::max());
}

Result<Reservation> MemoryBudget::acquire_until(std::size_t bytes, clock::time_point deadline) {
  auto w = std::make_shared<detail::BlockingWaiter>();
  core_->submit(w, bytes, deadline);
  return w->wait();
}

}  // namespace stoker::alloc
