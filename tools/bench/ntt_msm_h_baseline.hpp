// The naive baseline of `stoker bench ntt_msm_h`, the field's way of
// running the GPU phase of a prover: writer threads fill pageable a, b, c
// and then, under one global mutex, copy them in synchronously, run hpoly,
// copy the SRS in from pinned memory and run the MSM. It runs against the
// engine with the SRS resident on the same partitions, the two taking turns.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "engine/config.hpp"
#include "tools/bench/ntt_msm_h_bench_steps.hpp"
#include "tools/cli/json_output.hpp"

namespace stoker::tools::ntt_msm_h_bench {

// The engine is meant to reach 2.5x the naive baseline's rate.
inline constexpr double kBaselineTarget = 2.5;

struct Baseline {
  std::string skipped;
  unsigned log_n = 0;
  std::size_t partitions = 0;
  int writers = 0;
  std::vector<double> naive_ms, engine_ms, engine_bound_ms;
  std::size_t slabs_grown = 0;
  double rate(double ms) const { return ms > 0 ? partitions / (ms / 1e3) : 0; }
};

// The baseline and the engine (its own, with `writers` producer threads)
// on the same partitions, taking turns; each engine point must equal the
// baseline's. Throws Failure.
Baseline run_baseline(engine::Config config, const Options& o);
Json baseline_json(const Baseline& b);
void print_baseline(const Baseline& b);

}  // namespace stoker::tools::ntt_msm_h_bench
