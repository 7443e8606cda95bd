#include "tools/stress/stress_driver.hpp"

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/system_executor.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <future>
#include <mutex>

#include "common/elapsed.hpp"
#include "common/host_memory_limit.hpp"
#include "devices/nccl_communicator.hpp"
#include "engine/engine.hpp"
#include "engine/workloads/toy_srs.hpp"
#include "tools/stress/stress_round.hpp"

namespace stoker::tools::stress {

namespace asio = boost::asio;

int process_threads() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("Threads:", 0) == 0) return std::atoi(line.c_str() + 8);
  return -1;
}

namespace {

Error check_options(const StressOptions& o) {
  // The command line's bounds (tools/stress/stress_command.cpp), so that a
  // caller of run() gets an error where `stoker stress` would give a usage
  // error, never an aborted process or a run that cannot end.
  constexpr double kDay = 86400;
  const auto number = [](double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", v);
    return std::string(text);
  };
  const auto seconds = [&](double s) { return number(s) + " s"; };
  if (!(o.duration_s >= 0 && o.duration_s <= 30 * kDay))
    return {Errc::invalid_argument,
            "duration must be 0 (none) or up to 30 days, not " + seconds(o.duration_s)};
  if (o.jobs == 0 && o.duration_s <= 0)
    return {Errc::invalid_argument, "stress needs a bound: a job count or a duration"};
  // A stall aborts the process: a bound under a second would abort a
  // healthy run, and 0 one as soon as any job is in flight.
  if (!(o.stall_s >= 1 && o.stall_s <= 30 * kDay))
    return {Errc::invalid_argument,
            "stall bound must be 1 s to 30 days, not " + seconds(o.stall_s)};
  if (!(o.round_s > 0 && o.round_s <= 30 * kDay))
    return {Errc::invalid_argument,
            "round duration must be above 0 and up to 30 days, not " + seconds(o.round_s)};
  if (!(o.max_cancel_delay_ms >= 0 && o.max_cancel_delay_ms <= 1e6))
    return {Errc::invalid_argument,
            "max cancel delay must be 0 to 1e6 ms, not " + number(o.max_cancel_delay_ms) + " ms"};
  if (o.submitters < 1 || o.submitters > 64)
    return {Errc::invalid_argument,
            "submitters must be 1..64, not " + std::to_string(o.submitters)};
  if (o.round_jobs == 0) return {Errc::invalid_argument, "round_jobs must be at least 1"};
  if (o.max_partitions == 0 || o.max_partitions > 1024)
    return {Errc::invalid_argument,
            "max partitions must be 1..1024, not " + std::to_string(o.max_partitions)};
  if (o.max_partition_bytes < 64)
    return {Errc::invalid_argument, "max partition size must be at least 64 bytes, not " +
                                        std::to_string(o.max_partition_bytes)};
  for (double r : {o.fault_rate, o.cancel_rate})
    if (!(r >= 0 && r <= 1))
      return {Errc::invalid_argument, "rates must be within 0..1, not " + std::to_string(r)};
  if (o.max_in_flight == 0 || o.max_in_flight > (std::size_t{1} << 20))
    return {Errc::invalid_argument,
            "max in flight must be 1..1048576, not " + std::to_string(o.max_in_flight)};
  return {};
}

}  // namespace

Result<StressReport> run(const StressOptions& options) {
  if (auto e = check_options(options)) return e;
  StressOptions o = options;
  // Backpressure must really wait: unless told otherwise the host budget
  // holds about four of the largest partitions, far less than the jobs in
  // flight want.
  const std::size_t largest_need = 3 * round_up(o.max_partition_bytes, 4096);
  if (o.config.host_budget_bytes == 0) o.config.host_budget_bytes = 4 * largest_need;

  StressReport rep;
  rep.seed = o.seed;
  // Process-wide threads that outlive any engine, started before the
  // baseline: Asio's system executor (use_future completes through it) and,
  // on CUDA, the runtime's own threads and NCCL's (the throwaway engine also
  // tells us the devices the mix may use, the rounds' own selection).
  {
    std::promise<void> p;
    asio::post(asio::system_executor(), [&] { p.set_value(); });
    p.get_future().wait();
  }
  MixLimits limits;
  devices::Backend backend = devices::Backend::host;
  {
    asio::io_context io;
    auto e = engine::Engine::create(io.get_executor(), o.config);
    if (!e) return Error{e.error().code, "the engine could not be created: " + e.error().what()};
    const auto& set = (*e)->devices();
    backend = set.backend();
    rep.backend = devices::to_string(backend);
    rep.devices = set.size();
    limits.devices = set.size();
    for (std::size_t d = 0; d < set.size(); ++d)
      limits.device_memory = std::max(limits.device_memory, set[d].info().total_memory);
    limits.host_budget = (*e)->stats().host_budget_limit;
    // NCCL's first communicator in a process starts one thread that lives
    // until the process exits, "NCCL RAS" (its RAS subsystem), beside the
    // per-communicator threads that ncclCommDestroy joins; later
    // communicators leave none. The rounds' engines make communicators to
    // broadcast the SRS to two or more GPUs, so unless NCCL has started here
    // the first such round counts NCCL RAS as a thread its engine left behind.
    // NCCL_RAS_ENABLE=0 would keep it from starting, but NCCL's settings
    // belong to whoever runs the process (devices/nccl_communicator.hpp).
    if (backend == devices::Backend::cuda && set.size() >= 2) {
      auto nccl = devices::NcclCommunicator::create(set);
      if (!nccl)
        rep.notes.push_back("NCCL over the run's " + std::to_string(set.size()) +
                            " GPUs could not be started before the thread baseline (rounds that "
                            "broadcast the SRS meet the same failure): " +
                            nccl.error().what());
    }
  }
  if (limits.devices > 64) return Error{Errc::invalid_argument, "stress handles up to 64 devices"};
  limits.max_partitions = o.max_partitions;
  // Every job the mix means to succeed must fit the host budget.
  limits.max_partition_bytes =
      std::min(o.max_partition_bytes, limits.host_budget / 2 / 3 / 4096 * 4096);
  if (limits.max_partition_bytes < 64)
    return Error{Errc::invalid_argument, "host budget of " + std::to_string(limits.host_budget) +
                                             " bytes is too small for a stress partition"};
  limits.fault_rate = o.fault_rate;
  limits.cancel_rate = o.cancel_rate;
  limits.max_cancel_delay_ms = o.max_cancel_delay_ms;
  // The toy SRS for the largest ntt_msm_h size the mix draws, computed once
  // on the CPU (before the thread baseline: it runs on threads of its own).
  limits.ntt_max_log_n = stress_ntt_max_log_n(backend, limits.max_partition_bytes);
  std::vector<kernels::G1Affine> srs_points;
  if (limits.ntt_max_log_n != 0) {
    const std::size_t points = engine::workloads::toy_srs_points(limits.ntt_max_log_n);
    const std::string what = "the toy SRS of 2^" + std::to_string(limits.ntt_max_log_n) +
                             " - 1 points for the ntt_msm_h jobs";
    const std::size_t bytes = points * sizeof(kernels::G1Affine);
    if (Error e = common::check_host_memory(what, bytes)) return e;
    try {
      srs_points.resize(points);
    } catch (const std::bad_alloc&) {
      return common::host_memory_refused(what, bytes);
    }
    if (auto e =
            engine::workloads::make_toy_srs(kStressSrsSeed, limits.ntt_max_log_n, 0, srs_points))
      return Error{e.code, "the toy SRS for the ntt_msm_h jobs: " + e.what()};
    rep.srs_log_n = limits.ntt_max_log_n;
    rep.srs_bytes = srs_points.size() * sizeof(kernels::G1Affine);
  }
  rep.threads_baseline = settle_threads(process_threads());

  std::mutex rep_mu;
  std::vector<double> latencies;
  const auto start = Clock::now();
  const auto end = o.duration_s > 0
                       ? start + std::chrono::microseconds(static_cast<long>(o.duration_s * 1e6))
                       : Clock::time_point::max();
  std::size_t submitted = 0;
  for (int r = 0;; ++r) {
    const auto now = Clock::now();
    if ((o.jobs && submitted >= o.jobs) || now >= end) break;
    const std::size_t quota = o.jobs ? std::min(o.round_jobs, o.jobs - submitted) : o.round_jobs;
    const auto round_end =
        std::min(end, now + std::chrono::microseconds(static_cast<long>(o.round_s * 1e6)));
    Round round(o, limits, rep, rep_mu, latencies, r, quota, round_end, srs_points);
    round.run();
    submitted += round.submitted();
    if (o.log) {
      char line[200];
      std::snprintf(line, sizeof line,
                    "round %d: %zu jobs so far, %zu succeeded, %zu violations, %.1f s", r,
                    rep.jobs_completed, rep.jobs_succeeded, rep.violation_count,
                    common::seconds_since(start));
      o.log(line);
    }
    if (round.submitted() == 0 && quota > 0 && Clock::now() < end) break;  // nothing got out
    if (rep.resource_failure_count != 0) break;  // the machine will not give what it takes
  }
  rep.wall_s = common::seconds_since(start);
  rep.jobs_per_s = rep.wall_s > 0 ? rep.jobs_completed / rep.wall_s : 0;
  rep.partitions_per_s = rep.wall_s > 0 ? rep.partitions_done / rep.wall_s : 0;
  if (!latencies.empty()) {
    std::sort(latencies.begin(), latencies.end());
    auto at = [&](double q) {
      return latencies[std::min(
          latencies.size() - 1,
          static_cast<std::size_t>(q * static_cast<double>(latencies.size())))];
    };
    rep.latency_p50_ms = at(0.50);
    rep.latency_p99_ms = at(0.99);
    rep.latency_max_ms = latencies.back();
  }
  if (rep.jobs_completed != rep.jobs_submitted) {
    rep.ok = false;
    ++rep.violation_count;
    rep.violations.push_back("seed " + std::to_string(o.seed) + ": " +
                             std::to_string(rep.jobs_submitted) + " jobs submitted but " +
                             std::to_string(rep.jobs_completed) + " handlers ran");
  }
  return rep;
}

}  // namespace stoker::tools::stress
