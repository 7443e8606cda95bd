// The hpoly workload on every GPU: pinned producers, gpu::hpoly through the
// engine's pipelines, h equal to kernels::cpu::hpoly bit for bit.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <cstring>
#include <vector>

#include "engine/engine.hpp"
#include "engine/workloads/hpoly.hpp"
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
