// WorkerPool: an io_context run by a fixed number of threads, for the
// engine's pools (the staging threads of a device, the producer workers).
//
// boost::asio::thread_pool starts its threads in its constructor, and when
// the system refuses one partway (no memory for its stack under an
// address-space limit, a thread limit) the constructor's clean-up joins
// the threads already started, which wait for work the pool still counts
// and never return: the process hangs. Here each thread is started on its
// own through common::start_thread, and a refusal ends the threads already
// started and is an Error naming the pool's thread ("could not start thread
// stoker-stage-0 (staging thread 2 of 4): Resource temporarily
// unavailable").
//
// Like thread_pool: post() work to get_executor(); join() waits for every
// piece of work posted, then for the threads; the destructor stops the
// threads (work not yet started is dropped) and joins them. Thread safety:
// get_executor and posting from any thread; join and the destructor from
// one thread that is not one of the pool's.
#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/error.hpp"

namespace stoker::engine::detail {

class WorkerPool {
 public:
  using executor_type = boost::asio::io_context::executor_type;

  // Starts `threads` threads (at least one); `name(i)` names thread i in an
  // error ("thread stoker-stage-0 (staging thread 2 of 4)").
  static Result<std::unique_ptr<WorkerPool>> start(
      std::size_t threads, const std::function<std::string(std::size_t)>& name);

  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;
  ~WorkerPool();

  executor_type get_executor() noexcept { return io_.get_executor(); }
  std::size_t size() const noexcept { return threads_.size(); }
  // Waits until the work posted has run and the threads have ended.
  void join();

 private:
  explicit WorkerPool(std::size_t threads);

  boost::asio::io_context io_;
  std::optional<boost::asio::executor_work_guard<executor_type>> work_;
  std::vector<std::thread> threads_;
};

}  // namespace stoker::engine::detail
