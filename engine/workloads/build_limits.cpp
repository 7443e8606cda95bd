#include "engine/workloads/build_limits.hpp"

#include "common/bytes_str.hpp"
#include "common/host_memory_limit.hpp"

namespace stoker::engine::workloads {

using common::bytes_str;

Error check_build(const BuildNeeds& n, const BuildLimits& limits) {
  const std::string workload = n.workload;
  // Unless told a limit, the host's: the smallest of the process's
  // address-space and data limits and the machine's memory.
  const auto host = common::HostMemoryLimit::current();
  if (limits.pinned_budget_bytes != 0 && n.pinned_bytes > limits.pinned_budget_bytes) {
    // The default budget is half of physical memory; under a tighter
    // address-space or data limit that limit is named too.
    const bool host_too =
        host.bytes != 0 && host.bytes < limits.pinned_budget_bytes && n.pinned_bytes > host.bytes;
    return {Errc::out_of_host_memory, workload + ": a partition needs " +
                                          bytes_str(n.pinned_bytes) +
                                          " of pinned host memory; the host budget is " +
                                          bytes_str(limits.pinned_budget_bytes) +
                                          (host_too ? ", and " + host.describe() : "")};
  }
  const std::size_t memory = limits.host_memory_bytes != 0 ? limits.host_memory_bytes : host.bytes;
  std::size_t total = 0;
  const bool overflow = __builtin_mul_overflow(n.partitions, n.caller_bytes, &total) ||
                        __builtin_add_overflow(total, n.job_bytes, &total);
  const std::string caller =
      workload + ": " + std::to_string(n.partitions) + " partitions of " +
      bytes_str(n.caller_bytes) + " of caller memory each" +
      (n.job_bytes != 0 ? " and " + bytes_str(n.job_bytes) + " for the whole job" : "");
  if (memory != 0 && (overflow || total > memory))
    return {Errc::out_of_host_memory,
            caller + " need " + (overflow ? "more than 2^64 bytes" : bytes_str(total)) + "; " +
                (limits.host_memory_bytes != 0 ? "the limit is " + bytes_str(memory)
                                               : host.describe())};
  // The engine pins a partition's blocks beside the caller's memory: a
  // host that cannot hold both cannot run a single partition.
  std::size_t with_pinned = 0;
  if (host.bytes != 0 &&
      (__builtin_add_overflow(total, n.pinned_bytes, &with_pinned) || with_pinned > host.bytes))
    return {Errc::out_of_host_memory, caller + ", and a partition's " + bytes_str(n.pinned_bytes) +
                                          " of pinned host memory, need " +
                                          common::bytes_with_units(with_pinned) + "; " +
                                          host.describe()};
  return {};
}

}  // namespace stoker::engine::workloads
