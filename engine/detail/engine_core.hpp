// EngineCore: the engine's coordinator. It owns the engine thread (an
// io_context of its own) and four components that live on it, so
// scheduling needs no locks:
//   JobTable     the jobs, their partitions' phases and the ranked queues
//   HostStaging  host budget, pinned blocks, producers, bounce copies
//   DeviceSlots  the device runners, their slots, budgets and health
//   KeyRegistry  what stays resident on every device (SRS points)
// The partition's path through them is partition_path.cpp, from submit()
// to the handler; device runners, producer workers and cancellation
// signals talk to it by posting.
#pragma once

#include <atomic>
#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <memory>
#include <thread>
#include <vector>

#include "engine/detail/device_slots.hpp"
#include "engine/detail/host_staging.hpp"
#include "engine/detail/job_table.hpp"
#include "engine/detail/key_registry.hpp"
#include "engine/engine.hpp"

namespace stoker::engine::detail {

using ShutdownHandler = boost::asio::any_completion_handler<Engine::ShutdownSignature>;

class EngineCore;

// What a job's cancellation handler holds instead of the engine: the handler
// lives in the caller's slot and may be invoked after the engine is gone
// (destroyed with the job's completion still queued on the caller's
// executor). detach() in the engine's destructor waits out any handler
// already inside, and later ones find no engine. Dekker-style, no lock: the
// handler announces itself before reading the pointer, detach() clears the
// pointer before reading the count, both sequentially consistent, so one of
// them always sees the other.
class CancelRelay {
 public:
  explicit CancelRelay(EngineCore* core) : core_(core) {}
  void cancel(std::uint64_t seq);
  void detach() {
    core_.store(nullptr);
    while (inside_.load() != 0) std::this_thread::yield();
  }

 private:
  std::atomic<EngineCore*> core_;
  std::atomic<int> inside_{0};
};

class EngineCore {
  friend class CancelRelay;

 public:
  static Result<std::unique_ptr<EngineCore>> create(Config config);
  ~EngineCore();

  const devices::DeviceSet& devices() const noexcept { return set_; }
  const Config& config() const noexcept { return config_; }
  EngineStats stats();
  std::size_t lookahead() const noexcept { return jobs_.lookahead(); }
  alloc::PinnedPool& pinned_pool() noexcept { return staging_->pool(); }
  // The blocks of `count` partitions like `like` (see Engine::reserve_pinned).
  std::error_code reserve_pinned(const Partition& like, std::size_t count);
  // Grows every healthy device's memory pool to a full pipeline of `like`
  // now and waits until it is mapped (see Engine::reserve_device).
  void reserve_device(const Partition& like);

  void submit(Job job, SubmitHandler handler, boost::asio::any_io_executor handler_executor);

  Result<Srs> load_srs(std::size_t points, const SrsFill& read,
                       const SrsLoadOptions& options) {
    return keys_->load_srs(points, read, options);
  }
  void evict_srs(std::shared_ptr<SrsResidency> srs, EvictHandler handler,
                 boost::asio::any_io_executor handler_executor) {
    keys_->evict(std::move(srs), std::move(handler), std::move(handler_executor));
  }
  void shutdown(ShutdownHandler handler, boost::asio::any_io_executor handler_executor);

 private:
  EngineCore(Config config, devices::DeviceSet set);
  Error validate(const Job& job) const;

  // The partition's path (partition_path.cpp), in the order it is taken.
  void start(std::unique_ptr<JobState> job);
  void pump();
  void prepare(const PartKey& k);
  void blocks_granted(const PartKey& k, Result<std::vector<alloc::PinnedBlock>> blocks);
  void run_producer(const PartKey& k);
  void produced(const PartKey& k, std::error_code ec, std::string message);
  void dispatch(std::size_t device, const PartKey& k);
  // The device has read the partition's produced inputs: their blocks go
  // back to the pool, so producers ahead can use them while kernels run.
  void inputs_copied(const PartKey& k);
  void launch_ended(const PartKey& k, LaunchResult result);
  // On workers, once the partition's slot is free: bounce copies into its
  // pageable destinations, then the job's verify; finished() follows.
  void copy_out(const PartKey& k);
  void finished(const PartKey& k, Error error);
  // Ends a partition that holds no slot and will not run; `ec` fails its job
  // unless the job is over already (then it is a consequence, not news).
  void drop(const PartKey& k, std::error_code ec, const std::string& message);
  // Posts the job's handler once the job is over and nothing of it runs.
  void end_job_if_over(std::uint64_t seq);

  // A job's end before its partitions' (engine_core.cpp).
  void fail(JobState& job, Error error);
  void cancel(std::uint64_t seq);
  void drop_queued(JobState& job);
  void fail_unschedulable();

  Config config_;
  devices::DeviceSet set_;
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> io_work_;
  JobTable jobs_;
  std::unique_ptr<HostStaging> staging_;
  std::unique_ptr<DeviceSlots> slots_;
  std::unique_ptr<KeyRegistry> keys_;
  std::shared_ptr<CancelRelay> relay_ = std::make_shared<CancelRelay>(this);
  bool shutting_down_ = false;
  std::vector<std::pair<ShutdownHandler, boost::asio::any_io_executor>> shutdown_waiters_;
  std::thread thread_;
};

}  // namespace stoker::engine::detail
