// The SRS a `stoker run --workload ntt_msm_h` job multiplies h against:
// the user's file (--srs), or the toy SRS of the run's size (its secret
// drawn from --srs-seed, for testing only), generated in memory on the
// host backend and kept in a cache file on GPUs, whose name says what it is
// (toy-srs-2^K-seed-S.g1 under $XDG_CACHE_HOME/stoker or ~/.cache/stoker),
// because generating 2^24 points takes seconds and reading them back less.
#pragma once

#include <cstdint>
#include <string>

#include "engine/engine.hpp"

namespace stoker::tools {

struct RunSrs {
  engine::Srs srs;
  std::string source;  // "file PATH", "cached PATH", "generated on ..."
  double generate_s = 0;
};

// The cache file of the toy SRS for (log_n, seed).
std::string toy_srs_cache_path(unsigned log_n, std::uint64_t seed);

// Loads `path` when it is not empty, else the toy SRS for log_n and seed;
// `broadcast` as SrsLoadOptions::broadcast.
Result<RunSrs> load_run_srs(engine::Engine& engine, const std::string& path, unsigned log_n,
                            std::uint64_t seed, bool broadcast = true);

}  // namespace stoker::tools
