// Where a workload that multiplies by resident points (ntt_msm_h, a
// prover) gets its SRS when it is built from options: the user's file, or
// the toy SRS of the job's size drawn from a seed (toy_srs.hpp: for testing
// only, never for proofs anyone relies on).
//
// A program may put its own SrsSource in WorkloadRequest::srs (`stoker run`
// keeps generated toy SRSs in a cache file on GPUs, tools/commands/run_srs.hpp);
// load_srs_or_toy is what a request without one gets.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "common/error.hpp"
#include "engine/engine.hpp"

namespace stoker::engine::workloads {

struct SrsRequest {
  std::string path;        // a file of G1 points (docs/DESIGN.md's encoding); empty: the toy SRS
  unsigned log_n = 0;      // the toy SRS's size: toy_srs_points(log_n) points
  std::uint64_t seed = 1;  // the toy SRS's seed
  bool broadcast = true;   // as SrsLoadOptions::broadcast
};

struct LoadedSrs {
  Srs srs;
  std::string source;     // for a summary: "file PATH", "generated on GPU 0", ...
  double generate_s = 0;  // time spent making the toy SRS's points
};

using SrsSource = std::function<Result<LoadedSrs>(Engine&, const SrsRequest&)>;

// The toy SRS for (request.log_n, request.seed), made on the engine's first
// GPU (the CPU on the host backend) and loaded with every point trusted (it
// comes from the generator). `on_points`, when given, sees the points before
// they are loaded: to keep them in a file.
Result<LoadedSrs> load_toy_srs(
    Engine& engine, const SrsRequest& request,
    const std::function<void(std::span<const kernels::G1Affine>, LoadedSrs&)>& on_points = {});

// request.path's points when it is not empty (every point checked), else
// load_toy_srs.
Result<LoadedSrs> load_srs_or_toy(Engine& engine, const SrsRequest& request);

}  // namespace stoker::engine::workloads
