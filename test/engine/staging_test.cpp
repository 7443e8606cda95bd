// Pageable inputs staged through each device's ring of pinned buffers: in
// chunks, by any number of staging threads, with consecutive partitions'
// passes overlapping, and intact whatever order the chunks cross in.
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <memory>
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

// Runs a job of `partitions` pageable inputs of `bytes` each on `engine`:
// it must succeed with every output equal to the CPU version's and leave
// the engine holding nothing. `what` names the case in a failure.
JobReport expect_pageable_job_lands_intact(Engine& engine, asio::io_context& io,
                                           std::size_t partitions, std::size_t bytes,
                                           const std::string& what) {
  std::shared_ptr<workloads::SyntheticRun> run;
  auto job = synthetic(run, partitions, bytes, /*pageable=*/true);
  std::error_code ec;
  auto report = run_job(engine, io, std::move(job), ec);
  EXPECT_FALSE(ec) << report.error << " (" << what << ")";
  if (!ec) expect_outputs_correct(*run);
  expect_idle(engine);
  return report;
}

TEST(Staging, PageableInputsGoThroughStagingInChunks) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config());  // 64 KiB chunks
  std::shared_ptr<workloads::SyntheticRun> run;
  std::error_code result;
  JobReport report;
  engine.async_submit(synthetic(run, 6, 1 << 20, /*pageable=*/true),
                      [&](std::error_code ec, JobReport r) {
                        result = ec;
                        report = std::move(r);
                      });
  io.run();
  ASSERT_FALSE(result) << report.error;
  expect_outputs_correct(*run);
  for (const auto& p : report.parts) EXPECT_GT(p.staging.ms, 0.0);
  expect_idle(engine);
}

// Pageable inputs many staging chunks long, with a short last chunk, land
// intact whatever the number of staging threads: each thread claims chunks
// as it frees a buffer, so with several threads they are sent out of order
// and reuse every buffer many times; the outputs prove every chunk landed
// where it belongs.
TEST(Staging, PageableInputsStagedByAnyNumberOfThreadsLandIntact) {
  for (const int threads : {1, 3, 8}) {
    asio::io_context io;
    auto c = host_config(2);
    c.staging_threads = threads;
    Engine engine(io.get_executor(), c);
    // 3 MiB + 112 bytes: 49 chunks of 64 KiB, the last one 112 bytes.
    const auto report = expect_pageable_job_lands_intact(
        engine, io, 4, (std::size_t{3} << 20) + 112, std::to_string(threads) + " staging threads");
    for (const auto& p : report.parts) EXPECT_GT(p.staging.ms, 0.0);
  }
}

// With devices whose streams run slower than the staging threads copy,
// each staging buffer's H2D is still queued when its thread comes back to
// it: the thread must wait for that copy's event before refilling the
// buffer, or the queued copy would carry a later chunk's bytes (outputs
// wrong). Slow devices also make the staging threads run far ahead, so
// the chunks of an input are sent in a different order on every run.
TEST(Staging, BufferIsRefilledOnlyAfterItsQueuedCopyHasRead) {
  for (const int threads : {1, 4}) {
    asio::io_context io;
    auto c = host_config(2, {6.0, 3.0});
    c.staging_threads = threads;
    Engine engine(io.get_executor(), c);
    expect_pageable_job_lands_intact(engine, io, 6, (std::size_t{2} << 20) + 48,
                                     std::to_string(threads) + " staging threads");
  }
}

// Consecutive partitions' staging passes overlap: the feeder starts the
// next partition's pass as soon as this one's has started, so threads that
// run out of this pass's chunks copy the next one's while the last chunks
// here are still being copied, so that no thread idles at a pass's end.
// Outputs stay right with the passes interleaved.
TEST(Staging, PassesOfConsecutivePartitionsOverlap) {
  asio::io_context io;
  auto c = host_config(1);  // one device, three slots, 64 KiB chunks
  c.staging_threads = 4;
  Engine engine(io.get_executor(), c);
  constexpr std::size_t kParts = 6;
  const auto report =
      expect_pageable_job_lands_intact(engine, io, kParts, std::size_t{3} << 20, "overlap");
  ASSERT_EQ(report.parts.size(), kParts);
  std::vector<StageSpan> spans;
  for (const auto& p : report.parts) spans.push_back(p.staging);
  std::sort(spans.begin(), spans.end(),
            [](const StageSpan& a, const StageSpan& b) { return a.start_ms < b.start_ms; });
  int overlapping = 0;
  for (std::size_t i = 1; i < spans.size(); ++i)
    overlapping += spans[i].start_ms < spans[i - 1].start_ms + spans[i - 1].ms ? 1 : 0;
  EXPECT_GT(overlapping, 0) << "every partition's staging waited for the one before to end";
}

// Each partition's staging span starts when its pass takes its first
// chunk, not when the feeder queued the pass: with one staging thread the
// passes run one after the other, so the spans must not overlap (spans
// that started at the feeder overlapped here too, and said nothing).
TEST(Staging, SpansStartAtThePassesFirstChunk) {
  asio::io_context io;
  auto c = host_config(1);
  c.staging_threads = 1;
  Engine engine(io.get_executor(), c);
  const auto report =
      expect_pageable_job_lands_intact(engine, io, 6, std::size_t{3} << 20, "one thread");
  ASSERT_EQ(report.parts.size(), 6u);
  std::vector<StageSpan> spans;
  for (const auto& p : report.parts) spans.push_back(p.staging);
  std::sort(spans.begin(), spans.end(),
            [](const StageSpan& a, const StageSpan& b) { return a.start_ms < b.start_ms; });
  for (std::size_t i = 1; i < spans.size(); ++i)
    EXPECT_GE(spans[i].start_ms, spans[i - 1].start_ms + spans[i - 1].ms)
        << "pass " << i << " started before the one before it had ended";
}

// Staging holds two chunks per staging thread unless staging_ring_bytes
// asks for more, rounded up to whole chunks per thread; inputs many times
// that long still land intact.
TEST(Staging, IsTwoChunksPerThreadOrTheBytesAskedForInWholeChunksPerThread) {
  const std::size_t chunk = std::size_t{64} << 10;
  for (const std::size_t ring :
       {std::size_t{0}, std::size_t{4} << 20, std::size_t{100} << 10, 5 * chunk}) {
    asio::io_context io;
    auto c = host_config(2);
    c.staging_threads = 2;
    c.staging_ring_bytes = ring;
    Engine engine(io.get_executor(), c);
    // 64 KiB chunks: two per thread is 256 KiB; 4 MiB is 64 chunks; 100 KiB
    // asks for less than two per thread and gets those; 5 chunks round up
    // to 3 per thread.
    const std::size_t want = ring == 5 * chunk ? 6 * chunk : std::max(4 * chunk, ring);
    EXPECT_EQ(engine.stats().staging_ring_bytes, (std::vector<std::size_t>{want, want}))
        << "ring asked " << ring;
    expect_pageable_job_lands_intact(engine, io, 4, (std::size_t{5} << 20) + 64,
                                     "ring " + std::to_string(ring));
  }
}

TEST(Staging, ThreadsAreChosenFromTheMachineUnlessSet) {
  asio::io_context io;
  auto c = host_config(2);
  c.staging_threads = 0;
  Engine chosen(io.get_executor(), c);
  const unsigned per_device = std::thread::hardware_concurrency() / 2;
  EXPECT_EQ(chosen.config().staging_threads, std::clamp(static_cast<int>(per_device), 4, 16));
  c.staging_threads = 5;
  Engine set(io.get_executor(), c);
  EXPECT_EQ(set.config().staging_threads, 5);
  c.staging_threads = 65;
  EXPECT_FALSE(Engine::create(io.get_executor(), c));
}

}  // namespace
}  // namespace stoker::engine
