// Early upload: a split producer's shares cross to the device as each ends
// (Partition::share_align, Config::early_upload), while later shares are
// still produced; failure and cancellation mid-production return
// everything, and each partition runs once.
#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
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

using test::expect_idle;
using test::expect_outputs_correct;
using test::host_config;
using test::run_job;
using test::synthetic;

// A streamed partition's shares, share `slow` much slower than the others:
// each share writes its range of both inputs with its index + 1.
Partition streamed_partition(std::size_t bytes, std::size_t shares, std::size_t slow,
                             std::chrono::milliseconds slow_for, std::vector<std::byte>& out,
                             std::atomic<int>& kernels_run) {
  Partition p;
  p.inputs.push_back(Input::produced(bytes));
  p.inputs.push_back(Input::produced(bytes));
  p.producer_tasks = shares;
  p.share_align = 64;
  p.split_producer = [=](std::span<const std::span<std::byte>> in, ProducerTask t) {
    if (t.index == slow) std::this_thread::sleep_for(slow_for);
    for (const auto& span : in) {
      const auto [lo, hi] = t.range(span.size(), 64);
      std::memset(span.data() + lo, static_cast<int>(t.index + 1), hi - lo);
    }
    return std::error_code{};
  };
  p.work.cpu = [&kernels_run](const KernelContext& c) {
    ++kernels_run;
    for (std::size_t b = 0; b < c.output_bytes[0]; ++b)
      c.outputs[0][b] = c.inputs[0][b] ^ c.inputs[1][b] ^ std::byte{0x5a};
    return std::error_code{};
  };
  p.outputs.push_back(Output::to(std::span(out)));
  return p;
}

// With share_align, shares that have ended cross while a later one is still
// being produced; without it, or with early upload off in the config, nothing
// crosses before the producer has ended.
TEST(EarlyUpload, SharesCrossWhileLaterSharesAreStillProduced) {
  constexpr std::size_t kBytes = 256 << 10, kShares = 4;
  enum class Mode { streamed, no_align, config_off };
  for (Mode mode : {Mode::streamed, Mode::no_align, Mode::config_off}) {
    const bool streamed = mode == Mode::streamed;
    asio::io_context io;
    auto c = host_config(1);
    c.early_upload = mode != Mode::config_off;
    Engine engine(io.get_executor(), c);
    std::vector<std::byte> out(kBytes);
    std::atomic<int> kernels{0};
    Job job;
    job.name = streamed ? "streamed" : "whole";
    job.partitions.push_back(streamed_partition(kBytes, kShares, kShares - 1,
                                                std::chrono::milliseconds(150), out, kernels));
    if (mode == Mode::no_align) job.partitions[0].share_align = 0;
    std::error_code ec;
    const auto report = run_job(engine, io, std::move(job), ec);
    ASSERT_FALSE(ec) << report.error;
    const auto& part = report.parts.at(0);
    const double produced_at = part.producer.start_ms + part.producer.ms;
    if (streamed)
      EXPECT_LT(part.h2d.start_ms, produced_at - 100)
          << "the first shares waited for the last (H2D from " << part.h2d.start_ms
          << " ms, producer ended at " << produced_at << " ms)";
    else
      EXPECT_GE(part.h2d.start_ms, produced_at - 1) << "H2D began before its producer ended";
    for (std::size_t t = 0; t < kShares; ++t) {
      const auto [lo, hi] = ProducerTask{t, kShares}.range(kBytes, 64);
      for (std::size_t b = lo; b < hi; ++b)
        ASSERT_EQ(out[b], std::byte{0x5a}) << "byte " << b << " of share " << t;  // v ^ v ^ 0x5a
    }
    EXPECT_EQ(kernels.load(), 1);
    expect_idle(engine);
  }
}

// A share that fails while the partition is on a device already: the job
// fails with the producer's error, its kernel never runs, and the blocks,
// budget and slot all come back (only after the last running share ended).
TEST(EarlyUpload, ProducerFailureFailsTheJobAndReturnsEverything) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config(1));
  constexpr std::size_t kBytes = 256 << 10;
  std::vector<std::byte> out(kBytes), other_out(kBytes);
  std::atomic<int> kernels{0}, other_kernels{0};
  Job job;
  job.name = "streamed-failing";
  job.partitions.push_back(
      streamed_partition(kBytes, 4, 3, std::chrono::milliseconds(50), out, kernels));
  auto inner = job.partitions[0].split_producer;
  job.partitions[0].split_producer = [inner](std::span<const std::span<std::byte>> in,
                                             ProducerTask t) {
    if (t.index == 2) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      return make_error_code(Errc::io_error);
    }
    return inner(in, t);
  };
  Job other;
  other.name = "streamed-fine";
  other.partitions.push_back(
      streamed_partition(kBytes, 4, 1, std::chrono::milliseconds(30), other_out, other_kernels));
  std::error_code result, other_result;
  std::string message;
  engine.async_submit(std::move(job), [&](std::error_code ec, JobReport r) {
    result = ec;
    message = r.error;
  });
  engine.async_submit(std::move(other), [&](std::error_code ec, JobReport) { other_result = ec; });
  io.run();
  EXPECT_EQ(result, make_error_code(Errc::io_error)) << result.message();
  EXPECT_NE(message.find("partition 0: producer failed"), std::string::npos) << message;
  EXPECT_EQ(kernels.load(), 0) << "the kernel ran on partly produced inputs";
  EXPECT_FALSE(other_result) << other_result.message();
  EXPECT_EQ(other_kernels.load(), 1);
  EXPECT_EQ(other_out, std::vector<std::byte>(kBytes, std::byte{0x5a}));
  expect_idle(engine);
}

// Cancelled while a streamed partition waits on a device for its shares:
// the shares not started never start, the kernel never runs, and the job
// completes aborted with everything back.
TEST(EarlyUpload, CancellingMidProductionAbortsAndReturnsEverything) {
  asio::io_context io;
  auto c = host_config(1);
  c.worker_threads = 2;
  Engine engine(io.get_executor(), c);
  constexpr std::size_t kBytes = 256 << 10, kShares = 12;
  std::vector<std::byte> out(kBytes);
  std::atomic<int> kernels{0}, shares_run{0};
  Job job;
  job.name = "streamed-cancelled";
  job.partitions.push_back(
      streamed_partition(kBytes, kShares, kShares, std::chrono::milliseconds(0), out, kernels));
  auto inner = job.partitions[0].split_producer;
  job.partitions[0].split_producer = [inner, &shares_run](std::span<const std::span<std::byte>> in,
                                                          ProducerTask t) {
    ++shares_run;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    return inner(in, t);
  };
  asio::cancellation_signal cancel;
  std::error_code result;
  engine.async_submit(std::move(job),
                      asio::bind_cancellation_slot(
                          cancel.slot(), [&](std::error_code ec, JobReport) { result = ec; }));
  asio::steady_timer t(io, std::chrono::milliseconds(40));
  t.async_wait([&](auto) { cancel.emit(asio::cancellation_type::terminal); });
  io.run();
  EXPECT_EQ(result, operation_aborted()) << result.message();
  EXPECT_LT(shares_run.load(), static_cast<int>(kShares));
  EXPECT_EQ(kernels.load(), 0);
  expect_idle(engine);
}

TEST(EarlyUpload, ShareAlignWithAPlainProducerIsRejected) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config(1));
  std::vector<std::byte> out(4096);
  std::atomic<int> kernels{0};
  Job job;
  job.name = "bad-stream";
  job.partitions.push_back(
      streamed_partition(4096, 2, 0, std::chrono::milliseconds(0), out, kernels));
  job.partitions[0].split_producer = nullptr;
  job.partitions[0].producer = [](std::span<const std::span<std::byte>>) {
    return std::error_code{};
  };
  std::error_code ec;
  const auto report = run_job(engine, io, std::move(job), ec);
  EXPECT_EQ(ec, make_error_code(Errc::invalid_argument));
  EXPECT_NE(report.error.find("share_align (64) with a plain producer"), std::string::npos)
      << report.error;
  EXPECT_EQ(kernels.load(), 0);
  expect_idle(engine);
}

// Streamed partitions whose shares all end while their slot's feeder is
// already copying: each must run once, with its own blocks. An earlier
// version told the feed from the workers, so a launch could end before the
// engine had heard of its producer's end, and the partition was queued
// again with its input blocks gone ("H2D copy of input 0: invalid
// argument", or a crash): this test failed on every run of that version.
TEST(EarlyUpload, PartitionsRunOnceWhateverEndsFirst) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config(2));
  const std::size_t parts = 3 * engine.lookahead() + 1;
  for (int i = 0; i < 200; ++i) {
    std::shared_ptr<workloads::SyntheticRun> run;
    auto job = synthetic(run, parts, 64 << 10);
    if (i == 0) {
      ASSERT_FALSE(engine.reserve_pinned(job.partitions[0], engine.lookahead()));
    }
    std::error_code ec;
    const auto report = run_job(engine, io, std::move(job), ec);
    ASSERT_FALSE(ec) << "job " << i << ": " << report.error;
    ASSERT_EQ(report.partitions_done, parts);
    expect_outputs_correct(*run);
  }
  expect_idle(engine);
}

}  // namespace
}  // namespace stoker::engine
