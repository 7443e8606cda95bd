// The stress driver (tools/stress/stress_driver.hpp) on the host backend: a short,
// fixed-seed run must keep every invariant and actually inject what it
// claims to (each fault kind, cancellations, budget pressure, every token,
// ntt_msm_h jobs over a resident toy SRS). Also the thread listing its
// rounds name left-behind threads with (tools/stress/thread_names.hpp).
#include <gtest/gtest.h>
#include <pthread.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <future>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "common/host_memory_limit.hpp"
#include "engine/engine.hpp"
#include "engine/workloads/toy_srs.hpp"
#include "tools/stress/stress_checks.hpp"
#include "tools/stress/stress_driver.hpp"
#include "tools/stress/stress_jobs.hpp"
#include "tools/stress/thread_names.hpp"

namespace stoker::tools::stress {
namespace {

StressOptions host_options(std::uint64_t seed, std::size_t jobs) {
  StressOptions o;
  auto& c = o.config;
  c.devices.backend = devices::BackendChoice::host;
  c.devices.host.device_count = 3;
  c.devices.host.slowdown = {1.0, 2.0, 3.0};
  c.devices.host.memory_bytes = std::size_t{256} << 20;
  c.staging_chunk_bytes = std::size_t{64} << 10;  // larger pageable inputs take two chunks
  c.staging_threads = 2;
  c.worker_threads = 2;
  o.seed = seed;
  o.jobs = jobs;
  o.round_jobs = jobs / 3;
  o.submitters = 3;
  o.max_partitions = 4;
  o.max_partition_bytes = 128 << 10;
  o.fault_rate = 0.3;
  o.cancel_rate = 0.25;
  o.max_cancel_delay_ms = 4;
  o.stall_s = 100;
  return o;
}

TEST(Stress, HostBackendMixKeepsEveryInvariant) {
  const auto o = host_options(20240607, 450);
  auto result = run(o);
  ASSERT_TRUE(result) << result.error().what();
  const auto& r = *result;
  ASSERT_TRUE(r.ok) << summarize(r);
  EXPECT_EQ(r.rounds, 3u);
  EXPECT_EQ(r.jobs_submitted, 450u);
  EXPECT_EQ(r.jobs_completed, 450u) << "every handler ran exactly once";
  EXPECT_GT(r.jobs_succeeded, 450u / 3) << summarize(r);
  for (int f = 1; f < kFaultKinds; ++f) {
    const auto i = static_cast<std::size_t>(f);
    EXPECT_GE(r.faults_survived[i], 1u) << fault_name(static_cast<Fault>(f)) << "\n"
                                        << summarize(r);
    EXPECT_LE(r.faults_survived[i], r.faults_injected[i]);
  }
  // One kernel fault per engine lifetime, and on the host backend it breaks
  // the emulated device it ran on, as a faulting kernel breaks a GPU.
  EXPECT_EQ(r.faults_injected[static_cast<std::size_t>(Fault::kernel_error)], r.rounds);
  EXPECT_EQ(r.devices_broken, r.rounds);
  EXPECT_GE(r.cancels_requested, 1u);
  EXPECT_GE(r.cancels_aborted, 1u) << summarize(r);
  for (auto n : r.by_token) EXPECT_GE(n, 1u) << "every completion token used";
  for (auto n : r.inputs_by_kind) EXPECT_GE(n, 1u) << "every input kind used";
  // Backpressure: more was wanted than the budget holds, and the budget held.
  EXPECT_GT(r.pressure_samples, 0u) << summarize(r);
  EXPECT_GT(r.peak_demand, r.host_budget_limit);
  EXPECT_GT(r.peak_host_budget_in_use, 0u);
  EXPECT_LE(r.peak_host_budget_in_use, r.host_budget_limit);
  EXPECT_GT(r.peak_device_in_use, 0u);
  EXPECT_GT(r.partitions_done, r.jobs_succeeded);
  EXPECT_GT(r.latency_p99_ms, 0.0);
  EXPECT_GE(r.latency_p99_ms, r.latency_p50_ms);
  EXPECT_EQ(r.threads_after, r.threads_baseline) << "no thread left behind";
  EXPECT_TRUE(r.notes.empty()) << summarize(r);
  // ntt_msm_h over the toy SRS: 2^4..2^10 on the host backend, the SRS for
  // 2^10 loaded into each round's engine and evicted at its end (the
  // driver checks device_resident_bytes around both).
  EXPECT_GE(r.ntt_msm_h_jobs, 20u) << summarize(r);
  EXPECT_GE(r.ntt_msm_h_verified, 5u) << summarize(r);
  EXPECT_LT(r.ntt_msm_h_verified, r.ntt_msm_h_jobs) << "some failed as their faults say";
  EXPECT_EQ(r.synthetic_jobs + r.blend_jobs + r.ntt_msm_h_jobs, r.jobs_submitted);
  EXPECT_EQ(r.srs_log_n, 10u);
  EXPECT_EQ(r.srs_bytes, engine::workloads::toy_srs_points(10) * sizeof(kernels::G1Affine));
  EXPECT_EQ(r.srs_loads, r.rounds);
  EXPECT_EQ(r.srs_evictions, r.rounds);
  const auto json = to_json(r);
  EXPECT_NE(json.find("\"ok\":true"), std::string::npos) << json;
  EXPECT_NE(json.find("\"kernel_error\":{\"injected\":3"), std::string::npos) << json;
  EXPECT_NE(json.find("\"ntt_msm_h\":" + std::to_string(r.ntt_msm_h_jobs)), std::string::npos)
      << json;
  EXPECT_NE(json.find("\"evictions\":3"), std::string::npos) << json;
  EXPECT_NE(summarize(r).find("ntt_msm_h " + std::to_string(r.ntt_msm_h_jobs)), std::string::npos)
      << summarize(r);
}

// The names a round's thread violation lists: a thread shows up under the
// name it gave itself while it runs, and is gone once joined.
TEST(StressThreadNames, ListsARunningThreadByNameUntilItIsJoined) {
  constexpr const char* kName = "stress-probe";
  const auto has = [&](const std::vector<std::string>& names) {
    return std::count(names.begin(), names.end(), kName);
  };
  // A thread made and joined first, so that the baseline holds what a
  // runtime starts beside a process's first thread (ThreadSanitizer's
  // background thread), as a round's baseline does after its engine's.
  std::thread([] {}).join();
  const auto before = thread_names();
  ASSERT_FALSE(before.empty()) << "/proc/self/task unreadable";
  EXPECT_EQ(has(before), 0);
  EXPECT_TRUE(std::is_sorted(before.begin(), before.end()));

  std::promise<void> named, release;
  std::thread probe([&] {
    pthread_setname_np(pthread_self(), kName);
    named.set_value();
    release.get_future().wait();
  });
  named.get_future().wait();
  const auto during = thread_names();
  EXPECT_EQ(has(during), 1);
  EXPECT_EQ(threads_added(before, during), std::vector<std::string>{kName});
  release.set_value();
  probe.join();

  // The kernel may list a joined thread for a moment after pthread_join.
  auto after = thread_names();
  for (int i = 0; i < 500 && has(after) != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    after = thread_names();
  }
  EXPECT_EQ(has(after), 0);
  EXPECT_TRUE(threads_added(before, after).empty());
}

TEST(StressThreadNames, AddedThreadsCountRepeatedNames) {
  const std::vector<std::string> before = {"stoker", "worker", "worker"};
  const std::vector<std::string> after = {"worker", "NCCL RAS", "worker", "stoker", "worker"};
  EXPECT_EQ(threads_added(before, after), (std::vector<std::string>{"NCCL RAS", "worker"}));
  EXPECT_TRUE(threads_added(after, before).empty()) << "threads that ended are not added";
  EXPECT_TRUE(threads_added(after, after).empty());
}

TEST(Stress, SeedNamesTheJobMix) {
  MixLimits limits;
  limits.devices = 3;
  limits.host_budget = 8 << 20;
  limits.device_memory = 256 << 20;
  auto mix = [&](std::uint64_t seed) {
    Rng rng(mix_seed(seed, 0, 1));
    std::string all;
    for (std::size_t i = 0; i < 50; ++i)
      all += make_spec(rng, limits, 0, 0, i, i == 7).describe() + "\n";
    return all;
  };
  EXPECT_EQ(mix(5), mix(5));
  EXPECT_NE(mix(5), mix(6));
  EXPECT_NE(mix(5).find("fault kernel_error"), std::string::npos);
}

TEST(Stress, VerificationCatchesAWrongOutput) {
  MixLimits limits;
  limits.devices = 1;
  limits.fault_rate = 0;
  limits.cancel_rate = 0;
  Rng rng(3);
  alloc::MemoryBudget budget(64 << 20, "test");
  alloc::PinnedPool pool(devices::Backend::host, budget);
  for (int i = 0; i < 8; ++i) {
    const auto spec = make_spec(rng, limits, 0, 0, static_cast<std::size_t>(i), false);
    JobBuffers buffers;
    auto job = build_job(spec, devices::Backend::host, pool, buffers);
    ASSERT_TRUE(job) << job.error().what();
    // Nothing ran: the outputs hold zeros, which the check must reject.
    EXPECT_NE(verify_outputs(spec, buffers), "") << spec.describe();
    EXPECT_FALSE(expected(spec).code) << spec.describe();
  }
}

TEST(Stress, NttMsmHSizesFollowTheBackendAndThePartitionBound) {
  EXPECT_EQ(stress_ntt_max_log_n(devices::Backend::host, 256 << 10), kStressNttMaxLogNHost);
  EXPECT_EQ(stress_ntt_max_log_n(devices::Backend::cuda, 8 << 20), kStressNttMaxLogNGpu);
  EXPECT_EQ(stress_ntt_max_log_n(devices::Backend::host, 4 << 10), 7u) << "2^7 x 32 B = 4 KiB";
  EXPECT_EQ(stress_ntt_max_log_n(devices::Backend::host, 511), 0u) << "2^4 does not fit";

  MixLimits limits;
  limits.devices = 2;
  limits.ntt_max_log_n = 9;
  Rng rng(mix_seed(7, 0, 1));
  std::size_t ntt = 0;
  for (std::size_t i = 0; i < 200; ++i) {
    const auto spec = make_spec(rng, limits, 0, 0, i, false);
    if (spec.workload != Workload::ntt_msm_h) continue;
    ++ntt;
    EXPECT_GE(spec.ntt_log_n, kStressNttMinLogN) << spec.describe();
    EXPECT_LE(spec.ntt_log_n, 9u) << spec.describe();
    EXPECT_NE(spec.describe().find("ntt_msm_h"), std::string::npos) << spec.describe();
  }
  EXPECT_GT(ntt, 20u) << "about a fifth of the mix";
  limits.ntt_max_log_n = 0;
  for (std::size_t i = 0; i < 200; ++i)
    EXPECT_NE(make_spec(rng, limits, 0, 0, i, false).workload, Workload::ntt_msm_h);
}

// ntt_msm_h specs through a host engine holding the stress run's toy SRS
// (made for 2^7): without a fault they succeed, at the SRS's size and
// below, every partition verified with the toy secret; with verify_error
// the job is checked with another SRS's secret and fails with
// verification_failed, as expected() says.
TEST(Stress, NttMsmHWithTheWrongSecretFailsVerification) {
  constexpr unsigned kSrsLogN = 7;
  boost::asio::io_context io;
  engine::Config config;
  config.devices.backend = devices::BackendChoice::host;
  config.devices.host.device_count = 2;
  config.devices.host.memory_bytes = std::size_t{64} << 20;
  config.host_budget_bytes = std::size_t{16} << 20;
  config.worker_threads = 2;
  engine::Engine engine(io.get_executor(), config);
  std::vector<kernels::G1Affine> points(engine::workloads::toy_srs_points(kSrsLogN));
  ASSERT_FALSE(engine::workloads::make_toy_srs(kStressSrsSeed, kSrsLogN, 0, points));
  auto srs = engine.load_srs(points);
  ASSERT_TRUE(srs) << srs.error().what();
  const NttSrs ntt{*srs, kSrsLogN, &engine.devices()};
  alloc::MemoryBudget budget(8 << 20, "test");
  alloc::PinnedPool pool(devices::Backend::host, budget);

  const auto submit = [&](const JobSpec& spec, JobBuffers& buffers, std::error_code& ec) {
    auto job = build_job(spec, devices::Backend::host, pool, buffers, &ntt);
    EXPECT_TRUE(job) << job.error().what();
    engine::JobReport report;
    if (!job) return report;
    engine.async_submit(std::move(*job), [&](std::error_code e, engine::JobReport r) {
      ec = e;
      report = std::move(r);
    });
    io.run();
    io.restart();
    return report;
  };

  JobSpec spec;
  spec.id = 1234;
  spec.workload = Workload::ntt_msm_h;
  spec.partitions = 3;
  for (unsigned log_n : {kStressNttMinLogN, 5u, kSrsLogN}) {
    spec.ntt_log_n = log_n;
    JobBuffers buffers;
    std::error_code ec;
    const auto report = submit(spec, buffers, ec);
    ASSERT_FALSE(ec) << "2^" << log_n << ": " << report.error;
    ASSERT_TRUE(buffers.ntt);
    EXPECT_TRUE(buffers.ntt->all_verified()) << "2^" << log_n;
    EXPECT_EQ(verify_outputs(spec, buffers), "") << "2^" << log_n;
  }
  spec.ntt_log_n = 5;
  spec.fault = Fault::verify_error;
  const auto want = expected(spec);
  EXPECT_EQ(want.code, make_error_code(Errc::verification_failed));
  {
    JobBuffers buffers;
    std::error_code ec;
    const auto report = submit(spec, buffers, ec);
    EXPECT_EQ(ec, make_error_code(Errc::verification_failed)) << report.error;
    for (const auto& m : want.message)
      EXPECT_NE(report.error.find(m), std::string::npos) << report.error;
    ASSERT_TRUE(buffers.ntt);
    EXPECT_FALSE(buffers.ntt->all_verified());
    EXPECT_NE(verify_outputs(spec, buffers), "");
  }
  EXPECT_TRUE(engine.stats().idle());
  for (auto b : engine.stats().device_resident_bytes) EXPECT_EQ(b, srs->bytes());

  // Without the resident SRS the stress tool cannot build the job.
  JobBuffers buffers;
  const auto refused = build_job(spec, devices::Backend::host, pool, buffers);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().what().find("toy SRS"), std::string::npos) << refused.error().what();
}

// What the machine refuses is a resource failure, not a violation of the
// engine's: a thread the system would not start, host memory it would not
// give (a job failed by a pinned allocation, or by a callable that threw
// std::bad_alloc). A budget's refusal is the engine's own logic and stays
// a violation where the mix did not expect it.
TEST(Stress, AllocationsAndThreadsTheSystemRefusesAreResourceFailures) {
  const auto refused = common::host_memory_refused("a pinned allocation", 8 << 20);
  EXPECT_TRUE(machine_refused(refused.code, "job 'x' partition 0: " + refused.what()));
  EXPECT_TRUE(machine_refused(make_error_code(Errc::callable_threw),
                              "partition 1: producer threw: " + refused.what()));
  EXPECT_TRUE(machine_refused(std::make_error_code(std::errc::resource_unavailable_try_again),
                              "could not start thread stoker-stage-0 (staging thread 3 of 4): "
                              "Resource temporarily unavailable"));
  EXPECT_FALSE(machine_refused(make_error_code(Errc::out_of_host_memory),
                               "memory budget 'engine host': a request of 100 bytes exceeds its "
                               "limit of 10 bytes"));
  EXPECT_FALSE(machine_refused(make_error_code(Errc::callable_threw),
                               "partition 1: producer threw: stress: producer threw"));
  EXPECT_FALSE(machine_refused(make_error_code(Errc::kernel_failed), refused.what()));
}

TEST(Stress, BadOptionsAreRefusedWithANamedError) {
  auto o = host_options(1, 0);
  auto r = run(o);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().what().find("bound"), std::string::npos) << r.error().what();
  o.jobs = 10;
  o.submitters = 0;
  r = run(o);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().what().find("submitters"), std::string::npos) << r.error().what();
}

// What `stoker stress` refuses as a usage error, run() refuses with an
// error naming the value, before any engine exists; a stall bound of 0
// would otherwise abort the process as soon as a job is in flight.
TEST(Stress, NonsenseBoundsAreRefusedInsteadOfAborting) {
  const auto refused = [](StressOptions o, const char* what) {
    auto r = run(o);
    ASSERT_FALSE(r) << what;
    EXPECT_EQ(r.error().code, make_error_code(Errc::invalid_argument)) << what;
    EXPECT_NE(r.error().what().find(what), std::string::npos) << r.error().what();
  };
  const auto o = host_options(1, 10);
  auto bad = o;
  bad.stall_s = 0;
  refused(bad, "stall bound must be 1 s to 30 days, not 0 s");
  bad.stall_s = 0.5;
  refused(bad, "not 0.5 s");
  bad.stall_s = std::numeric_limits<double>::quiet_NaN();
  refused(bad, "stall bound");
  bad = o;
  bad.duration_s = -1;
  refused(bad, "duration must be 0 (none) or up to 30 days, not -1 s");
  bad.duration_s = 1e300;
  refused(bad, "duration");
  bad = o;
  bad.round_s = 0;
  refused(bad, "round duration");
  bad = o;
  bad.max_in_flight = 0;
  refused(bad, "max in flight must be 1..1048576, not 0");
  bad = o;
  bad.max_cancel_delay_ms = -2;
  refused(bad, "max cancel delay");
}

}  // namespace
}  // namespace stoker::tools::stress
