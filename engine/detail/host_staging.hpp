// HostStaging: the host's side of a partition. The host budget and the
// pinned pool its blocks come from, the worker threads, the producers that
// fill the blocks (share by share), and the bounce copies of results into
// callers' pageable memory. Called on the engine thread only; its work runs
// on the workers and reports back by posting to the engine thread, where
// every callback given to it runs (except copy_out's `then`, on a worker).
#pragma once

#include <atomic>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "alloc/memory_budget.hpp"
#include "alloc/pinned_pool.hpp"
#include "engine/detail/partition_lifecycle.hpp"
#include "engine/detail/share_feed.hpp"
#include "engine/detail/worker_pool.hpp"
#include "engine/job.hpp"

namespace stoker::engine::detail {

using Clock = std::chrono::steady_clock;

// The pinned blocks one partition needs, taken back to back from the budget.
struct BlockRequest {
  PartKey key;
  std::vector<std::size_t> sizes;  // one block each, in this order
  // Emitted on the engine thread: a pending wait for budget ends.
  boost::asio::cancellation_slot cancel;
  // Engine thread: false once the partition's job is over (no more blocks).
  std::function<bool()> wanted;
  // Engine thread: the blocks, or why there are none (those granted go back).
  std::function<void(Result<std::vector<alloc::PinnedBlock>>)> done;
};

// How a partition's producer ended.
struct ProducerOutcome {
  std::error_code error;
  std::string message;                          // empty unless it failed
  Clock::time_point first_start{}, last_end{};  // unset when no share ran
};

struct ProduceRequest {
  PartKey key;
  std::vector<std::span<std::byte>> spans;  // the produced inputs' blocks
  Producer plain;
  SplitProducer split;
  std::size_t tasks = 0;        // a split producer's shares; 0: one per 8 MiB up to the workers
  std::size_t share_align = 0;  // streamed (> 0): each share is announced as it ends
  std::function<void(ProducerOutcome)> done;  // engine thread
};

// A result's bounce copy from a pinned landing block into the caller's memory.
struct BounceCopy {
  std::byte* dst = nullptr;
  const std::byte* src = nullptr;
  std::size_t bytes = 0;
};

class HostStaging {
 public:
  // Starts the workers; a worker the system refuses is an error naming it.
  static Result<std::unique_ptr<HostStaging>> create(devices::Backend backend,
                                                     std::size_t host_budget_bytes,
                                                     std::size_t workers,
                                                     boost::asio::io_context& engine);
  HostStaging(const HostStaging&) = delete;
  HostStaging& operator=(const HostStaging&) = delete;

  alloc::MemoryBudget& budget() noexcept { return *budget_; }
  alloc::PinnedPool& pool() noexcept { return *pool_; }
  std::size_t workers() const noexcept { return worker_count_; }
  // For blocking work that must not stall the engine thread (freeing device
  // memory synchronises the device).
  template <typename F>
  void post_to_worker(F f) {
    boost::asio::post(workers_->get_executor(), std::move(f));
  }
  // Waits for the workers' queued work; at shutdown, after the runners.
  void join() { workers_->join(); }

  // The blocks of `count` partitions like `like`, no more than the budget
  // could ever hand out at once (see Engine::reserve_pinned).
  std::error_code reserve_pinned(const Partition& like, std::size_t count);

  // Requests are served one at a time in the order they came, so producers
  // start in the order partitions were ranked; a partition's blocks are
  // requested back to back, so none holds some while another partition
  // takes what it needs for the rest.
  void request_blocks(BlockRequest request);
  // Requests of job `seq` not yet started end with Errc::cancelled (posted:
  // this may run inside another request's callback).
  void withdraw_blocks(std::uint64_t seq);

  // Runs the partition's producer on the workers, best-ranked partitions'
  // shares first. Returns the feed a streamed partition's launch copies
  // shares from as they end, or null.
  std::shared_ptr<ShareFeed> produce(ProduceRequest request);
  // Workers going on with job `seq`'s shares take no more; its shares not
  // started are skipped.
  void stop_producing(std::uint64_t seq);

  // The copies on workers (large ones in pieces, on several workers at
  // once), then `then` on the worker that ends last.
  void copy_out(const std::vector<BounceCopy>& copies, std::function<void()> then);

 private:
  struct ProducerRun;
  HostStaging(devices::Backend backend, std::size_t host_budget_bytes,
              std::unique_ptr<WorkerPool> workers, boost::asio::io_context& engine);
  void allocate_next();
  void request_block();
  void block_arrived(Result<alloc::PinnedBlock> block);
  void start_shares();
  void produce_shares(std::shared_ptr<ProducerRun> run, std::size_t t);
  void share_done(const std::shared_ptr<ProducerRun>& run, std::size_t share, std::error_code ec,
                  Clock::time_point end, std::string thrown);
  void producer_done(ProducerRun& run);
  // Runs task(i) -> std::error_code for i < count on the workers, back to
  // back in their queue; the last to finish calls last(first error), also
  // when count is 0. No lock: a failing task publishes its code before its
  // decrement, and the last decrement (acq_rel) sees it and every other
  // task's writes.
  template <typename Task, typename Last>
  void fan_out(std::size_t count, Task task, Last last);

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

  boost::asio::io_context& engine_;
  std::unique_ptr<alloc::MemoryBudget> budget_;
  std::unique_ptr<alloc::PinnedPool> pool_;
  std::size_t worker_count_ = 1;
  std::unique_ptr<WorkerPool> workers_;

  std::deque<BlockRequest> to_allocate_;                       // not yet started
  std::optional<BlockRequest> allocating_;                     // the one request in flight
  std::vector<alloc::PinnedBlock> granted_;                    // its blocks so far
  std::map<PartKey, std::shared_ptr<ProducerRun>> producing_;  // shares not all started
  std::size_t shares_running_ = 0;  // workers given shares, until they stop taking more
};

}  // namespace stoker::engine::detail
