// A witness's values (Montgomery form) in a vector whose growth leaves new
// values unwritten: the readers (wtns_file.hpp, bellman_witness_file.hpp)
// write every value right after, in pieces on every thread. A std::vector
// zero-fills them first on one thread, with every page's first fault there:
// 45 % of reading a 2^20 .wtns on the 2-core development VM (perf), about
// 0.1 s of a 2^24 one, which a daemon's client proving one proof after
// another waits for each time.
#pragma once

#include "common/uninitialized_vector.hpp"
#include "kernels/field.cuh"

namespace stoker::engine::groth16 {

using WitnessValues = common::UninitializedVector<kernels::Fr>;

}  // namespace stoker::engine::groth16
