// DeviceSet: the devices stoker runs on, found once at start-up, and their
// topology. `discover` picks CUDA when a GPU exists and the host backend
// otherwise (or when asked), so the engine above is the same either way.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "devices/device.hpp"

namespace stoker::devices {

// Number of CUDA devices; 0 without a driver or GPU (never an error).
int cuda_device_count() noexcept;

enum class BackendChoice { automatic, cuda, host };

struct HostBackendOptions {
  int device_count = 1;
  // Per-device slowdown factor (>= 1); missing entries mean 1. A factor of 2
  // makes each task on that device take twice its natural time, so the
  // scheduler's balancing can be tested without a GPU.
  std::vector<double> slowdown;
  std::size_t memory_bytes = std::size_t{4} << 30;  // per emulated device
  // Per-device local CPUs as a cpulist ("0-3"), as sysfs gives a GPU's:
  // where the engine runs each device's threads (devices/cpu_set.hpp), so
  // that placement can be tested without a GPU. Missing entries: unknown.
  std::vector<std::string> cpu_affinity;
};

struct DiscoverOptions {
  BackendChoice backend = BackendChoice::automatic;
  std::vector<int> cuda_ordinals;  // empty: all
  HostBackendOptions host;
};

struct Topology {
  // access[i][j]: device i can read and write device j's memory directly.
  std::vector<std::vector<bool>> peer_access;
  // Relative performance rank of the i->j link from CUDA (0 is best), -1 if none.
  std::vector<std::vector<int>> peer_rank;
};

class DeviceSet {
 public:
  DeviceSet() = default;
  DeviceSet(Backend backend, std::vector<std::unique_ptr<Device>> devices, Topology topology)
      : backend_(backend), devices_(std::move(devices)), topology_(std::move(topology)) {}

  Backend backend() const noexcept { return backend_; }
  std::size_t size() const noexcept { return devices_.size(); }
  bool empty() const noexcept { return devices_.empty(); }
  Device& operator[](std::size_t i) const { return *devices_[i]; }
  Device& at(std::size_t i) const { return *devices_.at(i); }
  const Topology& topology() const noexcept { return topology_; }

 private:
  Backend backend_ = Backend::host;
  std::vector<std::unique_ptr<Device>> devices_;
  Topology topology_;
};

// Errors: no_device when CUDA is demanded but absent; invalid_argument for a
// CUDA ordinal that does not exist or a bad host option (names the value).
Result<DeviceSet> discover(const DiscoverOptions& options = {});

// Calls on a Device make its GPU current on the calling thread and leave it
// so. Calls made for a caller on its own thread (creating or destroying an
// engine, preparing kernels on every GPU) hold one of these, so a caller
// that relies on its current device (a prover that launches its own
// kernels) finds it as it was. A thread that had chosen none (no context
// current) is left with the engine's last GPU rather than given GPU 0's
// context. `cuda` false: does nothing, and touches no CUDA (the host
// backend).
class KeepCurrentDevice {
 public:
  explicit KeepCurrentDevice(bool cuda) noexcept;
  ~KeepCurrentDevice();
  KeepCurrentDevice(const KeepCurrentDevice&) = delete;
  KeepCurrentDevice& operator=(const KeepCurrentDevice&) = delete;

 private:
  int device_ = -1;  // -1: none to restore
};

}  // namespace stoker::devices
