// Config: how an Engine uses the machine. Every field has a default sized for
// the machine it finds; from_env() and from_args() read overrides so the
// stoker binary and embedding programs are configured the same way.
//
//   STOKER_BACKEND=auto|cuda|host   STOKER_DEVICES=0,1   STOKER_HOST_DEVICES=2
//   STOKER_HOST_SLOWDOWN=1,3        STOKER_PIPELINE_DEPTH=2
//   STOKER_HOST_BUDGET_MIB=...      STOKER_DEVICE_BUDGET_MIB=...
//   STOKER_CHUNK_MIB=8 (or STOKER_CHUNK_KIB=512)  STOKER_WORKERS=...  STOKER_STAGING_THREADS=4
//   STOKER_STAGING_RING_MIB=64
//   STOKER_PAGEABLE_INPUTS=stage|register  STOKER_EARLY_UPLOAD=on|off  STOKER_BIND_THREADS=on|off
//   STOKER_COPY_PRIORITY=high       STOKER_COMPUTE_PRIORITY=normal  (low|normal|high)
//   STOKER_STAGING_COPY=auto|memcpy (read by engine/detail/nontemporal_copy.cpp, checked here)
//
// Text values are read strictly (engine/strict_number.hpp): a value that is
// not one the setting takes is refused with an error that names the
// variable or the option it came from, never taken as the default. Counts
// and sizes whose field uses 0 for "chosen from the machine" take 1 and up
// as text: leaving the setting out asks for that default.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "devices/device_set.hpp"

namespace stoker::engine {

// How a partition's pageable inputs reach the device.
enum class PageableInputs {
  // Copied by CPU threads into the device's pinned staging chunks, then DMA.
  stage,
  // Page-locked where they are (cudaHostRegister) for the partition's
  // copies, then DMA straight from them: no host copy, but the pinning of
  // each page (about 0.1 s/GiB). Inputs shorter than two staging chunks, and
  // any that cannot be registered (the caller registered them already, or
  // they share a page with another registered input), are staged instead.
  // Slower than staging on one H200 (docs/BENCHMARKS.md): half as fast on
  // an idle host, and under 20 writer threads 753.6 ms against 204.9-282.2
  // staged in the same run: registration runs at about
  // 20 GB/s and slows every copy while it runs. So staging is the default.
  register_in_place,
};

struct Config {
  devices::DiscoverOptions devices;  // backend, CUDA ordinals, host-backend shape
  // Slots per device, >= 2 so copies overlap kernels. 3 by default: with 2,
  // partition k+2's H2D may start only after k's D2H, so a kernel shorter
  // than H2D + D2H + the turnaround waits (hpoly 2^24 on one H200: 885 ms
  // at depth 2, 800 at depth 3; copy-bound runs unchanged). A slot holds
  // device memory only while a partition uses it.
  int pipeline_depth = 3;
  // Copies first: a partition's H2D that waits behind another's kernels
  // starves the pipeline, while kernels queued behind a copy lose nothing.
  devices::StreamPriority copy_priority = devices::StreamPriority::high;
  devices::StreamPriority compute_priority = devices::StreamPriority::normal;
  // Host memory the engine may hold in pinned pools (producers' inputs,
  // output staging). 0: half of physical memory, at least 1 GiB.
  std::size_t host_budget_bytes = 0;
  // Device memory per device for partitions in flight. 0: 85 % of the device.
  std::size_t device_budget_bytes = 0;
  // The device budget this gives on a device of `device_total` bytes.
  std::size_t device_budget(std::size_t device_total) const noexcept {
    return device_budget_bytes ? std::min(device_budget_bytes, device_total)
                               : device_total / 100 * 85;
  }
  // Staging chunk for pageable inputs; two per staging thread per device.
  std::size_t staging_chunk_bytes = std::size_t{8} << 20;
  // Pinned bytes per device for the staging buffers: at least two chunks
  // per staging thread, more where this asks for more, in whole chunks per
  // thread (each thread fills its own in turn).
  // 0: two chunks per thread (256 MiB at 16 threads of 8 MiB).
  std::size_t staging_ring_bytes = 0;
  // Threads per device that copy pageable inputs into staging chunks, each
  // a chunk at a time: under host memory load one copy thread moves about
  // 0.7 GB/s (memory latency, not cores, bounds it), so more threads move
  // more. 0: hardware threads divided among the devices, 4 to 16 (16 was
  // best on the 16-core H200 host; 24 moved less; docs/BENCHMARKS.md).
  int staging_threads = 0;
  PageableInputs pageable_inputs = PageableInputs::stage;
  // Partitions whose split producer promises its shares' ranges
  // (Partition::share_align) are copied share by share as the shares end;
  // false: every partition is copied whole once its producer has ended.
  bool early_upload = true;
  // Run each device's feeder, waiters and staging threads on the device's
  // local CPUs and pin its staging buffers there, so that on a host of
  // several NUMA nodes staging neither crosses the socket link nor writes
  // remote memory. Changes nothing where the device's CPUs are all the
  // CPUs allowed (one node), unknown, or fewer than its staging threads
  // (devices/cpu_set.hpp). The launcher, which runs the jobs' callables,
  // stays unbound: threads they start inherit the mask of the thread that
  // starts them (and its name, "stoker-kern-<device>").
  bool bind_threads = true;
  // CPU threads that run producers. 0: hardware threads.
  int worker_threads = 0;
  // Link rates for the model bound (DESIGN.md), GB/s. 0: measured defaults
  // for the backend (55 GB/s pinned PCIe Gen5 on CUDA).
  double h2d_gbps = 0, d2h_gbps = 0;

  // This config with every setting left 0 resolved for this machine and
  // `devices` devices of `backend`, as the engine runs it: the rules in one
  // place (the comments above), so that tools and the engine agree.
  Config resolved(devices::Backend backend, std::size_t devices) const;

  // Reads STOKER_* variables over the defaults; an error names the variable.
  static Result<Config> from_env();
  // The same, leaving out the variables of the settings in `overridden`
  // (names as setting_names() gives them): for a caller that sets those
  // from its command line, where an option beats its variable, so a bad
  // variable of a setting given as an option is not read at all. Either
  // chunk setting overrides both chunk variables.
  static Result<Config> from_env(std::span<const std::string_view> overridden);
  // Reads --backend, --devices, --host-devices, --slowdown, --depth,
  // --host-budget-mib, --device-budget-mib, --chunk-mib, --chunk-kib, --workers,
  // --staging-threads, --staging-ring-mib, --pageable-inputs, --early-upload, --bind-threads,
  // --copy-priority, --compute-priority, as --name value or --name=value; consumed arguments
  // are removed from `args`, unknown ones left for the caller. A setting given twice, a value
  // that is another option (--depth --workers 2), or both chunk sizes are refused.
  Result<Config> apply_args(std::vector<std::string>& args) const;

  // The settings above by name ("depth", "chunk-mib", ...): what a command
  // line parser registers as --name.
  static std::span<const std::string_view> setting_names();
  // The name of the setting `arg` (--name or --name=value) sets, or empty.
  static std::string_view setting_of(std::string_view arg);
  // The variable from_env() reads for a setting: STOKER_PIPELINE_DEPTH for "depth".
  static std::string variable_for(std::string_view name);
  // Whether that variable is set: for a caller whose default differs from
  // Config's where the user chose none (stoker stress's smaller chunk).
  // from_env() reads and checks its value.
  static bool in_env(std::string_view name);
  // Sets one setting from its text; an error starts with `source` (the
  // option or the variable it came from) and names the value. Does not
  // validate() the whole.
  Error set(std::string_view name, std::string_view value, std::string_view source);
  // Checks ranges; names the offending field and value.
  Error validate() const;
};

}  // namespace stoker::engine
