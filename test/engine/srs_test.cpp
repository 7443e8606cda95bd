// Resident SRS points on the host backend: loaded onto every device and
// charged to each device budget, refused with both numbers when they do not
// fit, bad files named by index, eviction that waits for the jobs using the
// points and refuses new ones, and nothing left held on any path.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "engine/engine.hpp"
#include "engine/workloads/ntt_msm_h_workload.hpp"
#include "engine/workloads/toy_srs.hpp"
#include "kernels/g1_encoding.hpp"
#include "test/engine/engine_test_util.hpp"

namespace asio = boost::asio;

namespace stoker::engine {
namespace {

using kernels::G1Affine;
using test::host_config;
using test::run_job;

std::vector<G1Affine> toy_points(unsigned log_n, std::uint64_t seed = 3) {
  std::vector<G1Affine> pts(workloads::toy_srs_points(log_n));
  const auto e = workloads::make_toy_srs(seed, log_n, 0, pts);
  EXPECT_FALSE(e) << e.what();
  return pts;
}

std::string write_points(const std::vector<G1Affine>& pts, const std::string& name) {
  const auto path =
      (std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()) + ".g1"))
          .string();
  std::ofstream out(path, std::ios::binary);
  unsigned char bytes[kernels::kG1EncodedBytes];
  for (const auto& p : pts) {
    kernels::encode_g1(p, bytes);
    out.write(reinterpret_cast<const char*>(bytes), sizeof bytes);
  }
  return path;
}

void expect_nothing_resident(Engine& e) {
  const auto s = e.stats();
  EXPECT_EQ(s.srs_resident, 0u);
  for (auto b : s.device_resident_bytes) EXPECT_EQ(b, 0u);
  EXPECT_EQ(s.host_budget_in_use, 0u);
  EXPECT_EQ(s.pinned_bytes_in_use, 0u);
}

TEST(Srs, StaysOnEveryDeviceChargedToEachBudget) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config(3));
  const auto pts = toy_points(8);
  auto srs = engine.load_srs(pts);
  ASSERT_TRUE(srs) << srs.error().what();
  EXPECT_EQ(srs->points(), pts.size());
  for (std::size_t d = 0; d < engine.devices().size(); ++d) {
    const G1Affine* on = srs->points_on(engine.devices()[d]);
    ASSERT_NE(on, nullptr) << "device " << d;
    EXPECT_EQ(std::memcmp(on, pts.data(), pts.size() * sizeof(G1Affine)), 0) << "device " << d;
  }
  const auto s = engine.stats();
  EXPECT_EQ(s.srs_resident, 1u);
  for (auto b : s.device_resident_bytes) EXPECT_EQ(b, pts.size() * sizeof(G1Affine));
  EXPECT_TRUE(s.idle()) << "resident points are not work in flight";
  EXPECT_EQ(s.host_budget_in_use, 0u) << "the pinned blocks it passed through went back";
}

// A broadcast's NCCL communicators live for the load only: made beside
// the upload (their set-up reported apart from the transfer), destroyed in
// the background, and gone, threads and all, once the eviction completes.
TEST(Srs, ABroadcastReportsItsSetUpApartAndLeavesNothingRunningAfterEviction) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config(3));
  const int threads_before = test::thread_count();
  const auto pts = toy_points(8);
  auto srs = engine.load_srs(pts);
  ASSERT_TRUE(srs) << srs.error().what();
  const auto& t = srs->load_times();
  EXPECT_TRUE(t.broadcast_used);
  EXPECT_GT(t.nccl_setup_s, 0.0);
  EXPECT_GE(t.total_s, t.broadcast_s);
  bool evicted = false;
  engine.async_evict_srs(*srs, [&](boost::system::error_code ec) { evicted = !ec; });
  io.run();
  EXPECT_TRUE(evicted);
  // A thread that has returned may take a moment to leave /proc.
  int threads_after = test::thread_count();
  for (int i = 0; i < 500 && threads_after > threads_before; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    threads_after = test::thread_count();
  }
  EXPECT_EQ(threads_after, threads_before) << "the load's communicator threads outlived it";
  expect_nothing_resident(engine);
}

// Without broadcast every device uploads from the same pinned blocks and
// gets the same points.
TEST(Srs, WithoutBroadcastEveryDeviceUploadsTheSamePoints) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config(3));
  const auto pts = toy_points(8);
  SrsLoadOptions options;
  options.broadcast = false;
  auto srs = engine.load_srs(pts, options);
  ASSERT_TRUE(srs) << srs.error().what();
  EXPECT_FALSE(srs->load_times().broadcast_used);
  EXPECT_EQ(srs->load_times().nccl_setup_s, 0.0);
  for (std::size_t d = 0; d < engine.devices().size(); ++d) {
    const G1Affine* on = srs->points_on(engine.devices()[d]);
    ASSERT_NE(on, nullptr) << "device " << d;
    EXPECT_EQ(std::memcmp(on, pts.data(), pts.size() * sizeof(G1Affine)), 0) << "device " << d;
  }
}

TEST(Srs, LoadsFromAFileAsFromMemory) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config(2));
  const auto pts = toy_points(7);
  const auto path = write_points(pts, "srs-file");
  auto srs = engine.load_srs(path);
  std::filesystem::remove(path);
  ASSERT_TRUE(srs) << srs.error().what();
  ASSERT_EQ(srs->points(), pts.size());
  EXPECT_EQ(
      std::memcmp(srs->points_on(engine.devices()[1]), pts.data(), pts.size() * sizeof(G1Affine)),
      0);
}

// Points a function writes into the pinned blocks, chunk by chunk (here
// in reverse order, the way a key's permuted query goes up): the devices
// hold what it wrote; its error ends the load, named, with nothing held.
TEST(Srs, LoadsWhatAFillWritesAndStopsAtItsError) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config(2));
  const auto pts = toy_points(7);
  const std::size_t n = pts.size();
  SrsLoadOptions o;
  o.chunk_points = 48;  // several chunks, the last one short
  std::vector<std::size_t> asked;
  const SrsFill reversed = [&](std::size_t first, std::span<G1Affine> out) -> Error {
    asked.push_back(first);
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = pts[n - 1 - (first + i)];
    return {};
  };
  auto srs = engine.load_srs(n, reversed, o);
  ASSERT_TRUE(srs) << srs.error().what();
  EXPECT_EQ(asked, (std::vector<std::size_t>{0, 48, 96}));
  const std::vector<G1Affine> want(pts.rbegin(), pts.rend());
  for (std::size_t d = 0; d < engine.devices().size(); ++d)
    EXPECT_EQ(std::memcmp(srs->points_on(engine.devices()[d]), want.data(), n * sizeof(G1Affine)),
              0)
        << "device " << d;

  Engine other(io.get_executor(), host_config(2));
  const SrsFill fails = [&](std::size_t first, std::span<G1Affine> out) -> Error {
    if (first >= 48) return Error{Errc::io_error, "the source ran dry at " + std::to_string(first)};
    return reversed(first, out);
  };
  o.label = "dry";
  auto refused = other.load_srs(n, fails, o);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().what().find("SRS 'dry': the source ran dry at 48"), std::string::npos)
      << refused.error().what();
  expect_nothing_resident(other);
  refused = other.load_srs(n, SrsFill{}, o);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().what().find("no fill"), std::string::npos) << refused.error().what();
}

TEST(Srs, LargerThanADeviceBudgetIsRefusedNamingBothAndHoldsNothing) {
  asio::io_context io;
  auto config = host_config(2);
  config.device_budget_bytes = std::size_t{64} << 10;
  Engine engine(io.get_executor(), config);
  std::vector<G1Affine> pts(1000, G1Affine::infinity());  // 96,000 bytes
  auto srs = engine.load_srs(pts);
  ASSERT_FALSE(srs);
  EXPECT_EQ(srs.error().code, make_error_code(Errc::out_of_device_memory));
  EXPECT_NE(srs.error().what().find("96000 bytes"), std::string::npos) << srs.error().what();
  EXPECT_NE(srs.error().what().find("65536 bytes"), std::string::npos) << srs.error().what();
  expect_nothing_resident(engine);
}

TEST(Srs, TooLittleHostBudgetForItsPinnedBlocksIsRefusedAndHoldsNothing) {
  asio::io_context io;
  auto config = host_config(1);
  config.host_budget_bytes = std::size_t{64} << 10;
  Engine engine(io.get_executor(), config);
  std::vector<G1Affine> pts(4000, G1Affine::infinity());  // 384,000 bytes in one block
  auto srs = engine.load_srs(pts);
  ASSERT_FALSE(srs);
  EXPECT_NE(srs.error().what().find("384000"), std::string::npos) << srs.error().what();
  expect_nothing_resident(engine);
}

TEST(Srs, AFileWithABadPointIsRefusedNamingItsIndex) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config(2));
  auto pts = toy_points(6);
  pts[17].y = pts[17].y + kernels::Fq::one();  // off the curve
  const auto path = write_points(pts, "srs-bad-point");
  auto srs = engine.load_srs(path);
  std::filesystem::remove(path);
  ASSERT_FALSE(srs);
  EXPECT_NE(srs.error().what().find("point 17"), std::string::npos) << srs.error().what();
  expect_nothing_resident(engine);
}

TEST(Srs, ATruncatedFileIsRefusedNamingItsSize) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config(1));
  const auto path = write_points(toy_points(4), "srs-truncated");
  std::filesystem::resize_file(path, 15 * 96 - 10);
  auto srs = engine.load_srs(path);
  std::filesystem::remove(path);
  ASSERT_FALSE(srs);
  EXPECT_NE(srs.error().what().find(std::to_string(15 * 96 - 10)), std::string::npos)
      << srs.error().what();
  expect_nothing_resident(engine);
}

TEST(Srs, AFileWithBadFlagBitsIsRefusedNamingTheIndex) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config(1));
  const auto path = write_points(toy_points(4), "srs-flags");
  {
    std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(9 * 96);
    const char compressed = static_cast<char>(0x80);
    f.write(&compressed, 1);
  }
  auto srs = engine.load_srs(path);
  std::filesystem::remove(path);
  ASSERT_FALSE(srs);
  EXPECT_NE(srs.error().what().find("9"), std::string::npos) << srs.error().what();
  expect_nothing_resident(engine);
}

TEST(Srs, EvictionWithoutJobsFreesAtOnce) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config(2));
  auto srs = engine.load_srs(toy_points(5));
  ASSERT_TRUE(srs);
  bool evicted = false;
  engine.async_evict_srs(*srs, [&](boost::system::error_code ec) {
    EXPECT_FALSE(ec) << ec.message();
    evicted = true;
  });
  io.run();
  EXPECT_TRUE(evicted);
  EXPECT_TRUE(srs->released());
  EXPECT_EQ(srs->points_on(engine.devices()[0]), nullptr);
  expect_nothing_resident(engine);
}

TEST(Srs, EvictionWaitsForTheJobUsingItAndRefusesLaterJobs) {
  asio::io_context io;
  // A slow device, so the job is still running when the eviction comes.
  Engine engine(io.get_executor(), host_config(1, {20.0}));
  auto srs = engine.load_srs(toy_points(8));
  ASSERT_TRUE(srs);
  workloads::NttMsmHOptions o;
  o.partitions = 3;
  o.log_n = 8;
  o.srs = *srs;
  o.devices = &engine.devices();
  o.verify = true;
  o.secret = workloads::toy_srs_secret(3);
  std::shared_ptr<workloads::NttMsmHRun> first, second;
  auto job = workloads::make_ntt_msm_h_job(o, first);
  ASSERT_TRUE(job) << job.error().what();
  auto later = workloads::make_ntt_msm_h_job(o, second);
  ASSERT_TRUE(later) << later.error().what();

  std::vector<std::string> order;
  std::error_code first_ec, later_ec;
  std::string later_error;
  engine.async_submit(std::move(*job), [&](std::error_code ec, JobReport) {
    first_ec = ec;
    order.push_back("job");
  });
  engine.async_evict_srs(*srs, [&](boost::system::error_code ec) {
    EXPECT_FALSE(ec);
    order.push_back("evicted");
  });
  engine.async_submit(std::move(*later), [&](std::error_code ec, JobReport r) {
    later_ec = ec;
    later_error = r.error;
    order.push_back("later");
  });
  io.run();
  EXPECT_FALSE(first_ec) << "a job submitted before the eviction runs to its end";
  EXPECT_TRUE(first->all_verified());
  EXPECT_EQ(later_ec, make_error_code(Errc::invalid_argument));
  EXPECT_NE(later_error.find("evicted"), std::string::npos) << later_error;
  ASSERT_EQ(order.size(), 3u);
  EXPECT_LT(std::find(order.begin(), order.end(), "job"),
            std::find(order.begin(), order.end(), "evicted"))
      << "the eviction completes after the job that uses the points";
  expect_nothing_resident(engine);
}

TEST(Srs, AnotherEnginesSrsIsRefused) {
  asio::io_context io;
  Engine a(io.get_executor(), host_config(1));
  Engine b(io.get_executor(), host_config(1));
  auto srs = a.load_srs(toy_points(4));
  ASSERT_TRUE(srs);
  boost::system::error_code got;
  b.async_evict_srs(*srs, [&](boost::system::error_code ec) { got = ec; });
  io.run();
  EXPECT_EQ(std::error_code(got), make_error_code(Errc::invalid_argument));
  EXPECT_FALSE(srs->released());
}

TEST(Srs, AHandleOutlivingItsEngineRefersToNothing) {
  Srs kept;
  {
    asio::io_context io;
    Engine engine(io.get_executor(), host_config(1));
    auto srs = engine.load_srs(toy_points(4));
    ASSERT_TRUE(srs);
    kept = *srs;
  }
  EXPECT_TRUE(kept.released());
  EXPECT_EQ(kept.points(), 15u);
}

}  // namespace
}  // namespace stoker::engine
