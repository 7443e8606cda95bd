// JobError: the exception a failed job becomes when its completion token
// turns errors into exceptions (asio::use_future, asio::use_awaitable).
//
// Why an exception of our own: Asio rethrows an std::exception_ptr that
// comes first in a completion, but turns an error_code into a
// boost::system::system_error that holds the code alone, so "invalid
// argument [std:stoker:1]" would be all a caller of future::get() or
// co_await learned, never which partition or which size. Callbacks keep
// void(error_code, JobReport): the code to branch on and the report (its
// `error` holds the message) side by side, no exception to rethrow and
// inspect. Tokens that throw get void(std::exception_ptr, JobReport) with a
// JobError instead, whose what() is the report's message and whose report()
// is the whole report (partitions done, times) for the caller who wants it.
//
// JobError derives from boost::system::system_error, what Asio throws for
// every other operation (MemoryBudget, PinnedPool included), so one catch
// clause serves them all; code() converts to the std::error_code of the
// stoker categories (std::error_code(e.code()) == Errc::invalid_argument).
//
// Other tokens that throw on an error (boost::cobalt, experimental
// use_promise) keep their message when the trait below is specialised for
// them.
#pragma once

#include <boost/asio/bind_allocator.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/system/system_error.hpp>
#include <memory>
#include <type_traits>

#include "engine/job_report.hpp"

namespace stoker::engine {

class JobError : public boost::system::system_error {
 public:
  JobError(const boost::system::error_code& code, JobReport report)
      : boost::system::system_error(code, report.error),
        report_(std::make_shared<const JobReport>(std::move(report))) {}

  // The report's message ("job 'x' partition 0 needs 83890176 bytes of
  // pinned host memory; the host budget is 67108864 bytes"), or the code's
  // own when the report has none.
  const char* what() const noexcept override {
    return report_->error.empty() ? boost::system::system_error::what() : report_->error.c_str();
  }
  // What the job did before it failed or was cancelled.
  const JobReport& report() const noexcept { return *report_; }

 private:
  std::shared_ptr<const JobReport> report_;  // shared: exceptions are copied
};

// True for completion tokens that turn a completion's error into an
// exception; async_submit completes those with a JobError.
template <typename CompletionToken>
struct token_throws_on_error : std::false_type {};
template <typename Allocator>
struct token_throws_on_error<boost::asio::use_future_t<Allocator>> : std::true_type {};
template <typename Executor>
struct token_throws_on_error<boost::asio::use_awaitable_t<Executor>> : std::true_type {};
// A token bound to a cancellation slot, an executor or an allocator throws
// as the token it binds.
template <typename T, typename Slot>
struct token_throws_on_error<boost::asio::cancellation_slot_binder<T, Slot>>
    : token_throws_on_error<T> {};
template <typename T, typename Executor>
struct token_throws_on_error<boost::asio::executor_binder<T, Executor>> : token_throws_on_error<T> {
};
template <typename T, typename Allocator>
struct token_throws_on_error<boost::asio::allocator_binder<T, Allocator>>
    : token_throws_on_error<T> {};

}  // namespace stoker::engine

namespace stoker {
using engine::JobError;
}  // namespace stoker
