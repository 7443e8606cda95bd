// CpuSet: a set of CPUs, and where a device's host threads belong.
//
// On a host of several NUMA nodes each GPU hangs off one node's PCIe root.
// Its DMA reads staging buffers best from that node's memory, and threads
// on that node's cores fill them without crossing the socket link. The
// engine runs each device's feeder, waiters and staging threads on the
// device's local CPUs (sysfs `local_cpulist`, DeviceInfo::cpu_affinity)
// and pins its staging buffers from such a thread, so the kernel places
// their pages on that node (first touch). Everything here is plain Linux
// (sched_getaffinity, pthread_setaffinity_np) and touches no CUDA.
#pragma once

#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "common/error.hpp"
#include "devices/device_info.hpp"

namespace stoker::devices {

class CpuSet {
 public:
  CpuSet() = default;
  // Sorted, without repeats; numbers no CPU can have (negative, or a
  // million and more) are dropped.
  explicit CpuSet(std::vector<int> cpus);

  // A Linux cpulist such as "0-15,32-47" (sysfs, /proc/<pid>/status).
  // Errors name the text: "cpulist '3-1': range 3-1 runs backwards".
  static Result<CpuSet> parse(std::string_view cpulist);
  // The CPUs the calling thread may run on (sched_getaffinity); empty when
  // that cannot be read.
  static CpuSet allowed();
  // The CPUs a thread with this id may run on; empty when that cannot be
  // read (the thread has ended, say).
  static CpuSet of_thread(int tid);

  const std::vector<int>& cpus() const noexcept { return cpus_; }
  bool empty() const noexcept { return cpus_.empty(); }
  std::size_t size() const noexcept { return cpus_.size(); }
  bool contains(const CpuSet& other) const;
  CpuSet intersect(const CpuSet& other) const;
  // The cpulist form, ranges joined: "0-3,8".
  std::string to_string() const;
  bool operator==(const CpuSet&) const = default;

  // Binds the calling thread to these CPUs. An empty set is refused
  // (invalid_argument): a thread with no CPU could not run.
  std::error_code bind_this_thread() const;

 private:
  std::vector<int> cpus_;
};

// The CPUs a device's host threads should be bound to: its local CPUs that
// the calling thread may use (threads it starts inherit its mask). Empty, meaning "leave the
// threads where they are", when the device's CPUs are not known (the host backend, an unreadable
// sysfs), when none of them is allowed here (a container given other
// CPUs), and when they include every allowed CPU (a one-node host: binding
// would change nothing).
CpuSet cpus_near(const DeviceInfo& info);

}  // namespace stoker::devices
