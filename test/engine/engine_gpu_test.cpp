// The engine on real GPUs: the same promises as on the host backend, plus
// what only hardware shows (sticky faults, every GPU used).
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <cstdio>
#include <optional>
#include <stdexcept>

#include "devices/cpu_set.hpp"
#include "devices/pinned_buffer.hpp"
#include "engine/engine.hpp"
#include "engine/workloads/synthetic.hpp"
#include "test/engine/engine_test_util.hpp"
#include "test/engine/fault_kernel.hpp"
#include "test/gpu_guard.hpp"

namespace asio = boost::asio;

namespace stoker::engine {
namespace {

using test::expect_outputs_correct;
using test::gpu_config;
using test::run_job;

// Each GPU's threads but its launcher run on its local CPUs (sysfs
// local_cpulist) where those narrow what the process may use, and stay as
// they were where they do not (one NUMA node); the CPU lists are printed
// for whoever reads the log.
TEST(EngineGpu, EachGpusThreadsRunOnItsLocalCpusWhereThatNarrowsAnything) {
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

TEST(EngineGpu, PinnedAndPageableJobsMatchCpuOnEveryGpu) {
  STOKER_REQUIRE_GPU();
  asio::io_context io;
  // Pinned producers, pageable inputs through staging, pageable inputs
  // registered in place (24 MiB >= two 8 MiB chunks): page-aligned copies,
  // then the job's own heap buffers, which start and end mid-page and may
  // share a page with a neighbour (only their whole pages are registered).
  enum class Mode { pinned, staged, registered, registered_heap };
  for (Mode mode : {Mode::pinned, Mode::staged, Mode::registered, Mode::registered_heap}) {
    SCOPED_TRACE(static_cast<int>(mode));
    auto c = gpu_config();
    if (mode == Mode::registered || mode == Mode::registered_heap)
      c.pageable_inputs = PageableInputs::register_in_place;
    Engine engine(io.get_executor(), c);
    std::shared_ptr<workloads::SyntheticRun> run;
    workloads::SyntheticOptions o;
    o.partitions = 8 * engine.devices().size();
    o.input_bytes = 24 << 20;
    o.rounds = 8;
    o.pageable = mode != Mode::pinned;
    auto job = workloads::make_synthetic_job(o, run);
    ASSERT_TRUE(job);
    // Heap buffers next to each other share a page, which CUDA registers
    // once; pages of their own let every input be registered.
    std::optional<test::PageAlignedInputs> aligned;
    if (mode == Mode::registered) aligned.emplace(*job, *run);
    std::error_code ec;
    auto r = run_job(engine, io, std::move(*job), ec);
    ASSERT_FALSE(ec) << r.error;
    expect_outputs_correct(*run);
    std::vector<int> used(engine.devices().size(), 0);
    for (const auto& p : r.parts) {
      ++used[static_cast<std::size_t>(p.device)];
      EXPECT_GT(p.h2d.ms, 0.0);
      EXPECT_GT(p.kernels.ms, 0.0);
      EXPECT_GT(p.d2h.ms, 0.0);
      if (mode == Mode::staged) {
        EXPECT_GT(p.staging.ms, 0.0);
        EXPECT_EQ(p.bytes_registered, 0u);
      } else if (mode == Mode::registered) {
        EXPECT_GT(p.staging.ms, 0.0) << "registration time belongs to staging";
        EXPECT_EQ(p.bytes_registered, p.bytes_in) << "staged instead of registered";
      } else if (mode == Mode::registered_heap) {
        EXPECT_GT(p.staging.ms, 0.0);
        EXPECT_LE(p.bytes_registered, p.bytes_in);
        EXPECT_GE(p.bytes_registered + 2 * static_cast<std::size_t>(sysconf(_SC_PAGESIZE)),
                  p.bytes_in)
            << "whole pages were staged";
      } else {
        EXPECT_EQ(p.bytes_registered, 0u);
      }
    }
    for (std::size_t d = 0; d < used.size(); ++d) EXPECT_GT(used[d], 0) << "GPU " << d << " unused";
    const auto s = engine.stats();
    EXPECT_EQ(s.busy_slots, 0u);
    EXPECT_EQ(s.pinned_bytes_in_use, 0u);
  }
}

// reserve_device maps a whole pipeline of device memory before any job, so
// the first job's first copy does not wait for the pool to grow.
TEST(EngineGpu, ReserveDeviceMapsAFullPipelineOnEveryGpu) {
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

// GPU 0 alone, for the tests that break a job (or the GPU) on purpose.
Config gpu0_config() {
  auto c = gpu_config();
  c.devices.cuda_ordinals = {0};
  return c;
}

// Six synthetic partitions of 1 MiB.
Job six_small_partitions(std::shared_ptr<workloads::SyntheticRun>& run) {
  workloads::SyntheticOptions o;
  o.partitions = 6;
  o.input_bytes = 1 << 20;
  auto job = workloads::make_synthetic_job(o, run);
  EXPECT_TRUE(job) << job.error().what();
  return std::move(*job);
}

// A job's GPU callable that throws (before enqueueing anything) fails its
// job with the exception's text; the device stays healthy and runs the
// next job.
TEST(EngineGpu, ThrowingKernelCallableFailsItsJobAndTheGpuCarriesOn) {
  STOKER_REQUIRE_GPU();
  asio::io_context io;
  Engine engine(io.get_executor(), gpu0_config());
  std::shared_ptr<workloads::SyntheticRun> run;
  auto job = six_small_partitions(run);
  job.partitions[3].work.gpu = [](const KernelContext&) -> std::error_code {
    throw std::runtime_error("no kernel for this curve");
  };
  std::error_code ec;
  auto r = run_job(engine, io, std::move(job), ec);
  EXPECT_EQ(ec, make_error_code(Errc::callable_threw)) << r.error;
  EXPECT_NE(r.error.find("no kernel for this curve"), std::string::npos) << r.error;
  EXPECT_TRUE(engine.stats().device_healthy[0]);
  std::shared_ptr<workloads::SyntheticRun> good;
  r = run_job(engine, io, six_small_partitions(good), ec);
  ASSERT_FALSE(ec) << r.error;
  expect_outputs_correct(*good);
  EXPECT_EQ(engine.stats().busy_slots, 0u);
}

// Memory declared page-locked that is not (a registered input, a pinned
// output over plain heap memory) is refused before any GPU work, naming it:
// the copy would otherwise crawl through the driver's pageable path.
TEST(EngineGpu, MemoryDeclaredPageLockedThatIsNotIsRefused) {
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
TEST(EngineGpu, EngineCallsLeaveTheCallersCurrentGpu) {
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

// The tests below fault a GPU on purpose, which breaks it for the rest of
// the process: they need a process each, as CTest runs every test and
// tools/scripts/gpu_check runs the tests named *Fault* (and they stay last).

// A kernel that faults breaks its GPU for good: the job it belongs to and
// a job beside it on the same GPU both fail, naming the fault, instead of
// hanging; everything they held comes back.
TEST(EngineGpu, FaultingKernelFailsTheJobsOnItsGpuInsteadOfHanging) {
  STOKER_REQUIRE_GPU();
  asio::io_context io;
  Engine engine(io.get_executor(), gpu0_config());
  std::shared_ptr<workloads::SyntheticRun> run, beside_run;
  auto job = six_small_partitions(run);
  job.partitions[2].work.gpu = [](const KernelContext& ctx) {
    return test::launch_faulting_kernel(ctx.stream.native());
  };
  job.priority = 10;  // overtakes the other job's queued partitions
  workloads::SyntheticOptions o;
  o.partitions = 40;
  o.input_bytes = 8 << 20;
  o.rounds = 200;
  o.name = "beside";
  auto beside = workloads::make_synthetic_job(o, beside_run);
  ASSERT_TRUE(beside) << beside.error().what();
  std::error_code ec, beside_ec;
  JobReport r, beside_report;
  int done = 0;
  engine.async_submit(std::move(*beside), [&](std::error_code e, JobReport rep) {
    beside_ec = e;
    beside_report = std::move(rep);
    ++done;
  });
  engine.async_submit(std::move(job), [&](std::error_code e, JobReport rep) {
    ec = e;
    r = std::move(rep);
    ++done;
  });
  io.run();
  ASSERT_EQ(done, 2);
  ASSERT_TRUE(ec);
  EXPECT_NE(r.error.find("faulted"), std::string::npos) << r.error;
  ASSERT_TRUE(beside_ec) << "a job on a faulted GPU cannot have finished";
  EXPECT_LT(beside_report.partitions_done, 40u);
  EXPECT_FALSE(beside_report.error.empty());
  EXPECT_FALSE(engine.stats().device_healthy[0]);
  const auto s = engine.stats();
  EXPECT_EQ(s.jobs_in_flight, 0u);
  EXPECT_EQ(s.busy_slots, 0u);
  EXPECT_EQ(s.host_budget_in_use, 0u);
  EXPECT_EQ(s.pinned_bytes_in_use, 0u);
}

// A fault on GPU 0 leaves GPU 1 working, pinned memory included: the pool
// grows (a new size class) and pageable inputs are registered in place
// through a healthy GPU's context, not through the thread's default, GPU
// 0's, which the fault broke for good.
TEST(EngineGpu, AFaultOnOneGpuLeavesTheOtherPinningAndRunning) {
  STOKER_REQUIRE_GPUS(2);
  asio::io_context io;
  auto c = gpu_config();
  c.devices.cuda_ordinals = {0, 1};
  c.pageable_inputs = PageableInputs::register_in_place;
  Engine engine(io.get_executor(), c);
  std::shared_ptr<workloads::SyntheticRun> bad_run;
  auto bad = six_small_partitions(bad_run);
  bad.devices = std::vector<int>{0};
  bad.partitions[1].work.gpu = [](const KernelContext& ctx) {
    return test::launch_faulting_kernel(ctx.stream.native());
  };
  std::error_code ec;
  auto r = run_job(engine, io, std::move(bad), ec);
  ASSERT_TRUE(ec);
  ASSERT_FALSE(engine.stats().device_healthy[0]);
  ASSERT_TRUE(engine.stats().device_healthy[1]);
  const auto grown = engine.stats().pinned_slab_allocations;
  for (bool pageable : {false, true}) {
    SCOPED_TRACE(pageable ? "pageable, registered in place" : "produced into a new size class");
    std::shared_ptr<workloads::SyntheticRun> run;
    workloads::SyntheticOptions o;
    o.partitions = 6;
    o.input_bytes = 40 << 20;  // blocks of a class the first job never used
    o.rounds = 8;
    o.pageable = pageable;
    auto job = workloads::make_synthetic_job(o, run);
    ASSERT_TRUE(job) << job.error().what();
    std::optional<test::PageAlignedInputs> aligned;
    if (pageable) aligned.emplace(*job, *run);
    r = run_job(engine, io, std::move(*job), ec);
    ASSERT_FALSE(ec) << r.error;
    expect_outputs_correct(*run);
    for (const auto& p : r.parts) {
      EXPECT_EQ(p.device, 1);
      if (pageable) {
        EXPECT_EQ(p.bytes_registered, p.bytes_in) << "staged instead of registered";
      }
    }
  }
  EXPECT_GT(engine.stats().pinned_slab_allocations, grown) << "the pool never had to grow";
  EXPECT_EQ(engine.stats().pinned_bytes_in_use, 0u);
}

}  // namespace
}  // namespace stoker::engine
