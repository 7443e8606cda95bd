#include "engine/detail/worker_pool.hpp"

#include "common/start_thread.hpp"
#include "engine/detail/enter_thread.hpp"

namespace stoker::engine::detail {

// One thread runs it without locking its queue, as thread_pool(1) does.
WorkerPool::WorkerPool(std::size_t threads)
    : io_(threads == 1 ? 1 : BOOST_ASIO_CONCURRENCY_HINT_DEFAULT), work_(io_.get_executor()) {}

Result<std::unique_ptr<WorkerPool>> WorkerPool::start(
    std::size_t threads, const std::function<std::string(std::size_t)>& name) {
  threads = std::max<std::size_t>(1, threads);
  std::unique_ptr<WorkerPool> pool(new WorkerPool(threads));
  pool->threads_.reserve(threads);
  for (std::size_t i = 0; i < threads; ++i) {
    std::thread t;
    // The destructor stops and joins the threads started so far.
    if (Error e = common::start_thread(
            t, name(i), [io = &pool->io_, what = name(i)] { run_engine_thread(*io, what); }))
      return e;
    pool->threads_.push_back(std::move(t));
  }
  return pool;
}

void WorkerPool::join() {
  work_.reset();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
}

WorkerPool::~WorkerPool() {
  io_.stop();
  join();
}

}  // namespace stoker::engine::detail
