// Inputs the device reads where they lie, with no staging: registered by
// the caller, registered in place by the engine (whole pages only, released
// with the job on every path), and PinnedVec blocks moved into the job.
#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "alloc/memory_budget.hpp"
#include "alloc/pinned_pool.hpp"
#include "alloc/pinned_vec.hpp"
#include "devices/pinned_buffer.hpp"
#include "engine/engine.hpp"
#include "engine/workloads/synthetic.hpp"
#include "test/engine/engine_test_util.hpp"

namespace asio = boost::asio;

namespace stoker::engine {
namespace {

using test::copy_through;
using test::expect_idle;
using test::expect_outputs_correct;
using test::host_config;
using test::run_job;
using test::synthetic;

// The copy-bound measure of stoker run --registered: inputs generated and
// page-locked when the job is built, so the job takes pinned blocks only for
// its outputs' landing areas and runs no producer.
TEST(RegisteredInputs, RegisteredSyntheticInputsAreCopiedInPlaceAndMatchTheCpu) {
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

TEST(RegisteredInputs, PageableInputsRegisteredInPlaceSkipStagingWhenLargeEnough) {
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

TEST(RegisteredInputs, PageableInputThatCannotBeRegisteredIsStagedInstead) {
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
TEST(RegisteredInputs, NeighbouringPageableInputsRegisterTheirInteriorsAndStageTheEdges) {
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
TEST(RegisteredInputs, RegisteredInPlaceInputsAreReleasedWhenAJobFailsOrIsCancelled) {
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

TEST(RegisteredInputs, PinnedVecAndRegisteredInputsAreCopiedDirectlyAndBlocksComeBack) {
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

}  // namespace
}  // namespace stoker::engine
