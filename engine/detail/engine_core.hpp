// EngineCore: the engine's bookkeeping. All of its state lives on one
// thread (an io_context of its own), so scheduling needs no locks; device
// runners, producer workers and cancellation signals talk to it by posting.
#pragma once

#include <algorithm>
#include <atomic>
#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <type_traits>
#include <vector>

#include "alloc/memory_budget.hpp"
#include "alloc/pinned_pool.hpp"
#include "common/elapsed.hpp"
#include "engine/detail/device_runner.hpp"
#include "engine/detail/partition_lifecycle.hpp"
#include "engine/detail/srs_residency.hpp"
#include "engine/engine.hpp"

namespace stoker::engine::detail {

using SubmitHandler = boost::asio::any_completion_handler<Engine::SubmitSignature>;
using ShutdownHandler = boost::asio::any_completion_handler<Engine::ShutdownSignature>;

class EngineCore;

using common::ms_since;

inline bool allowed_on(const Job& job, std::size_t device) {
  if (!job.devices) return true;
  return std::find(job.devices->begin(), job.devices->end(), static_cast<int>(device)) !=
         job.devices->end();
}

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
  std::size_t lookahead() const noexcept { return max_prepared_; }
  alloc::PinnedPool& pinned_pool() noexcept { return *pool_; }
  // The blocks of `count` partitions like `like`, no more than the host
  // budget could ever hand out at once (see Engine::reserve_pinned).
  std::error_code reserve_pinned(const Partition& like, std::size_t count);
  // Grows every healthy device's memory pool to a full pipeline of `like`
  // now and waits until it is mapped (see Engine::reserve_device).
  void reserve_device(const Partition& like);

  void submit(Job job, SubmitHandler handler, boost::asio::any_io_executor handler_executor);

  // Resident SRS points (engine/srs.hpp; srs_loading.cpp). `read` fills
  // points [first, first + out.size()) of the source.
  using SrsSource = std::function<Error(std::size_t first, std::span<kernels::G1Affine> out)>;
  Result<Srs> load_srs(std::size_t points, const SrsSource& read, const SrsLoadOptions& options);
  void evict_srs(std::shared_ptr<SrsResidency> srs, EvictHandler handler,
                 boost::asio::any_io_executor handler_executor);
  void shutdown(ShutdownHandler handler, boost::asio::any_io_executor handler_executor);

 private:
  struct PartState {
    PartPhase phase = PartPhase::queued;
    // A pinned block per produced input, given back as soon as the device
    // has read it, then one per pageable output (its landing area), kept
    // until the partition ends. Blocks of equal size share a pool size class
    // (hpoly's a, b, c and h), so early returns never make the pool trade
    // slabs of one class for another mid-job.
    std::vector<std::size_t> block_bytes;  // inputs first, then outputs
    std::size_t input_blocks = 0;
    std::vector<alloc::PinnedBlock> blocks;                    // as granted, in block_bytes order
    std::unique_ptr<boost::asio::cancellation_signal> cancel;  // pending budget waits
    Clock::time_point ready_at{};
    // A streamed partition's shares while its producer runs (null once it
    // has ended before a slot took the partition: then it is copied whole).
    std::shared_ptr<ShareFeed> feed;
    std::size_t device_bytes = 0;
    PartitionReport report;
  };
  struct JobState {
    // Boost 1.81's any_completion_handler move assignment recurses forever
    // (it copies `other` as an lvalue into its own converting constructor):
    // construct handlers in place, never assign them.
    JobState(Job j, SubmitHandler h, boost::asio::any_io_executor ex)
        : job(std::move(j)), handler(std::move(h)), handler_executor(std::move(ex)) {}
    std::uint64_t seq = 0;
    Job job;
    SubmitHandler handler;
    boost::asio::any_io_executor handler_executor;  // tracks outstanding work
    Clock::time_point start{};
    alloc::PoolStats pool_at_start;  // to report the slabs pinned while it ran
    std::vector<PartState> parts;
    std::size_t remaining = 0;  // partitions not yet finished
    std::size_t active = 0;     // the parts' active_count (partition_lifecycle.hpp)
    bool cancelled = false;
    Error failure;
    nvtx::Span span;  // from submission until the state is gone (completion)
  };
  struct Key {
    int neg_priority;
    std::uint64_t seq;
    std::size_t part;
    auto operator<=>(const Key&) const = default;
  };
  struct DevState {
    std::vector<bool> slot_busy;
    int free_slots = 0;
    bool healthy = true;
    std::size_t budget = 0, in_use = 0;
    std::size_t resident = 0;  // resident SRS points, off the budget while they stay
    std::size_t capacity() const { return budget - resident; }  // for partitions
    std::size_t pool_warmed = 0;  // bytes the device memory pool has grown to
  };

  EngineCore(Config config, devices::DeviceSet set);
  Error validate(const Job& job) const;
  void start(std::uint64_t seq);
  void warm_device_pools(const JobState& job);
  // What device d's pool should hold for a pipeline of partitions of
  // `largest` device bytes; 0 when it holds that already. Marks it held.
  std::size_t pool_growth(std::size_t d, std::size_t largest);
  void pump();
  void prepare(const Key& k);
  // Pinned blocks are requested one at a time in prepare order, so
  // producers start in the order partitions were ranked; a partition's
  // blocks are requested back to back, so none holds some while another
  // partition takes what it needs for the rest.
  void allocate_next();
  void request_block(const Key& k);
  void block_arrived(const Key& k, Result<alloc::PinnedBlock> block);
  // The device has read the partition's produced inputs: their blocks go
  // back to the pool, so producers ahead can use them while kernels run.
  void inputs_copied(const Key& k);
  void run_producer(const Key& k);
  // A partition's producer work: its shares (one for a plain producer).
  struct ProducerRun {
    std::vector<std::span<std::byte>> spans;
    Producer plain;
    SplitProducer split;
    std::size_t tasks = 1;
    std::size_t left = 1;                 // engine thread: shares not yet ended
    std::atomic<std::size_t> claimed{0};  // shares taken, by the engine thread or a worker
    std::atomic<bool> stop{false};        // its job was cancelled or failed: take no more
    std::shared_ptr<ShareFeed> feed;      // streamed: told of each share as it ends
    std::error_code error;
    std::string thrown;  // with Errc::callable_threw: what the first share threw
    Clock::time_point first_start{}, last_end{};
    // The next share nobody has taken, or `tasks` when none is left.
    std::size_t claim() noexcept {
      std::size_t c = claimed.load(std::memory_order_relaxed);
      while (c < tasks && !claimed.compare_exchange_weak(c, c + 1, std::memory_order_relaxed)) {
      }
      return std::min(c, tasks);
    }
  };
  // Starts shares of the best-ranked partitions on free workers (at most
  // one per worker), so that the partitions ahead finish first whatever
  // order their blocks arrived in.
  void start_shares();
  // On a worker: share t, then more shares of the same run while any is
  // left and its job goes on. Under CPU contention a round trip through
  // the engine thread per share cost each worker a scheduling delay (the
  // pipeline benchmark's producers ran 18 % slower with twice the shares).
  void produce_shares(const Key& k, std::shared_ptr<ProducerRun> run, std::size_t t);
  void share_done(const Key& k, const std::shared_ptr<ProducerRun>& run, std::size_t share,
                  std::error_code ec, Clock::time_point end, std::string thrown);
  void producer_done(const Key& k, const ProducerRun& run);
  // Runs task(i) -> std::error_code for i < count on the workers, back to
  // back in their queue; the last to finish calls last(first error), also
  // when count is 0. No lock: a failing task publishes its code before its
  // decrement, and the last decrement (acq_rel) sees it and every other
  // task's writes.
  template <typename Task, typename Last>
  void fan_out(std::size_t count, Task task, Last last) {
    struct State {
      State(std::size_t n, Task t, Last l) : remaining(n), task(std::move(t)), last(std::move(l)) {}
      std::atomic<std::size_t> remaining;
      std::atomic<bool> failed{false};
      std::error_code first_error;
      Task task;
      Last last;
    };
    auto st = std::make_shared<State>(count, std::move(task), std::move(last));
    if (count == 0) {
      boost::asio::post(*workers_, [st] { st->last(std::error_code{}); });
      return;
    }
    for (std::size_t i = 0; i < count; ++i)
      boost::asio::post(*workers_, [st, i] {
        if (auto ec = st->task(i); ec && !st->failed.exchange(true)) st->first_error = ec;
        if (st->remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) st->last(st->first_error);
      });
  }
  void produced(const Key& k, std::error_code ec, std::string message);
  // Ends a partition that holds no slot and will not run; `ec` fails its job
  // unless the job is over already (then it is a consequence, not news).
  void drop(const Key& k, std::error_code ec, const std::string& message);
  void dispatch(std::size_t device, const Key& k);
  void launch_ended(std::size_t device, int slot, const Key& k, LaunchResult result);
  // On workers, once the partition's slot is free: bounce copies into its
  // pageable destinations, then the job's verify; finished() follows.
  void copy_out(const Key& k);
  void finished(const Key& k, Error error);
  void fail(JobState& job, Error error);
  void cancel(std::uint64_t seq);
  void drop_queued(JobState& job);
  void end_job_if_over(std::uint64_t seq);
  // Runs `f` on the engine thread, which owns every member below, and
  // waits for its result: for callers on other threads (stats, loads,
  // reservations, shutdown). Never called on the engine thread itself.
  template <typename F>
  auto on_engine_thread(F f) {
    std::promise<decltype(f())> p;
    boost::asio::post(io_, [&] {
      if constexpr (std::is_void_v<decltype(f())>) {
        f();
        p.set_value();
      } else {
        p.set_value(f());
      }
    });
    return p.get_future().get();
  }
  // The only way a partition changes phase (partition_lifecycle.hpp).
  void advance(JobState& job, PartState& ps, PartEvent event) {
    detail::advance(ps.phase, event, prepared_, job.active);
  }
  bool allowed(const JobState& job, std::size_t device) const;
  JobState* find(std::uint64_t seq);
  void fail_unschedulable();
  // Engine thread: a job that names an Srs may run only while it is
  // resident and its partitions fit beside it; counts the job as its user.
  Error admit_srs(const Job& job);
  void srs_job_done(const std::shared_ptr<SrsResidency>& srs);
  void release_srs(const std::shared_ptr<SrsResidency>& srs);
  void release_all_srs();

  Config config_;
  devices::DeviceSet set_;
  std::unique_ptr<alloc::MemoryBudget> host_budget_;
  std::unique_ptr<alloc::PinnedPool> pool_;
  std::vector<std::unique_ptr<DeviceRunner>> runners_;
  std::vector<DevState> dev_;
  std::vector<std::shared_ptr<SrsResidency>> srs_;  // resident, engine thread

  std::map<std::uint64_t, std::unique_ptr<JobState>> jobs_;
  // ready_: produced, waiting for a slot; early_uploads_: partitions whose shares upload as
  // produced whose producer runs, which a slot may take when no ready one fits.
  std::set<Key> to_prepare_, ready_, early_uploads_;
  std::deque<Key> to_allocate_;                            // prepared, block not yet requested
  bool allocating_ = false;                                // one block request in flight
  std::map<Key, std::shared_ptr<ProducerRun>> producing_;  // shares not all started
  std::size_t shares_running_ = 0;  // workers given shares, until they stop taking more
  std::size_t prepared_ = 0;        // the parts' lookahead_count (partition_lifecycle.hpp), bounded
  std::size_t max_prepared_ = 0;
  std::atomic<std::uint64_t> next_seq_{1};  // taken by submit() on callers' threads
  std::shared_ptr<CancelRelay> relay_ = std::make_shared<CancelRelay>(this);
  bool shutting_down_ = false;
  std::vector<std::pair<ShutdownHandler, boost::asio::any_io_executor>> shutdown_waiters_;

  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> io_work_;
  std::unique_ptr<boost::asio::thread_pool> workers_;
  std::size_t worker_count_ = 1;
  // Split producers and output copies get one task per this many bytes, up
  // to one per worker: large enough that posting a task costs nothing
  // beside the work in it.
  static constexpr std::size_t kBytesPerWorkerTask = std::size_t{8} << 20;
  // Bounce copies from this size on write with non-temporal stores, which send
  // the bytes to memory; smaller ones by memcpy, which leaves them in the
  // cache for the caller, who reads them next. A judgement, not a measured
  // crossover: the outputs measured (64-512 MiB) all stream.
  static constexpr std::size_t kNontemporalStoresFrom = std::size_t{2} << 20;
  // Shares per worker of a streamed partition (when it is large enough):
  // its first copy starts after about 1/kStreamedShareWaves of its producer.
  static constexpr std::size_t kStreamedShareWaves = 8;
  std::thread thread_;
};

}  // namespace stoker::engine::detail
