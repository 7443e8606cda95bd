// What a device is: the properties `stoker info` prints and the scheduler
// reads. Plain data, filled once at discovery.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace stoker::devices {

enum class Backend { cuda, host };

const char* to_string(Backend b) noexcept;

struct DeviceInfo {
  Backend backend = Backend::host;
  int index = 0;    // position in the DeviceSet
  int ordinal = 0;  // CUDA ordinal (equals index on the host backend)
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  std::size_t total_memory = 0;  // bytes
  std::size_t l2_bytes = 0;
  int max_shared_per_block = 0;  // bytes, opt-in limit
  std::string pci_bus_id;        // "0000:3b:00.0", empty on the host backend
  // PCIe link: current (an idle GPU trains down) and maximum; 0 when not readable.
  int pcie_generation = 0, pcie_width = 0;
  int pcie_max_generation = 0, pcie_max_width = 0;
  int numa_node = -1;        // -1 when not readable
  std::string cpu_affinity;  // a cpulist such as "0-15,32-47", empty when not readable
  double slowdown = 1.0;     // host backend: artificial slowdown factor
};

}  // namespace stoker::devices
