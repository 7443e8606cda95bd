// The ntt_msm_h workload on every GPU: the toy SRS loaded once (checked on
// the GPU), hpoly and the MSM through the engine's pipelines, every point and
// h equal to hpoly then MSM on the CPU bit for bit, the SRS's device budget
// charged while resident and given back at eviction.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <cstring>
#include <vector>

#include "engine/engine.hpp"
#include "engine/workloads/hpoly_workload.hpp"
#include "engine/workloads/ntt_msm_h_workload.hpp"
#include "engine/workloads/toy_srs.hpp"
#include "kernels/hpoly.hpp"
#include "kernels/msm.hpp"
#include "test/engine/engine_test_util.hpp"
#include "test/gpu_guard.hpp"

namespace asio = boost::asio;

namespace stoker::engine {
namespace {

using kernels::Fr;
using kernels::G1Affine;
using test::gpu_config;

constexpr std::uint64_t kSrsSeed = 9;

TEST(NttMsmHGpu, EveryPartitionEqualsTheCpuReferenceBitForBit) {
  STOKER_REQUIRE_GPU();
  asio::io_context io;
  Engine engine(io.get_executor(), gpu_config());
  for (unsigned log_n : {5u, 12u, 16u}) {
    std::vector<G1Affine> points(workloads::toy_srs_points(log_n));
    ASSERT_FALSE(workloads::make_toy_srs(kSrsSeed, log_n, 0, points,
                                         engine.devices()[0].info().ordinal));
    auto srs = engine.load_srs(points);  // checked on the GPU
    ASSERT_TRUE(srs) << srs.error().what();
    ASSERT_FALSE(workloads::ntt_msm_h_prepare(engine.devices(), log_n));
    workloads::NttMsmHOptions o;
    o.log_n = log_n;
    o.partitions = 3 * engine.devices().size();
    o.seed = 77 + log_n;
    o.srs = *srs;
    o.devices = &engine.devices();
    o.verify = true;
    o.secret = workloads::toy_srs_secret(kSrsSeed);
    o.keep_h = true;
    std::shared_ptr<workloads::NttMsmHRun> run;
    auto job = workloads::make_ntt_msm_h_job(o, run);
    ASSERT_TRUE(job) << job.error().what();
    std::error_code ec;
    const auto report = test::run_job(engine, io, std::move(*job), ec);
    ASSERT_FALSE(ec) << report.error;
    EXPECT_TRUE(run->all_verified()) << "2^" << log_n;
    for (const auto& p : report.parts) {
      ASSERT_EQ(p.kernel_steps_ms.size(), 2u);
      EXPECT_GT(p.kernel_steps_ms[0], 0.0) << "hpoly";
      EXPECT_GT(p.kernel_steps_ms[1], 0.0) << "msm";
    }
    const std::size_t n = std::size_t{1} << log_n;
    std::vector<Fr> a(n), b(n), c(n), h(n);
    for (std::size_t p = 0; p < o.partitions; ++p) {
      workloads::hpoly_fill(o.seed, p, 0, n, a.data(), b.data(), c.data());
      kernels::cpu::hpoly(h.data(), a.data(), b.data(), c.data(), log_n);
      EXPECT_EQ(std::memcmp(run->h_of(p).data(), h.data(), n * sizeof(Fr)), 0)
          << "h of partition " << p << " at 2^" << log_n;
      const auto expect = kernels::to_affine(kernels::cpu::msm(points.data(), h.data(), n - 1));
      const auto got = run->point(p);
      EXPECT_TRUE(got.x == expect.x && got.y == expect.y)
          << "point of partition " << p << " at 2^" << log_n;
    }
    bool evicted = false;
    engine.async_evict_srs(*srs, [&](boost::system::error_code e) { evicted = !e; });
    io.run();
    io.restart();
    EXPECT_TRUE(evicted);
  }
  test::expect_idle(engine);
  for (auto b : engine.stats().device_resident_bytes) EXPECT_EQ(b, 0u);
}

TEST(NttMsmHGpu, ResidentPointsTakeTheirShareOfEachDeviceBudget) {
  STOKER_REQUIRE_GPU();
  asio::io_context io;
  Engine engine(io.get_executor(), gpu_config());
  const auto before = engine.devices()[0].memory_info();
  ASSERT_TRUE(before);
  std::vector<G1Affine> points(std::size_t{1} << 20, G1Affine::generator());
  auto srs = engine.load_srs(points);
  ASSERT_TRUE(srs) << srs.error().what();
  const auto s = engine.stats();
  for (auto b : s.device_resident_bytes) EXPECT_EQ(b, points.size() * sizeof(G1Affine));
  const auto during = engine.devices()[0].memory_info();
  ASSERT_TRUE(during);
  EXPECT_GE(before->free - during->free, points.size() * sizeof(G1Affine));
  bool evicted = false;
  engine.async_evict_srs(*srs, [&](boost::system::error_code e) { evicted = !e; });
  io.run();
  EXPECT_TRUE(evicted);
  const auto after = engine.devices()[0].memory_info();
  ASSERT_TRUE(after);
  EXPECT_LT(before->free - std::min(before->free, after->free), std::size_t{64} << 20)
      << "the points' memory went back to the device";
}

TEST(NttMsmHGpu, ABadPointIsFoundOnTheGpuAndNamedByIndex) {
  STOKER_REQUIRE_GPU();
  asio::io_context io;
  Engine engine(io.get_executor(), gpu_config());
  std::vector<G1Affine> points(5000, G1Affine::generator());
  points[4321].y = points[4321].y + kernels::Fq::one();
  auto srs = engine.load_srs(points);
  ASSERT_FALSE(srs);
  EXPECT_NE(srs.error().what().find("point 4321"), std::string::npos) << srs.error().what();
  for (auto b : engine.stats().device_resident_bytes) EXPECT_EQ(b, 0u);
}

}  // namespace
}  // namespace stoker::engine
