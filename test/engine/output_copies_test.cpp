// Outputs back to the caller: written in place into registered memory, or
// through a bounce block and copied out by the workers (memcpy, or
// non-temporal stores for large ones), whole before the job's check runs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/detail/nontemporal_copy.hpp"
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

// Outputs in registered caller memory: the D2H writes them in place, so
// the job takes no pinned bounce block for them, and they match the CPU.
TEST(OutputCopies, RegisteredSyntheticOutputsLandInPlaceAndMatchTheCpu) {
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

// A large pageable output is copied from its bounce block in pieces on
// several workers; the check sees all of it.
TEST(OutputCopies, LargePageableOutputArrivesWholeBeforeTheCheck) {
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

// Pageable outputs come back through bounce blocks, split among workers,
// small ones by memcpy and large ones with non-temporal stores (whole aligned
// lines after a memcpy head): every byte lands, at any size and alignment
// of the destination, and none beside it is touched.
TEST(OutputCopies, PageableOutputsArriveWholeAtAnySizeAndAlignment) {
  constexpr std::size_t kSizes[] = {1, 100, (1u << 20) + 3, (2u << 20) + 13, (19u << 20) + 7};
  constexpr std::size_t kShifts[] = {0, 1, 16, 63};  // from a 64-byte line
  constexpr std::size_t kGuard = 64;                 // bytes each side of a destination
  constexpr std::byte kGuardByte{0xa5};
  const auto pattern = [](std::size_t o, std::size_t i) {
    return static_cast<std::byte>((i * 131 + o * 7 + i / 4096) % 251);
  };
  RecordProperty("nontemporal_stores",
                 detail::nontemporal_copy_streams() ? "yes" : "no (memcpy)");
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
      dests.push_back(std::span(buf).subspan(
          line - reinterpret_cast<std::uintptr_t>(buf.data()) + shift, size));
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
    const std::string what =
        "output " + std::to_string(o) + " (" + std::to_string(n) + " bytes at " +
        std::to_string(reinterpret_cast<std::uintptr_t>(dests[o].data()) % 64) + " past a line)";
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

}  // namespace
}  // namespace stoker::engine
