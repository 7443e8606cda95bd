// stoker stress: parses options, runs the stress driver (stress_driver.hpp),
// prints its report. Exit status: 0 all invariants held, 1 a violation (the
// seed and the job that broke are printed), a resource failure (what the
// machine refused: a thread, host memory) or a run that could not start,
// 2 bad options.
#include "tools/stress/stress_command.hpp"

#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "devices/device_set.hpp"
#include "engine/config.hpp"
#include "tools/cli/command_line.hpp"
#include "tools/cli/memory_guard.hpp"
#include "tools/stress/stress_driver.hpp"

namespace stoker::tools {
namespace {

const std::string kHelp =
    std::string(R"(usage: stoker stress [options]
Submits a random mix of jobs (the synthetic, blend and ntt_msm_h workloads,
the last over a toy SRS loaded into each engine and evicted at its end, every
point verified with the toy secret; random partitions and sizes; pinned, pageable,
registered and produced inputs; priorities and device affinities; every
completion token from several threads; cancellations mid-job; jobs that must
fail; a host budget smaller than the jobs in flight want) and checks the
engine's invariants while it runs and after each engine lifetime.
  --duration S        stop after S seconds (default 10 when --jobs is not given)
  --jobs N            stop after N jobs
  --seed S            the job mix (default 1); a failure prints it
  --submitters K      submitting threads, 1..64 (default 3)
  --round-jobs N      jobs per engine lifetime (default 150)
  --max-partitions N  partitions per job, 1..N, N up to 1024 (default 6)
  --max-kib K         bytes per input, up to K KiB (default 256 on the host backend, 8192 on GPUs)
  --fault-rate F      share of jobs with an injected fault (default 0.2)
  --cancel-rate F     share of the others cancelled mid-job (default 0.15)
  --in-flight N       jobs each submitter keeps out at most (default 4)
  --stall-s S         abort with the jobs in flight listed when none completes for S s,
                      S >= 1 (default 120)
  --json              machine-readable report
  --quiet             no per-round progress lines
)") +
    kEngineOptionsHelp +
    R"(  (on the host backend the defaults are 3 devices with slowdowns 1,2,4 and 64 KiB staging
  chunks; the host budget defaults to about four of the largest partitions)
)";

int run_stress(int argc, char** argv) {
  CommandLine cl("stress", kHelp);
  engine::Config config;
  stress::StressOptions o;
  std::optional<std::size_t> max_kib;
  bool json = false, quiet = false;
  constexpr std::size_t kMaxSize = std::numeric_limits<std::size_t>::max();
  // Bounds a run can be told to keep: more than a day, or fewer than one
  // job, submitter or partition, is a typing error, not a test.
  constexpr double kDay = 86400;
  cl.real("--duration", o.duration_s, 0.001, 30 * kDay);
  cl.number("--jobs", o.jobs, std::size_t{1}, kMaxSize);
  cl.number("--seed", o.seed);
  cl.number("--submitters", o.submitters, 1, 64);
  cl.number("--round-jobs", o.round_jobs, std::size_t{1}, kMaxSize);
  cl.number("--max-partitions", o.max_partitions, std::size_t{1}, std::size_t{1024});
  cl.number("--max-kib", max_kib, std::size_t{1}, kMaxSize >> 10);
  cl.real("--fault-rate", o.fault_rate, 0, 1);
  cl.real("--cancel-rate", o.cancel_rate, 0, 1);
  cl.number("--in-flight", o.max_in_flight, std::size_t{1}, std::size_t{1} << 20);
  // A stall aborts the process (the jobs in flight are listed first): a
  // bound under a second would abort a healthy run.
  cl.real("--stall-s", o.stall_s, 1, 30 * kDay);
  cl.flag("--json", json);
  cl.flag("--quiet", quiet);
  cl.engine_options(config);
  if (auto rc = cl.parse(argc, argv)) return *rc;
  const auto set_by_user = [&](std::string_view name) {
    return cl.given("--" + std::string(name)) || engine::Config::in_env(name);
  };
  const bool host_shape = set_by_user("host-devices");
  const bool slowdown = set_by_user("slowdown");
  const bool chunk = set_by_user("chunk-mib") || set_by_user("chunk-kib");
  const bool host = config.devices.backend == devices::BackendChoice::host ||
                    (config.devices.backend == devices::BackendChoice::automatic &&
                     devices::cuda_device_count() == 0);
  if (host) {
    if (!host_shape) config.devices.host.device_count = 3;
    if (!slowdown && !host_shape) config.devices.host.slowdown = {1.0, 2.0, 4.0};
    if (!chunk) config.staging_chunk_bytes = std::size_t{64} << 10;
  }
  o.config = config;
  o.max_partition_bytes = max_kib ? *max_kib << 10
                          : host  ? std::size_t{256} << 10
                                  : std::size_t{8} << 20;
  if (o.jobs == 0 && o.duration_s <= 0) o.duration_s = 10;
  if (!quiet)
    o.log = [](const std::string& line) {
      std::fprintf(stderr, "stoker stress: %s\n", line.c_str());
    };

  auto report = stress::run(o);
  if (!report) return cl.failure(report.error().what());
  if (json)
    std::printf("%s\n", stress::to_json(*report).c_str());
  else
    std::fputs(stress::summarize(*report).c_str(), stdout);
  if (report->violation_count == 0 && report->resource_failure_count != 0) {
    std::fprintf(stderr,
                 "stoker stress: stopped by a resource failure, not an invariant violation: %s\n",
                 report->resource_failures.front().c_str());
    return 1;
  }
  if (!report->ok) {
    std::string again = "stoker stress";
    for (int i = 1; i < argc; ++i) again += std::string(" ") + argv[i];
    if (!cl.given("--seed")) again += " --seed " + std::to_string(o.seed);
    std::fprintf(stderr,
                 "stoker stress: %zu invariant violation(s) with seed %llu; first: %s\n"
                 "  to repeat the job mix: %s\n",
                 report->violation_count, static_cast<unsigned long long>(o.seed),
                 report->violations.empty() ? "?" : report->violations.front().c_str(),
                 again.c_str());
    return 1;
  }
  return 0;
}

}  // namespace

int stress_command(int argc, char** argv) {
  return with_memory_guard("stress", [&] { return run_stress(argc, argv); });
}

}  // namespace stoker::tools
