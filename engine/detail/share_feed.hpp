// ShareFeed: the shares of a streamed partition's split producer as they
// end, from the engine thread to the device's feeder thread, which copies
// each share's bytes to the device while later shares are still produced
// (Partition::share_align).
//
// Lock-free: the engine thread sets a share's flag, then moves the event
// counter; the feeder reads the counter, checks the flag and sleeps on the
// counter (C++20 atomic wait) until it moves. The feed is aborted only once
// every share that started has ended, so after an abort nothing writes the
// partition's blocks any more and they may go back to the pool.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <system_error>

namespace stoker::engine::detail {

class ShareFeed {
 public:
  ShareFeed(std::size_t shares, std::size_t align)
      : count_(shares), align_(align), done_(std::make_unique<std::atomic<bool>[]>(shares)) {}
  std::size_t shares() const noexcept { return count_; }
  std::size_t align() const noexcept { return align_; }

  // Engine thread: share t has written its bytes.
  void share_done(std::size_t t) noexcept {
    done_[t].store(true, std::memory_order_release);
    bump();
  }
  // Engine thread, after the last started share ended: the shares not done
  // never will be (the producer failed or its job was cancelled).
  void abort(std::error_code ec, std::string message) {
    error_ = ec;
    message_ = std::move(message);
    aborted_.store(true, std::memory_order_release);
    bump();
  }

  // Feeder thread: blocks until share t is done (true) or the feed was
  // aborted (false; error() and message() say why).
  bool wait_for(std::size_t t) const noexcept {
    for (;;) {
      const std::uint32_t seen = events_.load(std::memory_order_acquire);
      if (done_[t].load(std::memory_order_acquire)) return true;
      if (aborted_.load(std::memory_order_acquire)) return false;
      events_.wait(seen, std::memory_order_acquire);
    }
  }
  // Until every share is done or the feed was aborted.
  void wait_all() const noexcept {
    for (std::size_t t = 0; t < count_ && wait_for(t); ++t) {
    }
  }
  // Valid once wait_for returned false.
  std::error_code error() const noexcept { return error_; }
  const std::string& message() const noexcept { return message_; }

 private:
  void bump() noexcept {
    events_.fetch_add(1, std::memory_order_release);
    events_.notify_all();
  }
  std::size_t count_, align_;
  std::unique_ptr<std::atomic<bool>[]> done_;
  std::atomic<bool> aborted_{false};
  std::error_code error_;
  std::string message_;
  mutable std::atomic<std::uint32_t> events_{0};
};

}  // namespace stoker::engine::detail
