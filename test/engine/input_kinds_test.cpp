// Every kind of input (produced into pinned blocks, pageable through
// staging, pageable registered in place) reaches every device intact, on
// both backends (test/backend.hpp): outputs equal the CPU version, each
// stage is timed, and the report says how each input crossed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <memory>
#include <optional>
#include <vector>

#include "engine/engine.hpp"
#include "engine/workloads/synthetic.hpp"
#include "test/backend.hpp"
#include "test/engine/engine_test_util.hpp"

namespace asio = boost::asio;

namespace stoker::engine {
namespace {

using test::backend_config;
using test::expect_outputs_correct;
using test::run_job;

TEST(InputKinds, PinnedAndPageableJobsMatchCpuOnEveryDevice) {
  STOKER_REQUIRE_BACKEND();
  asio::io_context io;
  // Pinned producers, pageable inputs through staging, pageable inputs
  // registered in place (inputs of at least two staging chunks: 8 MiB on
  // CUDA, 64 KiB in the host config): page-aligned copies, then the job's
  // own heap buffers, which start and end mid-page and may share a page
  // with a neighbour (only their whole pages are registered).
  enum class Mode { pinned, staged, registered, registered_heap };
  for (Mode mode : {Mode::pinned, Mode::staged, Mode::registered, Mode::registered_heap}) {
    SCOPED_TRACE(static_cast<int>(mode));
    auto c = backend_config();
    if (mode == Mode::registered || mode == Mode::registered_heap)
      c.pageable_inputs = PageableInputs::register_in_place;
    Engine engine(io.get_executor(), c);
    std::shared_ptr<workloads::SyntheticRun> run;
    workloads::SyntheticOptions o;
    o.partitions = 8 * engine.devices().size();
    // The CPU runs the host backend's kernels: 1 MiB keeps them short.
    o.input_bytes = test::kBackend == devices::Backend::cuda ? 24 << 20 : 1 << 20;
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
    for (std::size_t d = 0; d < used.size(); ++d)
      EXPECT_GT(used[d], 0) << "device " << d << " unused";
    const auto s = engine.stats();
    EXPECT_EQ(s.busy_slots, 0u);
    EXPECT_EQ(s.pinned_bytes_in_use, 0u);
  }
}

}  // namespace
}  // namespace stoker::engine
