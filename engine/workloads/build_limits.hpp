// BuildLimits: what a workload builder (make_hpoly_job, make_synthetic_job)
// may take, checked before it allocates anything, and the guard that keeps
// every exception inside a builder.
//
// A builder allocates caller memory (outputs, pageable or registered inputs,
// per-partition bookkeeping) when it is called, and the engine later takes
// pinned blocks from its host budget for each partition. Sizes from a
// command line can ask for either beyond what exists (a trillion
// partitions, a 100 GB partition); the builder says so with an Error that
// names the size and the limit instead of dying of std::bad_alloc.
#pragma once

#include <cstddef>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>

#include "common/error.hpp"

namespace stoker::engine::workloads {

struct BuildLimits {
  // Caller memory the builder may allocate: outputs, pageable and
  // registered inputs and per-partition bookkeeping. 0: the host's limit
  // (common::HostMemoryLimit: the process's address-space or data limit,
  // else this machine's physical memory).
  std::size_t host_memory_bytes = 0;
  // The engine's host budget (Engine::config().host_budget_bytes): each
  // partition's pinned blocks (Engine::pinned_bytes) must fit in it. 0: not
  // checked by the builder; the engine refuses such a job at submission.
  std::size_t pinned_budget_bytes = 0;
};

// Caller memory a builder holds per partition beside its buffers: the
// Partition with its closures and label, and the builder's own records.
// Measured below 600 bytes (hpoly and synthetic, GCC 12); rounded up.
inline constexpr std::size_t kPartitionBookkeepingBytes = 1024;

// The shape of a job a builder is about to allocate.
struct BuildNeeds {
  const char* workload = "";  // "hpoly", "synthetic": starts every message
  std::size_t partitions = 0;
  std::size_t caller_bytes = 0;  // per partition, allocated by the builder
  // Caller memory the job holds once whatever its partitions, allocated by
  // the builder or later by the job (ntt_msm_h's verification weights).
  std::size_t job_bytes = 0;
  std::size_t pinned_bytes = 0;  // per partition, from the engine's host budget
};

// An Error naming the size and the limit when `needs` exceeds `limits`
// (Errc::out_of_host_memory), none when it fits. Overflow counts as too
// large.
Error check_build(const BuildNeeds& needs, const BuildLimits& limits);

// Runs build() -> Result<T>; turns any exception it throws into an Error
// that names the workload (std::bad_alloc and std::length_error as
// Errc::out_of_host_memory, anything else as Errc::invalid_argument with its
// text), so that no exception escapes a builder.
template <typename T, typename Build>
Result<T> guarded_build(const char* workload, Build&& build) {
  const auto error = [&](Errc code, const char* why) -> Result<T> {
    try {
      return Error{code, std::string(workload) + ": " + why};
    } catch (...) {  // no memory left even for the message: the code says it
      return Error{code};
    }
  };
  try {
    return std::forward<Build>(build)();
  } catch (const std::bad_alloc&) {
    return error(Errc::out_of_host_memory, "out of host memory while building the job");
  } catch (const std::length_error& e) {
    return error(Errc::out_of_host_memory, e.what());
  } catch (const std::exception& e) {
    return error(Errc::invalid_argument, e.what());
  } catch (...) {
    return error(Errc::invalid_argument, "an exception not derived from std::exception");
  }
}

}  // namespace stoker::engine::workloads
