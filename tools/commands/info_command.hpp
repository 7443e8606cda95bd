// `stoker info`: what this machine is. The devices stoker would run on (the
// CUDA GPUs, or the host backend when there is none) with their properties
// and topology, and the host facts that bound how fast they can be fed.
// `--json` prints the same as one JSON object for machines.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace stoker::tools {

// argv[0] is "info". Returns the process exit status: 0, or 2 for bad usage,
// 1 when device discovery fails.
int info_command(int argc, char** argv);

// The host facts, shared with `stoker doctor`.
struct HostFacts {
  unsigned cpu_threads = 0;  // std::thread::hardware_concurrency, 0 if unknown
  std::string cpu_model;     // from /proc/cpuinfo, empty if unreadable
  std::optional<std::uint64_t> mem_total_bytes;
  std::optional<std::uint64_t> mem_available_bytes;
  int cuda_driver_version = 0;  // e.g. 13000; 0 without a driver
  int cuda_runtime_version = 0;
};

HostFacts read_host_facts();
// As a JSON object, and as its text (no trailing newline).
nlohmann::ordered_json host_facts_to_json(const HostFacts& h);
std::string host_facts_json(const HostFacts& h);

}  // namespace stoker::tools
