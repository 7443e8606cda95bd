// JobTable: the jobs the engine holds and the queues their partitions wait
// in, ranked by priority. Each partition's phase changes only through
// advance() (partition_lifecycle.hpp), which keeps the lookahead and every
// job's active count. Engine thread only, but for next_seq().
#pragma once

#include <atomic>
#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "alloc/pinned_pool.hpp"
#include "engine/detail/device_slots.hpp"
#include "engine/detail/nvtx.hpp"
#include "engine/detail/partition_lifecycle.hpp"
#include "engine/detail/share_feed.hpp"
#include "engine/engine.hpp"

namespace stoker::engine::detail {

using Clock = std::chrono::steady_clock;
using SubmitHandler = boost::asio::any_completion_handler<Engine::SubmitSignature>;

struct PartState {
  PartPhase phase = PartPhase::queued;
  // A pinned block per produced input, given back as soon as the device
  // has read it, then one per pageable output (its landing area), kept
  // until the partition ends. Blocks of equal size share a pool size class
  // (hpoly's a, b, c and h), so early returns never make the pool trade
  // slabs of one class for another mid-job.
  std::vector<std::size_t> block_bytes;  // inputs first, then outputs
  std::size_t input_blocks = 0;
  std::vector<alloc::PinnedBlock> blocks;                    // in block_bytes order, once granted
  std::unique_ptr<boost::asio::cancellation_signal> cancel;  // a pending budget wait
  SlotLease slot;                                            // while on a device
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

  bool over() const noexcept { return cancelled || static_cast<bool>(failure); }
  bool allows(std::size_t device) const { return allowed_on(job, device); }
};

// What a job's report needs from outside the table.
struct ReportContext {
  alloc::PoolStats pool_now;
  double h2d_gbps = 0, d2h_gbps = 0;
  std::vector<std::string> device_names;
  std::vector<bool> device_healthy;
};

class JobTable {
 public:
  // `lookahead`: partitions between prepare and finished at most.
  explicit JobTable(std::size_t lookahead) : max_lookahead_(lookahead) {}

  // Any thread: the sequence number of the next job submitted.
  std::uint64_t next_seq() noexcept { return next_seq_.fetch_add(1, std::memory_order_relaxed); }
  std::size_t lookahead() const noexcept { return max_lookahead_; }

  // Takes the job and queues its partitions to be prepared.
  JobState& add(std::unique_ptr<JobState> job);
  JobState* find(std::uint64_t seq);
  JobState& at(std::uint64_t seq) { return *jobs_.at(seq); }
  PartState& part(const PartKey& k) { return jobs_.at(k.seq)->parts[k.part]; }
  std::size_t size() const noexcept { return jobs_.size(); }
  bool empty() const noexcept { return jobs_.empty(); }
  std::vector<std::uint64_t> seqs() const;
  template <typename F>
  void for_each(F f) {
    for (auto& [seq, job] : jobs_) f(*job);
  }
  void erase(std::uint64_t seq) { jobs_.erase(seq); }

  // The only way a partition changes phase.
  void advance(JobState& job, PartState& ps, PartEvent event) {
    detail::advance(ps.phase, event, lookahead_in_use_, job.active);
  }

  // The best-ranked partition to prepare next, while the lookahead has room.
  std::optional<PartKey> next_to_prepare();
  // Produced partitions wait for a slot here; streamed ones (their producer
  // still running) wait in the early queue, which a slot may take when no
  // produced one fits.
  void queue_ready(const PartKey& k) { ready_.insert(k); }
  void queue_early(const PartKey& k) { early_.insert(k); }
  void unqueue_early(const PartKey& k) { early_.erase(k); }
  bool runnable_waiting() const noexcept { return !ready_.empty() || !early_.empty(); }
  bool any_waiting() const noexcept { return !to_prepare_.empty() || runnable_waiting(); }
  // Removes and returns the best-ranked produced partition, else streamed
  // one, of a live job for which `fits(job, part)` holds.
  std::optional<PartKey> take_runnable(
      const std::function<bool(const JobState&, const PartState&)>& fits);
  // Job `job` is over: its partitions not yet prepared never will be, and
  // those waiting for a slot are dropped (their blocks go back).
  void withdraw(JobState& job);

  // The job's report, once all its partitions have ended.
  static JobReport report(const JobState& job, const ReportContext& context);

 private:
  std::map<std::uint64_t, std::unique_ptr<JobState>> jobs_;
  std::set<PartKey> to_prepare_, ready_, early_;
  std::size_t lookahead_in_use_ = 0;  // the parts' lookahead_count (partition_lifecycle.hpp)
  std::size_t max_lookahead_ = 0;
  std::atomic<std::uint64_t> next_seq_{1};
};

}  // namespace stoker::engine::detail
