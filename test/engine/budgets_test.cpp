// The host budget and the pinned pool: a partition takes exactly
// Engine::pinned_bytes, a small budget makes producers wait instead of
// failing, inputs go back once copied, and a pool reserved for the
// lookahead never grows mid-job.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstring>
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

using test::copy_through;
using test::expect_idle;
using test::expect_outputs_correct;
using test::host_config;
using test::run_job;
using test::synthetic;

// pinned_bytes is what the budget must hold for the partition: a budget of
// exactly that admits it, one byte less refuses it by name.
TEST(Budgets, PinnedBytesIsWhatAPartitionTakesFromTheHostBudget) {
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

// The default host budget: half of physical memory, at least 1 GiB
// (Config::host_budget_bytes, docs/ENGINE.md).
TEST(Budgets, HostBudgetDefaultsToHalfOfPhysicalMemory) {
  asio::io_context io;
  auto c = host_config(1);
  c.host_budget_bytes = 0;
  Engine engine(io.get_executor(), c);
  const auto physical = static_cast<std::size_t>(sysconf(_SC_PHYS_PAGES)) *
                        static_cast<std::size_t>(sysconf(_SC_PAGE_SIZE));
  EXPECT_EQ(engine.stats().host_budget_limit, std::max(physical / 2, std::size_t{1} << 30));
}

TEST(Budgets, SmallHostBudgetMakesProducersWaitNotFail) {
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
TEST(Budgets, ProducedInputsAreGivenBackOnceCopiedSoTheNextProducerOverlapsTheKernel) {
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
TEST(Budgets, ReservedBlocksCoverEarlyReturnsUnderABudgetOfPartialPartitions) {
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

// reserve_pinned(lookahead) is enough for any job: the pool never pins on
// the hot path (cudaHostAlloc costs 0.5 s/GiB and stalls the process's CUDA).
TEST(Budgets, PoolDoesNotGrowMidJobAfterReservingTheLookahead) {
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

// A job timed while the pool grows says so; one whose pool was reserved
// ahead reports no growth.
TEST(Budgets, ReportSaysWhenThePinnedPoolGrewDuringTheJob) {
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

}  // namespace
}  // namespace stoker::engine
