// StagingRing: how a device's pageable inputs reach it. Pageable memory is
// never handed to the DMA engine: staging threads copy it in chunks into
// pinned buffers and send each chunk on the device's H2D stream, and a
// buffer is refilled only once the event of its last copy has completed.
// With PageableInputs::register_in_place the whole pages inside a large
// input are page-locked and copied in place instead; its head and tail are
// still staged.
//
// Each staging thread has two or more buffers of its own, pinned for good
// at creation from a thread on the device's CPUs where it has any. A
// partition's staged bytes make one StagingPass, which start() runs on the
// staging threads beside the passes before and after it.
// Threads: add_segment, register_in_place and start run on one thread (the
// device's feeder); a pass's tasks run on the staging threads. Lifetime:
// join() waits for every pass started; the H2D stream must outlive the
// ring, and its copies must have ended before the ring is destroyed.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "common/error.hpp"
#include "devices/cpu_set.hpp"
#include "devices/device.hpp"
#include "devices/pinned_buffer.hpp"
#include "engine/config.hpp"
#include "engine/detail/worker_pool.hpp"

namespace stoker::engine::detail {

using Clock = std::chrono::steady_clock;

// A partition's pass through the staging buffers: every pageable byte it
// stages (its staged inputs, or a registered input's head and tail), as
// segments whose chunks are numbered one after the other. Each staging
// thread runs at most one task of a pass: it claims the next chunk
// nobody has taken, copies it into its next buffer and sends it, in
// whatever order the chunks end. Passes of consecutive partitions
// overlap: a thread that runs out of one pass's chunks takes the next
// pass's task while the last chunks of the first are still being
// copied (docs/DESIGN.md's pipeline; a barrier per input left threads
// idle behind the slowest chunk: 12-32 % of a bare staging loop's time
// under 14 writers, docs/BENCHMARKS.md).
struct Segment {
  std::byte* dst = nullptr;
  const std::byte* src = nullptr;
  std::size_t bytes = 0, first_chunk = 0;
  std::string what;  // for errors: "input 2", "the head of input 0"
};
struct StagingPass {
  std::vector<Segment> segments;  // StagingRing::add_segment
  std::size_t chunks = 0;
  std::atomic<std::size_t> next_chunk{0};  // the next chunk to claim
  std::atomic<bool> failed{false};
  std::error_code error;  // written by the first task to fail, read once none runs
  std::string failed_what;
  std::atomic<std::size_t> running{0};  // tasks not yet ended
  // When its first chunk was claimed: the start of the partition's
  // staging span (the pass may have waited behind the previous one's).
  Clock::time_point started_at;
  // Given to StagingRing::start.
  std::size_t index = 0;  // the partition's index in its job (NVTX ranges)
  std::function<std::error_code()> before_copy;
  std::function<void()> ended;
};

class StagingRing {
 public:
  // Starts the staging threads and pins their buffers as `config` says
  // (staging_threads, staging_chunk_bytes, staging_ring_bytes), pinning
  // from a thread bound to `cpus` unless it is empty; errors name the
  // device (`where`, device_handles.hpp), and a thread the system refuses
  // is one of them.
  static Result<std::unique_ptr<StagingRing>> create(devices::Device& device, devices::Stream& h2d,
                                                     const Config& config, devices::CpuSet cpus,
                                                     const std::string& where);

  // The CPUs the staging threads run on: those given to create(), or none
  // where they could not be bound.
  const devices::CpuSet& cpus() const noexcept { return cpus_; }
  // Pinned bytes the buffers hold.
  std::size_t bytes() const noexcept { return count_ * chunk_bytes_; }

  // Adds `bytes` from `src` to `dst` to the pass, in chunks numbered after
  // those already in it; nothing for 0 bytes.
  void add_segment(StagingPass& pass, std::byte* dst, const std::byte* src, std::size_t bytes,
                   std::string what) const;
  // Runs the pass (which has chunks) on min(chunks, staging threads) tasks.
  // `before_copy` runs before each chunk's copy is queued on the H2D stream;
  // an error it returns fails the pass. `ended` runs once, on the last task
  // to end: every chunk's copy is queued by then, or the pass failed.
  void start(const std::shared_ptr<StagingPass>& pass, std::size_t index,
             std::function<std::error_code()> before_copy, std::function<void()> ended);
  // Waits for the tasks of every pass started.
  void join();

  // With PageableInputs::register_in_place, page-locks the whole pages
  // inside a pageable input for its copy and adds the registration to
  // `registrations`: bytes [head, head + interior) go in place, the rest is
  // staged. interior == 0: stage it all (too small, or refused).
  struct InPlace {
    std::size_t head = 0, interior = 0;
  };
  InPlace register_in_place(const std::byte* src, std::size_t bytes,
                            std::vector<devices::HostRegistration>& registrations) const;

 private:
  struct Buffer {
    devices::PinnedBuffer buffer;
    devices::Event copied;  // last H2D out of this buffer
  };

  StagingRing(devices::Device& device, devices::Stream& h2d, devices::CpuSet cpus);
  // Pins every buffer, from a thread bound to cpus_ where there are any.
  Error pin(const std::string& where);
  void run_task(StagingPass& pass);
  // The index of the calling staging thread (0 .. staging threads - 1),
  // given at its first task: its buffers are its own.
  std::size_t thread_index();

  devices::Device& device_;
  devices::Stream& h2d_;
  devices::CpuSet cpus_;
  PageableInputs pageable_inputs_ = PageableInputs::stage;
  std::size_t chunk_bytes_ = 0;
  // Two or more chunk buffers per staging thread: thread i (its
  // thread_index) uses [i * buffers_per_thread_, (i + 1) *
  // buffers_per_thread_) in turn, and thread_next_buffer_[i] says where it
  // left off; only thread i touches them.
  std::unique_ptr<Buffer[]> buffers_;
  std::size_t count_ = 0;
  std::size_t threads_ = 0, buffers_per_thread_ = 0;
  std::vector<std::size_t> thread_next_buffer_;
  std::atomic<std::size_t> threads_seen_{0};
  // The staging threads; declared after the buffers, so they end first.
  std::unique_ptr<WorkerPool> pool_;
};

}  // namespace stoker::engine::detail
