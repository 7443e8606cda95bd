// Device: one GPU, or one emulated device of the host backend. Both backends
// implement this interface, so every layer above devices/ runs unchanged on
// either (DESIGN.md rule 6).
//
// Thread safety: every member may be called from any thread concurrently.
// No member holds a lock while device work runs.
#pragma once

#include <cstddef>
#include <system_error>

#include "common/error.hpp"
#include "devices/device_buffer.hpp"
#include "devices/device_info.hpp"
#include "devices/event.hpp"
#include "devices/stream.hpp"

namespace stoker::devices {

struct MemoryInfo {
  std::size_t free = 0;
  std::size_t total = 0;
};

class Device {
 public:
  virtual ~Device() = default;
  Device() = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  virtual const DeviceInfo& info() const noexcept = 0;
  Backend backend() const noexcept { return info().backend; }
  int index() const noexcept { return info().index; }

  virtual Result<Stream> create_stream(StreamPriority priority = StreamPriority::normal) = 0;
  virtual Result<Event> create_event(EventKind kind = EventKind::ordering) = 0;

  // Synchronous allocation: for set-up and pools, never on a hot path.
  virtual Result<DeviceBuffer> allocate(std::size_t bytes) = 0;
  // Stream-ordered allocation (cudaMallocAsync from the device's default
  // pool). The memory may be used by work on `stream` at once and by other
  // streams after an event.
  virtual Result<void*> allocate_async(std::size_t bytes, Stream& stream) = 0;
  virtual std::error_code free_async(void* ptr, Stream& stream) = 0;
  // Sets how the stream-ordered pool behaves for the engine: it keeps
  // `release_threshold` bytes cached instead of returning them to the
  // system at a synchronisation point.
  virtual std::error_code configure_pool(std::size_t release_threshold) = 0;
  // Bytes of device memory the stream-ordered pool holds mapped now, in use
  // or cached (0 on the host backend, which has no pool).
  virtual Result<std::size_t> pool_reserved_bytes() = 0;

  virtual Result<MemoryInfo> memory_info() = 0;

  // The sticky error that broke this device, or success. A faulted device
  // fails every further operation; the engine checks this to fail the jobs
  // on it instead of waiting for callbacks that never come.
  virtual std::error_code health() const = 0;

  // Makes this device current for the calling thread (cudaSetDevice).
  virtual std::error_code make_current() = 0;

 protected:
  friend class DeviceBuffer;
  virtual void release(void* ptr, std::size_t bytes) noexcept = 0;
};

}  // namespace stoker::devices
