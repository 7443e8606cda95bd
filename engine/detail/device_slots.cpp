#include "engine/detail/device_slots.hpp"

#include <algorithm>

#include "common/bytes_str.hpp"

namespace stoker::engine::detail {

SlotLease& SlotLease::operator=(SlotLease&& other) noexcept {
  if (this != &other) {
    release();
    owner_ = std::exchange(other.owner_, nullptr);
    device_ = other.device_;
    slot_ = other.slot_;
    bytes_ = other.bytes_;
  }
  return *this;
}

void SlotLease::release() noexcept {
  if (auto* owner = std::exchange(owner_, nullptr)) owner->give_back(device_, slot_, bytes_);
}

Result<std::unique_ptr<DeviceSlots>> DeviceSlots::create(devices::DeviceSet& set,
                                                         const Config& config) {
  std::unique_ptr<DeviceSlots> slots(new DeviceSlots(set));
  for (std::size_t d = 0; d < set.size(); ++d) {
    auto& dev = set[d];
    auto runner = DeviceRunner::create(dev, config);
    if (!runner) return std::move(runner).error();
    slots->runners_.push_back(std::move(*runner));
    DevState s;
    s.slot_busy.assign(static_cast<std::size_t>(config.pipeline_depth), false);
    auto mem = dev.memory_info();
    const std::size_t total = mem ? mem->total : dev.info().total_memory;
    s.budget = config.device_budget(total);
    // Stream-ordered allocations stay cached in the device pool between
    // partitions, so the hot path never reaches cudaMalloc.
    dev.configure_pool(s.budget);
    slots->dev_.push_back(std::move(s));
  }
  return slots;
}

bool DeviceSlots::any_faulted() const {
  return std::any_of(dev_.begin(), dev_.end(), [](const DevState& ds) { return !ds.healthy; });
}

std::size_t DeviceSlots::free_slots(std::size_t d) const {
  const auto& ds = dev_[d];
  if (!ds.healthy) return 0;
  return static_cast<std::size_t>(std::count(ds.slot_busy.begin(), ds.slot_busy.end(), false));
}

std::vector<std::size_t> DeviceSlots::by_free_slots() const {
  std::vector<std::size_t> order, free(dev_.size());
  for (std::size_t d = 0; d < dev_.size(); ++d) {
    free[d] = free_slots(d);
    if (free[d] != 0) order.push_back(d);
  }
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return free[a] > free[b]; });
  return order;
}

SlotLease DeviceSlots::take(std::size_t d, std::size_t bytes) {
  auto& ds = dev_[d];
  const auto it = std::find(ds.slot_busy.begin(), ds.slot_busy.end(), false);
  *it = true;
  ds.in_use += bytes;
  return SlotLease(this, d, static_cast<int>(it - ds.slot_busy.begin()), bytes);
}

void DeviceSlots::give_back(std::size_t d, int slot, std::size_t bytes) noexcept {
  auto& ds = dev_[d];
  ds.slot_busy[static_cast<std::size_t>(slot)] = false;
  ds.in_use -= bytes;
}

Error DeviceSlots::reserve_resident(std::size_t bytes, const std::string& who) {
  using common::bytes_str;
  for (std::size_t d = 0; d < dev_.size(); ++d) {
    const auto& ds = dev_[d];
    if (!ds.healthy)
      return {Errc::device_fault, who + ": device " + std::to_string(d) + " has faulted"};
    const std::size_t left = ds.budget - ds.resident - ds.in_use;
    if (bytes > left)
      return {Errc::out_of_device_memory, who + " needs " + bytes_str(bytes) + " on device " +
                                              std::to_string(d) + "; its budget has " +
                                              bytes_str(left) + " left of " + bytes_str(ds.budget)};
  }
  for (auto& ds : dev_) ds.resident += bytes;
  return {};
}

void DeviceSlots::release_resident(std::size_t bytes, bool resize) {
  for (auto& ds : dev_) ds.resident -= bytes;
  if (resize) resize_pools();
}

void DeviceSlots::resize_pools() {
  for (std::size_t d = 0; d < dev_.size(); ++d) set_[d].configure_pool(capacity(d));
}

std::size_t DeviceSlots::pool_growth(std::size_t d, std::size_t largest) {
  auto& ds = dev_[d];
  if (!ds.healthy) return 0;
  const std::size_t want =
      std::min(largest * static_cast<std::size_t>(runners_[d]->depth()), capacity(d));
  if (want <= ds.pool_warmed) return 0;
  ds.pool_warmed = want;
  return want;
}

void DeviceSlots::warm_pools(const Job& job, std::size_t largest) {
  for (std::size_t d = 0; d < dev_.size(); ++d)
    if (allowed_on(job, d))
      if (const std::size_t want = pool_growth(d, largest)) runners_[d]->warm_device_pool(want);
}

std::vector<std::size_t> DeviceSlots::warm_pools(std::size_t bytes,
                                                 std::function<void(std::size_t)> mapped) {
  std::vector<std::size_t> growing;
  for (std::size_t d = 0; d < dev_.size(); ++d)
    if (const std::size_t want = pool_growth(d, bytes)) {
      growing.push_back(d);
      runners_[d]->warm_device_pool(want, [mapped, d] { mapped(d); });
    }
  return growing;
}

void DeviceSlots::add_stats(EngineStats& s) const {
  for (std::size_t d = 0; d < dev_.size(); ++d) {
    const auto& ds = dev_[d];
    s.total_slots += ds.slot_busy.size();
    s.busy_slots +=
        static_cast<std::size_t>(std::count(ds.slot_busy.begin(), ds.slot_busy.end(), true));
    s.device_budget_in_use.push_back(ds.in_use);
    s.device_budget_limit.push_back(ds.budget);
    s.device_resident_bytes.push_back(ds.resident);
    s.device_healthy.push_back(ds.healthy);
    s.staging_ring_bytes.push_back(runners_[d]->staging_bytes());
    s.device_cpus.push_back(runners_[d]->cpus().to_string());
  }
}

}  // namespace stoker::engine::detail
