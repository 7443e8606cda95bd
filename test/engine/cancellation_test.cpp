// Per-operation cancellation, shutdown and destruction: queued partitions
// are dropped, started ones finish, the handler runs once, and every byte,
// block and slot comes back at any moment of a job.
#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "alloc/pinned_pool.hpp"
#include "engine/engine.hpp"
#include "engine/workloads/synthetic.hpp"
#include "test/engine/engine_test_util.hpp"

namespace asio = boost::asio;

namespace stoker::engine {
namespace {

using test::expect_idle;
using test::host_config;
using test::synthetic;

TEST(Cancellation, DropsQueuedPartitionsAndCompletesAborted) {
  asio::io_context io;
  auto c = host_config(1);
  Engine engine(io.get_executor(), c);
  std::shared_ptr<workloads::SyntheticRun> run;
  workloads::SyntheticOptions o;
  o.partitions = 200;
  o.input_bytes = 256 << 10;
  o.rounds = 100;
  auto job = workloads::make_synthetic_job(o, run);
  asio::cancellation_signal cancel;
  std::error_code result;
  JobReport report;
  engine.async_submit(std::move(*job), asio::bind_cancellation_slot(
                                           cancel.slot(), [&](std::error_code ec, JobReport r) {
                                             result = ec;
                                             report = std::move(r);
                                           }));
  asio::steady_timer t(io, std::chrono::milliseconds(30));
  t.async_wait([&](auto) { cancel.emit(asio::cancellation_type::terminal); });
  io.run();
  EXPECT_EQ(result, operation_aborted());
  EXPECT_LT(report.partitions_done, 200u);
  EXPECT_NE(report.error.find("cancelled"), std::string::npos) << report.error;
  expect_idle(engine);
}

// Cancelling mid-job, after partitions have run: started ones finish, the
// rest are dropped, and the budget, pool blocks, slots and device memory
// all come back.
TEST(Cancellation, CancellingMidJobAfterSomePartitionsRanReturnsEverything) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config(1));
  const auto free_before = engine.devices()[0].memory_info();
  ASSERT_TRUE(free_before);
  std::shared_ptr<workloads::SyntheticRun> run;
  auto job = synthetic(run, 100);
  asio::cancellation_signal cancel;
  job.progress = [&](std::size_t done, std::size_t) {
    if (done == 3) cancel.emit(asio::cancellation_type::terminal);
  };
  std::error_code result;
  JobReport report;
  engine.async_submit(std::move(job), asio::bind_cancellation_slot(
                                          cancel.slot(), [&](std::error_code ec, JobReport r) {
                                            result = ec;
                                            report = std::move(r);
                                          }));
  io.run();
  EXPECT_EQ(result, operation_aborted());
  EXPECT_GE(report.partitions_done, 3u);
  EXPECT_LT(report.partitions_done, 100u);
  const auto& o = run->options;
  for (const auto& p : report.parts) {
    std::vector<std::uint32_t> in(o.input_bytes / 4), want(o.input_bytes / 16);
    workloads::synthetic_fill(o.seed, p.index, in);
    workloads::synthetic_cpu(in.data(), want.data(), want.size(), o.rounds);
    const std::vector<std::uint32_t> got(run->outputs[p.index].begin(),
                                         run->outputs[p.index].end());
    EXPECT_EQ(got, want) << "partition " << p.index << " ran, so its outputs must be whole";
  }
  expect_idle(engine);
  // A partition's device memory is freed on its device's stream after the
  // partition has ended, so it may come back just after the job completes.
  auto free_after = engine.devices()[0].memory_info();
  ASSERT_TRUE(free_after);
  for (int i = 0; i < 500 && free_after->free != free_before->free; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    free_after = engine.devices()[0].memory_info();
    ASSERT_TRUE(free_after);
  }
  EXPECT_EQ(free_after->free, free_before->free) << "device memory still held after 5 s";
}

// A fresh engine's pool has no free block: each partition's blocks are
// pinned on a worker after the budget granted them, a window in which
// the budget wait's cancellation handler is gone. Cancelling or destroying
// the engine at any moment around it (a spread of delays from the submit)
// completes the job once and gives back every byte and block.
TEST(Cancellation, CancellingOrDestroyingWhileBlocksArePinnedReturnsEverything) {
  for (const bool destroy : {false, true}) {
    for (int step = 0; step < 24; ++step) {
      SCOPED_TRACE((destroy ? "destroy after " : "cancel after ") + std::to_string(step * 25) +
                   " us");
      asio::io_context io;
      auto engine = std::make_unique<Engine>(io.get_executor(), host_config(1));
      std::shared_ptr<workloads::SyntheticRun> run;
      auto job = synthetic(run, 6, 512 << 10);
      asio::cancellation_signal cancel;
      int completions = 0;
      std::error_code result;
      engine->async_submit(std::move(job), asio::bind_cancellation_slot(
                                               cancel.slot(), [&](std::error_code ec, JobReport) {
                                                 ++completions;
                                                 result = ec;
                                               }));
      std::this_thread::sleep_for(std::chrono::microseconds(25 * step));
      if (destroy) {
        engine.reset();  // blocks it pinned and never handed out: ASan's to find
      } else {
        cancel.emit(asio::cancellation_type::terminal);
      }
      io.run();
      EXPECT_EQ(completions, 1);
      EXPECT_TRUE(!result || result == operation_aborted()) << result.message();
      if (!destroy) {
        expect_idle(*engine);
        EXPECT_EQ(engine->stats().pinned_bytes_in_use, 0u);
      }
    }
  }
}

// A failed job that is then cancelled while its started partitions drain
// reports its failure, not operation_aborted: the failure is what its
// caller must read.
TEST(Cancellation, CancellingAFailedJobKeepsItsFailure) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config(1));
  std::shared_ptr<workloads::SyntheticRun> run;
  auto job = synthetic(run, 2);
  std::atomic<bool> release{false}, produced_failure{false};
  job.partitions[0].work.cpu = [&, first = job.partitions[0].work.cpu](const KernelContext& c) {
    for (int i = 0; i < 1000 && !release; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return first(c);
  };
  // Partition 1 is produced, and its producer fails while partition 0's
  // kernel still holds the device.
  auto& second = job.partitions[1];
  second.inputs[0] = Input::produced(second.inputs[0].bytes);
  second.split_producer = nullptr;
  second.share_align = 0;
  second.producer = [&](std::span<const std::span<std::byte>>) {
    produced_failure = true;
    return make_error_code(Errc::invalid_argument);
  };
  asio::cancellation_signal cancel;
  std::error_code result;
  JobReport report;
  engine.async_submit(std::move(job), asio::bind_cancellation_slot(
                                          cancel.slot(), [&](std::error_code ec, JobReport r) {
                                            result = ec;
                                            report = std::move(r);
                                          }));
  const std::size_t one_output = alloc::PinnedPool::block_capacity(second.outputs[0].bytes);
  std::thread canceller([&] {
    for (int i = 0; i < 5000 && !produced_failure; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    // The engine records the failure in the handler that gives back
    // partition 1's blocks: once only partition 0's output block is held
    // (its input went back once copied), the failure is recorded.
    for (int i = 0; i < 5000 && engine.stats().pinned_bytes_in_use > one_output; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    asio::post(io, [&] {
      cancel.emit(asio::cancellation_type::terminal);
      release = true;
    });
  });
  io.run();
  canceller.join();
  EXPECT_EQ(result, make_error_code(Errc::invalid_argument)) << report.error;
  EXPECT_NE(report.error.find("producer failed"), std::string::npos) << report.error;
  EXPECT_TRUE(produced_failure);
  expect_idle(engine);
}

TEST(Cancellation, DestroyingWithJobsInFlightCancelsAndReturns) {
  asio::io_context io;
  std::shared_ptr<workloads::SyntheticRun> run;
  std::error_code result;
  {
    Engine engine(io.get_executor(), host_config(1));
    workloads::SyntheticOptions o;
    o.partitions = 100;
    o.input_bytes = 256 << 10;
    o.rounds = 100;
    auto job = workloads::make_synthetic_job(o, run);
    engine.async_submit(std::move(*job), [&](std::error_code ec, JobReport) { result = ec; });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  io.run();  // the handler still runs, on the caller's executor
  EXPECT_EQ(result, operation_aborted());
}

// A cancellation emitted after the engine is gone (its handler not run yet)
// must not reach into the destroyed engine.
TEST(Cancellation, CancelAfterTheEngineIsGoneIsHarmless) {
  asio::io_context io;
  std::shared_ptr<workloads::SyntheticRun> run;
  asio::cancellation_signal signal;
  std::error_code result;
  int calls = 0;
  {
    Engine engine(io.get_executor(), host_config(1));
    workloads::SyntheticOptions o;
    o.partitions = 50;
    o.input_bytes = 256 << 10;
    o.rounds = 100;
    auto job = workloads::make_synthetic_job(o, run);
    engine.async_submit(std::move(*job), asio::bind_cancellation_slot(
                                             signal.slot(), [&](std::error_code ec, JobReport) {
                                               ++calls;
                                               result = ec;
                                             }));
  }
  signal.emit(asio::cancellation_type::all);  // the engine is destroyed; its handler is queued
  io.run();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(result, operation_aborted());
}

TEST(Cancellation, ShutdownDrainsThenRefusesNewJobs) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config());
  std::shared_ptr<workloads::SyntheticRun> r1, r2;
  bool job_done = false, shut = false;
  engine.async_submit(synthetic(r1, 6), [&](std::error_code ec, JobReport) {
    EXPECT_FALSE(ec);
    EXPECT_FALSE(shut) << "shutdown completed before the job";
    job_done = true;
  });
  engine.async_shutdown([&](std::error_code ec) {
    EXPECT_FALSE(ec);
    shut = true;
  });
  io.run();
  EXPECT_TRUE(job_done);
  EXPECT_TRUE(shut);
  io.restart();
  std::error_code late;
  engine.async_submit(synthetic(r2, 1), [&](std::error_code ec, JobReport) { late = ec; });
  io.run();
  EXPECT_EQ(late, make_error_code(Errc::shutting_down));
}

}  // namespace
}  // namespace stoker::engine
