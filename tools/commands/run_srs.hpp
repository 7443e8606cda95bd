// The SRS a `stoker run` workload multiplies h against (an SrsSource,
// engine/workloads/srs_source.hpp): the user's file (--srs), or the toy SRS
// of the run's size (its secret drawn from --srs-seed, for testing only),
// generated in memory on the host backend and kept in a cache file on GPUs,
// whose name says what it is (toy-srs-2^K-seed-S.g1 under
// $XDG_CACHE_HOME/stoker or ~/.cache/stoker), because generating 2^24
// points takes seconds and reading them back less.
#pragma once

#include <cstdint>
#include <string>

#include "engine/workloads/srs_source.hpp"

namespace stoker::tools {

// The cache file of the toy SRS for (log_n, seed).
std::string toy_srs_cache_path(unsigned log_n, std::uint64_t seed);

// load_srs_or_toy, with the toy SRS read from its cache file on GPUs when
// there is one, and written there when there is not.
Result<engine::workloads::LoadedSrs> load_run_srs(engine::Engine& engine,
                                                  const engine::workloads::SrsRequest& request);

}  // namespace stoker::tools
