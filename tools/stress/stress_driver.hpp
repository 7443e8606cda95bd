// The driver behind `stoker stress`: the engine under a random job mix,
// faults, bad input, cancellations and budget pressure, with its invariants
// checked while it runs and after. A library function, so tests call it
// directly.
//
// The run is a series of rounds; each round is one engine lifetime: an
// engine is created, several submitter threads submit their share of the mix
// through every completion token, a sampler thread watches engine.stats(),
// and at the end the engine must be idle (budgets, pinned bytes, device
// memory, slots, jobs all zero) and, once destroyed, leave no thread behind.
// When the mix holds ntt_msm_h jobs, the toy SRS for the largest size it
// draws (kStressSrsSeed) is computed once per run and loaded into each
// round's engine with Engine::load_srs before its first job; every
// ntt_msm_h job of the round uses it, and the round evicts it
// (async_evict_srs) once every handler ran.
// A round holds at most one kernel_error job: on the host backend a kernel
// error breaks its emulated device for good, as a faulting kernel does a GPU.
//
// Invariants (each violation names the seed, the job and what broke):
// - every handler is called exactly once;
// - every successful job's outputs match the CPU version word for word, and
//   its partitions ran on devices its affinity allows;
// - every failure carries the expected error code and message; jobs whose
//   devices a kernel fault broke may fail with that fault instead;
// - a cancelled job completes with operation_aborted, or succeeds if it had
//   finished first;
// - stats() never shows more budget or slots in use than exist;
// - idle at the end of every round, and no thread outlives a round's engine
//   (the violation names the extra threads);
// - the SRS's points stay resident on every device (device_resident_bytes
//   equal to its size, in every stats() sample) until the round evicts
//   them, and none are left after the eviction completes;
// - no job stalls: nothing completes for `stall_s` while jobs are in flight
//   aborts the process with the jobs in flight listed (a hang cannot be
//   returned from).
// What the machine refuses is a resource failure, not a violation: a
// thread the system will not start (the round's own, or the engine's, which
// Engine::create reports), host memory it will not give (for the stress
// tool's own inputs and outputs, or the engine's pinned blocks, which fail
// a job with Errc::out_of_host_memory and common::kRefusedBySystem in its
// message). A budget's refusal is the engine's own logic and stays a
// violation when the mix did not expect it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/config.hpp"
#include "tools/stress/stress_jobs.hpp"

namespace stoker::tools::stress {

struct StressOptions {
  engine::Config config;  // the engine's; a host budget of 0 is sized to force backpressure
  std::uint64_t seed = 1;
  double duration_s = 0;         // bound on time (0: none)
  std::size_t jobs = 0;          // bound on jobs (0: none); at least one bound is required
  int submitters = 3;            // threads submitting at once
  std::size_t round_jobs = 150;  // jobs per engine lifetime
  double round_s = 10;           // and its longest duration
  std::size_t max_partitions = 6;
  std::size_t max_partition_bytes = 256 << 10;  // per input
  double fault_rate = 0.2;                      // share of jobs with an injected fault
  double cancel_rate = 0.15;                    // share of the others cancelled mid-job
  double max_cancel_delay_ms = 15;
  std::size_t max_in_flight = 4;  // per submitter
  double stall_s = 120;
  std::function<void(const std::string&)> log;  // progress lines (per round); may be empty
};

struct StressReport {
  std::uint64_t seed = 0;
  std::string backend;
  std::size_t devices = 0;
  bool ok = true;
  std::vector<std::string> violations;  // the first few, each naming seed and job
  std::size_t violation_count = 0;
  // What the run met that is no violation of the engine's, such as NCCL
  // failing to start before the thread baseline.
  std::vector<std::string> notes;
  // What the machine refused the run (a thread, host memory): no violation
  // of the engine's, yet the run cannot go on as planned, so it stops after
  // the round that met the first. The first few, each naming seed and
  // round; `ok` is false when there is any.
  std::vector<std::string> resource_failures;
  std::size_t resource_failure_count = 0;

  std::size_t rounds = 0;
  std::size_t jobs_submitted = 0, jobs_completed = 0, jobs_succeeded = 0;
  std::size_t partitions_done = 0;
  std::size_t bytes_in = 0;
  double wall_s = 0, jobs_per_s = 0, partitions_per_s = 0;
  double latency_p50_ms = 0, latency_p99_ms = 0, latency_max_ms = 0;

  std::array<std::size_t, kFaultKinds> faults_injected{}, faults_survived{};
  std::size_t collateral = 0;  // failed by another job's kernel fault on their device
  std::size_t cancels_requested = 0, cancels_aborted = 0, cancels_too_late = 0;
  std::array<std::size_t, kTokenKinds> by_token{};
  std::array<std::size_t, 4> inputs_by_kind{};  // engine::InputKind order
  std::size_t synthetic_jobs = 0, blend_jobs = 0, ntt_msm_h_jobs = 0;
  std::size_t ntt_msm_h_verified = 0;  // succeeded, every partition checked with the toy secret
  unsigned srs_log_n = 0;              // the toy SRS's size (0: no ntt_msm_h in the mix)
  std::size_t srs_bytes = 0;           // resident on each device while loaded
  std::size_t srs_loads = 0, srs_evictions = 0;  // rounds that loaded it, and evicted it

  std::size_t samples = 0, pressure_samples = 0;  // stats() samples; with demand > host budget
  std::size_t host_budget_limit = 0, peak_host_budget_in_use = 0, peak_demand = 0;
  std::size_t peak_pinned_in_use = 0, peak_pinned_pooled = 0;
  std::size_t peak_device_in_use = 0;  // summed over devices
  std::size_t devices_broken = 0;      // by kernel faults (host backend), over all rounds
  int threads_baseline = 0, threads_after = 0;
};

// Runs until the job count or the duration is reached; never throws for an
// engine misbehaving (that is a violation in the report). Bad options come
// back as an Error.
Result<StressReport> run(const StressOptions& options);

std::string to_json(const StressReport& report);
std::string summarize(const StressReport& report);

// Threads of this process, from /proc/self/status; -1 if unreadable.
int process_threads();

}  // namespace stoker::tools::stress
