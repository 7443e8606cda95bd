#include "engine/workloads/build_limits.hpp"

#include <unistd.h>

#include "common/bytes_str.hpp"

namespace stoker::engine::workloads {

std::size_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<std::size_t>(pages) * static_cast<std::size_t>(page);
}

using common::bytes_str;

Error check_build(const BuildNeeds& n, const BuildLimits& limits) {
  const std::string workload = n.workload;
  if (limits.pinned_budget_bytes != 0 && n.pinned_bytes > limits.pinned_budget_bytes)
    return {Errc::out_of_host_memory, workload + ": a partition needs " +
                                          bytes_str(n.pinned_bytes) +
                                          " of pinned host memory; the host budget is " +
                                          bytes_str(limits.pinned_budget_bytes)};
  const std::size_t memory =
      limits.host_memory_bytes != 0 ? limits.host_memory_bytes : physical_memory_bytes();
  std::size_t total = 0;
  const bool overflow = __builtin_mul_overflow(n.partitions, n.caller_bytes, &total) ||
                        __builtin_add_overflow(total, n.job_bytes, &total);
  const std::string shared =
      n.job_bytes != 0 ? " and " + bytes_str(n.job_bytes) + " for the whole job" : "";
  if (memory != 0 && (overflow || total > memory))
    return {Errc::out_of_host_memory,
            workload + ": " + std::to_string(n.partitions) + " partitions of " +
                bytes_str(n.caller_bytes) + " of caller memory each" + shared + " need " +
                (overflow ? "more than 2^64 bytes" : bytes_str(total)) + "; " +
                (limits.host_memory_bytes != 0 ? "the limit is " : "this machine has ") +
                bytes_str(memory)};
  return {};
}

}  // namespace stoker::engine::workloads
