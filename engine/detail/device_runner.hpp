// DeviceRunner: everything one device needs to run partitions: three streams,
// the pipeline slots with their events, the pinned staging chunks, a feeder
// thread that enqueues each partition's copies, staging threads, a launcher
// thread that enqueues its kernels and D2H once its inputs are queued, and
// a waiter thread that blocks on completion events (and so notices sticky
// faults, DESIGN.md rule 3). The threads are named "stoker-<role>-<device>"
// and, with Config::bind_threads, all but the launcher run on the device's
// local CPUs (devices/cpu_set.hpp). Internal to the
// engine; the engine core owns the scheduling and talks to it by posting.
#pragma once

#include <array>
#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "devices/cpu_set.hpp"
#include "devices/device.hpp"
#include "devices/pinned_buffer.hpp"
#include "engine/config.hpp"
#include "engine/detail/nvtx.hpp"
#include "engine/detail/share_feed.hpp"
#include "engine/job.hpp"
#include "engine/job_report.hpp"

namespace stoker::engine::detail {

using Clock = std::chrono::steady_clock;

// One partition as the runner sees it: where its bytes come from and go to.
struct LaunchRequest {
  int slot = 0;
  const Partition* partition = nullptr;
  std::size_t index = 0;  // the partition's index in its job
  // The partition's NVTX range, from launch() until its result is handed on
  // (ended just before `done`).
  nvtx::Span span;
  std::vector<const std::byte*> input_sources;  // pinned or pageable, per input
  std::vector<std::byte*> output_targets;       // pinned: destination or bounce block
  Clock::time_point job_start;
  // Set for a partition whose producer still runs: its produced inputs are
  // copied share by share as the feed says each has ended.
  std::shared_ptr<const ShareFeed> feed;
};

// What comes back when the slot's last event completed.
struct LaunchResult {
  std::error_code error;  // enqueue or device error
  std::string message;
  bool device_fault = false;     // the device is gone for good
  bool producer_failed = false;  // a streamed partition's producer failed: nothing ran
  StageSpan staging, h2d, kernels, d2h;
  std::size_t bytes_registered = 0;
  // Pageable inputs page-locked in place for this partition's copies;
  // unregistered once the slot's work is done.
  std::vector<devices::HostRegistration> registrations;
  // Host backend: what the partition's CPU kernels threw, if they did
  // (written by the compute stream's worker before the fault it causes).
  std::shared_ptr<std::string> cpu_kernels_threw;
  // The device work's marks: how many it recorded on a GPU, or the host
  // backend's clock readings; then, from them, the steps' durations.
  int gpu_marks = 0;
  std::shared_ptr<std::vector<Clock::time_point>> host_marks;
  std::vector<double> kernel_steps_ms;
  // The partition's device memory, freed by finish() once it has ended.
  std::byte* device_memory = nullptr;
};

class DeviceRunner {
 public:
  // Creates streams, events and staging as `config` says (depth, stream
  // priorities, staging chunks and threads); errors name the device.
  static Result<std::unique_ptr<DeviceRunner>> create(devices::Device& device,
                                                      const Config& config);
  ~DeviceRunner();

  devices::Device& device() const noexcept { return device_; }
  int depth() const noexcept { return static_cast<int>(slots_.size()); }
  // The CPUs this device's threads run on (devices::cpus_near), empty
  // where they were left unbound.
  const devices::CpuSet& cpus() const noexcept { return cpus_; }
  // Pinned bytes the staging buffers hold (allocated at creation, for good).
  std::size_t staging_bytes() const noexcept { return staging_count_ * chunk_bytes_; }

  // Enqueues the partition (feeder, staging threads, launcher, in that
  // order; the next partition's copies may start before this one's
  // kernels are queued); `inputs_copied` (if set)
  // runs on the copy waiter thread once the device has read every input
  // (never after an enqueue error or a fault), `done` on the waiter thread
  // once the slot's work has completed or failed.
  void launch(LaunchRequest request, std::function<void()> inputs_copied,
              std::function<void(LaunchResult)> done);

  // Grows the device's stream-ordered memory pool to `bytes` on the feeder
  // thread, ahead of the launches queued after it. The first cudaMallocAsync
  // of a size maps physical memory (15-37 ms for one 0.3-2 GiB partition,
  // measured) and would otherwise delay the job's first copy by as much.
  // `done`, if set, runs on the feeder thread once the memory is mapped.
  void warm_device_pool(std::size_t bytes, std::function<void()> done = {});

 private:
  struct Slot {
    devices::Event in_ready, compute_done, out_done;
    devices::Event copied_in;  // in_ready for a host thread to block on
    devices::Event h2d0, h2d1, k0, k1, d2h0, d2h1;
    std::array<devices::Event, kMaxKernelMarks> marks;  // KernelContext::mark on a GPU
  };
  struct Staging {
    devices::PinnedBuffer buffer;
    devices::Event copied;  // last H2D out of this buffer
  };
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
    std::vector<Segment> segments;
    std::size_t chunks = 0;
    std::atomic<std::size_t> next_chunk{0};  // the next chunk to claim
    std::atomic<bool> failed{false};
    std::error_code error;  // written by the first task to fail, read once none runs
    std::string failed_what;
    std::atomic<std::size_t> running{0};  // tasks not yet ended
    // When its first chunk was claimed: the start of the partition's
    // staging span (the pass may have waited behind the previous one's).
    Clock::time_point started_at;
  };
  // One launch from the feeder's start to its end: what the second half of
  // the enqueue (enqueue_compute) needs once the staging pass has ended.
  struct Launch {
    LaunchRequest r;
    std::function<void()> inputs_copied;
    std::function<void(LaunchResult)> done;
    LaunchResult res;
    std::byte* device_memory = nullptr;
    std::vector<std::size_t> in_off, out_off;
    std::size_t scratch_off = 0;
    Clock::time_point stage_start, staged_at;
    bool staged = false;  // a pass or a registration: the partition has a staging span
    StagingPass pass;
    std::uint64_t seq = 0;  // dispatch order on this device
    // Whoever sends the launch's first copy (the feeder or a staging
    // thread) records the slot's h2d0 first (start_h2d).
    std::atomic<bool> h2d_started{false};
    // The feeder's half and the pass: whichever ends last makes the launch
    // ready for the launcher, which enqueues ready launches in dispatch
    // order.
    std::atomic<int> pending{1};
  };

  explicit DeviceRunner(devices::Device& device);
  // The feeder's half: device memory, the direct copies, and the staging
  // pass started; then arrive().
  void begin(const std::shared_ptr<Launch>& l);
  // The launcher's half: the input events, the kernels, the D2H, and the
  // launch handed to the waiters.
  void enqueue_compute(Launch& l);
  void arrive(const std::shared_ptr<Launch>& l);
  // Launcher thread: enqueues the launches at the head of in_order_ that
  // are ready, in dispatch order.
  void enqueue_ready();
  // Feeder thread: returns once every launch dispatched before `seq` has
  // recorded its input events, so that none of them waits for this
  // launch's direct copies.
  void wait_for_inputs_recorded(std::uint64_t seq);
  std::error_code start_h2d(Launch& l);
  void add_segment(Launch& l, std::byte* dst, const std::byte* src, std::size_t bytes,
                   std::string what);
  void run_staging_task(const std::shared_ptr<Launch>& l);
  // The index of the calling staging thread (0 .. staging threads - 1),
  // given at its first task: its buffers are its own.
  std::size_t staging_thread_index();
  // With PageableInputs::register_in_place, page-locks the whole pages
  // inside a pageable input for its copy and keeps the registration in
  // `res`: bytes [head, head + interior) go in place, the rest is staged.
  // interior == 0: stage it all (too small, or refused).
  struct InPlace {
    std::size_t head = 0, interior = 0;
  };
  InPlace register_in_place(const std::byte* src, std::size_t bytes, LaunchResult& res);
  // The produced inputs of a streamed partition, share by share as they end;
  // false when the producer failed (res says why), with the copies of the
  // shares before enqueued.
  bool copy_streamed_shares(const LaunchRequest& r, std::byte* device_memory,
                            const std::vector<std::size_t>& in_off, LaunchResult& res);
  double device_time_ms(const devices::Event& e, Clock::time_point job_start) const;
  void finish(LaunchRequest& r, LaunchResult result, const std::function<void(LaunchResult)>& done);

  devices::Device& device_;
  devices::CpuSet cpus_;
  devices::Stream h2d_, compute_, d2h_;
  std::vector<Slot> slots_;
  // Two or more chunk buffers per staging thread: thread i (its
  // staging_thread_index) uses [i * buffers_per_thread_, (i + 1) *
  // buffers_per_thread_) in turn, and thread_next_buffer_[i] says where it
  // left off; only thread i touches them.
  std::unique_ptr<Staging[]> staging_;
  std::size_t staging_count_ = 0;
  std::size_t staging_threads_ = 0, buffers_per_thread_ = 0;
  std::vector<std::size_t> thread_next_buffer_;
  std::atomic<std::size_t> threads_seen_{0};
  std::size_t chunk_bytes_ = 0;
  // Maps device event times onto the host clock (DESIGN.md rule 7).
  devices::Event epoch_;
  Clock::time_point epoch_host_;

  std::unique_ptr<boost::asio::thread_pool> copiers_;  // the staging threads
  PageableInputs pageable_inputs_ = PageableInputs::stage;
  // The copy waiter has a thread of its own: the waiter blocks on each
  // slot's last event in turn, and would learn of a partition's inputs only
  // after the partition ahead had finished.
  // The launcher runs every launch's second half, so the partitions'
  // kernel launches (the jobs' callables) stay on one thread per device,
  // as they were on the feeder, while the feeder goes on to the next
  // partition's copies.
  boost::asio::io_context feeder_io_, launcher_io_, waiter_io_, copy_waiter_io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> feeder_work_,
      launcher_work_, waiter_work_, copy_waiter_work_;
  std::thread feeder_, launcher_, waiter_, copy_waiter_;
  std::uint64_t launches_begun_ = 0;               // feeder only
  std::deque<std::shared_ptr<Launch>> in_order_;   // launcher only
  std::atomic<std::uint64_t> inputs_recorded_{0};  // launches whose input events are recorded
};

}  // namespace stoker::engine::detail
