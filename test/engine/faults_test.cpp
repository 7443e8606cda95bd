// Failures on the host backend: a failing kernel faults its emulated device
// for good (as a faulting kernel does a GPU) and fails the jobs that need
// it while other devices carry on; callables that throw, bad input and a
// device that cannot be set up fail with an error that names them.
#include <gtest/gtest.h>
#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <new>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/host_memory_limit.hpp"
#include "engine/engine.hpp"
#include "engine/workloads/synthetic.hpp"
#include "test/engine/engine_test_util.hpp"

namespace asio = boost::asio;

namespace stoker::engine {
namespace {

using test::expect_idle;
using test::expect_outputs_correct;
using test::host_config;
using test::run_job;
using test::synthetic;

// A job held to device 0 whose partition `failing` has a kernel that fails
// (which faults the emulated device, as a faulting kernel does a GPU).
Job kernel_fails_on_device_0(std::shared_ptr<workloads::SyntheticRun>& run, std::size_t partitions,
                             std::size_t failing) {
  auto job = synthetic(run, partitions);
  job.devices = std::vector<int>{0};
  job.partitions[failing].work.cpu = [](const KernelContext&) {
    return make_error_code(Errc::kernel_failed);
  };
  return job;
}

TEST(Faults, FaultingKernelFailsItsJobAndOtherDevicesCarryOn) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config(2));
  std::shared_ptr<workloads::SyntheticRun> run, run2;
  auto bad = kernel_fails_on_device_0(run, 4, 1);
  std::error_code bad_result;
  std::string bad_message;
  engine.async_submit(std::move(bad), [&](std::error_code ec, JobReport r) {
    bad_result = ec;
    bad_message = r.error;
  });
  io.run();
  io.restart();
  EXPECT_EQ(bad_result, make_error_code(Errc::kernel_failed));
  EXPECT_NE(bad_message.find("device 0"), std::string::npos) << bad_message;
  EXPECT_FALSE(engine.stats().device_healthy[0]);

  std::error_code good_result;
  JobReport good;
  engine.async_submit(synthetic(run2, 4), [&](std::error_code ec, JobReport r) {
    good_result = ec;
    good = std::move(r);
  });
  io.run();
  EXPECT_FALSE(good_result) << good.error;
  for (const auto& p : good.parts) EXPECT_EQ(p.device, 1);
  expect_outputs_correct(*run2);

  // A job that may only run on the faulted device fails instead of hanging.
  io.restart();
  std::shared_ptr<workloads::SyntheticRun> run3;
  auto stuck = synthetic(run3, 2);
  stuck.devices = std::vector<int>{0};
  std::error_code stuck_result;
  engine.async_submit(std::move(stuck), [&](std::error_code ec, JobReport) { stuck_result = ec; });
  io.run();
  EXPECT_EQ(stuck_result, make_error_code(Errc::device_fault));
}

// A partition whose kernel fails faults its device and fails its job while
// a job running at the same time on the other device completes, correct.
TEST(Faults, FaultingKernelFailsItsJobWhileAConcurrentJobCompletes) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config(2));
  std::shared_ptr<workloads::SyntheticRun> bad_run, good_run;
  auto bad = kernel_fails_on_device_0(bad_run, 6, 2);
  workloads::SyntheticOptions slow;  // long enough to be running when the other job fails
  slow.partitions = 12;
  slow.input_bytes = 256 << 10;
  slow.rounds = 400;
  slow.name = "good";
  auto made = workloads::make_synthetic_job(slow, good_run);
  ASSERT_TRUE(made) << made.error().what();
  auto good = std::move(*made);
  good.devices = std::vector<int>{1};
  std::error_code bad_result, good_result{make_error_code(Errc::cancelled)};
  std::string bad_message;
  JobReport good_report;
  bool bad_first = false;
  engine.async_submit(std::move(good), [&](std::error_code ec, JobReport r) {
    good_result = ec;
    good_report = std::move(r);
  });
  engine.async_submit(std::move(bad), [&](std::error_code ec, JobReport r) {
    bad_result = ec;
    bad_message = r.error;
    bad_first = good_result == make_error_code(Errc::cancelled);
  });
  io.run();
  EXPECT_EQ(bad_result, make_error_code(Errc::kernel_failed));
  EXPECT_NE(bad_message.find("device 0"), std::string::npos) << bad_message;
  EXPECT_TRUE(bad_first) << "the failure must not wait for the other job";
  EXPECT_FALSE(good_result) << good_report.error;
  EXPECT_EQ(good_report.partitions_done, 12u);
  expect_outputs_correct(*good_run);
  expect_idle(engine);
}

// A kernel that faults its device while later partitions' pageable inputs
// are being staged: the staging threads' waits and sends fail
// with the fault instead of hanging, and the job returns everything.
TEST(Faults, DeviceFaultMidStagingFailsTheJobAndReturnsEverything) {
  for (const int threads : {1, 4}) {
    asio::io_context io;
    auto c = host_config(1);
    c.staging_threads = threads;
    Engine engine(io.get_executor(), c);
    std::shared_ptr<workloads::SyntheticRun> run;
    auto job = synthetic(run, 8, std::size_t{3} << 20, /*pageable=*/true);
    job.partitions[1].work.cpu = [](const KernelContext&) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      return make_error_code(Errc::kernel_failed);
    };
    std::error_code ec;
    const auto report = run_job(engine, io, std::move(job), ec);
    EXPECT_TRUE(ec == make_error_code(Errc::kernel_failed) ||
                ec == make_error_code(Errc::device_fault))
        << ec.message() << ": " << report.error << " (" << threads << " staging threads)";
    EXPECT_LT(report.partitions_done, 8u);
    expect_idle(engine);
  }
}

// A job's callables are the caller's code: one that throws fails its own
// job with Errc::callable_threw and the exception's text, like an error
// it returned, instead of ending the process from an engine thread. The
// engine gives back everything, and takes the next job. A throwing CPU
// kernel faults its emulated device, as a returned error does, so that case
// runs last on a device of its own.
TEST(Faults, ThrowingCallablesFailTheirJobWithTheExceptionsText) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config(2));
  const auto throws = [](const char* what) { return std::runtime_error(what); };
  struct Case {
    const char* name;
    std::function<void(Job&)> arm;
    std::string expect;  // in the job's error
  };
  const std::vector<Case> cases = {
      {"split producer",
       [&](Job& j) {
         j.partitions[1].split_producer = [&](std::span<const std::span<std::byte>>,
                                              ProducerTask t) -> std::error_code {
           if (t.index == 1) throw throws("witness missing");
           return {};
         };
         j.partitions[1].producer_tasks = 3;
       },
       "partition 1: producer threw: witness missing"},
      {"plain producer",
       [&](Job& j) {
         j.partitions[2].split_producer = nullptr;
         j.partitions[2].share_align = 0;  // a plain producer is never streamed
         j.partitions[2].producer = [](std::span<const std::span<std::byte>>) -> std::error_code {
           throw 42;  // not a std::exception
         };
       },
       "partition 2: producer threw: an exception not derived from std::exception"},
      {"verify",
       [&](Job& j) {
         j.verify = [&](const Partition&, std::size_t i) -> std::error_code {
           if (i == 3) throw throws("checksum table gone");
           return {};
         };
       },
       "partition 3: its verify threw: checksum table gone"},
      {"validate",
       [&](Job& j) {
         j.validate = [&](const Partition&, std::size_t i) -> Error {
           if (i == 0) throw throws("cannot read the circuit");
           return {};
         };
       },
       "its validate threw: cannot read the circuit"},
      // Out of host memory, the text says so and names the host's limit
      // (common/host_memory_limit.hpp), where "std::bad_alloc" said neither.
      {"producer out of memory",
       [&](Job& j) {
         j.partitions[1].split_producer = [&](std::span<const std::span<std::byte>>,
                                              ProducerTask) -> std::error_code {
           throw std::bad_alloc();
         };
       },
       "partition 1: producer threw: std::bad_alloc: the system refused host memory; " +
           common::HostMemoryLimit::current().describe()},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    std::shared_ptr<workloads::SyntheticRun> run;
    auto job = synthetic(run, 4, 64 << 10);
    c.arm(job);
    std::error_code ec;
    const auto report = run_job(engine, io, std::move(job), ec);
    EXPECT_EQ(ec, make_error_code(Errc::callable_threw)) << ec.message();
    EXPECT_NE(report.error.find(c.expect), std::string::npos) << report.error;
    expect_idle(engine);
  }
  // The engine still runs jobs, on both devices.
  std::shared_ptr<workloads::SyntheticRun> good;
  std::error_code ec;
  auto report = run_job(engine, io, synthetic(good, 8, 64 << 10), ec);
  ASSERT_FALSE(ec) << report.error;
  expect_outputs_correct(*good);

  std::shared_ptr<workloads::SyntheticRun> run;
  auto job = synthetic(run, 2, 64 << 10);
  job.devices = std::vector<int>{1};
  job.partitions[0].work.cpu = [&](const KernelContext&) -> std::error_code {
    throw throws("kernel bug");
  };
  report = run_job(engine, io, std::move(job), ec);
  EXPECT_EQ(ec, make_error_code(Errc::callable_threw)) << report.error;
  EXPECT_NE(report.error.find("partition's CPU kernels threw: kernel bug"), std::string::npos)
      << report.error;
  expect_idle(engine);
}

struct BadCase {
  const char* name;
  std::function<void(Job&)> spoil;
  const char* message;
};

TEST(Faults, BadInputIsRejectedBeforeAnyWorkWithANamedError) {
  asio::io_context io;
  auto cfg = host_config(2);
  cfg.device_budget_bytes = 8 << 20;
  Engine engine(io.get_executor(), cfg);
  std::vector<std::byte> small(64);
  const BadCase cases[] = {
      {"empty job", [](Job& j) { j.partitions.clear(); }, "has no partitions"},
      {"zero input", [](Job& j) { j.partitions[1].inputs[0].bytes = 0; },
       "partition 1: input 0 is empty"},
      {"zero output", [](Job& j) { j.partitions[2].outputs[0].bytes = 0; },
       "partition 2: output 0 is empty"},
      {"no producer", [](Job& j) { j.partitions[0].split_producer = nullptr; },
       "produced inputs but no producer"},
      {"two producers",
       [](Job& j) {
         j.partitions[1].producer = [](std::span<const std::span<std::byte>>) {
           return std::error_code{};
         };
       },
       "partition 1 has both a producer and a split producer"},
      {"no cpu kernel", [](Job& j) { j.partitions[3].work.cpu = nullptr; }, "no CPU version"},
      {"bad device",
       [](Job& j) {
         j.devices = std::vector<int>{0, 7};
       },
       "device 7 does not exist"},
      {"too big", [](Job& j) { j.partitions[0].scratch_bytes = 64 << 20; }, "of device memory"},
      {"custom",
       [](Job& j) {
         j.validate = [](const Partition&, std::size_t i) {
           return i == 2 ? Error{Errc::invalid_argument, "a and b differ in size"} : Error{};
         };
       },
       "partition 2: a and b differ in size"},
  };
  int done = 0;
  for (const auto& bad : cases) {
    std::shared_ptr<workloads::SyntheticRun> run;
    auto job = synthetic(run, 4);
    bad.spoil(job);
    engine.async_submit(
        std::move(job), [&, name = bad.name, msg = bad.message](std::error_code ec, JobReport r) {
          ++done;
          EXPECT_EQ(ec, make_error_code(Errc::invalid_argument)) << name;
          EXPECT_NE(r.error.find(msg), std::string::npos) << name << ": " << r.error;
          EXPECT_EQ(r.partitions_done, 0u) << name;
        });
  }
  io.run();
  EXPECT_EQ(done, static_cast<int>(std::size(cases)));
  expect_idle(engine);
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

// The process's address space in bytes, from /proc (0 where there is none).
std::size_t address_space_bytes() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmSize:", 0) == 0) return std::stoull(line.substr(7)) * 1024;
  return 0;
}

// An engine whose device cannot be set up (here its staging buffers cannot
// be allocated: the child's address space is capped below one 1 GiB chunk)
// returns the error from create. It once waited forever in its destructor
// for threads create had not started yet.
TEST(FaultsDeathTest, DeviceThatCannotBeSetUpFailsCreateInsteadOfHanging) {
  if (kSanitized)
    GTEST_SKIP() << "sanitizers reserve address space and abort on failed allocations";
  if (address_space_bytes() == 0) GTEST_SKIP() << "no /proc/self/status";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        alarm(30);                // a hang ends the child by SIGALRM, which fails the test
        mallopt(M_ARENA_MAX, 1);  // threads' malloc arenas reserve 64 MiB each
        rlimit cap{};
        cap.rlim_cur = cap.rlim_max = address_space_bytes() + (std::size_t{512} << 20);
        setrlimit(RLIMIT_AS, &cap);
        auto c = host_config(1);
        c.staging_chunk_bytes = std::size_t{1} << 30;
        c.staging_threads = 1;
        asio::io_context io;
        auto engine = Engine::create(io.get_executor(), c);
        if (engine) std::_Exit(1);
        std::fprintf(stderr, "%s\n", engine.error().what().c_str());
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(0), "device 0 .*staging buffer");
}

}  // namespace
}  // namespace stoker::engine
