// The engine on real GPUs: the same promises as on the host backend, plus
// what only hardware shows (sticky faults, every GPU used).
#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <optional>
#include <stdexcept>

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

TEST(EngineGpu, FaultingKernelFailsTheJobInsteadOfHanging) {
  STOKER_REQUIRE_GPU();
  asio::io_context io;
  Engine engine(io.get_executor(), gpu0_config());
  std::shared_ptr<workloads::SyntheticRun> run;
  auto job = six_small_partitions(run);
  job.partitions[2].work.gpu = [](const KernelContext& ctx) {
    return test::launch_faulting_kernel(ctx.stream.native());
  };
  std::error_code ec;
  auto r = run_job(engine, io, std::move(job), ec);
  ASSERT_TRUE(ec);
  EXPECT_NE(r.error.find("faulted"), std::string::npos) << r.error;
  EXPECT_FALSE(engine.stats().device_healthy[0]);
}

}  // namespace
}  // namespace stoker::engine
