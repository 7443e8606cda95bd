// The engine's behaviour on the host backend: what users rely on, in CI.
#include "engine/engine.hpp"

#include <gtest/gtest.h>
#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <span>
#include <stdexcept>
#include <thread>

#include "alloc/pinned_pool.hpp"
#include "alloc/pinned_vec.hpp"
#include "devices/pinned_buffer.hpp"
#include "engine/detail/nontemporal_copy.hpp"
#include "engine/workloads/synthetic.hpp"
#include "test/engine/engine_test_util.hpp"

namespace asio = boost::asio;

namespace stoker::engine {
namespace {

using test::expect_idle;
using test::expect_outputs_correct;
using test::host_config;
using test::run_job;

// Device work of the hand-built jobs below: the output is the input.
std::error_code copy_through(const KernelContext& c) {
  std::memcpy(c.outputs[0], c.inputs[0], c.input_bytes[0]);
  return std::error_code{};
}

Job synthetic(std::shared_ptr<workloads::SyntheticRun>& run, std::size_t partitions = 8,
              std::size_t bytes = 256 << 10, bool pageable = false, int priority = 0,
              std::string name = "synthetic") {
  workloads::SyntheticOptions o;
  o.partitions = partitions;
  o.input_bytes = bytes;
  o.rounds = 4;
  o.pageable = pageable;
  o.priority = priority;
  o.name = std::move(name);
  auto job = workloads::make_synthetic_job(o, run);
  EXPECT_TRUE(job) << job.error().what();
  return std::move(*job);
}

// The copy-bound measure of stoker run --registered: inputs generated and
// page-locked when the job is built, so the job takes pinned blocks only for
// its outputs' landing areas and runs no producer.
TEST(Engine, RegisteredSyntheticInputsAreCopiedInPlaceAndMatchTheCpu) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config());
  workloads::SyntheticOptions o;
  o.partitions = 6;
  o.input_bytes = 64 << 10;
  o.rounds = 4;
  o.registered_inputs = engine.devices().backend();
  std::shared_ptr<workloads::SyntheticRun> run;
  auto job = workloads::make_synthetic_job(o, run);
  ASSERT_TRUE(job) << job.error().what();
  ASSERT_EQ(run->input_registrations.size(), 6u);
  const long page = sysconf(_SC_PAGESIZE);
  for (const auto& part : job->partitions) {
    ASSERT_EQ(part.inputs.size(), 1u);
    EXPECT_EQ(part.inputs[0].kind, InputKind::registered);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(part.inputs[0].data) % page, 0u);
    EXPECT_FALSE(part.split_producer || part.producer);
  }
  std::shared_ptr<workloads::SyntheticRun> produced_run;
  const auto produced = synthetic(produced_run, 1, 64 << 10);
  EXPECT_EQ(Engine::pinned_bytes(job->partitions[0]) + alloc::PinnedPool::block_capacity(64 << 10),
            Engine::pinned_bytes(produced.partitions[0]))
      << "a registered input should take no pinned block";
  std::error_code ec;
  const auto report = run_job(engine, io, std::move(*job), ec);
  ASSERT_FALSE(ec) << report.error;
  for (const auto& p : report.parts) EXPECT_EQ(p.producer.ms, 0.0);
  expect_outputs_correct(*run);
  expect_idle(engine);

  o.pageable = true;
  std::shared_ptr<workloads::SyntheticRun> both;
  const auto refused = workloads::make_synthetic_job(o, both);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().what().find("pageable or registered"), std::string::npos)
      << refused.error().what();
}

// Outputs in registered caller memory: the D2H writes them in place, so
// the job takes no pinned bounce block for them, and they match the CPU.
TEST(Engine, RegisteredSyntheticOutputsLandInPlaceAndMatchTheCpu) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config());
  workloads::SyntheticOptions o;
  o.partitions = 5;
  o.input_bytes = 64 << 10;
  o.rounds = 4;
  o.registered_inputs = o.registered_outputs = engine.devices().backend();
  std::shared_ptr<workloads::SyntheticRun> run;
  auto job = workloads::make_synthetic_job(o, run);
  ASSERT_TRUE(job) << job.error().what();
  ASSERT_EQ(run->output_registrations.size(), 5u);
  const long page = sysconf(_SC_PAGESIZE);
  for (std::size_t p = 0; p < o.partitions; ++p) {
    const auto& out = job->partitions[p].outputs.at(0);
    EXPECT_TRUE(out.pinned) << "partition " << p;
    EXPECT_EQ(out.destination, reinterpret_cast<std::byte*>(run->outputs[p].data()));
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(out.destination) % page, 0u);
  }
  EXPECT_EQ(Engine::pinned_bytes(job->partitions[0]), 0u) << "no bounce block for the output";
  std::error_code ec;
  const auto report = run_job(engine, io, std::move(*job), ec);
  ASSERT_FALSE(ec) << report.error;
  expect_outputs_correct(*run);
  expect_idle(engine);
}

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

// Pageable inputs many staging chunks long, with a short last chunk, land
// intact whatever the number of staging threads: each thread claims chunks
// as it frees a buffer, so with several threads they are sent out of order
// and reuse every buffer many times; the outputs prove every chunk landed
// where it belongs.
TEST(Engine, PageableInputsStagedByAnyNumberOfThreadsLandIntact) {
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
TEST(Engine, StagingBufferIsRefilledOnlyAfterItsQueuedCopyHasRead) {
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
TEST(Engine, StagingPassesOfConsecutivePartitionsOverlap) {
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
TEST(Engine, StagingSpansStartAtThePassesFirstChunk) {
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

// Partitions of one large input copied directly (registered here; pinned
// or streamed alike) and one smaller pageable input, so each has a staging
// pass beside its direct copy. Outputs: the first
// bytes of the large input, so kernels cost nothing. `order` gets each
// partition's index as its kernel runs.
Job direct_and_staged_job(std::size_t parts, std::size_t big, std::size_t small,
                          std::vector<std::vector<std::byte>>& inputs,
                          std::vector<std::vector<std::byte>>& outputs,
                          std::vector<std::size_t>& order) {
  constexpr std::size_t kOut = 4096;
  Job job;
  job.name = "direct+staged";
  for (std::size_t i = 0; i < parts; ++i) {
    inputs.emplace_back(big, std::byte(i + 1));
    inputs.emplace_back(small, std::byte(0x80 + i));
    outputs.emplace_back(kOut);
  }
  for (std::size_t i = 0; i < parts; ++i) {
    Partition p;
    p.inputs.push_back(Input::registered(inputs[2 * i]));
    p.inputs.push_back(Input::pageable(inputs[2 * i + 1]));
    p.outputs.push_back(Output::to(outputs[i]));
    p.work.cpu = [i, &order](const KernelContext& c) {
      order.push_back(i);  // the compute stream runs one kernel at a time
      std::memcpy(c.outputs[0], c.inputs[0], c.output_bytes[0]);
      return std::error_code{};
    };
    p.work.gpu = p.work.cpu;
    job.partitions.push_back(std::move(p));
  }
  return job;
}

// A partition's kernels wait for its own copies only. The feeder used to
// send partition N+1's direct copies while N's staging pass was still
// running, ahead of N's input event, so N's kernels started only after
// N+1's whole input had been copied (the review of 2395b99 measured 83 ms
// of such waiting in a traced run). Even partitions here copy little and
// stage a little; odd ones copy 24 MiB directly on a slowed device: an
// even partition's kernels must start before the odd one's copy is half
// done, not after it.
TEST(Engine, KernelsDoNotWaitForTheNextPartitionsCopies) {
  asio::io_context io;
  auto c = host_config(1, {4.0});  // copies 4x slower than memcpy
  // One staging thread with two buffers: an 8-chunk pass waits for copies
  // queued ahead of its third chunk, so it ends after the feeder could
  // have moved on to the next partition.
  c.staging_threads = 1;
  Engine engine(io.get_executor(), c);
  constexpr std::size_t kParts = 8;
  std::vector<std::vector<std::byte>> inputs, outputs;
  std::vector<std::size_t> order;
  auto job = direct_and_staged_job(kParts, std::size_t{1} << 20, std::size_t{512} << 10, inputs,
                                   outputs, order);
  for (std::size_t i = 1; i < kParts; i += 2) {
    inputs[2 * i].assign(std::size_t{24} << 20, std::byte(i + 1));
    inputs[2 * i + 1].resize(1000);
    job.partitions[i].inputs[0] = Input::registered(inputs[2 * i]);
    job.partitions[i].inputs[1] = Input::pageable(inputs[2 * i + 1]);
  }
  std::error_code ec;
  const auto report = run_job(engine, io, std::move(job), ec);
  ASSERT_FALSE(ec) << report.error;
  for (std::size_t i = 0; i < kParts; ++i)
    EXPECT_EQ(outputs[i][4095], std::byte(i + 1)) << "partition " << i;
  ASSERT_EQ(report.parts.size(), kParts);
  for (std::size_t i = 0; i < kParts; i += 2) {
    const auto& next = report.parts[i + 1].h2d;
    EXPECT_LT(report.parts[i].kernels.start_ms, next.start_ms + next.ms / 2)
        << "partition " << i << "'s kernels waited for partition " << i + 1 << "'s copies";
  }
  expect_idle(engine);
}

// Kernels run in the order the partitions were dispatched, whatever order
// their staging passes end in: a long pass followed by a short one must
// not let the short one's kernels (and its input events) go first.
TEST(Engine, KernelsRunInDispatchOrderWhenShortPassesEndFirst) {
  asio::io_context io;
  auto c = host_config(1);
  c.staging_threads = 4;
  Engine engine(io.get_executor(), c);
  constexpr std::size_t kParts = 8;
  std::vector<std::vector<std::byte>> inputs, outputs;
  std::vector<std::size_t> order;
  auto job = direct_and_staged_job(kParts, 4096, 1000, inputs, outputs, order);
  // Every input staged, so that no direct copy makes the feeder wait for
  // the launch before; even partitions stage 6 MiB more (96 chunks).
  for (std::size_t i = 0; i < kParts; ++i) {
    if (i % 2 == 0) inputs[2 * i + 1].assign(std::size_t{6} << 20, std::byte(0x80 + i));
    job.partitions[i].inputs[0] = Input::pageable(inputs[2 * i]);
    job.partitions[i].inputs[1] = Input::pageable(inputs[2 * i + 1]);
  }
  std::error_code ec;
  const auto report = run_job(engine, io, std::move(job), ec);
  ASSERT_FALSE(ec) << report.error;
  std::vector<std::size_t> dispatched;
  for (std::size_t i = 0; i < kParts; ++i) dispatched.push_back(i);
  EXPECT_EQ(order, dispatched);
  expect_idle(engine);
}

// A kernel that faults its device while later partitions' pageable inputs
// are being staged: the staging threads' waits and sends fail
// with the fault instead of hanging, and the job returns everything.
TEST(Engine, DeviceFaultMidStagingFailsTheJobAndReturnsEverything) {
  for (const int threads : {1, 4}) {
    asio::io_context io;
    auto c = host_config(1);
    c.staging_threads = threads;
    Engine engine(io.get_executor(), c);
    std::shared_ptr<workloads::SyntheticRun> run;
    auto job = synthetic(run, 8, std::size_t{3} << 20, /*pageable=*/true);
    job.partitions[1].work.cpu = [](const KernelContext&) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      return make_error_code(Errc::kernel_failed);
    };
    std::error_code ec;
    const auto report = run_job(engine, io, std::move(job), ec);
    EXPECT_TRUE(ec == make_error_code(Errc::kernel_failed) ||
                ec == make_error_code(Errc::device_fault))
        << ec.message() << ": " << report.error << " (" << threads << " staging threads)";
    EXPECT_LT(report.partitions_done, 8u);
    expect_idle(engine);
  }
}

// Staging holds two chunks per staging thread unless staging_ring_bytes
// asks for more, rounded up to whole chunks per thread; inputs many times
// that long still land intact.
TEST(Engine, StagingIsTwoChunksPerThreadOrTheBytesAskedForInWholeChunksPerThread) {
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

TEST(Engine, StagingThreadsAreChosenFromTheMachineUnlessSet) {
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

// A job timed while the pool grows says so; one whose pool was reserved
// ahead reports no growth.
TEST(Engine, ReportSaysWhenThePinnedPoolGrewDuringTheJob) {
  {
    asio::io_context io;
    Engine cold(io.get_executor(), host_config());
    std::shared_ptr<workloads::SyntheticRun> run;
    std::error_code ec;
    const auto report = run_job(cold, io, synthetic(run), ec);
    ASSERT_FALSE(ec) << report.error;
    EXPECT_GT(report.pinned_slabs_grown, 0u);
    EXPECT_GT(report.pinned_bytes_grown, 0u);
    EXPECT_NE(summarize(report).find("note: the pinned pool pinned"), std::string::npos)
        << summarize(report);
  }
  asio::io_context io;
  Engine warm(io.get_executor(), host_config());
  std::shared_ptr<workloads::SyntheticRun> run;
  auto job = synthetic(run);
  ASSERT_FALSE(warm.reserve_pinned(job.partitions[0], warm.lookahead()));
  std::error_code ec;
  const auto report = run_job(warm, io, std::move(job), ec);
  ASSERT_FALSE(ec) << report.error;
  EXPECT_EQ(report.pinned_slabs_grown, 0u);
  EXPECT_EQ(summarize(report).find("pinned pool pinned"), std::string::npos) << summarize(report);
  expect_idle(warm);
}

TEST(Engine, CallbackHandlerRunsOnItsExecutorWithCorrectOutputs) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config());
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

// The model's stages of one partition, as the report prices them.
struct ModelStages {
  double in, kernels, out;
  double sum() const { return in + kernels + out; }
  double longest() const { return std::max({in, kernels, out}); }
};
ModelStages model_stages(const JobReport& r, const PartitionReport& p) {
  return {p.bytes_in / (r.h2d_gbps_model * 1e6), p.kernels.ms,
          p.bytes_out / (r.d2h_gbps_model * 1e6)};
}

TEST(Engine, ReportPricesFillAndDrainBesideTheModelBound) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config());
  std::shared_ptr<workloads::SyntheticRun> run;
  std::error_code ec;
  // A lone partition cannot overlap anything: its bound is all its stages.
  const JobReport one = test::run_job(engine, io, synthetic(run, 1), ec);
  ASSERT_FALSE(ec) << one.error;
  ASSERT_EQ(one.parts.size(), 1u);
  const ModelStages s = model_stages(one, one.parts[0]);
  EXPECT_GT(s.in, 0.0);
  EXPECT_GT(s.kernels, 0.0);
  EXPECT_NEAR(one.bound_ms, s.longest(), 1e-9);
  EXPECT_NEAR(one.bound_ms + one.fill_drain_ms, s.sum(), 1e-9);
  // Several: the fill and drain of the partition that hides the least.
  const JobReport many = test::run_job(engine, io, synthetic(run, 8), ec);
  ASSERT_FALSE(ec) << many.error;
  double worst = 0;
  for (const auto& p : many.parts) {
    const ModelStages m = model_stages(many, p);
    worst = std::max(worst, m.sum() - m.longest());
  }
  EXPECT_GT(worst, 0.0);
  EXPECT_NEAR(many.fill_drain_ms, worst, 1e-9);
  expect_idle(engine);
}

TEST(Engine, FutureCoroutineAndDeferredTokensWork) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config());
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

TEST(Engine, FutureCarriesErrorsAsSystemError) {
  asio::io_context io;
  auto guard = asio::make_work_guard(io);
  std::thread t([&] { io.run(); });
  Engine engine(io.get_executor(), host_config());
  Job empty;
  empty.name = "empty";
  auto fut = engine.async_submit(std::move(empty), asio::use_future);
  EXPECT_THROW(fut.get(), boost::system::system_error);
  guard.reset();
  t.join();
}

TEST(Engine, PageableInputsGoThroughStagingInChunks) {
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

TEST(Engine, PageableInputsRegisteredInPlaceSkipStagingWhenLargeEnough) {
  asio::io_context io;
  auto c = host_config();  // 64 KiB chunks: inputs of 128 KiB and up are registered
  c.pageable_inputs = PageableInputs::register_in_place;
  Engine engine(io.get_executor(), c);
  for (const std::size_t bytes : {std::size_t{1} << 20, std::size_t{64} << 10}) {
    std::shared_ptr<workloads::SyntheticRun> run;
    auto job = synthetic(run, 6, bytes, /*pageable=*/true);
    test::PageAlignedInputs inputs(job, *run);
    std::error_code ec;
    const JobReport report = test::run_job(engine, io, std::move(job), ec);
    ASSERT_FALSE(ec) << report.error;
    expect_outputs_correct(*run);
    for (const auto& p : report.parts) {
      // Staging time covers the registration too: some time either way.
      EXPECT_GT(p.staging.ms, 0.0);
      if (bytes >= 2 * c.staging_chunk_bytes)
        EXPECT_EQ(p.bytes_registered, bytes)
            << "a " << bytes << "-byte input was staged, not registered";
      else
        EXPECT_EQ(p.bytes_registered, 0u)
            << "a " << bytes << "-byte input shorter than two chunks was not staged";
      EXPECT_GT(p.h2d.ms, 0.0);
    }
    // The summary says how much went in place, where anything did.
    const bool said = summarize(report).find("registered in place") != std::string::npos;
    EXPECT_EQ(said, bytes >= 2 * c.staging_chunk_bytes) << summarize(report);
    // Unregistered with the job: the caller may register (or free) them now.
    for (std::size_t p = 0; p < report.parts.size(); ++p)
      EXPECT_TRUE(devices::register_host(devices::Backend::host, inputs.of(p, bytes).data(), bytes))
          << "partition " << p << "'s input is still registered after the job";
  }
  expect_idle(engine);
}

TEST(Engine, PageableInputThatCannotBeRegisteredIsStagedInstead) {
  asio::io_context io;
  auto c = host_config(1);
  c.pageable_inputs = PageableInputs::register_in_place;
  Engine engine(io.get_executor(), c);
  std::shared_ptr<workloads::SyntheticRun> run;
  constexpr std::size_t kBytes = 1 << 20;
  auto job = synthetic(run, 3, kBytes, /*pageable=*/true);
  test::PageAlignedInputs inputs(job, *run);
  // The caller registered partition 0's input already: the engine's own
  // registration is refused, as CUDA refuses it, and that input is staged.
  auto reg = devices::register_host(devices::Backend::host, inputs.of(0, kBytes).data(), kBytes);
  ASSERT_TRUE(reg) << reg.error().what();
  std::error_code ec;
  const JobReport report = test::run_job(engine, io, std::move(job), ec);
  ASSERT_FALSE(ec) << report.error;
  expect_outputs_correct(*run);
  ASSERT_EQ(report.parts.size(), 3u);
  EXPECT_EQ(report.parts[0].bytes_registered, 0u) << "the refused input was not staged";
  EXPECT_EQ(report.parts[1].bytes_registered, kBytes);
  EXPECT_EQ(report.parts[2].bytes_registered, kBytes);
  expect_idle(engine);
}

// Pageable inputs side by side in one allocation share their boundary
// pages. Each partition registers only the whole pages inside its input,
// so neighbours in flight at once (two devices, three slots each) do not
// refuse each other, and stages the partial pages at either end.
TEST(Engine, NeighbouringPageableInputsRegisterTheirInteriorsAndStageTheEdges) {
  asio::io_context io;
  auto c = host_config();  // 64 KiB chunks
  c.pageable_inputs = PageableInputs::register_in_place;
  Engine engine(io.get_executor(), c);
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  constexpr std::size_t kParts = 6, kBytes = (1 << 20) + 1000;  // not whole pages
  std::vector<std::byte> storage(kParts * kBytes + 2 * page);
  const auto addr = reinterpret_cast<std::uintptr_t>(storage.data());
  std::byte* base = storage.data() + (page - addr % page) % page + 100;  // starts mid-page
  for (std::size_t i = 0; i < kParts * kBytes; ++i) base[i] = static_cast<std::byte>(i * 131 + 7);
  std::vector<std::vector<std::byte>> out(kParts, std::vector<std::byte>(kBytes));
  Job job;
  job.name = "neighbours";
  for (std::size_t i = 0; i < kParts; ++i) {
    Partition p;
    p.inputs.push_back(Input::pageable(std::span<const std::byte>(base + i * kBytes, kBytes)));
    p.work.cpu = copy_through;
    p.outputs.push_back(Output::to(std::span(out[i])));
    job.partitions.push_back(std::move(p));
  }
  std::error_code ec;
  const JobReport report = run_job(engine, io, std::move(job), ec);
  ASSERT_FALSE(ec) << report.error;
  for (std::size_t i = 0; i < kParts; ++i) {
    const std::byte* in = base + i * kBytes;
    EXPECT_EQ(std::memcmp(out[i].data(), in, kBytes), 0) << "partition " << i;
    const auto a = reinterpret_cast<std::uintptr_t>(in);
    const std::size_t head = (page - a % page) % page;
    const std::size_t interior = (kBytes - head) / page * page;
    EXPECT_EQ(report.parts[i].bytes_registered, interior)
        << "partition " << i << " did not register the whole pages inside its input";
    EXPECT_GT(report.parts[i].staging.ms, 0.0);
    // Released with the job.
    EXPECT_TRUE(devices::register_host(devices::Backend::host, base + i * kBytes + head, interior))
        << "partition " << i << "'s pages are still registered after the job";
  }
  expect_idle(engine);
}

// Registrations the engine made end with their partitions on every path:
// a kernel that fails (its device faults) and a cancelled job.
TEST(Engine, RegisteredInPlaceInputsAreReleasedWhenAJobFailsOrIsCancelled) {
  constexpr std::size_t kBytes = 1 << 20;
  auto expect_all_released = [](const test::PageAlignedInputs& inputs, std::size_t n) {
    for (std::size_t p = 0; p < n; ++p)
      EXPECT_TRUE(
          devices::register_host(devices::Backend::host, inputs.of(p, kBytes).data(), kBytes))
          << "partition " << p << "'s input is still registered";
  };
  auto c = host_config(1);
  c.pageable_inputs = PageableInputs::register_in_place;
  {
    asio::io_context io;
    Engine engine(io.get_executor(), c);
    std::shared_ptr<workloads::SyntheticRun> run;
    auto job = synthetic(run, 6, kBytes, /*pageable=*/true);
    test::PageAlignedInputs inputs(job, *run);
    job.partitions[2].work.cpu = [](const KernelContext&) {
      return make_error_code(Errc::kernel_failed);
    };
    std::error_code ec;
    const JobReport report = test::run_job(engine, io, std::move(job), ec);
    EXPECT_EQ(ec, make_error_code(Errc::kernel_failed)) << report.error;
    expect_all_released(inputs, 6);
  }
  {
    asio::io_context io;
    Engine engine(io.get_executor(), c);
    std::shared_ptr<workloads::SyntheticRun> run;
    constexpr std::size_t kParts = 60;  // far more than run in the 10 ms before the cancellation
    auto job = synthetic(run, kParts, kBytes, /*pageable=*/true);
    test::PageAlignedInputs inputs(job, *run);
    asio::cancellation_signal cancel;
    std::error_code result;
    JobReport report;
    engine.async_submit(std::move(job), asio::bind_cancellation_slot(
                                            cancel.slot(), [&](std::error_code ec, JobReport r) {
                                              result = ec;
                                              report = std::move(r);
                                            }));
    asio::steady_timer timer(io, std::chrono::milliseconds(10));
    timer.async_wait(
        [&](boost::system::error_code) { cancel.emit(asio::cancellation_type::terminal); });
    io.run();
    EXPECT_EQ(result, operation_aborted());
    EXPECT_LT(report.partitions_done, kParts);
    expect_all_released(inputs, kParts);
    expect_idle(engine);
  }
}

TEST(Engine, PinnedVecAndRegisteredInputsAreCopiedDirectlyAndBlocksComeBack) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config());
  alloc::MemoryBudget budget(64 << 20, "producers");
  alloc::PinnedPool pool(devices::Backend::host, budget);
  std::shared_ptr<workloads::SyntheticRun> run;
  auto job = synthetic(run, 3, 256 << 10);
  // Partition 0: a producer's PinnedVec, moved into the engine.
  alloc::PinnedVec<std::uint32_t> vec(pool, (256 << 10) / 4);
  workloads::synthetic_fill(run->options.seed, 0, vec.span());
  job.partitions[0].inputs[0] = Input::pinned(std::move(vec));
  job.partitions[0].split_producer = nullptr;
  EXPECT_EQ(pool.stats().blocks_in_use, 1u);
  // Partition 1: caller memory registered for DMA.
  std::vector<std::uint32_t> mine((256 << 10) / 4);
  workloads::synthetic_fill(run->options.seed, 1, mine);
  auto reg = devices::register_host(devices::Backend::host, mine.data(), mine.size() * 4);
  ASSERT_TRUE(reg);
  job.partitions[1].inputs[0] = Input::registered(std::as_bytes(std::span(mine)));
  job.partitions[1].split_producer = nullptr;
  std::error_code result;
  std::string message;
  engine.async_submit(std::move(job), [&](std::error_code ec, JobReport r) {
    result = ec;
    message = r.error;
  });
  io.run();
  ASSERT_FALSE(result) << message;
  expect_outputs_correct(*run);
  EXPECT_EQ(pool.stats().blocks_in_use, 0u) << "the PinnedVec's block went back to its pool";
  EXPECT_EQ(budget.in_use(), 0u);
}

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
TEST(Engine, SplitProducerSharesRunOnceEachAndFillTheWholeInput) {
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
TEST(Engine, ProducerSharesStartInPartitionOrder) {
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

// A large pageable output is copied from its bounce block in pieces on
// several workers; the check sees all of it.
TEST(Engine, LargePageableOutputArrivesWholeBeforeTheCheck) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config(1));
  constexpr std::size_t kWords = (40u << 20) / 4;
  std::vector<std::uint32_t> out(kWords);
  Job job;
  job.name = "big-output";
  Partition p;
  p.inputs.push_back(Input::produced(kWords * 4));
  p.split_producer = [](std::span<const std::span<std::byte>> spans, ProducerTask t) {
    auto* w = reinterpret_cast<std::uint32_t*>(spans[0].data());
    const auto [b, e] = t.range(kWords);
    for (std::size_t i = b; i < e; ++i) w[i] = static_cast<std::uint32_t>(i ^ 0x5a5a5a5au);
    return std::error_code{};
  };
  p.work.cpu = copy_through;
  p.outputs.push_back(Output::to(std::as_writable_bytes(std::span(out))));
  job.partitions.push_back(std::move(p));
  std::size_t mismatches_seen_by_check = kWords;
  job.verify = [&](const Partition&, std::size_t) {
    std::size_t bad = 0;
    for (std::size_t i = 0; i < kWords; ++i)
      bad += out[i] != static_cast<std::uint32_t>(i ^ 0x5a5a5a5au);
    mismatches_seen_by_check = bad;
    return std::error_code{};
  };
  std::error_code result = make_error_code(Errc::cancelled);
  engine.async_submit(std::move(job), [&](std::error_code ec, JobReport) { result = ec; });
  io.run();
  EXPECT_FALSE(result) << result.message();
  EXPECT_EQ(mismatches_seen_by_check, 0u) << "the check ran before the output had landed";
  expect_idle(engine);
}

TEST(Engine, FailingProducerShareFailsTheJobAndReturnsEverything) {
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

// A job's callables are the caller's code: one that throws fails its own
// job with Errc::callable_threw and the exception's text, like an error
// it returned, instead of ending the process from an engine thread. The
// engine gives back everything, and takes the next job. A throwing CPU
// kernel faults its emulated device, as a returned error does, so that case
// runs last on a device of its own.
TEST(Engine, ThrowingCallablesFailTheirJobWithTheExceptionsText) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config(2));
  const auto throws = [](const char* what) { return std::runtime_error(what); };
  struct Case {
    const char* name;
    std::function<void(Job&)> arm;
    std::string expect;  // in the job's error
  };
  const std::vector<Case> cases = {
      {"split producer",
       [&](Job& j) {
         j.partitions[1].split_producer = [&](std::span<const std::span<std::byte>>,
                                              ProducerTask t) -> std::error_code {
           if (t.index == 1) throw throws("witness missing");
           return {};
         };
         j.partitions[1].producer_tasks = 3;
       },
       "partition 1: producer threw: witness missing"},
      {"plain producer",
       [&](Job& j) {
         j.partitions[2].split_producer = nullptr;
         j.partitions[2].share_align = 0;  // a plain producer is never streamed
         j.partitions[2].producer = [](std::span<const std::span<std::byte>>) -> std::error_code {
           throw 42;  // not a std::exception
         };
       },
       "partition 2: producer threw: an exception not derived from std::exception"},
      {"verify",
       [&](Job& j) {
         j.verify = [&](const Partition&, std::size_t i) -> std::error_code {
           if (i == 3) throw throws("checksum table gone");
           return {};
         };
       },
       "partition 3: its verify threw: checksum table gone"},
      {"validate",
       [&](Job& j) {
         j.validate = [&](const Partition&, std::size_t i) -> Error {
           if (i == 0) throw throws("cannot read the circuit");
           return {};
         };
       },
       "its validate threw: cannot read the circuit"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    std::shared_ptr<workloads::SyntheticRun> run;
    auto job = synthetic(run, 4, 64 << 10);
    c.arm(job);
    std::error_code ec;
    const auto report = run_job(engine, io, std::move(job), ec);
    EXPECT_EQ(ec, make_error_code(Errc::callable_threw)) << ec.message();
    EXPECT_NE(report.error.find(c.expect), std::string::npos) << report.error;
    expect_idle(engine);
  }
  // The engine still runs jobs, on both devices.
  std::shared_ptr<workloads::SyntheticRun> good;
  std::error_code ec;
  auto report = run_job(engine, io, synthetic(good, 8, 64 << 10), ec);
  ASSERT_FALSE(ec) << report.error;
  expect_outputs_correct(*good);

  std::shared_ptr<workloads::SyntheticRun> run;
  auto job = synthetic(run, 2, 64 << 10);
  job.devices = std::vector<int>{1};
  job.partitions[0].work.cpu = [&](const KernelContext&) -> std::error_code {
    throw throws("kernel bug");
  };
  report = run_job(engine, io, std::move(job), ec);
  EXPECT_EQ(ec, make_error_code(Errc::callable_threw)) << report.error;
  EXPECT_NE(report.error.find("partition's CPU kernels threw: kernel bug"), std::string::npos)
      << report.error;
  expect_idle(engine);
}

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
TEST(Engine, StreamedSharesCrossWhileLaterSharesAreStillProduced) {
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
TEST(Engine, StreamedProducerFailureFailsTheJobAndReturnsEverything) {
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
TEST(Engine, CancellingAStreamedPartitionMidProductionAbortsAndReturnsEverything) {
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

TEST(Engine, StreamAlignWithAPlainProducerIsRejected) {
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

// pinned_bytes is what the budget must hold for the partition: a budget of
// exactly that admits it, one byte less refuses it by name.
TEST(Engine, PinnedBytesIsWhatAPartitionTakesFromTheHostBudget) {
  constexpr std::size_t kIn = (3u << 20) + 100, kOut = 1u << 20;
  std::vector<std::byte> pageable_out(kOut), pinned_out(kOut);
  const auto make = [&] {
    Partition p;
    p.inputs.push_back(Input::produced(kIn));
    p.producer = [](std::span<const std::span<std::byte>> in) {
      std::memset(in[0].data(), 7, in[0].size());
      return std::error_code{};
    };
    p.work.cpu = [](const KernelContext& c) {
      for (std::size_t o = 0; o < c.outputs.size(); ++o)
        std::memset(c.outputs[o], 9, c.output_bytes[o]);
      return std::error_code{};
    };
    p.outputs.push_back(Output::to(std::span(pageable_out)));
    p.outputs.push_back(Output::to(std::span(pinned_out), /*is_pinned=*/true));
    return p;
  };
  const std::size_t want =
      alloc::PinnedPool::block_capacity(kIn) + alloc::PinnedPool::block_capacity(kOut);
  ASSERT_EQ(Engine::pinned_bytes(make()), want);
  for (const std::size_t budget : {want, want - 1}) {
    asio::io_context io;
    auto c = host_config(1);
    c.host_budget_bytes = budget;
    Engine engine(io.get_executor(), c);
    Job job;
    job.name = "budget-" + std::to_string(budget);
    job.partitions.push_back(make());
    std::error_code ec;
    const auto report = run_job(engine, io, std::move(job), ec);
    if (budget == want) {
      EXPECT_FALSE(ec) << report.error;
      EXPECT_EQ(pageable_out, std::vector<std::byte>(kOut, std::byte{9}));
    } else {
      EXPECT_EQ(ec, make_error_code(Errc::invalid_argument));
      EXPECT_NE(report.error.find("needs " + std::to_string(want) + " bytes of pinned host memory"),
                std::string::npos)
          << report.error;
    }
    expect_idle(engine);
  }
}

// Pageable outputs come back through bounce blocks, split among workers,
// small ones by memcpy and large ones with non-temporal stores (whole aligned
// lines after a memcpy head): every byte lands, at any size and alignment
// of the destination, and none beside it is touched.
TEST(Engine, PageableOutputsArriveWholeAtAnySizeAndAlignment) {
  constexpr std::size_t kSizes[] = {1, 100, (1u << 20) + 3, (2u << 20) + 13, (19u << 20) + 7};
  constexpr std::size_t kShifts[] = {0, 1, 16, 63};  // from a 64-byte line
  constexpr std::size_t kGuard = 64;                 // bytes each side of a destination
  constexpr std::byte kGuardByte{0xa5};
  const auto pattern = [](std::size_t o, std::size_t i) {
    return static_cast<std::byte>((i * 131 + o * 7 + i / 4096) % 251);
  };
  RecordProperty("nontemporal_stores", detail::nontemporal_copy_prefetches() ? "yes" : "no (memcpy)");
  asio::io_context io;
  Engine engine(io.get_executor(), host_config(2));
  // One buffer per output: a guard, the destination at a line plus the
  // shift, a guard.
  std::vector<std::vector<std::byte>> storage;
  std::vector<std::span<std::byte>> dests;
  Job job;
  job.name = "bounce";
  for (const std::size_t size : kSizes)
    for (const std::size_t shift : kShifts) {
      auto& buf = storage.emplace_back(kGuard + 64 + shift + size + kGuard, kGuardByte);
      const auto line = (reinterpret_cast<std::uintptr_t>(buf.data()) + kGuard + 63) / 64 * 64;
      dests.push_back(std::span(buf).subspan(line - reinterpret_cast<std::uintptr_t>(buf.data()) +
                                                 shift,
                                             size));
      const std::size_t o = dests.size() - 1;
      Partition p;
      p.inputs.push_back(Input::produced(64));
      p.producer = [](std::span<const std::span<std::byte>>) { return std::error_code{}; };
      p.work.cpu = [o, pattern](const KernelContext& c) {
        for (std::size_t i = 0; i < c.output_bytes[0]; ++i) c.outputs[0][i] = pattern(o, i);
        return std::error_code{};
      };
      p.outputs.push_back(Output::to(dests.back()));
      job.partitions.push_back(std::move(p));
    }
  std::error_code ec;
  const auto report = run_job(engine, io, std::move(job), ec);
  ASSERT_FALSE(ec) << report.error;
  const auto is_guard = [&](std::byte b) { return b == kGuardByte; };
  for (std::size_t o = 0; o < dests.size(); ++o) {
    const std::span<const std::byte> buf(storage[o]);
    const auto at = static_cast<std::size_t>(dests[o].data() - buf.data()), n = dests[o].size();
    const std::string what = "output " + std::to_string(o) + " (" + std::to_string(n) +
                             " bytes at " +
                             std::to_string(reinterpret_cast<std::uintptr_t>(dests[o].data()) % 64) +
                             " past a line)";
    EXPECT_TRUE(std::all_of(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(at), is_guard))
        << what << ": a byte before it was written";
    std::size_t first_wrong = n;
    for (std::size_t i = 0; i < n && first_wrong == n; ++i)
      if (dests[o][i] != pattern(o, i)) first_wrong = i;
    EXPECT_EQ(first_wrong, n) << what << ": byte " << first_wrong << " differs";
    EXPECT_TRUE(std::all_of(buf.begin() + static_cast<std::ptrdiff_t>(at + n), buf.end(), is_guard))
        << what << ": a byte past its end was written";
  }
  expect_idle(engine);
}

// A producer's own error is news whatever its code: one that returns
// Errc::cancelled (or operation_aborted) while nobody cancelled the job fails
// it. (Such codes were once taken for the engine's own cancellation and the
// partition dropped silently, so the job never completed.)
TEST(Engine, ProducerReturningACancelledCodeFailsItsJobInsteadOfHanging) {
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

// reserve_pinned(lookahead) is enough for any job: the pool never pins on
// the hot path (cudaHostAlloc costs 0.5 s/GiB and stalls the process's CUDA).
TEST(Engine, PoolDoesNotGrowMidJobAfterReservingTheLookahead) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config(2));
  std::shared_ptr<workloads::SyntheticRun> run;
  auto job = synthetic(run, 3 * engine.lookahead() + 1, 64 << 10);
  ASSERT_FALSE(engine.reserve_pinned(job.partitions[0], engine.lookahead()));
  const auto warm = engine.stats();
  std::error_code result = make_error_code(Errc::cancelled);
  engine.async_submit(std::move(job), [&](std::error_code ec, JobReport) { result = ec; });
  io.run();
  EXPECT_FALSE(result) << result.message();
  EXPECT_EQ(engine.stats().pinned_slab_allocations, warm.pinned_slab_allocations)
      << "the pool grew during the job";
  expect_outputs_correct(*run);
  expect_idle(engine);
}

// Streamed partitions whose shares all end while their slot's feeder is
// already copying: each must run once, with its own blocks. An earlier
// version told the feed from the workers, so a launch could end before the
// engine had heard of its producer's end, and the partition was queued
// again with its input blocks gone ("H2D copy of input 0: invalid
// argument", or a crash): this test failed on every run of that version.
TEST(Engine, StreamedPartitionsRunOnceWhateverEndsFirst) {
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

TEST(Engine, FasterDeviceTakesMorePartitions) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config(2, {1.0, 8.0}));
  std::shared_ptr<workloads::SyntheticRun> run;
  JobReport report;
  workloads::SyntheticOptions o;
  o.partitions = 24;
  o.input_bytes = 512 << 10;
  o.rounds = 64;  // make the kernel dominate so the slowdown shows
  auto job = workloads::make_synthetic_job(o, run);
  ASSERT_TRUE(job);
  engine.async_submit(std::move(*job), [&](std::error_code ec, JobReport r) {
    EXPECT_FALSE(ec) << r.error;
    report = std::move(r);
  });
  io.run();
  std::size_t on[2] = {0, 0};
  for (const auto& p : report.parts) ++on[p.device];
  EXPECT_GT(on[0], on[1]) << "fast device " << on[0] << ", slow device " << on[1];
  EXPECT_GT(on[1], 0u) << "the slow device should still pull work";
  expect_outputs_correct(*run);
}

TEST(Engine, AffinityKeepsPartitionsOnChosenDevice) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config(2));
  std::shared_ptr<workloads::SyntheticRun> run;
  auto job = synthetic(run, 6);
  job.devices = std::vector<int>{1};
  engine.async_submit(std::move(job), [&](std::error_code ec, JobReport r) {
    EXPECT_FALSE(ec) << r.error;
    for (const auto& p : r.parts) EXPECT_EQ(p.device, 1);
  });
  io.run();
  expect_outputs_correct(*run);
}

TEST(Engine, HigherPriorityJobOvertakesQueuedPartitions) {
  asio::io_context io;
  auto c = host_config(1);
  c.worker_threads = 2;
  Engine engine(io.get_executor(), c);
  std::shared_ptr<workloads::SyntheticRun> low_run, high_run;
  workloads::SyntheticOptions o;
  o.partitions = 30;
  o.input_bytes = 256 << 10;
  o.rounds = 200;
  o.name = "low";
  auto low = workloads::make_synthetic_job(o, low_run);
  o.partitions = 2;
  o.priority = 10;
  o.name = "high";
  auto high = workloads::make_synthetic_job(o, high_run);
  std::vector<std::string> order;
  engine.async_submit(std::move(*low),
                      [&](std::error_code, JobReport r) { order.push_back(r.name); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  engine.async_submit(std::move(*high),
                      [&](std::error_code, JobReport r) { order.push_back(r.name); });
  io.run();
  ASSERT_EQ(order.size(), 2u);
  EXPECT_EQ(order[0], "high");
}

struct BadCase {
  const char* name;
  std::function<void(Job&)> spoil;
  const char* message;
};

TEST(Engine, BadInputIsRejectedBeforeAnyWorkWithANamedError) {
  asio::io_context io;
  auto cfg = host_config(2);
  cfg.device_budget_bytes = 8 << 20;
  Engine engine(io.get_executor(), cfg);
  std::vector<std::byte> small(64);
  const BadCase cases[] = {
      {"empty job", [](Job& j) { j.partitions.clear(); }, "has no partitions"},
      {"zero input", [](Job& j) { j.partitions[1].inputs[0].bytes = 0; },
       "partition 1: input 0 is empty"},
      {"zero output", [](Job& j) { j.partitions[2].outputs[0].bytes = 0; },
       "partition 2: output 0 is empty"},
      {"no producer", [](Job& j) { j.partitions[0].split_producer = nullptr; },
       "produced inputs but no producer"},
      {"two producers",
       [](Job& j) {
         j.partitions[1].producer = [](std::span<const std::span<std::byte>>) {
           return std::error_code{};
         };
       },
       "partition 1 has both a producer and a split producer"},
      {"no cpu kernel", [](Job& j) { j.partitions[3].work.cpu = nullptr; }, "no CPU version"},
      {"bad device",
       [](Job& j) {
         j.devices = std::vector<int>{0, 7};
       },
       "device 7 does not exist"},
      {"too big", [](Job& j) { j.partitions[0].scratch_bytes = 64 << 20; }, "of device memory"},
      {"custom",
       [](Job& j) {
         j.validate = [](const Partition&, std::size_t i) {
           return i == 2 ? Error{Errc::invalid_argument, "a and b differ in size"} : Error{};
         };
       },
       "partition 2: a and b differ in size"},
  };
  int done = 0;
  for (const auto& bad : cases) {
    std::shared_ptr<workloads::SyntheticRun> run;
    auto job = synthetic(run, 4);
    bad.spoil(job);
    engine.async_submit(
        std::move(job), [&, name = bad.name, msg = bad.message](std::error_code ec, JobReport r) {
          ++done;
          EXPECT_EQ(ec, make_error_code(Errc::invalid_argument)) << name;
          EXPECT_NE(r.error.find(msg), std::string::npos) << name << ": " << r.error;
          EXPECT_EQ(r.partitions_done, 0u) << name;
        });
  }
  io.run();
  EXPECT_EQ(done, static_cast<int>(std::size(cases)));
  expect_idle(engine);
}

TEST(Engine, CancellationDropsQueuedPartitionsAndCompletesAborted) {
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

// A fresh engine's pool has no free block: each partition's blocks are
// pinned on a worker after the budget granted them, a window in which
// the budget wait's cancellation handler is gone. Cancelling or destroying
// the engine at any moment around it (a spread of delays from the submit)
// completes the job once and gives back every byte and block.
TEST(Engine, CancellingOrDestroyingWhileBlocksArePinnedReturnsEverything) {
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

// A job held to device 0 whose partition `failing` has a kernel that fails
// (which faults the emulated device, as a faulting kernel does a GPU).
Job kernel_fails_on_device_0(std::shared_ptr<workloads::SyntheticRun>& run, std::size_t partitions,
                             std::size_t failing) {
  auto job = synthetic(run, partitions);
  job.devices = std::vector<int>{0};
  job.partitions[failing].work.cpu = [](const KernelContext&) {
    return make_error_code(Errc::kernel_failed);
  };
  return job;
}

TEST(Engine, FaultingKernelFailsItsJobAndOtherDevicesCarryOn) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config(2));
  std::shared_ptr<workloads::SyntheticRun> run, run2;
  auto bad = kernel_fails_on_device_0(run, 4, 1);
  std::error_code bad_result;
  std::string bad_message;
  engine.async_submit(std::move(bad), [&](std::error_code ec, JobReport r) {
    bad_result = ec;
    bad_message = r.error;
  });
  io.run();
  io.restart();
  EXPECT_EQ(bad_result, make_error_code(Errc::kernel_failed));
  EXPECT_NE(bad_message.find("device 0"), std::string::npos) << bad_message;
  EXPECT_FALSE(engine.stats().device_healthy[0]);

  std::error_code good_result;
  JobReport good;
  engine.async_submit(synthetic(run2, 4), [&](std::error_code ec, JobReport r) {
    good_result = ec;
    good = std::move(r);
  });
  io.run();
  EXPECT_FALSE(good_result) << good.error;
  for (const auto& p : good.parts) EXPECT_EQ(p.device, 1);
  expect_outputs_correct(*run2);

  // A job that may only run on the faulted device fails instead of hanging.
  io.restart();
  std::shared_ptr<workloads::SyntheticRun> run3;
  auto stuck = synthetic(run3, 2);
  stuck.devices = std::vector<int>{0};
  std::error_code stuck_result;
  engine.async_submit(std::move(stuck), [&](std::error_code ec, JobReport) { stuck_result = ec; });
  io.run();
  EXPECT_EQ(stuck_result, make_error_code(Errc::device_fault));
}

TEST(Engine, SmallHostBudgetMakesProducersWaitNotFail) {
  asio::io_context io;
  auto c = host_config(2);
  c.host_budget_bytes = 3 << 20;  // room for about two partitions in flight
  Engine engine(io.get_executor(), c);
  std::shared_ptr<workloads::SyntheticRun> run;
  std::error_code result;
  std::string message;
  engine.async_submit(synthetic(run, 16, 1 << 20), [&](std::error_code ec, JobReport r) {
    result = ec;
    message = r.error;
  });
  io.run();
  EXPECT_FALSE(result) << message;
  expect_outputs_correct(*run);
  expect_idle(engine);
}

// A partition's produced inputs go back to the pool once the device has read
// them, not when the partition ends: with room for one whole partition plus
// one more input block, the next partition's producer runs while this
// partition's kernel does.
TEST(Engine, ProducedInputsAreGivenBackOnceCopiedSoTheNextProducerOverlapsTheKernel) {
  asio::io_context io;
  auto c = host_config(1);
  constexpr std::size_t kBytes = 1 << 20;  // a size class of its own: blocks of exactly 1 MiB
  c.host_budget_bytes = 3 * kBytes;        // inputs and output of one, the inputs of another
  Engine engine(io.get_executor(), c);
  using Clock = std::chrono::steady_clock;
  constexpr auto kKernel = std::chrono::milliseconds(200);
  std::vector<Clock::time_point> produced_at(2), kernel_end(2);
  std::vector<std::vector<std::byte>> out(2, std::vector<std::byte>(kBytes));
  Job job;
  job.name = "early-release";
  for (std::size_t i = 0; i < 2; ++i) {
    Partition p;
    p.inputs.push_back(Input::produced(kBytes));
    p.producer = [&, i](std::span<const std::span<std::byte>> spans) {
      produced_at[i] = Clock::now();
      std::memset(spans[0].data(), static_cast<int>(i + 1), kBytes);
      return std::error_code{};
    };
    p.work.cpu = [&, i](const KernelContext& k) {
      std::this_thread::sleep_for(kKernel);
      kernel_end[i] = Clock::now();
      return copy_through(k);
    };
    p.outputs.push_back(Output::to(std::span(out[i])));  // pageable: a bounce block
    job.partitions.push_back(std::move(p));
  }
  std::error_code ec;
  run_job(engine, io, std::move(job), ec);
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_LT(produced_at[1], kernel_end[0])
      << "partition 1 was produced only "
      << std::chrono::duration<double, std::milli>(produced_at[1] - kernel_end[0]).count()
      << " ms after partition 0's kernel ended: its input block came back late";
  for (std::size_t i = 0; i < 2; ++i)
    EXPECT_EQ(out[i], std::vector<std::byte>(kBytes, static_cast<std::byte>(i + 1))) << i;
  expect_idle(engine);
}

// hpoly's shape (three produced inputs, one pageable output, all of one
// size) under a budget of a partition and three quarters: inputs go back
// early, so the mix of blocks in use shifts during the job, and what
// reserve_pinned pinned must still cover it without the pool growing.
TEST(Engine, ReservedBlocksCoverEarlyReturnsUnderABudgetOfPartialPartitions) {
  asio::io_context io;
  auto c = host_config(1);
  constexpr std::size_t kBytes = 1 << 20;
  c.host_budget_bytes = 7 * kBytes;
  Engine engine(io.get_executor(), c);
  constexpr std::size_t kParts = 8;
  std::vector<std::vector<std::byte>> out(kParts, std::vector<std::byte>(kBytes));
  Job job;
  job.name = "hpoly-shaped";
  for (std::size_t i = 0; i < kParts; ++i) {
    Partition p;
    for (int k = 0; k < 3; ++k) p.inputs.push_back(Input::produced(kBytes));
    p.producer = [i](std::span<const std::span<std::byte>> spans) {
      for (std::size_t k = 0; k < spans.size(); ++k)
        std::memset(spans[k].data(), static_cast<int>(i * 3 + k), spans[k].size());
      return std::error_code{};
    };
    p.work.cpu = [](const KernelContext& k) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      for (std::size_t b = 0; b < kBytes; ++b)
        k.outputs[0][b] = k.inputs[0][b] ^ k.inputs[1][b] ^ k.inputs[2][b];
      return std::error_code{};
    };
    p.outputs.push_back(Output::to(std::span(out[i])));
    job.partitions.push_back(std::move(p));
  }
  ASSERT_FALSE(engine.reserve_pinned(job.partitions[0], engine.lookahead()));
  const auto warm = engine.stats();
  std::error_code ec;
  run_job(engine, io, std::move(job), ec);
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(engine.stats().pinned_slab_allocations, warm.pinned_slab_allocations)
      << "the pool grew during the job";
  for (std::size_t i = 0; i < kParts; ++i) {
    const auto v = static_cast<std::byte>((i * 3) ^ (i * 3 + 1) ^ (i * 3 + 2));
    EXPECT_EQ(out[i], std::vector<std::byte>(kBytes, v)) << i;
  }
  expect_idle(engine);
}

TEST(Engine, ShutdownDrainsThenRefusesNewJobs) {
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

TEST(Engine, ManyConcurrentJobsAllCompleteExactlyOnce) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config(3));
  constexpr int kJobs = 20;
  std::vector<std::shared_ptr<workloads::SyntheticRun>> runs(kJobs);
  std::vector<int> calls(kJobs, 0);
  for (int i = 0; i < kJobs; ++i)
    engine.async_submit(synthetic(runs[i], 1 + i % 5, 64 << 10, i % 2 == 0, i % 3),
                        [&, i](std::error_code ec, JobReport r) {
                          EXPECT_FALSE(ec) << r.error;
                          ++calls[i];
                        });
  io.run();
  for (int i = 0; i < kJobs; ++i) {
    EXPECT_EQ(calls[i], 1) << i;
    expect_outputs_correct(*runs[i]);
  }
  expect_idle(engine);
}

// Ten thousand small jobs submitted at once, one to three partitions each,
// inputs produced into pool blocks or pageable through staging, mixed
// priorities and affinities: each handler runs once without error, the
// outputs are right, and afterwards the engine holds nothing (budgets,
// pool blocks, device memory, slots) and runs as many threads as before.
TEST(Engine, TenThousandSmallJobsCompleteOnceAndLeaveNothingHeld) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config(2));
  constexpr int kJobs = 10000;
  const auto threads_before = stoker::test::thread_count();
  std::vector<std::shared_ptr<workloads::SyntheticRun>> runs(kJobs);
  std::vector<int> calls(kJobs, 0);
  int failures = 0;
  for (int i = 0; i < kJobs; ++i) {
    auto job = synthetic(runs[i], 1 + i % 3, 4096 + 16 * (i % 7), i % 2 == 0, i % 4);
    if (i % 5 < 2) job.devices = std::vector<int>{i % 5};  // affinity for two in five
    engine.async_submit(std::move(job), [&, i](std::error_code ec, JobReport) {
      failures += ec ? 1 : 0;
      ++calls[i];
    });
  }
  io.run();
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(std::count(calls.begin(), calls.end(), 1), kJobs) << "every handler exactly once";
  for (int i = 0; i < kJobs; i += 97) expect_outputs_correct(*runs[i]);
  expect_idle(engine);
  EXPECT_EQ(stoker::test::thread_count(), threads_before);
}

TEST(Engine, DestroyingWithJobsInFlightCancelsAndReturns) {
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
TEST(Engine, CancelAfterTheEngineIsGoneIsHarmless) {
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

// The default host budget: half of physical memory, at least 1 GiB
// (Config::host_budget_bytes, docs/ENGINE.md).
TEST(Engine, HostBudgetDefaultsToHalfOfPhysicalMemory) {
  asio::io_context io;
  auto c = host_config(1);
  c.host_budget_bytes = 0;
  Engine engine(io.get_executor(), c);
  const auto physical = static_cast<std::size_t>(sysconf(_SC_PHYS_PAGES)) *
                        static_cast<std::size_t>(sysconf(_SC_PAGE_SIZE));
  EXPECT_EQ(engine.stats().host_budget_limit, std::max(physical / 2, std::size_t{1} << 30));
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

// The process's address space in bytes, from /proc (0 where there is none).
std::size_t address_space_bytes() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmSize:", 0) == 0) return std::stoull(line.substr(7)) * 1024;
  return 0;
}

// An engine whose device cannot be set up (here its staging buffers cannot
// be allocated: the child's address space is capped below one 1 GiB chunk)
// returns the error from create. It once waited forever in its destructor
// for threads create had not started yet.
TEST(EngineDeathTest, DeviceThatCannotBeSetUpFailsCreateInsteadOfHanging) {
  if (kSanitized)
    GTEST_SKIP() << "sanitizers reserve address space and abort on failed allocations";
  if (address_space_bytes() == 0) GTEST_SKIP() << "no /proc/self/status";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        alarm(30);                // a hang ends the child by SIGALRM, which fails the test
        mallopt(M_ARENA_MAX, 1);  // threads' malloc arenas reserve 64 MiB each
        rlimit cap{};
        cap.rlim_cur = cap.rlim_max = address_space_bytes() + (std::size_t{512} << 20);
        setrlimit(RLIMIT_AS, &cap);
        auto c = host_config(1);
        c.staging_chunk_bytes = std::size_t{1} << 30;
        c.staging_threads = 1;
        asio::io_context io;
        auto engine = Engine::create(io.get_executor(), c);
        if (engine) std::_Exit(1);
        std::fprintf(stderr, "%s\n", engine.error().what().c_str());
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(0), "device 0 .*staging buffer");
}

// A failed job that is then cancelled while its started partitions drain
// reports its failure, not operation_aborted: the failure is what its
// caller must read.
TEST(Engine, CancellingAFailedJobKeepsItsFailure) {
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

// A partition whose kernel fails faults its device and fails its job while
// a job running at the same time on the other device completes, correct.
TEST(Engine, FaultingKernelFailsItsJobWhileAConcurrentJobCompletes) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config(2));
  std::shared_ptr<workloads::SyntheticRun> bad_run, good_run;
  auto bad = kernel_fails_on_device_0(bad_run, 6, 2);
  workloads::SyntheticOptions slow;  // long enough to be running when the other job fails
  slow.partitions = 12;
  slow.input_bytes = 256 << 10;
  slow.rounds = 400;
  slow.name = "good";
  auto made = workloads::make_synthetic_job(slow, good_run);
  ASSERT_TRUE(made) << made.error().what();
  auto good = std::move(*made);
  good.devices = std::vector<int>{1};
  std::error_code bad_result, good_result{make_error_code(Errc::cancelled)};
  std::string bad_message;
  JobReport good_report;
  bool bad_first = false;
  engine.async_submit(std::move(good), [&](std::error_code ec, JobReport r) {
    good_result = ec;
    good_report = std::move(r);
  });
  engine.async_submit(std::move(bad), [&](std::error_code ec, JobReport r) {
    bad_result = ec;
    bad_message = r.error;
    bad_first = good_result == make_error_code(Errc::cancelled);
  });
  io.run();
  EXPECT_EQ(bad_result, make_error_code(Errc::kernel_failed));
  EXPECT_NE(bad_message.find("device 0"), std::string::npos) << bad_message;
  EXPECT_TRUE(bad_first) << "the failure must not wait for the other job";
  EXPECT_FALSE(good_result) << good_report.error;
  EXPECT_EQ(good_report.partitions_done, 12u);
  expect_outputs_correct(*good_run);
  expect_idle(engine);
}

// Cancelling mid-job, after partitions have run: started ones finish, the
// rest are dropped, and the budget, pool blocks, slots and device memory
// all come back.
TEST(Engine, CancellingMidJobAfterSomePartitionsRanReturnsEverything) {
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
  const auto free_after = engine.devices()[0].memory_info();
  ASSERT_TRUE(free_after);
  EXPECT_EQ(free_after->free, free_before->free) << "device memory still held";
}

// Jobs of equal priority run in arrival order: the first one's partitions
// go before the second's, so a short job submitted second does not overtake
// a long one. Among ready partitions, that is: a partition whose producer
// is still running is passed by a ready one of a later job (work goes on),
// so these inputs and outputs are registered and every partition is ready
// as soon as it is taken up, in rank order.
TEST(Engine, JobsOfEqualPriorityRunInArrivalOrder) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config(1));
  std::vector<std::string> order;
  std::shared_ptr<workloads::SyntheticRun> runs[2];
  for (int j = 0; j < 2; ++j) {
    workloads::SyntheticOptions o;
    o.partitions = j == 0 ? 12 : 2;
    o.input_bytes = 256 << 10;
    o.rounds = 4;
    o.registered_inputs = devices::Backend::host;
    o.registered_outputs = devices::Backend::host;
    o.name = j == 0 ? "first" : "second";
    auto job = workloads::make_synthetic_job(o, runs[j]);
    ASSERT_TRUE(job) << job.error().what();
    // Checked below instead: a check runs on a worker, and a preempted one
    // would let the second job complete first whatever the order on the
    // device. Without it partitions complete in the device's order.
    job->verify = nullptr;
    engine.async_submit(std::move(*job), [&](std::error_code ec, JobReport r) {
      EXPECT_FALSE(ec) << r.error;
      order.push_back(r.name);
    });
  }
  io.run();
  EXPECT_EQ(order, (std::vector<std::string>{"first", "second"}));
  expect_outputs_correct(*runs[0]);
  expect_outputs_correct(*runs[1]);
}

// Partitions of very different sizes keep two equal devices busy to the
// end: the large ones are the even partitions, which taking turns would all
// hand to device 0 (16 times the bytes of device 1). Pulling, a device busy
// with a large partition leaves the next ones to the other, and the devices
// finish together. (What each device takes follows its speed, which on a
// loaded CPU varies; when they finish is the property.)
TEST(Engine, UnevenPartitionsBalanceAcrossEqualDevices) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config(2));
  std::shared_ptr<workloads::SyntheticRun> run;
  workloads::SyntheticOptions o;
  o.partitions = 48;
  o.input_bytes = 1 << 20;
  o.rounds = 64;  // kernels dominate, as the balance should follow them
  auto job = workloads::make_synthetic_job(o, run);
  ASSERT_TRUE(job);
  for (std::size_t p = 1; p < job->partitions.size(); p += 2) {
    auto& part = job->partitions[p];
    part.inputs[0].bytes /= 16;
    part.outputs[0].bytes /= 16;
  }
  JobReport report;
  engine.async_submit(std::move(*job), [&](std::error_code ec, JobReport r) {
    EXPECT_FALSE(ec) << r.error;
    report = std::move(r);
  });
  io.run();
  ASSERT_EQ(report.parts.size(), 48u);
  double last_end[2] = {0, 0}, largest = 0;
  for (const auto& p : report.parts) {
    auto& end = last_end[p.device];
    end = std::max(end, p.kernels.start_ms + p.kernels.ms);
    largest = std::max(largest, p.kernels.ms);
  }
  // Pulling, the devices end within a pipeline (depth 3) of large
  // partitions of each other (measured: at most one); taking turns, device
  // 1 would idle for 90 % of the job.
  const double gap = std::abs(last_end[0] - last_end[1]);
  EXPECT_LE(gap, 3 * largest) << "device 0's kernels end at " << last_end[0]
                              << " ms, device 1's at " << last_end[1]
                              << " ms; a large partition's take " << largest << " ms";
  EXPECT_GT(report.bytes_in_on(0), 0u);
  EXPECT_GT(report.bytes_in_on(1), 0u);
}

}  // namespace
}  // namespace stoker::engine
