// What only real GPUs show: each GPU's threads on its local CPUs, device
// memory mapped ahead of the first job, memory declared page-locked checked
// with the driver, and the caller's current GPU left as it was.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "devices/cpu_set.hpp"
#include "devices/pinned_buffer.hpp"
#include "engine/engine.hpp"
#include "engine/workloads/synthetic.hpp"
#include "test/engine/engine_test_util.hpp"
#include "test/gpu_guard.hpp"

namespace asio = boost::asio;

namespace stoker::engine {
namespace {

using test::expect_outputs_correct;
using test::gpu0_config;
using test::gpu_config;
using test::run_job;
using test::six_small_partitions;

// Each GPU's threads but its launcher run on its local CPUs (sysfs
// local_cpulist) where those narrow what the process may use, and stay as
// they were where they do not (one NUMA node); the CPU lists are printed
// for whoever reads the log.
TEST(GpuDevices, EachGpusThreadsRunOnItsLocalCpusWhereThatNarrowsAnything) {
  STOKER_REQUIRE_GPU();
  asio::io_context io;
  Engine engine(io.get_executor(), gpu_config());
  const auto allowed = devices::CpuSet::allowed();
  const auto stats = engine.stats();
  std::vector<devices::CpuSet> want;
  for (std::size_t d = 0; d < engine.devices().size(); ++d) {
    const auto& info = engine.devices()[d].info();
    auto near = devices::cpus_near(info);
    std::printf("GPU %zu: local CPUs '%s' (NUMA node %d), allowed '%s', threads on '%s'\n", d,
                info.cpu_affinity.c_str(), info.numa_node, allowed.to_string().c_str(),
                stats.device_cpus[d].c_str());
    const bool room = near.size() >= static_cast<std::size_t>(engine.config().staging_threads);
    EXPECT_EQ(stats.device_cpus[d], room ? near.to_string() : "");
    if (!room) near = {};
    want.push_back(near.empty() ? allowed : near);
  }
  std::shared_ptr<workloads::SyntheticRun> run;
  workloads::SyntheticOptions o;
  o.partitions = 4 * engine.devices().size();
  o.input_bytes = 16 << 20;
  o.rounds = 2;
  o.pageable = true;  // so the staging threads run
  auto job = workloads::make_synthetic_job(o, run);
  ASSERT_TRUE(job) << job.error().what();
  std::error_code ec;
  const auto r = run_job(engine, io, std::move(*job), ec);
  ASSERT_FALSE(ec) << r.error;
  expect_outputs_correct(*run);
  std::size_t seen = 0;
  for (const auto& [tid, name] : test::threads_named("stoker-")) {
    const auto d = static_cast<std::size_t>(std::stoi(name.substr(name.rfind('-') + 1)));
    ASSERT_LT(d, want.size()) << name;
    // The launcher runs the jobs' callables and stays unbound.
    const bool launcher = name.rfind("stoker-kern-", 0) == 0;
    EXPECT_EQ(devices::CpuSet::of_thread(tid), launcher ? allowed : want[d]) << name;
    ++seen;
  }
  EXPECT_GE(seen, 5 * engine.devices().size()) << "feeder, launcher, waiters, staging per GPU";
}

// reserve_device maps a whole pipeline of device memory before any job, so
// the first job's first copy does not wait for the pool to grow.
TEST(GpuDevices, ReserveDeviceMapsAFullPipelineOnEveryGpu) {
  STOKER_REQUIRE_GPU();
  asio::io_context io;
  Engine engine(io.get_executor(), gpu_config());
  Partition like;
  like.inputs.push_back(Input::produced(std::size_t{768} << 20));
  like.outputs.push_back(Output{nullptr, std::size_t{256} << 20, false});
  const std::size_t want =
      like.device_bytes() * static_cast<std::size_t>(engine.config().pipeline_depth);
  engine.reserve_device(like);
  for (std::size_t d = 0; d < engine.devices().size(); ++d) {
    auto reserved = engine.devices()[d].pool_reserved_bytes();
    ASSERT_TRUE(reserved) << reserved.error().what();
    EXPECT_GE(*reserved, want) << "GPU " << d << "'s pool holds " << *reserved << " bytes";
  }
  EXPECT_EQ(engine.stats().busy_slots, 0u);
}

// Memory declared page-locked that is not (a registered input, a pinned
// output over plain heap memory) is refused before any GPU work, naming it:
// the copy would otherwise crawl through the driver's pageable path.
TEST(GpuDevices, MemoryDeclaredPageLockedThatIsNotIsRefused) {
  STOKER_REQUIRE_GPU();
  asio::io_context io;
  Engine engine(io.get_executor(), gpu0_config());
  std::vector<std::byte> heap(std::size_t{4} << 20);
  for (bool input : {true, false}) {
    std::shared_ptr<workloads::SyntheticRun> run;
    auto job = six_small_partitions(run);
    auto& p = job.partitions[4];
    if (input) {
      p.inputs[0] = Input::registered(std::span<const std::byte>(heap).first(p.inputs[0].bytes));
      p.split_producer = nullptr;
      p.share_align = 0;
    } else {
      p.outputs[0] = Output::to(std::span<std::byte>(heap).first(p.outputs[0].bytes), true);
    }
    std::error_code ec;
    auto r = run_job(engine, io, std::move(job), ec);
    EXPECT_EQ(ec, make_error_code(Errc::invalid_argument)) << r.error;
    EXPECT_NE(r.error.find(input ? "partition 4: input 0 is declared registered but its memory "
                                   "is not page-locked"
                                 : "partition 4: output 0 is declared pinned but its memory is "
                                   "not page-locked"),
              std::string::npos)
        << r.error;
    EXPECT_EQ(r.partitions_done, 0u);
  }
  // The same memory registered is taken.
  auto reg = devices::register_host(devices::Backend::cuda, heap.data(), heap.size());
  ASSERT_TRUE(reg) << reg.error().what();
  std::shared_ptr<workloads::SyntheticRun> run;
  auto job = six_small_partitions(run);
  job.partitions[4].outputs[0] =
      Output::to(std::span<std::byte>(heap).first(job.partitions[4].outputs[0].bytes), true);
  job.verify = nullptr;  // it reads the run's own outputs; partition 4's lands in `heap`
  std::error_code ec;
  auto r = run_job(engine, io, std::move(job), ec);
  ASSERT_FALSE(ec) << r.error;
  const auto landed =
      std::span(reinterpret_cast<const std::uint32_t*>(heap.data()), run->outputs[4].size());
  std::copy(landed.begin(), landed.end(), run->outputs[4].begin());
  expect_outputs_correct(*run);
}

// The engine's calls on its caller's thread leave the caller's current GPU
// as it was: a prover that launches its own kernels on GPU 1 must not find
// GPU 0 (or the engine's last GPU) current after creating an engine.
TEST(GpuDevices, EngineCallsLeaveTheCallersCurrentGpu) {
  STOKER_REQUIRE_GPUS(2);
  const int mine = devices::cuda_device_count() - 1;
  ASSERT_EQ(cudaSetDevice(mine), cudaSuccess);
  const auto current = [] {
    int d = -1;
    cudaGetDevice(&d);
    return d;
  };
  {
    asio::io_context io;
    Engine engine(io.get_executor(), gpu_config());
    EXPECT_EQ(current(), mine) << "after creating the engine";
    std::shared_ptr<workloads::SyntheticRun> run;
    auto job = six_small_partitions(run);
    engine.reserve_device(job.partitions[0]);
    EXPECT_EQ(engine.reserve_pinned(job.partitions[0], 4), std::error_code{});
    EXPECT_EQ(current(), mine) << "after reserving";
    std::error_code ec;
    auto r = run_job(engine, io, std::move(job), ec);
    ASSERT_FALSE(ec) << r.error;
  }
  EXPECT_EQ(current(), mine) << "after destroying the engine";
}

}  // namespace
}  // namespace stoker::engine
