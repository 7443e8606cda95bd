// The interfaces each backend implements behind Stream and Event. Internal:
// callers use Stream, Event and Device.
#pragma once

#include <cstddef>
#include <system_error>

#include "common/error.hpp"
#include "devices/device_info.hpp"
#include "devices/event.hpp"
#include "devices/stream.hpp"

namespace stoker::devices::detail {

class EventImpl {
 public:
  virtual ~EventImpl() = default;
  virtual Backend backend() const noexcept = 0;
  virtual EventKind kind() const noexcept = 0;
  virtual Result<bool> query() const = 0;
  virtual std::error_code synchronize() const = 0;
  // Milliseconds from `start` to this event; both must be complete timing events.
  virtual Result<float> elapsed_since(const EventImpl& start) const = 0;
};

class StreamImpl {
 public:
  virtual ~StreamImpl() = default;
  virtual Backend backend() const noexcept = 0;
  virtual Device& device() const noexcept = 0;
  virtual std::error_code copy(void* dst, const void* src, std::size_t bytes) = 0;
  virtual std::error_code record(EventImpl& event) = 0;
  virtual std::error_code wait(const EventImpl& event) = 0;
  virtual std::error_code enqueue_host(HostTask task) = 0;
  virtual std::error_code synchronize() = 0;
  virtual void* native() const noexcept = 0;
};

}  // namespace stoker::devices::detail
