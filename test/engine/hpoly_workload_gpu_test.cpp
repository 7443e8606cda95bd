// The hpoly workload on every GPU: pinned producers, gpu::hpoly through the
// engine's pipelines, h equal to kernels::cpu::hpoly bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <cstdio>
#include <cstring>
#include <vector>

#include "engine/engine.hpp"
#include "engine/workloads/hpoly_workload.hpp"
#include "kernels/hpoly.hpp"
#include "test/engine/engine_test_util.hpp"
#include "test/gpu_guard.hpp"

namespace asio = boost::asio;

namespace stoker::engine {
namespace {

using kernels::Fr;
using test::gpu_config;

void run_and_compare(Engine& engine, asio::io_context& io, unsigned log_n, std::size_t per_gpu,
                     bool prepare, bool registered_h = false) {
  if (prepare) {
    ASSERT_FALSE(workloads::hpoly_prepare(engine.devices(), log_n));
  }
  workloads::HpolyOptions o;
  o.log_n = log_n;
  o.partitions = per_gpu * engine.devices().size();
  o.seed = 1000 + log_n;
  if (registered_h) o.registered_outputs = devices::Backend::cuda;
  std::shared_ptr<workloads::HpolyRun> run;
  auto job = workloads::make_hpoly_job(o, run);
  ASSERT_TRUE(job) << job.error().what();
  ASSERT_EQ(run->h_registered(), registered_h);
  std::error_code ec;
  JobReport report;
  engine.async_submit(std::move(*job), [&](std::error_code e, JobReport r) {
    ec = e;
    report = std::move(r);
  });
  io.run();
  io.restart();
  ASSERT_FALSE(ec) << report.error;

  std::vector<int> used(engine.devices().size(), 0);
  for (const auto& p : report.parts) {
    ++used[static_cast<std::size_t>(p.device)];
    EXPECT_GT(p.kernels.ms, 0.0);
  }
  for (std::size_t d = 0; d < used.size(); ++d)
    EXPECT_GT(used[d], 0) << "GPU " << d << " unused at log_n " << log_n;

  const std::size_t n = std::size_t{1} << log_n;
  std::vector<Fr> a(n), b(n), c(n), h(n);
  for (std::size_t p = 0; p < o.partitions; ++p) {
    EXPECT_TRUE(run->checks[p].ok) << "partition " << p << " at log_n " << log_n;
    workloads::hpoly_fill(o.seed, p, 0, n, a.data(), b.data(), c.data());
    kernels::cpu::hpoly(h.data(), a.data(), b.data(), c.data(), log_n);
    const auto got = run->output(p);
    std::size_t first_diff = n;
    for (std::size_t i = 0; i < n && first_diff == n; ++i)
      if (got[i] != h[i]) first_diff = i;
    EXPECT_EQ(first_diff, n) << "partition " << p << " (GPU " << report.parts[p].device
                             << ") differs from the CPU at coefficient " << first_diff << ", log_n "
                             << log_n;
  }
  const auto s = engine.stats();
  EXPECT_EQ(s.busy_slots, 0u);
  EXPECT_EQ(s.pinned_bytes_in_use, 0u);
}

TEST(HpolyWorkloadGpu, EveryGpuMatchesCpuBitForBit) {
  STOKER_REQUIRE_GPU();
  asio::io_context io;
  Engine engine(io.get_executor(), gpu_config());
  run_and_compare(engine, io, 16, 4, /*prepare=*/true);
  run_and_compare(engine, io, 20, 2, /*prepare=*/true);
}

// h page-locked before the job: the D2H writes it in place, no bounce block.
TEST(HpolyWorkloadGpu, RegisteredHMatchesCpuBitForBit) {
  STOKER_REQUIRE_GPU();
  asio::io_context io;
  Engine engine(io.get_executor(), gpu_config());
  run_and_compare(engine, io, 20, 3, /*prepare=*/true, /*registered_h=*/true);
  run_and_compare(engine, io, 6, 4, /*prepare=*/true, /*registered_h=*/true);
}

// After hpoly_prepare, the first partition's launch neither builds tables nor
// loads kernels, so the feeder is free at once and partition 1's inputs
// cross while partition 0's kernels run. (Lazy loading of the last kernel in
// the launch once held the feeder until partition 0's kernels had finished.)
TEST(HpolyWorkloadGpu, PreparedFirstPartitionDoesNotHoldUpTheNextCopy) {
  STOKER_REQUIRE_GPU();
  const unsigned log_n = 23;  // kernels ~16 ms, a, b, c ~25 ms of H2D
  Config cfg = gpu_config();
  cfg.devices.cuda_ordinals = {0};
  asio::io_context io;
  Engine engine(io.get_executor(), cfg);
  ASSERT_FALSE(workloads::hpoly_prepare(engine.devices(), log_n));
  workloads::HpolyOptions o;
  o.log_n = log_n;
  o.partitions = 3;
  o.verify = false;
  o.registered_outputs = devices::Backend::cuda;
  std::shared_ptr<workloads::HpolyRun> run;
  auto job = workloads::make_hpoly_job(o, run);
  ASSERT_TRUE(job) << job.error().what();
  ASSERT_FALSE(engine.reserve_pinned(job->partitions[0], o.partitions));
  std::error_code ec;
  const JobReport r = test::run_job(engine, io, std::move(*job), ec);
  ASSERT_FALSE(ec) << r.error;
  const auto& p0 = r.parts[0];
  const auto& p1 = r.parts[1];
  const double k0_end = p0.kernels.start_ms + p0.kernels.ms;
  const double ready1 =
      std::max(p1.producer.start_ms + p1.producer.ms, p0.h2d.start_ms + p0.h2d.ms);
  std::printf(
      "partition 0: h2d %.1f+%.1f, kernels %.1f+%.1f; partition 1: produced by %.1f, h2d "
      "%.1f+%.1f\n",
      p0.h2d.start_ms, p0.h2d.ms, p0.kernels.start_ms, p0.kernels.ms,
      p1.producer.start_ms + p1.producer.ms, p1.h2d.start_ms, p1.h2d.ms);
  if (ready1 > k0_end - 0.5 * p0.kernels.ms)
    GTEST_SKIP() << "partition 1 was not ready early enough in partition 0's kernels to tell";
  EXPECT_LT(p1.h2d.start_ms, ready1 + 0.25 * p0.kernels.ms)
      << "partition 1's H2D waited for something other than its inputs and the copy stream";
  EXPECT_LT(p1.h2d.start_ms, k0_end) << "partition 1's H2D waited for partition 0's kernels";
}

TEST(HpolyWorkloadGpu, FirstPartitionBuildsTablesWhenNotPrepared) {
  STOKER_REQUIRE_GPU();
  asio::io_context io;
  Engine engine(io.get_executor(), gpu_config());
  // A size no other test in this process prepared: tables are built on the
  // engine's feeder thread during the first launch on each GPU.
  run_and_compare(engine, io, 18, 3, /*prepare=*/false);
}

}  // namespace
}  // namespace stoker::engine
