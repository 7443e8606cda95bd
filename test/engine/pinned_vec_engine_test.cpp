// PinnedVec storage handed out by the engine: from its own pool, charged
// to its host budget while a producer fills it, given back when the
// partition that took it has been copied.
#include <gtest/gtest.h>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <optional>

#include "test/engine/engine_test_util.hpp"

namespace stoker::test {
namespace {

namespace asio = boost::asio;
using engine::Output;
using engine::Partition;

constexpr std::size_t kWords = std::size_t{1} << 20;  // 4 MiB

// One partition that copies a pinned input through to `out`.
Job copy_job(alloc::PinnedVec<std::uint32_t> in, std::vector<std::uint32_t>& out) {
  Job job;
  job.name = "pinned-vec";
  Partition part;
  out.assign(in.size(), 0);
  part.inputs.push_back(Input::pinned(std::move(in)));
  part.work.cpu = copy_through;
  part.work.gpu = nullptr;
  part.outputs.push_back(Output::to(std::as_writable_bytes(std::span(out))));
  job.partitions.push_back(std::move(part));
  return job;
}

TEST(EnginePinnedVec, IsChargedToTheHostBudgetUntilItsPartitionIsCopied) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config(1));
  auto vec = engine.make_pinned_vec<std::uint32_t>(kWords);
  ASSERT_TRUE(vec) << vec.error().what();
  EXPECT_EQ(vec->size(), kWords);
  EXPECT_EQ(vec->pool(), &engine.pinned_pool());
  EXPECT_EQ((*vec)[kWords - 1], 0u);  // value-initialised
  for (std::size_t i = 0; i < kWords; ++i) (*vec)[i] = static_cast<std::uint32_t>(i * 7 + 1);
  const auto held = engine.stats();
  EXPECT_GE(held.host_budget_in_use, kWords * 4);
  EXPECT_EQ(held.pinned_bytes_in_use, held.host_budget_in_use);

  std::vector<std::uint32_t> out;
  std::error_code ec;
  const auto report = run_job(engine, io, copy_job(std::move(*vec), out), ec);
  ASSERT_FALSE(ec) << report.error;
  for (std::size_t i = 0; i < kWords; i += 4099) ASSERT_EQ(out[i], i * 7 + 1) << i;
  expect_idle(engine);  // the vector's block came back with the partition
  EXPECT_TRUE(engine.stats().idle());
}

TEST(EnginePinnedVec, ComesBackWhenDestroyedUnsubmitted) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config(1));
  {
    auto vec = engine.make_pinned_vec<std::uint64_t>(1000);
    ASSERT_TRUE(vec) << vec.error().what();
    EXPECT_GT(engine.stats().host_budget_in_use, 0u);
  }
  expect_idle(engine);
}

TEST(EnginePinnedVec, FailsNamingTheSizeWhenTheBudgetCannotPay) {
  asio::io_context io;
  auto cfg = host_config(1);
  cfg.host_budget_bytes = std::size_t{8} << 20;
  Engine engine(io.get_executor(), cfg);
  auto first = engine.make_pinned_vec<std::byte>(std::size_t{6} << 20);
  ASSERT_TRUE(first) << first.error().what();
  auto second = engine.make_pinned_vec<std::byte>(std::size_t{6} << 20);
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().code, make_error_code(Errc::out_of_host_memory));
  EXPECT_NE(second.error().what().find("a PinnedVec of 6291456 bytes"), std::string::npos)
      << second.error().what();
}

// The asynchronous form waits for the budget: it completes once a vector
// that held it has gone back.
TEST(EnginePinnedVec, AsyncFormWaitsForTheBudget) {
  asio::io_context io;
  auto cfg = host_config(1);
  cfg.host_budget_bytes = std::size_t{8} << 20;
  Engine engine(io.get_executor(), cfg);
  std::optional<alloc::PinnedVec<std::byte>> first;
  first.emplace(engine.make_pinned_vec<std::byte>(std::size_t{6} << 20).value());
  bool done = false;
  std::size_t got = 0;
  engine.async_make_pinned_vec<std::byte>(
      std::size_t{6} << 20, [&](boost::system::error_code ec, alloc::PinnedVec<std::byte> v) {
        EXPECT_FALSE(ec) << ec.message();
        got = v.size();
        done = true;
      });
  io.poll();
  EXPECT_FALSE(done) << "completed while the budget was held";
  first.reset();
  io.run();
  EXPECT_TRUE(done);
  EXPECT_EQ(got, std::size_t{6} << 20);
  expect_idle(engine);
}

TEST(EnginePinnedVec, AsyncWaitIsCancelledThroughItsSlot) {
  asio::io_context io;
  auto cfg = host_config(1);
  cfg.host_budget_bytes = std::size_t{8} << 20;
  Engine engine(io.get_executor(), cfg);
  auto first = engine.make_pinned_vec<std::byte>(std::size_t{6} << 20).value();
  asio::cancellation_signal cancel;
  boost::system::error_code result;
  engine.async_make_pinned_vec<std::byte>(
      std::size_t{6} << 20, asio::bind_cancellation_slot(
                                cancel.slot(), [&](boost::system::error_code ec,
                                                   alloc::PinnedVec<std::byte>) { result = ec; }));
  io.poll();
  cancel.emit(asio::cancellation_type::terminal);
  io.run();
  EXPECT_EQ(std::error_code(result), engine::operation_aborted()) << result.message();
  EXPECT_EQ(engine.stats().host_budget_in_use, first.block().capacity());
}

}  // namespace
}  // namespace stoker::test
