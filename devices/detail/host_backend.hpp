// The host backend: devices emulated on CPU threads so the engine's logic
// runs in CI without a GPU (DESIGN.md rule 6).
//
// A stream is an ordered queue drained by one worker thread; an event is a
// sequence number that the recording stream's worker completes; copies are
// memcpy; "device memory" is host memory counted against a capacity. A task
// that returns an error puts the whole device into a sticky fault, as a
// faulting kernel does on CUDA: queued work is dropped, events never
// complete, and every wait returns the fault instead of hanging.
//
// The queue's mutex guards the queue only; no lock is held while a task runs.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>

#include "devices/device.hpp"
#include "devices/device_set.hpp"

namespace stoker::devices::detail {

// Shared by a host device and everything created from it, so streams and
// events outliving the Device object stay safe.
struct HostDeviceState {
  std::atomic<bool> faulted{false};
  std::error_code fault;  // written once, before `faulted` is set
  std::once_flag fault_once;
  double slowdown = 1.0;
  std::size_t capacity = 0;
  std::atomic<std::size_t> used{0};

  void set_fault(std::error_code ec) {
    std::call_once(fault_once, [&] {
      fault = ec;
      faulted.store(true, std::memory_order_release);
    });
  }
  std::error_code health() const {
    return faulted.load(std::memory_order_acquire) ? fault : std::error_code{};
  }

  // Stream tasks running now; counted before their health check.
  std::atomic<int> running{0};
  // Returns once no task that started before the fault is still running.
  // Host threads that observe a fault call it first: on a GPU nothing runs
  // after a sticky error, and callers then release the memory of the failed
  // work. Without it a copy on another stream could still be reading a
  // pinned block (or writing device memory) that was already given back
  // (found by TSan under `stoker stress`).
  void quiesce() const {
    while (running.load(std::memory_order_acquire) != 0)
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
};

class HostDevice final : public Device {
 public:
  HostDevice(int index, double slowdown, std::size_t capacity, std::string cpu_affinity = {});
  ~HostDevice() override;

  const DeviceInfo& info() const noexcept override { return info_; }
  Result<Stream> create_stream(StreamPriority priority) override;
  Result<Event> create_event(EventKind kind) override;
  Result<DeviceBuffer> allocate(std::size_t bytes) override;
  Result<void*> allocate_async(std::size_t bytes, Stream& stream) override;
  std::error_code free_async(void* ptr, Stream& stream) override;
  std::error_code configure_pool(std::size_t) override { return {}; }
  Result<std::size_t> pool_reserved_bytes() override { return std::size_t{0}; }
  Result<MemoryInfo> memory_info() override;
  std::error_code health() const override { return state_->health(); }
  std::error_code make_current() override { return {}; }

 protected:
  void release(void* ptr, std::size_t bytes) noexcept override;

 private:
  Result<void*> take(std::size_t bytes);
  static void give_back(HostDeviceState& state, void* ptr) noexcept;

  DeviceInfo info_;
  std::shared_ptr<HostDeviceState> state_;
};

}  // namespace stoker::devices::detail
