// What async_submit promises whatever the completion token (a callback, a
// future, a coroutine, deferred): the handler runs once, on its own
// executor, with the job's report and error. Compiled for both backends
// (test/backend.hpp).
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <future>
#include <memory>
#include <thread>

#include "engine/engine.hpp"
#include "engine/workloads/synthetic.hpp"
#include "test/backend.hpp"
#include "test/engine/engine_test_util.hpp"

namespace asio = boost::asio;

namespace stoker::engine {
namespace {

using test::backend_config;
using test::expect_idle;
using test::expect_outputs_correct;
using test::synthetic;

TEST(CompletionTokens, CallbackHandlerRunsOnItsExecutorWithCorrectOutputs) {
  STOKER_REQUIRE_BACKEND();
  asio::io_context io;
  Engine engine(io.get_executor(), backend_config());
  std::shared_ptr<workloads::SyntheticRun> run;
  int calls = 0;
  const auto io_thread = std::this_thread::get_id();
  engine.async_submit(synthetic(run), [&](std::error_code ec, JobReport r) {
    ++calls;
    EXPECT_EQ(std::this_thread::get_id(), io_thread) << "handler ran on an engine thread";
    EXPECT_FALSE(ec) << r.error;
    EXPECT_EQ(r.partitions_done, 8u);
    EXPECT_EQ(r.parts.size(), 8u);
    for (const auto& p : r.parts) {
      EXPECT_GE(p.device, 0);
      EXPECT_GE(p.slot, 0);
      EXPECT_EQ(p.bytes_in, 256u << 10);
      EXPECT_GT(p.producer.ms, 0.0);
    }
    EXPECT_GT(r.wall_ms, 0.0);
  });
  io.run();  // returns only after the handler ran: the engine tracks work
  EXPECT_EQ(calls, 1);
  expect_outputs_correct(*run);
  expect_idle(engine);
}

TEST(CompletionTokens, FutureCoroutineAndDeferredTokensWork) {
  STOKER_REQUIRE_BACKEND();
  asio::io_context io;
  Engine engine(io.get_executor(), backend_config());
  std::thread runner;
  auto guard = asio::make_work_guard(io);
  runner = std::thread([&] { io.run(); });

  std::shared_ptr<workloads::SyntheticRun> r1, r2, r3;
  auto fut = engine.async_submit(synthetic(r1, 4), asio::use_future);
  auto report = fut.get();
  EXPECT_EQ(report.partitions_done, 4u);

  std::promise<std::size_t> co_done;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        auto rep = co_await engine.async_submit(synthetic(r2, 3), asio::use_awaitable);
        co_done.set_value(rep.partitions_done);
      },
      asio::detached);
  EXPECT_EQ(co_done.get_future().get(), 3u);

  auto op = engine.async_submit(synthetic(r3, 2), asio::deferred);
  std::promise<std::size_t> deferred_done;
  std::move(op)([&](std::error_code ec, JobReport rep) {
    deferred_done.set_value(ec ? 0 : rep.partitions_done);
  });
  EXPECT_EQ(deferred_done.get_future().get(), 2u);

  guard.reset();
  runner.join();
  expect_outputs_correct(*r1);
  expect_outputs_correct(*r2);
  expect_outputs_correct(*r3);
}

TEST(CompletionTokens, FutureCarriesErrorsAsSystemError) {
  STOKER_REQUIRE_BACKEND();
  asio::io_context io;
  auto guard = asio::make_work_guard(io);
  std::thread t([&] { io.run(); });
  Engine engine(io.get_executor(), backend_config());
  Job empty;
  empty.name = "empty";
  auto fut = engine.async_submit(std::move(empty), asio::use_future);
  EXPECT_THROW(fut.get(), boost::system::system_error);
  guard.reset();
  t.join();
}

}  // namespace
}  // namespace stoker::engine
