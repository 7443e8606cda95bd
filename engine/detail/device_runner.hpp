// DeviceRunner: everything one device needs to run partitions: three streams,
// the pipeline slots with their events, the staging ring (staging_ring.hpp:
// the pinned staging chunks and the staging threads), a feeder thread that
// enqueues each partition's copies, a launcher thread that enqueues its
// kernels and D2H once its inputs are queued, and a waiter thread that
// blocks on completion events (and so notices sticky faults, DESIGN.md
// rule 3), then reads the slot's times (event_clock.hpp). The threads are
// named "stoker-<role>-<device>" and, with Config::bind_threads, all but the
// launcher run on the device's local CPUs (devices/cpu_set.hpp). Internal to
// the engine; the engine core owns the scheduling and talks to it by
// posting.
#pragma once

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
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
#include "engine/detail/device_layout.hpp"
#include "engine/detail/event_clock.hpp"
#include "engine/detail/nvtx.hpp"
#include "engine/detail/share_feed.hpp"
#include "engine/detail/staging_ring.hpp"
#include "engine/job.hpp"
#include "engine/job_report.hpp"

namespace stoker::engine::detail {

using Clock = std::chrono::steady_clock;

struct DirectCopy;  // input_copies.hpp

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
  std::size_t staging_bytes() const noexcept { return staging_->bytes(); }

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
    StageEvents timing;        // h2d0 .. d2h1, and the device work's marks on a GPU
  };
  // One launch from the feeder's start to its end: what the second half of
  // the enqueue (enqueue_compute) needs once the staging pass has ended.
  struct Launch {
    LaunchRequest r;
    std::function<void()> inputs_copied;
    std::function<void(LaunchResult)> done;
    LaunchResult res;
    std::byte* device_memory = nullptr;
    DeviceLayout layout;
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
  Error create_slots(int depth, const std::string& where);
  // The device's four threads; the first the system refuses is the error.
  Error start_threads();
  // The launch's first error, naming this device and what failed.
  void fail(Launch& l, std::error_code ec, const std::string& what) const;

  // The feeder's half: device memory, the direct copies, and the staging
  // pass started; then arrive().
  void begin(const std::shared_ptr<Launch>& l);
  // The partition's layout, and its device memory taken.
  void allocate(Launch& l);
  void start_pass(const std::shared_ptr<Launch>& l);
  // The copies the feeder sends itself (input_copies.hpp).
  void send_direct(Launch& l, const std::vector<DirectCopy>& direct);
  // Feeder thread: returns once every launch dispatched before `seq` has
  // recorded its input events, so that none of them waits for this
  // launch's direct copies.
  void wait_for_inputs_recorded(std::uint64_t seq);
  std::error_code start_h2d(Launch& l);
  void arrive(Launch& l);

  // Launcher thread: enqueues the launches at the head of in_order_ that
  // are ready, in dispatch order.
  void enqueue_ready();
  // The launcher's half: the input events, the kernels, the D2H, and the
  // launch handed to the waiters.
  void enqueue_compute(Launch& l);
  void record_inputs(Launch& l);
  void enqueue_kernels(Launch& l);
  void enqueue_gpu_kernels(Launch& l, const KernelBuffers& buffers);
  void enqueue_d2h(Launch& l);
  void hand_to_waiters(Launch& l);
  void finish(LaunchRequest& r, LaunchResult result, const std::function<void(LaunchResult)>& done);

  devices::Device& device_;
  devices::CpuSet cpus_;
  devices::Stream h2d_, compute_, d2h_;
  std::vector<Slot> slots_;
  std::unique_ptr<StagingRing> staging_;
  EventClock clock_;
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
