// Failures on real GPUs: a throwing GPU callable fails only its job, while
// a faulting kernel breaks its GPU for good (a sticky CUDA error) and fails
// every job on it, and a second GPU carries on.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

#include "engine/engine.hpp"
#include "engine/workloads/synthetic.hpp"
#include "test/engine/engine_test_util.hpp"
#include "test/engine/fault_kernel.hpp"
#include "test/gpu_guard.hpp"

namespace asio = boost::asio;

namespace stoker::engine {
namespace {

using test::expect_outputs_correct;
using test::gpu0_config;
using test::gpu_config;
using test::run_job;
using test::six_small_partitions;

// A job's GPU callable that throws (before enqueueing anything) fails its
// job with the exception's text; the device stays healthy and runs the
// next job.
TEST(GpuFaults, ThrowingKernelCallableFailsItsJobAndTheGpuCarriesOn) {
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

// The tests below fault a GPU on purpose, which breaks it for the rest of
// the process: they need a process each, as CTest runs every test and
// tools/scripts/gpu_check runs the tests named *Fault* (and they stay last).

// A kernel that faults breaks its GPU for good: the job it belongs to and
// a job beside it on the same GPU both fail, naming the fault, instead of
// hanging; everything they held comes back.
TEST(GpuFaults, FaultingKernelFailsTheJobsOnItsGpuInsteadOfHanging) {
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
TEST(GpuFaults, AFaultOnOneGpuLeavesTheOtherPinningAndRunning) {
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
