// The host side of `stoker doctor`: pageable memory as a producer fills it,
// the wall-clock cost of pinning host memory (cudaHostAlloc and
// cudaHostRegister, and their release), and a MemoryLoad that keeps host
// threads writing memory beside the copies.
//
// Failure: a cost measurement that fails adds a line to `Errors` and stops
// its repetitions; the figure holds the median of those that succeeded.
// Threads: MemoryLoad's threads touch only their own buffers and its
// atomic counters; the rest runs on the caller's thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <stop_token>
#include <thread>
#include <vector>

#include "devices/pinned_buffer.hpp"
#include "tools/commands/doctor_plan.hpp"

namespace stoker::tools::doctor {

struct FreeDeleter {
  void operator()(void* p) const noexcept { std::free(p); }
};
using HostMemory = std::unique_ptr<void, FreeDeleter>;

// malloc'd, touched host memory: the pageable memory a producer fills.
// Empty when malloc fails.
HostMemory touched_memory(std::size_t bytes);

// The wall-clock cost of pinning `bytes` of host memory and of releasing it.
struct CostFigure {
  std::size_t bytes = 0;
  std::optional<double> seconds;       // median of the allocations / registrations
  std::optional<double> free_seconds;  // median of the matching release
  std::optional<double> s_per_gib() const {
    if (!seconds || bytes == 0) return std::nullopt;
    return *seconds / (static_cast<double>(bytes) / kGiB);
  }
};

// cudaHostAlloc of plan.cost_bytes, plan.cost_reps times, then cudaFreeHost
// of each.
CostFigure measure_host_alloc(const Plan& plan, Errors& errors);

// Times cudaHostRegister of touched memory (a producer's buffer that already
// exists), a fresh buffer per repetition, and keeps the first registration
// in `keep` (its memory in `keep_memory`) for the copy tests. The kept
// registration's release is the caller's to time: with one repetition
// free_seconds stays nullopt.
CostFigure measure_host_register(const Plan& plan, std::size_t bytes,
                                 devices::HostRegistration& keep, HostMemory& keep_memory,
                                 Errors& errors);

// Host threads that stream-write their own buffers until destroyed: the host
// memory load of a busy prover (synthesis threads) next to the copies. The
// constructor returns once every thread has written its whole buffer once.
class MemoryLoad {
 public:
  MemoryLoad(int threads, std::size_t bytes);
  MemoryLoad(const MemoryLoad&) = delete;
  MemoryLoad& operator=(const MemoryLoad&) = delete;
  ~MemoryLoad();

  // Threads that could not allocate their buffer (they do not write).
  int failed() const { return failed_.load(); }
  // Host write bandwidth the writers achieved since they all started.
  double write_gbps() const;

 private:
  void write(std::stop_token stop);

  std::size_t bytes_;
  std::atomic<int> ready_{0};
  std::atomic<int> failed_{0};
  std::atomic<std::uint64_t> written_{0};
  Clock::time_point t0_ = Clock::now();
  std::vector<std::jthread> threads_;  // last: joined before the counters die
};

}  // namespace stoker::tools::doctor
