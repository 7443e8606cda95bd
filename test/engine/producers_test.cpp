// Producers fill a partition's inputs on the engine's workers: split
// producers' shares run once each over aligned ranges, in partition order,
// and a share that fails (whatever its code) fails its job.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "engine/engine.hpp"
#include "engine/workloads/synthetic.hpp"
#include "test/engine/engine_test_util.hpp"

namespace asio = boost::asio;

namespace stoker::engine {
namespace {

using test::copy_through;
using test::expect_idle;
using test::host_config;
using test::run_job;
using test::synthetic;

TEST(ProducerTask, SharesCoverTheRangeInOrderOnAlignedBoundaries) {
  for (std::size_t n : {0u, 1u, 7u, 64u, 1000u, 4099u})
    for (std::size_t count : {1u, 3u, 8u, 33u}) {
      std::size_t next = 0;
      for (std::size_t i = 0; i < count; ++i) {
        const auto [b, e] = ProducerTask{i, count}.range(n, 4);
        EXPECT_EQ(b, next) << n << " " << count << " " << i;
        EXPECT_LE(b, e);
        if (e != n) {
          EXPECT_EQ(e % 4, 0u);
        }
        next = e;
      }
      EXPECT_EQ(next, n) << n << " " << count;
    }
}

// One partition's production spread over the workers: each share runs once,
// writes only its range, and the kernel sees the whole input.
TEST(Producers, SplitProducerSharesRunOnceEachAndFillTheWholeInput) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config());
  constexpr std::size_t kWords = 100003, kTasks = 7;
  std::vector<std::atomic<int>> calls(kTasks);
  std::atomic<int> bad_count{0};
  std::vector<std::uint32_t> out(kWords);
  Job job;
  job.name = "split";
  Partition p;
  p.inputs.push_back(Input::produced(kWords * 4));
  p.producer_tasks = kTasks;
  p.split_producer = [&](std::span<const std::span<std::byte>> spans, ProducerTask t) {
    if (t.count != kTasks) ++bad_count;
    calls[t.index]++;
    auto* w = reinterpret_cast<std::uint32_t*>(spans[0].data());
    const auto [b, e] = t.range(kWords);
    for (std::size_t i = b; i < e; ++i) w[i] = static_cast<std::uint32_t>(i * 2654435761u);
    return std::error_code{};
  };
  p.work.cpu = copy_through;
  p.outputs.push_back(Output::to(std::as_writable_bytes(std::span(out))));
  job.partitions.push_back(std::move(p));
  std::error_code result = make_error_code(Errc::cancelled);
  engine.async_submit(std::move(job), [&](std::error_code ec, JobReport) { result = ec; });
  io.run();
  EXPECT_FALSE(result) << result.message();
  EXPECT_EQ(bad_count, 0);
  for (std::size_t t = 0; t < kTasks; ++t) EXPECT_EQ(calls[t], 1) << "share " << t;
  for (std::size_t i = 0; i < kWords; ++i)
    ASSERT_EQ(out[i], static_cast<std::uint32_t>(i * 2654435761u)) << "word " << i;
  expect_idle(engine);
}

// Producers play the synthesis threads: the partitions ranked first must be
// filled first, or the GPUs wait for partition 0 while the workers fill
// partition 11 (a 2^24 hpoly job once finished its producers in the order
// 0, 4, 5, 8, ... 15, 1, 6, 7, 3, 2). Eight workers request blocks and run
// shares at once, so any order they complete in would show. Asserted on
// events: every share of partition p starts before any share of a later
// partition ends (a share lasts 5 ms; which of two shares dispatched
// microseconds apart reaches its first line first is up to the threads).
TEST(Producers, SharesStartInPartitionOrder) {
  asio::io_context io;
  auto config = host_config();
  config.worker_threads = 8;
  Engine engine(io.get_executor(), config);
  constexpr std::size_t kParts = 12, kTasks = 8, kBytes = 64 << 10;
  std::atomic<std::size_t> events{0};
  std::vector<std::size_t> started(kParts * kTasks), ended(kParts * kTasks);
  std::vector<std::vector<std::byte>> out(kParts, std::vector<std::byte>(kBytes));
  Job job;
  job.name = "ordered";
  for (std::size_t i = 0; i < kParts; ++i) {
    Partition p;
    p.inputs.push_back(Input::produced(kBytes));
    p.producer_tasks = kTasks;
    p.split_producer = [&, i](std::span<const std::span<std::byte>> spans, ProducerTask t) {
      started[i * kTasks + t.index] = events++;
      const auto [b, e] = t.range(kBytes);
      std::memset(spans[0].data() + b, static_cast<int>(i), e - b);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      ended[i * kTasks + t.index] = events++;
      return std::error_code{};
    };
    p.work.cpu = copy_through;
    p.outputs.push_back(Output::to(std::span(out[i])));
    job.partitions.push_back(std::move(p));
  }
  std::error_code ec;
  run_job(engine, io, std::move(job), ec);
  ASSERT_FALSE(ec) << ec.message();
  ASSERT_EQ(events.load(), 2 * kParts * kTasks);
  const auto shares = [&](const std::vector<std::size_t>& v, std::size_t i) {
    return std::span(v).subspan(i * kTasks, kTasks);
  };
  for (std::size_t p = 0; p + 1 < kParts; ++p) {
    const auto last_start = std::ranges::max(shares(started, p));
    for (std::size_t q = p + 1; q < kParts; ++q)
      EXPECT_LT(last_start, std::ranges::min(shares(ended, q)))
          << "a share of partition " << q << " ended before partition " << p
          << " had started all its shares";
  }
  for (std::size_t i = 0; i < kParts; ++i)
    EXPECT_EQ(out[i], std::vector<std::byte>(kBytes, static_cast<std::byte>(i))) << i;
  expect_idle(engine);
}

TEST(Producers, FailingShareFailsTheJobAndReturnsEverything) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config());
  std::shared_ptr<workloads::SyntheticRun> run;
  auto job = synthetic(run, 4, 1 << 20);
  job.partitions[2].producer_tasks = 5;
  job.partitions[2].split_producer = [](std::span<const std::span<std::byte>>, ProducerTask t) {
    return t.index == 3 ? make_error_code(Errc::io_error) : std::error_code{};
  };
  std::error_code result;
  std::string message;
  engine.async_submit(std::move(job), [&](std::error_code ec, JobReport r) {
    result = ec;
    message = r.error;
  });
  io.run();
  EXPECT_EQ(result, make_error_code(Errc::io_error)) << result.message();
  EXPECT_NE(message.find("partition 2: producer failed"), std::string::npos) << message;
  expect_idle(engine);
}

// A producer's own error is news whatever its code: one that returns
// Errc::cancelled (or operation_aborted) while nobody cancelled the job fails
// it. (Such codes were once taken for the engine's own cancellation and the
// partition dropped silently, so the job never completed.)
TEST(Producers, ReturningACancelledCodeFailsItsJobInsteadOfHanging) {
  for (const std::error_code code : {make_error_code(Errc::cancelled), operation_aborted()}) {
    asio::io_context io;
    Engine engine(io.get_executor(), host_config());
    std::shared_ptr<workloads::SyntheticRun> run;
    auto job = synthetic(run, 3, 64 << 10);
    job.partitions[1].split_producer = nullptr;
    job.partitions[1].producer = [code](std::span<const std::span<std::byte>>) { return code; };
    job.partitions[1].share_align = 0;
    std::error_code ec;
    const auto report = run_job(engine, io, std::move(job), ec);
    EXPECT_EQ(ec, code) << ec.message();
    EXPECT_NE(report.error.find("partition 1: producer failed"), std::string::npos) << report.error;
    expect_idle(engine);
  }
}

}  // namespace
}  // namespace stoker::engine
