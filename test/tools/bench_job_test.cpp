// run_prepared: the bench commands' timed runs of a job built once.
#include "tools/bench/bench_job.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "engine/workloads/synthetic.hpp"
#include "test/engine/engine_test_util.hpp"

namespace stoker::tools {
namespace {

namespace wl = engine::workloads;

engine::Job prepared_job(std::shared_ptr<wl::SyntheticRun>& run, bool pageable) {
  wl::SyntheticOptions o;
  o.partitions = 6;
  o.input_bytes = std::size_t{256} << 10;
  o.rounds = 4;
  o.pageable = pageable;
  o.name = pageable ? "pageable" : "produced";
  auto job = wl::make_synthetic_job(o, run);
  EXPECT_TRUE(job) << job.error().what();
  return std::move(*job);
}

// The same prepared job runs again and again (its pageable inputs generated
// once), each run's outputs cleared first and checked after, and the
// engine holds nothing between runs.
TEST(BenchJob, PreparedJobRunsRepeatedlyAndIsCheckedAfterEachRun) {
  boost::asio::io_context io;
  auto e = engine::Engine::create(io.get_executor(), test::host_config());
  ASSERT_TRUE(e) << e.error().what();
  for (const bool pageable : {false, true}) {
    std::shared_ptr<wl::SyntheticRun> run;
    const engine::Job prepared = prepared_job(run, pageable);
    int cleared = 0;
    for (int r = 0; r < 3; ++r) {
      std::fill(run->checksums.begin(), run->checksums.end(), 0);
      auto report = run_prepared(**e, prepared, [&] {
        ++cleared;
        for (auto& out : run->outputs) std::fill(out.begin(), out.end(), 0u);
      });
      ASSERT_TRUE(report) << report.error().what();
      EXPECT_EQ(report->partitions_done, 6u);
      // The checks ran after the job: every partition's checksum is in.
      for (auto sum : run->checksums) EXPECT_NE(sum, 0u) << (pageable ? "pageable" : "produced");
    }
    EXPECT_EQ(cleared, 3);
    const auto s = (*e)->stats();
    EXPECT_EQ(s.jobs_in_flight, 0u);
    EXPECT_EQ(s.host_budget_in_use, 0u);
    EXPECT_EQ(s.pinned_bytes_in_use, 0u);
  }
}

// A run whose kernels write wrong outputs completes, then fails the check
// after it with the partition named.
TEST(BenchJob, RunWithWrongOutputsFailsTheCheckAfterItNamingThePartition) {
  boost::asio::io_context io;
  auto e = engine::Engine::create(io.get_executor(), test::host_config());
  ASSERT_TRUE(e) << e.error().what();
  std::shared_ptr<wl::SyntheticRun> run;
  engine::Job prepared = prepared_job(run, /*pageable=*/true);
  auto clear = [&] {
    for (auto& out : run->outputs) std::fill(out.begin(), out.end(), 0u);
  };
  ASSERT_TRUE(run_prepared(**e, prepared, clear));
  for (auto& p : prepared.partitions)
    p.work.cpu = [](const engine::KernelContext& c) {
      std::memset(c.outputs[0], 0x5a, c.output_bytes[0]);
      return std::error_code{};
    };
  const auto failed = run_prepared(**e, prepared, clear);
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().code, make_error_code(Errc::verification_failed));
  EXPECT_NE(failed.error().what().find("partition 0 failed verification after the run"),
            std::string::npos)
      << failed.error().what();
}

}  // namespace
}  // namespace stoker::tools
