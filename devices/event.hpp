// Event: a move-only owner of a CUDA event (or its host-backend twin).
//
// Ordering events (EventKind::ordering) link streams and carry no timestamp,
// so CUDA creates them with cudaEventDisableTiming, the cheapest kind to
// record and wait on; an event whose time is read is asked for as
// EventKind::timing. Like CUDA, stream.wait(event) waits for the work
// captured by the most recent record() before the wait call.
//
// After a sticky device error, query() and synchronize() return that error
// instead of hanging (DESIGN.md rule 3).
#pragma once

#include <memory>
#include <system_error>

#include "common/error.hpp"

namespace stoker::devices {

enum class EventKind {
  ordering,       // no timing; cheapest
  timing,         // can be passed to elapsed_ms
  blocking_sync,  // ordering + synchronize() sleeps instead of spinning
};

namespace detail {
class EventImpl;
}

class Event {
 public:
  Event() noexcept;
  explicit Event(std::unique_ptr<detail::EventImpl> impl) noexcept;
  Event(Event&&) noexcept;
  Event& operator=(Event&&) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event();

  bool valid() const noexcept { return impl_ != nullptr; }
  EventKind kind() const noexcept;

  // true: the work of the last record has completed (or nothing was recorded).
  Result<bool> query() const;
  // Blocks the calling host thread until the last record completes.
  std::error_code synchronize() const;

  detail::EventImpl* impl() const noexcept { return impl_.get(); }

 private:
  std::unique_ptr<detail::EventImpl> impl_;
};

// Milliseconds between two completed timing events of one device.
Result<float> elapsed_ms(const Event& start, const Event& end);

}  // namespace stoker::devices
