// DeviceSlots: the devices' side of scheduling. One DeviceRunner per device
// with its pipeline slots, its memory budget (what running partitions and
// resident keys hold of it), its health, and how far its memory pool has
// grown. Engine thread only: the core asks it which device may take a
// partition and leases a slot; the lease gives the slot back.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "devices/device.hpp"
#include "engine/config.hpp"
#include "engine/detail/device_runner.hpp"
#include "engine/engine.hpp"

namespace stoker::engine::detail {

class DeviceSlots;

// Whether `job` lets device d run its partitions (Job::devices).
inline bool allowed_on(const Job& job, std::size_t device) {
  if (!job.devices) return true;
  return std::find(job.devices->begin(), job.devices->end(), static_cast<int>(device)) !=
         job.devices->end();
}

// One pipeline slot on one device and the device bytes its partition holds
// of the budget; the destructor (or release()) gives both back.
class SlotLease {
 public:
  SlotLease() = default;
  SlotLease(SlotLease&& other) noexcept { *this = std::move(other); }
  SlotLease& operator=(SlotLease&& other) noexcept;
  SlotLease(const SlotLease&) = delete;
  SlotLease& operator=(const SlotLease&) = delete;
  ~SlotLease() { release(); }

  explicit operator bool() const noexcept { return owner_ != nullptr; }
  std::size_t device() const noexcept { return device_; }
  int slot() const noexcept { return slot_; }
  void release() noexcept;

 private:
  friend class DeviceSlots;
  SlotLease(DeviceSlots* owner, std::size_t device, int slot, std::size_t bytes) noexcept
      : owner_(owner), device_(device), slot_(slot), bytes_(bytes) {}
  DeviceSlots* owner_ = nullptr;
  std::size_t device_ = 0;
  int slot_ = -1;
  std::size_t bytes_ = 0;
};

class DeviceSlots {
 public:
  // A runner per device of `set` (which must outlive this), its pool
  // limited to the device's budget.
  static Result<std::unique_ptr<DeviceSlots>> create(devices::DeviceSet& set, const Config& config);
  DeviceSlots(const DeviceSlots&) = delete;
  DeviceSlots& operator=(const DeviceSlots&) = delete;

  std::size_t size() const noexcept { return dev_.size(); }
  DeviceRunner& runner(std::size_t d) { return *runners_[d]; }
  bool healthy(std::size_t d) const { return dev_[d].healthy; }
  // Device d's budget: fixed at creation, so any thread may read it.
  std::size_t budget(std::size_t d) const { return dev_[d].budget; }
  bool any_faulted() const;
  std::size_t free_slots(std::size_t d) const;
  // What partitions may hold of device d's budget: the budget less the
  // resident keys.
  std::size_t capacity(std::size_t d) const { return dev_[d].budget - dev_[d].resident; }
  // Whether a partition of `bytes` fits beside those on device d now.
  bool fits_now(std::size_t d, std::size_t bytes) const {
    return bytes <= capacity(d) - dev_[d].in_use;
  }
  // The healthy devices with a free slot, the one with most free slots first.
  std::vector<std::size_t> by_free_slots() const;

  // A free slot of device d (free_slots(d) > 0) for a partition of `bytes`.
  SlotLease take(std::size_t d, std::size_t bytes);
  // Device d faulted: it takes no partition again.
  void faulted(std::size_t d) { dev_[d].healthy = false; }

  // Resident keys hold `bytes` on every device for as long as they stay.
  // Fails, naming `who`, where a device has faulted or lacks the room.
  Error reserve_resident(std::size_t bytes, const std::string& who);
  // Gives back what reserve_resident took; with `resize_pools`, each
  // device's memory pool may again cache what the partitions may hold.
  void release_resident(std::size_t bytes, bool resize_pools);
  // Each device's memory pool caches at most what partitions may hold.
  void resize_pools();

  // Before a job's first producer ends: each device the job may use grows
  // its memory pool to a full pipeline of its largest partition.
  void warm_pools(const Job& job, std::size_t largest);
  // Grows every healthy device's pool to a pipeline of `bytes` partitions;
  // calls `mapped(d)` on runner d's feeder once mapped, returns the devices
  // that will call it.
  std::vector<std::size_t> warm_pools(std::size_t bytes, std::function<void(std::size_t)> mapped);

  void add_stats(EngineStats& s) const;
  // Stops the runners (their threads post to the engine): at shutdown.
  void stop_runners() { runners_.clear(); }

 private:
  friend class SlotLease;
  struct DevState {
    std::vector<bool> slot_busy;
    bool healthy = true;
    std::size_t budget = 0, in_use = 0;
    std::size_t resident = 0;     // resident keys, off the budget while they stay
    std::size_t pool_warmed = 0;  // bytes the device memory pool has grown to
  };
  explicit DeviceSlots(devices::DeviceSet& set) : set_(set) {}
  // What device d's pool should hold for a pipeline of partitions of
  // `largest` device bytes; 0 when it holds that already. Marks it held.
  std::size_t pool_growth(std::size_t d, std::size_t largest);
  void give_back(std::size_t d, int slot, std::size_t bytes) noexcept;

  devices::DeviceSet& set_;
  std::vector<std::unique_ptr<DeviceRunner>> runners_;
  std::vector<DevState> dev_;
};

}  // namespace stoker::engine::detail
