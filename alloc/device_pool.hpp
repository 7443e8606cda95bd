// DevicePool: stream-ordered device memory for one GPU, charged to that
// GPU's MemoryBudget, so the engine never calls cudaMalloc/cudaFree on the
// hot path (DESIGN.md rule 2).
//
// It sits on devices::Device::allocate_async/free_async (cudaMallocAsync from
// the device's default memory pool) and raises the pool's release threshold,
// so freed memory stays cached in the driver instead of going back to the
// system at each synchronisation: after warm-up, allocations are reuse. (An
// arena of our own would only be worth it if measured faster; the driver's
// pool is already stream-ordered and reuses across streams via events.)
// On the host backend the same API hands out host memory in stream order.
//
// Promises:
// - Thread safety: every member may be called from any thread.
// - Ordering: a block may be used by work on its allocating stream at once,
//   and by other streams after an event recorded there. release(stream)
//   frees in the order of `stream`: the caller makes sure all work using the
//   block is ordered before that point (usually: release on the stream that
//   used it last, or wait on its event first).
// - Budget: the block's bytes are charged while it is held and released
//   when the free is enqueued; the driver may still hold the memory until
//   the stream reaches the free, so the device may briefly use a little
//   more than the budget says. Set the budget below the device's memory.
// - Failure: allocate never waits (async_allocate waits for the budget): out_of_device_memory when
// the budget or
//   the device cannot provide the bytes (naming the numbers),
//   invalid_argument for 0 bytes. Nothing stays charged on any error path.
// - Lifetime: the pool, the device, the budget and the allocating stream
//   (if the block is destroyed without release(stream)) must outlive the
//   block.
#pragma once

#include <atomic>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/post.hpp>
#include <cstddef>
#include <limits>
#include <string>
#include <system_error>
#include <utility>

#include "alloc/memory_budget.hpp"
#include "devices/device.hpp"
#include "devices/error.hpp"
#include "devices/stream.hpp"

namespace stoker::alloc {

class DevicePool;

struct DevicePoolOptions {
  // Bytes the driver keeps cached across synchronisations; the default
  // keeps everything (the budget bounds what is in use).
  std::size_t release_threshold = std::numeric_limits<std::size_t>::max();
};

struct DevicePoolStats {
  std::size_t bytes_in_use = 0;     // bytes of the blocks held now
  std::size_t blocks_in_use = 0;    // blocks held now
  std::size_t high_water = 0;       // peak of bytes_in_use
  std::size_t allocations = 0;      // blocks handed out, ever
  std::size_t failed_requests = 0;  // allocations that ended in an error
};

// A move-only owner of a stream-ordered device allocation.
class DeviceBlock {
 public:
  DeviceBlock() noexcept = default;
  DeviceBlock(DeviceBlock&& o) noexcept { swap(o); }
  DeviceBlock& operator=(DeviceBlock&& o) noexcept {
    DeviceBlock(std::move(o)).swap(*this);
    return *this;
  }
  DeviceBlock(const DeviceBlock&) = delete;
  DeviceBlock& operator=(const DeviceBlock&) = delete;
  // Frees on the allocating stream.
  ~DeviceBlock() { reset(); }

  void* data() const noexcept { return ptr_; }
  template <typename T>
  T* as() const noexcept {
    return static_cast<T*>(ptr_);
  }
  std::size_t size() const noexcept { return bytes_; }
  explicit operator bool() const noexcept { return ptr_ != nullptr; }
  devices::Stream* stream() const noexcept { return stream_; }

  // Frees in the order of `stream` (see the ordering promise above).
  std::error_code release(devices::Stream& stream) noexcept;
  // Frees on the allocating stream.
  void reset() noexcept;

 private:
  friend class DevicePool;
  void swap(DeviceBlock& o) noexcept {
    std::swap(pool_, o.pool_);
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    std::swap(stream_, o.stream_);
    std::swap(reservation_, o.reservation_);
  }
  DevicePool* pool_ = nullptr;
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
  devices::Stream* stream_ = nullptr;
  Reservation reservation_;
};

class DevicePool {
 public:
  // Sets the device pool's release threshold; a failure to do so is kept in
  // init_error() (the pool still works, it only caches less).
  DevicePool(devices::Device& device, MemoryBudget& budget, DevicePoolOptions options = {});
  ~DevicePool();
  DevicePool(const DevicePool&) = delete;
  DevicePool& operator=(const DevicePool&) = delete;

  devices::Device& device() const noexcept { return device_; }
  MemoryBudget& budget() const noexcept { return budget_; }
  std::error_code init_error() const noexcept { return init_error_; }

  // `stream` must belong to this pool's device.
  Result<DeviceBlock> allocate(std::size_t bytes, devices::Stream& stream);

  // Waits in the device budget's FIFO instead of failing while the memory
  // is merely in use; completion signature void(std::error_code,
  // DeviceBlock), delivered like MemoryBudget::async_acquire (associated
  // executor, cancellation slot). The stream-ordered allocation is enqueued
  // on `stream` from the handler's executor once the budget grants it;
  // `stream` must outlive the operation.
  template <typename Token>
  auto async_allocate(std::size_t bytes, devices::Stream& stream, Token&& token) {
    return boost::asio::async_initiate<Token, void(std::error_code, DeviceBlock)>(
        [this](auto handler, std::size_t n, devices::Stream* s) {
          start_async_allocate(std::move(handler), n, *s);
        },
        token, bytes, &stream);
  }

  DevicePoolStats stats() const noexcept;

 private:
  friend class DeviceBlock;

  template <typename Handler>
  void start_async_allocate(Handler&& handler, std::size_t bytes, devices::Stream& stream) {
    auto ex = boost::asio::get_associated_executor(handler);
    auto slot = boost::asio::get_associated_cancellation_slot(handler);
    if (bytes == 0) {
      failed_.fetch_add(1, std::memory_order_relaxed);
      boost::asio::post(ex, [h = std::move(handler)]() mutable {
        std::move(h)(make_error_code(Errc::invalid_argument), DeviceBlock{});
      });
      return;
    }
    budget_.async_acquire(bytes, boost::asio::bind_executor(
                                     ex, boost::asio::bind_cancellation_slot(
                                             slot, [this, &stream, bytes, h = std::move(handler)](
                                                       std::error_code ec, Reservation r) mutable {
                                               if (ec) {
                                                 failed_.fetch_add(1, std::memory_order_relaxed);
                                                 std::move(h)(ec, DeviceBlock{});
                                                 return;
                                               }
                                               auto block =
                                                   allocate_reserved(bytes, stream, std::move(r));
                                               if (!block) {
                                                 std::move(h)(block.error().code, DeviceBlock{});
                                                 return;
                                               }
                                               std::move(h)(std::error_code{}, std::move(*block));
                                             })));
  }

  Result<DeviceBlock> allocate_reserved(std::size_t bytes, devices::Stream& stream, Reservation r);
  std::error_code free(DeviceBlock& block, devices::Stream& stream) noexcept;

  devices::Device& device_;
  MemoryBudget& budget_;
  std::error_code init_error_;
  std::atomic<std::size_t> bytes_in_use_{0};
  std::atomic<std::size_t> blocks_in_use_{0};
  std::atomic<std::size_t> high_water_{0};
  std::atomic<std::size_t> allocations_{0};
  std::atomic<std::size_t> failed_{0};
};

}  // namespace stoker::alloc
