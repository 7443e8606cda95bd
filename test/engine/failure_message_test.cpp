// A failed job keeps its message whichever completion token the caller
// chose: callbacks read it beside the code, use_future and use_awaitable
// throw a JobError whose what() is that message. The message names the job
// and the partition once.
#include <gtest/gtest.h>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/system/system_error.hpp>
#include <optional>
#include <string>

#include "engine/job_error.hpp"
#include "test/engine/engine_test_util.hpp"

namespace stoker::test {
namespace {

namespace asio = boost::asio;

// A 64 MiB host budget and a partition that needs 100 MiB of it: an 80 MiB
// input and the 20 MiB block its output lands in.
Config small_budget() {
  auto c = host_config(1);
  c.host_budget_bytes = std::size_t{64} << 20;
  return c;
}
Job too_large(std::shared_ptr<workloads::SyntheticRun>& run) {
  return synthetic(run, 2, std::size_t{80} << 20, false, 0, "big");
}
const std::string kTooLarge =
    "job 'big' partition 0 needs 104857600 bytes of pinned host memory; the host budget is "
    "67108864 bytes";

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(FailureMessage, UseFutureThrowsJobErrorCarryingTheReportsMessage) {
  asio::io_context io;
  Engine engine(io.get_executor(), small_budget());
  std::shared_ptr<workloads::SyntheticRun> run;
  auto fut = engine.async_submit(too_large(run), asio::use_future);
  io.run();
  try {
    fut.get();
    FAIL() << "the job should have failed";
  } catch (const JobError& e) {
    EXPECT_EQ(std::string(e.what()), kTooLarge);
    EXPECT_EQ(e.report().error, kTooLarge);
    EXPECT_EQ(e.report().partitions, 2u);
    EXPECT_EQ(std::error_code(e.code()), make_error_code(Errc::invalid_argument));
  }
  expect_idle(engine);
}

// One catch clause serves the engine and Asio's other operations.
TEST(FailureMessage, JobErrorIsCaughtAsBoostSystemError) {
  asio::io_context io;
  Engine engine(io.get_executor(), small_budget());
  std::shared_ptr<workloads::SyntheticRun> run;
  auto fut = engine.async_submit(too_large(run), asio::use_future);
  io.run();
  try {
    fut.get();
    FAIL() << "the job should have failed";
  } catch (const boost::system::system_error& e) {
    EXPECT_NE(std::string(e.what()).find("needs 104857600 bytes"), std::string::npos) << e.what();
  }
}

TEST(FailureMessage, UseAwaitableThrowsJobErrorCarryingTheReportsMessage) {
  asio::io_context io;
  Engine engine(io.get_executor(), small_budget());
  std::optional<std::string> caught;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        std::shared_ptr<workloads::SyntheticRun> run;
        try {
          co_await engine.async_submit(too_large(run), asio::use_awaitable);
        } catch (const JobError& e) {
          caught = e.what();
        }
      },
      asio::detached);
  io.run();
  ASSERT_TRUE(caught) << "the job should have failed";
  EXPECT_EQ(*caught, kTooLarge);
}

TEST(FailureMessage, CallbacksGetTheCodeAndTheMessage) {
  asio::io_context io;
  Engine engine(io.get_executor(), small_budget());
  std::shared_ptr<workloads::SyntheticRun> run;
  std::error_code ec;
  const auto report = run_job(engine, io, too_large(run), ec);
  EXPECT_EQ(ec, make_error_code(Errc::invalid_argument));
  EXPECT_EQ(report.error, kTooLarge);
}

TEST(FailureMessage, SuccessThroughUseFutureReturnsTheReport) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config(1));
  std::shared_ptr<workloads::SyntheticRun> run;
  auto fut = engine.async_submit(synthetic(run, 3, 64 << 10), asio::use_future);
  io.run();
  const JobReport r = fut.get();
  EXPECT_EQ(r.partitions_done, 3u);
  EXPECT_TRUE(r.error.empty()) << r.error;
}

// A cancelled job's exception says so, and its report counts what ran.
TEST(FailureMessage, CancelledThroughUseFutureThrowsOperationAborted) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config(1));
  std::shared_ptr<workloads::SyntheticRun> run;
  asio::cancellation_signal cancel;
  auto fut = engine.async_submit(synthetic(run, 64, 1 << 20),
                                 asio::bind_cancellation_slot(cancel.slot(), asio::use_future));
  cancel.emit(asio::cancellation_type::terminal);
  io.run();
  try {
    fut.get();
    FAIL() << "the job should have been cancelled";
  } catch (const JobError& e) {
    EXPECT_EQ(std::error_code(e.code()), engine::operation_aborted());
    EXPECT_NE(std::string(e.what()).find("job 'synthetic' cancelled after"), std::string::npos)
        << e.what();
    EXPECT_LT(e.report().partitions_done, 64u);
  }
  expect_idle(engine);
}

// The engine names the job and the partition before the failing part's own
// words, and only once.
TEST(FailureMessage, NamesTheJobAndPartitionOnce) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config(1));
  struct Case {
    const char* name;
    std::function<void(Job&)> arm;  // makes partition 1 fail
    std::string expect;             // the message starts with it
  };
  const std::vector<Case> cases = {
      {"validate",
       [](Job& j) {
         j.validate = [](const Partition&, std::size_t i) {
           return i == 1 ? Error{Errc::invalid_argument, "input 0 has 512 bytes"} : Error{};
         };
       },
       "job 'synthetic' partition 1: input 0 has 512 bytes"},
      {"verify",
       [](Job& j) {
         j.verify = [](const Partition&, std::size_t i) {
           return i == 1 ? make_error_code(Errc::verification_failed) : std::error_code{};
         };
       },
       "job 'synthetic' partition 1 failed verification: "},
      {"producer",
       [](Job& j) {
         j.partitions[1].split_producer = [](std::span<const std::span<std::byte>>,
                                             engine::ProducerTask) {
           return make_error_code(Errc::io_error);
         };
       },
       "job 'synthetic' partition 1: producer failed: "},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    std::shared_ptr<workloads::SyntheticRun> run;
    auto job = synthetic(run, 3, 64 << 10);
    c.arm(job);
    std::error_code ec;
    const auto report = run_job(engine, io, std::move(job), ec);
    EXPECT_TRUE(ec);
    EXPECT_EQ(report.error.rfind(c.expect, 0), 0u) << report.error;
    EXPECT_EQ(count(report.error, "partition"), 1u) << report.error;
    expect_idle(engine);
  }
}

}  // namespace
}  // namespace stoker::test
