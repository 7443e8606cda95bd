// The workload builders check sizes against their limits before they
// allocate anything, name the size and the limit when a job would not fit,
// and let no exception escape: a size typed on a command line never kills
// the process with std::bad_alloc.
#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <string>

#include "engine/engine.hpp"
#include "engine/workloads/build_limits.hpp"
#include "engine/workloads/hpoly_workload.hpp"
#include "engine/workloads/synthetic.hpp"

namespace stoker::engine::workloads {
namespace {

constexpr std::size_t kGiB = std::size_t{1} << 30;
constexpr std::size_t kTrillion = 1000000000000;

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// With the kernel's overcommit policy "always" (vm.overcommit_memory = 1),
// a request of terabytes is granted and the process is killed when it
// touches the pages, so no std::bad_alloc can be turned into an error.
bool overcommit_always() {
  std::ifstream f("/proc/sys/vm/overcommit_memory");
  int policy = 0;
  return f >> policy && policy == 1;
}

TEST(SyntheticBuilder, RefusesATrillionPartitionsBeforeAllocating) {
  SyntheticOptions o;
  o.partitions = kTrillion;
  o.input_bytes = 64 << 10;
  auto run = std::make_shared<SyntheticRun>();  // a stale run is not kept
  const auto job = make_synthetic_job(o, run);
  ASSERT_FALSE(job);
  EXPECT_EQ(job.error().code, make_error_code(Errc::out_of_host_memory));
  EXPECT_TRUE(has(job.error().what(), "synthetic: 1000000000000 partitions")) << job.error().what();
  EXPECT_TRUE(has(job.error().what(), "this machine has ")) << job.error().what();
  EXPECT_EQ(run, nullptr);
}

TEST(SyntheticBuilder, RefusesAPartitionLargerThanTheHostBudget) {
  SyntheticOptions o;
  o.partitions = 8;
  o.input_bytes = std::size_t{100000} << 20;  // stoker run --size-mib 100000
  o.limits.pinned_budget_bytes = kGiB;
  std::shared_ptr<SyntheticRun> run;
  const auto job = make_synthetic_job(o, run);
  ASSERT_FALSE(job);
  EXPECT_EQ(job.error().code, make_error_code(Errc::out_of_host_memory));
  // The 100000 MiB input and the quarter-size block its output lands in,
  // as the pool's size classes round them (112 and 28 GiB): the figure the
  // engine would refuse the job with (Engine::pinned_bytes).
  EXPECT_EQ(job.error().what(),
            "synthetic: a partition needs 150323855360 bytes of pinned host memory; the host "
            "budget is 1073741824 bytes");
}

TEST(SyntheticBuilder, RefusesOutputsLargerThanTheMemoryLimit) {
  SyntheticOptions o;
  o.partitions = 8;
  o.input_bytes = std::size_t{1} << 30;  // 256 MiB of output each, 2 GiB in all
  o.limits.host_memory_bytes = kGiB;
  std::shared_ptr<SyntheticRun> run;
  const auto job = make_synthetic_job(o, run);
  ASSERT_FALSE(job);
  EXPECT_TRUE(has(job.error().what(), "each need 2147491840 bytes; the limit is 1073741824 bytes"))
      << job.error().what();
}

TEST(SyntheticBuilder, BuildsWhatFitsItsLimits) {
  SyntheticOptions o;
  o.partitions = 4;
  o.input_bytes = 1 << 20;
  o.limits.pinned_budget_bytes = 2 << 20;
  o.limits.host_memory_bytes = 4 << 20;
  std::shared_ptr<SyntheticRun> run;
  const auto job = make_synthetic_job(o, run);
  ASSERT_TRUE(job) << job.error().what();
  EXPECT_EQ(job->partitions.size(), 4u);
  ASSERT_NE(run, nullptr);
  EXPECT_LE(Engine::pinned_bytes(job->partitions[0]), o.limits.pinned_budget_bytes);
}

// With the size check lifted, the allocation itself fails: the builder
// returns that as an Error, not as an exception.
TEST(SyntheticBuilder, TurnsAFailedAllocationIntoAnError) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the sanitizer's allocator ends the process on an 8 TB request instead of "
                  "throwing std::bad_alloc";
#endif
  if (overcommit_always())
    GTEST_SKIP() << "vm.overcommit_memory is 1: the request would be granted";
  SyntheticOptions o;
  o.partitions = kTrillion;
  o.input_bytes = 16;
  o.limits.host_memory_bytes = ~std::size_t{0};
  std::shared_ptr<SyntheticRun> run;
  const auto job = make_synthetic_job(o, run);
  ASSERT_FALSE(job);
  EXPECT_EQ(job.error().code, make_error_code(Errc::out_of_host_memory));
  EXPECT_TRUE(has(job.error().what(), "synthetic: ")) << job.error().what();
  EXPECT_EQ(run, nullptr);
}

TEST(HpolyBuilder, RefusesATrillionPartitionsBeforeAllocating) {
  HpolyOptions o;
  o.partitions = kTrillion;
  o.log_n = 10;
  std::shared_ptr<HpolyRun> run;
  const auto job = make_hpoly_job(o, run);
  ASSERT_FALSE(job);
  EXPECT_EQ(job.error().code, make_error_code(Errc::out_of_host_memory));
  EXPECT_TRUE(has(job.error().what(), "hpoly: 1000000000000 partitions")) << job.error().what();
  EXPECT_EQ(run, nullptr);
}

TEST(HpolyBuilder, RefusesAPartitionLargerThanTheHostBudget) {
  HpolyOptions o;
  o.partitions = 2;
  o.log_n = 24;  // a, b, c and h of 512 MiB each
  o.limits.pinned_budget_bytes = kGiB;
  std::shared_ptr<HpolyRun> run;
  const auto job = make_hpoly_job(o, run);
  ASSERT_FALSE(job);
  EXPECT_EQ(job.error().what(),
            "hpoly: a partition needs 2147483648 bytes of pinned host memory; the host budget "
            "is 1073741824 bytes");
}

TEST(HpolyBuilder, TurnsAFailedAllocationIntoAnError) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the sanitizer's allocator ends the process on a request this large instead "
                  "of throwing std::bad_alloc";
#endif
  if (overcommit_always())
    GTEST_SKIP() << "vm.overcommit_memory is 1: the request would be granted";
  HpolyOptions o;
  o.partitions = kTrillion;
  o.log_n = 1;
  o.limits.host_memory_bytes = ~std::size_t{0};
  std::shared_ptr<HpolyRun> run;
  const auto job = make_hpoly_job(o, run);
  ASSERT_FALSE(job);
  EXPECT_EQ(job.error().code, make_error_code(Errc::out_of_host_memory));
  EXPECT_EQ(run, nullptr);
}

}  // namespace
}  // namespace stoker::engine::workloads
