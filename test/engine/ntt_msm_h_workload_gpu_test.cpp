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
    ASSERT_FALSE(
        workloads::make_toy_srs(kSrsSeed, log_n, 0, points, engine.devices()[0].info().ordinal));
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

// What a load takes comes back at its eviction, on every device: the
// points, the check's scratch and, with several GPUs, NCCL's communicators,
// which live for the load's broadcast only and are destroyed before the
// eviction completes. The first broadcast of a process also loads NCCL's
// own code into each device's context, which stays until the process ends
// (190-380 MiB of an H200, measured): from the second load on, every byte
// comes back.
TEST(NttMsmHGpu, ResidentPointsTakeTheirShareOfEachDeviceBudget) {
  STOKER_REQUIRE_GPU();
  asio::io_context io;
  Engine engine(io.get_executor(), gpu_config());
  const std::size_t n_dev = engine.devices().size();
  const auto free_bytes = [&] {
    std::vector<std::size_t> f;
    for (std::size_t d = 0; d < n_dev; ++d) {
      const auto m = engine.devices()[d].memory_info();
      EXPECT_TRUE(m);
      f.push_back(m ? m->free : 0);
    }
    return f;
  };
  std::vector<G1Affine> points(std::size_t{1} << 20, G1Affine::generator());
  const std::size_t bytes = points.size() * sizeof(G1Affine);
  const auto load_and_evict = [&] {
    const auto before = free_bytes();
    auto srs = engine.load_srs(points);
    ASSERT_TRUE(srs) << srs.error().what();
    for (auto b : engine.stats().device_resident_bytes) EXPECT_EQ(b, bytes);
    const auto during = free_bytes();
    for (std::size_t d = 0; d < n_dev; ++d)
      EXPECT_GE(before[d] - during[d], bytes) << "device " << d;
    bool evicted = false;
    engine.async_evict_srs(*srs, [&](boost::system::error_code e) { evicted = !e; });
    io.run();
    io.restart();
    EXPECT_TRUE(evicted);
    for (auto b : engine.stats().device_resident_bytes) EXPECT_EQ(b, 0u);
  };
  const auto first_before = free_bytes();
  load_and_evict();
  const auto first_after = free_bytes();
  load_and_evict();
  const auto second_after = free_bytes();
  for (std::size_t d = 0; d < n_dev; ++d) {
    EXPECT_LT(first_before[d] - std::min(first_before[d], first_after[d]), std::size_t{512} << 20)
        << "device " << d << ": the first load left more than NCCL's code behind";
    EXPECT_LT(first_after[d] - std::min(first_after[d], second_after[d]), std::size_t{64} << 20)
        << "device " << d << ": the second load's memory did not all come back";
  }
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

// Each device checks a share of the points (the first while they upload,
// the others after the broadcast): a bad point in any share is found, and
// of two the smaller index is named.
TEST(NttMsmHGpu, BadPointsInEveryDevicesShareAreFound) {
  STOKER_REQUIRE_GPU();
  asio::io_context io;
  Engine engine(io.get_executor(), gpu_config());
  const std::size_t n = (std::size_t{3} << 21) + 7;  // several load chunks
  std::vector<G1Affine> points(n, G1Affine::generator());
  const std::size_t n_dev = engine.devices().size();
  for (std::size_t d = n_dev; d-- > 0;) {
    const std::size_t bad = n * d / n_dev + (n / n_dev) / 2;  // inside device d's share
    points[bad].y = points[bad].y + kernels::Fq::one();
    auto srs = engine.load_srs(points);
    ASSERT_FALSE(srs) << "device " << d;
    EXPECT_NE(srs.error().what().find("point " + std::to_string(bad) + " "), std::string::npos)
        << srs.error().what();
    for (auto b : engine.stats().device_resident_bytes) EXPECT_EQ(b, 0u);
  }
  for (auto& p : points) p = G1Affine::generator();
  auto srs = engine.load_srs(points);
  ASSERT_TRUE(srs) << srs.error().what();
  const auto& peers = engine.devices().topology().peer_access;
  EXPECT_EQ(srs->load_times().broadcast_used, n_dev > 1 && peers[0][1] && peers[1][0]);
}

}  // namespace
}  // namespace stoker::engine
