// One job of a stress round as the driver tracks it: the spec it was drawn
// from, the memory its inputs and outputs live in, the outcome it must have,
// and what its handler is checked against (partitions, allowed devices,
// calls). Shared by the submitter that builds it, the handler that completes
// it and the cancel timer that may fire on it, so it lives in a shared_ptr
// until the last of them lets go.
#pragma once

#include <atomic>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstddef>
#include <memory>
#include <vector>

#include "tools/stress/stress_jobs.hpp"

namespace stoker::tools::stress {

using Clock = std::chrono::steady_clock;

struct JobRecord {
  JobSpec spec;
  JobBuffers buffers;
  Expectation expect;
  std::size_t partitions = 0, demand = 0;
  std::vector<int> allowed;  // devices the job may run on
  Clock::time_point submitted;
  std::atomic<int> calls{0};
  // Touched only on the round's io thread (emit, and the engine's completion
  // clearing it) and by the initiation that installs the engine's handler.
  boost::asio::cancellation_signal signal;
  std::unique_ptr<boost::asio::steady_timer> timer;
};
using RecordPtr = std::shared_ptr<JobRecord>;

}  // namespace stoker::tools::stress
