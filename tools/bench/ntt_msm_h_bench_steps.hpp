// The steps `stoker bench ntt_msm_h` and its naive baseline share: its
// options, failing with a message, whether a size fits the engine, the toy
// SRS made and loaded, the pools reserved, a job run and its points checked.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <system_error>
#include <vector>

#include "common/elapsed.hpp"
#include "common/error.hpp"
#include "engine/engine.hpp"
#include "engine/srs.hpp"
#include "engine/workloads/ntt_msm_h_workload.hpp"
#include "kernels/g1.cuh"

namespace stoker::tools::ntt_msm_h_bench {

using Clock = std::chrono::steady_clock;

struct Options {
  std::vector<unsigned> log_n;            // empty: 24,26,27 on GPUs, 8 on the host backend
  std::optional<std::size_t> partitions;  // default: 8 per device
  int reps = 3;
  int writers = 20;  // as many producers as a prover's synthesis threads in the field
  unsigned baseline_log_n = 24;
  std::size_t baseline_partitions = 16;
  std::uint64_t seed = 1;  // of a, b, c and of the toy SRS
  bool json = false;
  bool no_baseline = false;
  std::string trace;
};

// Fails the bench (exit 1) with a message naming what was being done.
struct Failure {
  std::string what;
};
void check(std::error_code ec, const std::string& what);
template <typename T>
T take(Result<T> r, const std::string& what) {
  if (!r) throw Failure{what + ": " + r.error().what()};
  return std::move(*r);
}

bool out_of_memory(std::error_code ec);
std::string gib(std::size_t bytes);
using common::seconds_since;
std::string size_name(unsigned log_n);
// A table cell: v in `format`, "-" where not measured (v <= 0).
std::string cell(double v, const char* format = "%.2f");

// The smallest device budget of `e`: what an ntt_msm_h partition's MSM is
// planned for.
std::size_t min_device_budget(engine::Engine& e);
// Why the toy SRS of 2^log_n and one partition beside it cannot run on `e`,
// or "" when they can (ntt_msm_h_bench_steps.cpp says what is counted).
std::string why_it_does_not_fit(engine::Engine& e, unsigned log_n, std::size_t extra_device = 0);
// The toy SRS of 2^log_n made into `points` and loaded onto every device.
Result<engine::Srs> load_toy_srs(engine::Engine& e, std::uint64_t seed, unsigned log_n,
                                 std::span<kernels::G1Affine> points, double& generate_s);
void evict(engine::Engine& e, engine::Srs srs);
// Pins the host blocks and maps the device pools of a full lookahead of
// partitions like the job's before anything is timed.
void reserve(engine::Engine& e, const engine::Job& job, bool json);
// Runs a copy of `job` with its points poisoned first and checked written
// after.
Result<engine::JobReport> run_job(engine::Engine& e, const engine::Job& job,
                                  engine::workloads::NttMsmHRun& run);

}  // namespace stoker::tools::ntt_msm_h_bench
