// stoker stress: parses options, runs the stress driver (stress_driver.hpp),
// prints its report. Exit status: 0 all invariants held, 1 a violation (the
// seed and the job that broke are printed), 2 bad options.
#include "tools/stress/stress_command.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "devices/device_set.hpp"
#include "engine/config.hpp"
#include "tools/cli/cli_number.hpp"
#include "tools/cli/command_line.hpp"
#include "tools/stress/stress_driver.hpp"

namespace stoker::tools {
namespace {

const std::string kHelp =
    std::string(R"(usage: stoker stress [options]
Submits a random mix of jobs (random partitions and sizes; pinned, pageable,
registered and produced inputs; priorities and device affinities; every
completion token from several threads; cancellations mid-job; jobs that must
fail; a host budget smaller than the jobs in flight want) and checks the
engine's invariants while it runs and after each engine lifetime.
  --duration S        stop after S seconds (default 10 when --jobs is not given)
  --jobs N            stop after N jobs
  --seed S            the job mix (default 1); a failure prints it
  --submitters K      submitting threads (default 3)
  --round-jobs N      jobs per engine lifetime (default 150)
  --max-partitions N  partitions per job, 1..N (default 6)
  --max-kib K         bytes per input, up to K KiB (default 256 on the host backend, 8192 on GPUs)
  --fault-rate F      share of jobs with an injected fault (default 0.2)
  --cancel-rate F     share of the others cancelled mid-job (default 0.15)
  --in-flight N       jobs each submitter keeps out at most (default 4)
  --stall-s S         abort with the jobs in flight listed when none completes for S s (default 120)
  --json              machine-readable report
  --quiet             no per-round progress lines
)") +
    kEngineOptionsHelp +
    R"(  (on the host backend the defaults are 3 devices with slowdowns 1,2,4 and 64 KiB staging
  chunks; the host budget defaults to about four of the largest partitions)
)";

bool given(const std::vector<std::string>& args, const std::string& flag) {
  for (const auto& a : args)
    if (a == flag || a.rfind(flag + "=", 0) == 0) return true;
  return false;
}

}  // namespace

int stress_command(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (print_help_if_asked(args, kHelp.c_str())) return 0;
  const bool host_shape = given(args, "--host-devices") || std::getenv("STOKER_HOST_DEVICES");
  const bool slowdown = given(args, "--slowdown") || std::getenv("STOKER_HOST_SLOWDOWN");
  const bool chunk = given(args, "--chunk-mib") || given(args, "--chunk-kib") ||
                     std::getenv("STOKER_CHUNK_MIB") || std::getenv("STOKER_CHUNK_KIB");
  const std::vector<std::string> original = args;
  auto config = engine_config("stress", args);
  if (!config) return 2;
  const bool host = config->devices.backend == devices::BackendChoice::host ||
                    (config->devices.backend == devices::BackendChoice::automatic &&
                     devices::cuda_device_count() == 0);
  if (host) {
    if (!host_shape) config->devices.host.device_count = 3;
    if (!slowdown && !host_shape) config->devices.host.slowdown = {1.0, 2.0, 4.0};
    if (!chunk) config->staging_chunk_bytes = std::size_t{64} << 10;
  }

  stress::StressOptions o;
  o.config = *config;
  o.max_partition_bytes = host ? std::size_t{256} << 10 : std::size_t{8} << 20;
  bool json = false, quiet = false;
  constexpr std::size_t kMaxSize = std::numeric_limits<std::size_t>::max();
  constexpr double kForever = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) {
        std::fprintf(stderr, "stoker stress: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return args[++i];
    };
    // The option's value in lo..hi, or exit 2 naming them.
    auto number = [&](double lo, double hi) {
      const auto n = real_option("stress", a, value(), lo, hi);
      if (!n) std::exit(2);
      return *n;
    };
    auto integer = [&]<typename T>(T lo, T hi) {
      const auto n = integer_option("stress", a, value(), lo, hi);
      if (!n) std::exit(2);
      return *n;
    };
    if (a == "--duration")
      o.duration_s = number(0, kForever);
    else if (a == "--jobs")
      o.jobs = integer(std::size_t{0}, kMaxSize);
    else if (a == "--seed")
      o.seed = integer(std::uint64_t{0}, std::numeric_limits<std::uint64_t>::max());
    else if (a == "--submitters")
      o.submitters = integer(0, std::numeric_limits<int>::max());
    else if (a == "--round-jobs")
      o.round_jobs = integer(std::size_t{0}, kMaxSize);
    else if (a == "--max-partitions")
      o.max_partitions = integer(std::size_t{0}, kMaxSize);
    else if (a == "--max-kib")
      o.max_partition_bytes = integer(std::size_t{0}, kMaxSize >> 10) << 10;
    else if (a == "--fault-rate")
      o.fault_rate = number(0, 1);
    else if (a == "--cancel-rate")
      o.cancel_rate = number(0, 1);
    else if (a == "--in-flight")
      o.max_in_flight = integer(std::size_t{0}, kMaxSize);
    else if (a == "--stall-s")
      o.stall_s = number(0, kForever);
    else if (a == "--json")
      json = true;
    else if (a == "--quiet")
      quiet = true;
    else {
      std::fprintf(stderr, "stoker stress: unknown option '%s' (see --help)\n", a.c_str());
      return 2;
    }
  }
  if (o.jobs == 0 && o.duration_s <= 0) o.duration_s = 10;
  if (!quiet)
    o.log = [](const std::string& line) {
      std::fprintf(stderr, "stoker stress: %s\n", line.c_str());
    };

  auto report = stress::run(o);
  if (!report) {
    std::fprintf(stderr, "stoker stress: %s\n", report.error().what().c_str());
    return 2;
  }
  if (json)
    std::printf("%s\n", stress::to_json(*report).c_str());
  else
    std::fputs(stress::summarize(*report).c_str(), stdout);
  if (!report->ok) {
    std::string again = "stoker stress";
    bool has_seed = false;
    for (const auto& a : original) {
      again += " " + a;
      has_seed |= a == "--seed";
    }
    if (!has_seed) again += " --seed " + std::to_string(o.seed);
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

}  // namespace stoker::tools
