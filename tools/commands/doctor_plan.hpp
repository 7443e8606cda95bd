// What one `stoker doctor` run measures (Plan, derived from the options by
// doctor_command.cpp) and how its measurements report failure (Errors): the
// vocabulary the measurement files and the report share.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "common/elapsed.hpp"

namespace stoker::tools::doctor {

using Clock = std::chrono::steady_clock;
inline constexpr std::size_t kMiB = std::size_t{1} << 20;
inline constexpr std::size_t kGiB = std::size_t{1} << 30;

using common::seconds_since;

// What one run does, derived from the options.
struct Plan {
  std::size_t copy_bytes = 0;
  int reps = 0;
  int warmup = 1;
  int fast_copies = 1;         // copies between two events on the fast paths
  std::size_t cost_bytes = 0;  // size whose cudaHostAlloc / cudaHostRegister is timed
  int cost_reps = 0;
  int writers = 0;
  std::size_t writer_bytes = 0;  // each writer's own buffer
};

// Failed measurements, one line each saying what failed, in the order they
// failed. A measurement that fails adds its line and leaves its figure
// missing; the others still run.
struct Errors {
  std::vector<std::string> list;
  void add(std::string s) { list.push_back(std::move(s)); }
};

}  // namespace stoker::tools::doctor
