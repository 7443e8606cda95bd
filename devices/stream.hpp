// Stream: a move-only owner of an ordered queue of device work.
//
// On CUDA it is a non-blocking cudaStream_t; on the host backend an ordered
// queue run by a worker thread. Work is enqueued only through a Stream, so
// every enqueuing call says which queue it joins, and it returns at once.
// Streams are linked only by events (DESIGN.md rule 1): record() on the
// producer, wait() on the consumer.
//
// Destroying a stream with work still queued is allowed: the call waits for
// the queued work to finish (on CUDA the driver does it asynchronously).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <system_error>

#include "devices/device_info.hpp"
#include "devices/event.hpp"

namespace stoker::devices {

class Device;

enum class StreamPriority { low, normal, high };

namespace detail {
class StreamImpl;
}

// A CPU task enqueued on a host-backend stream: the CPU version of a kernel.
// Returning an error puts the device into a sticky fault state, the way a
// faulting kernel does on CUDA.
using HostTask = std::function<std::error_code()>;

class Stream {
 public:
  Stream() noexcept;
  explicit Stream(std::unique_ptr<detail::StreamImpl> impl) noexcept;
  Stream(Stream&&) noexcept;
  Stream& operator=(Stream&&) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream();

  bool valid() const noexcept { return impl_ != nullptr; }
  Backend backend() const noexcept;
  Device& device() const noexcept;

  // Copies `bytes` between any two of: pinned/registered host memory and
  // device memory of this or a peer device. The source must stay untouched
  // and both ranges alive until the copy's completion is observed via an event.
  std::error_code copy(void* dst, const void* src, std::size_t bytes);
  std::error_code record(Event& event);
  std::error_code wait(const Event& event);
  // Host backend only (not_supported on CUDA: a CUDA host callback may
  // neither call CUDA nor run user code, DESIGN.md rule 3).
  std::error_code enqueue_host(HostTask task);
  std::error_code synchronize();

  // cudaStream_t on CUDA, nullptr on the host backend.
  void* native() const noexcept;

  detail::StreamImpl* impl() const noexcept { return impl_.get(); }

 private:
  std::unique_ptr<detail::StreamImpl> impl_;
};

}  // namespace stoker::devices
